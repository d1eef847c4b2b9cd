"""NCCL 2.20.3's tuning model (src/graph/tuning.cc): constants, formulas, rankings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculators.formulas.collectives.nccl_model import (
    ALGORITHMS,
    BASE_LATENCY_US,
    HW_LATENCY_US,
    PROTOCOLS,
    Topology,
    algorithm_bandwidth_gbps,
    crossover_bytes,
    ideal_ring_time_s,
    latency_us,
    nvls_algbw_over_busbw,
    predict,
    rank_allreduce,
)

GIB, KIB = 2**30, 2**10
# 16 nodes of 8 H100 with one 400 Gb/s NIC (ConnectX-7) per GPU: 50e9 B/s per GPU.
CLUSTER = Topology(ranks=128, nodes=16, nvlink_bw=450e9, net_bw=400e9 / 8)
CLUSTER_NVLS = Topology(ranks=128, nodes=16, nvlink_bw=450e9, net_bw=400e9 / 8, nvls=True)


@pytest.mark.parametrize("topo", [CLUSTER, CLUSTER_NVLS])
def test_ring_wins_one_gib_on_128_gpus(topo: Topology) -> None:
    # The brief's ranking: a 1 GiB allreduce on 16 x 8 GPUs over 400 Gb/s NICs picks the
    # ring (Simple): its algbw is busbw x n/(2(n-1)) against the tree's busbw x 0.92 / 2.
    best = rank_allreduce(GIB, topo)[0]
    assert (best.algorithm, best.protocol) == ("ring", "Simple")


@pytest.mark.parametrize("topo", [CLUSTER, CLUSTER_NVLS])
def test_tree_wins_64_kib_on_128_gpus(topo: Topology) -> None:
    # ... and a 64 KiB allreduce picks the tree (LL): 2 log2(16) network steps instead of
    # the ring's 2 x 16 network + 222 NVLink-or-overhead steps.
    best = rank_allreduce(64 * KIB, topo)[0]
    assert (best.algorithm, best.protocol) == ("tree", "LL")


def test_source_constants() -> None:
    # tuning.cc v2.20.3 baseLat and hwLat rows, checked against the source as read.
    assert BASE_LATENCY_US["ring"] == (6.6, 14.0, 8.4)
    assert BASE_LATENCY_US["tree"] == (6.8, 14.0, 0.0)
    assert HW_LATENCY_US["nvlink"]["ring"] == (0.6, 1.9, 3.4)
    assert HW_LATENCY_US["net"]["ring"] == (2.7, 4.0, 14.0)
    assert HW_LATENCY_US["net"]["tree"] == (5.0, 8.5, 28.0)


def test_ring_latency_by_hand() -> None:
    # tuning.cc: baseLat + (nsteps - nInterSteps) x max(intraLat, 3 x netOverhead) +
    # nInterSteps x interLat, nsteps = 2(128 - 1) = 254, nInterSteps = 2 x 16 = 32:
    # 8.4 + 222 x 3.4 + 32 x 14.0 = 1211.2 us for Simple; 6.6 + 222 x 1.0 + 32 x 2.7 for LL.
    assert latency_us("ring", "Simple", CLUSTER) == pytest.approx(8.4 + 222 * 3.4 + 32 * 14.0)
    assert latency_us("ring", "LL", CLUSTER) == pytest.approx(6.6 + 222 * 1.0 + 32 * 2.7)


def test_tree_latency_by_hand() -> None:
    # tuning.cc: baseLat + 2((nRanks/nNodes - 1) intraLat + log2(nNodes) interLat):
    # Simple 0 + 2(7 x 28 + 4 x 28) = 616 us; LL 6.8 + 2(7 x 0.6 + 4 x 5.0) = 55.2 us.
    assert latency_us("tree", "Simple", CLUSTER) == pytest.approx(0 + 2 * (7 * 28 + 4 * 28))
    assert latency_us("tree", "LL", CLUSTER) == pytest.approx(6.8 + 2 * (7 * 0.6 + 4 * 5.0))


def test_ring_conversion_is_nccl_tests_bus_factor() -> None:
    # NCCL's ring algbw = busbw x nRanks / (2(nRanks - 1)) is the inverse of nccl-tests'
    # doc/PERFORMANCE.md allreduce factor 2(n-1)/n: two sources, one relation.
    algbw = algorithm_bandwidth_gbps("ring", "Simple", CLUSTER) * 1e9
    assert algbw * 2 * 127 / 128 == pytest.approx(CLUSTER.net_bw, rel=1e-12)
    assert ideal_ring_time_s(GIB, 128, CLUSTER.net_bw) == pytest.approx(GIB / algbw, rel=1e-12)


def test_tree_gets_less_bandwidth_than_ring_across_nodes() -> None:
    # tuning.cc: tree busBw x 0.92 (capped per channel), then x 0.5 to algbw.
    assert algorithm_bandwidth_gbps("tree", "Simple", CLUSTER) == pytest.approx(50 * 0.92 / 2)


def test_nvls_factor_from_maintainer() -> None:
    # nccl-tests PR #239 (S. Jeaugey, 2024-09-02): for NVLS, algbw = busbw x n / (n + 1).
    assert nvls_algbw_over_busbw(8) == pytest.approx(8 / 9)


def test_single_node_nvls_beats_ring_for_large_messages() -> None:
    # NVLink SHARP on one 8-GPU H100 node (NCCL >= 2.17): NVLS algbw 5/6 of busbw
    # against the ring's 8/14.
    node = Topology(ranks=8, nodes=1, nvlink_bw=450e9, net_bw=50e9, nvls=True)
    assert rank_allreduce(GIB, node)[0].algorithm == "nvls"


def test_crossover_exists() -> None:
    size = crossover_bytes(CLUSTER)
    assert 64 * KIB < size < GIB


@given(st.sampled_from(ALGORITHMS), st.sampled_from(PROTOCOLS),
       st.integers(6, 33), st.integers(1, 30))
def test_time_grows_with_size(algo: str, proto: str, log_size: int, step: int) -> None:
    small = predict(algo, proto, 2.0**log_size, CLUSTER_NVLS)
    big = predict(algo, proto, 2.0**log_size * (1 + step), CLUSTER_NVLS)
    if small is not None and big is not None and algo != "tree":
        assert big.time_s >= small.time_s


@pytest.mark.parametrize(
    "kwargs",
    [{"ranks": 1, "nodes": 1}, {"ranks": 10, "nodes": 4}, {"channels": 0},
     {"nvlink_bw": 0.0}, {"cpu": "arm"}])
def test_bad_topology(kwargs: dict[str, object]) -> None:
    base: dict[str, object] = {"ranks": 8, "nodes": 1, "nvlink_bw": 1e11, "net_bw": 1e10}
    with pytest.raises(ValueError, match=r"."):
        Topology(**(base | kwargs))  # type: ignore[arg-type]


def test_bad_size() -> None:
    with pytest.raises(ValueError, match="message"):
        predict("ring", "Simple", 0, CLUSTER)
