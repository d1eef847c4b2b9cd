"""collective_time against NCCL 2.20.3's cost model: the tree's bandwidth, pinned
latencies, which algorithm wins where, in-network reduction, and "auto".

Sources: NVIDIA/nccl v2.20.3 (commit b6475625) src/graph/tuning.cc; nccl-tests
doc/PERFORMANCE.md, src/all_reduce.cu and PR #239 (unmerged); issue 15 (the two
rankings), issue 14 (no error from a select's choice) and issue 32 (the tree's own
latencies; what nccl-tests prints under NVLS).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import calculators
from calculators.collective_time import ALGORITHM_LABELS
from calculators.collective_time.algorithms import ALGORITHMS
from calculators.formulas.collectives import costs as comm
from calculators.formulas.collectives import nccl_model, nodes

GIB, KIB = 2**30, 2**10
#: 16 nodes x 8 H100: NVLink 4, one 400 Gb/s NIC per GPU (the calculator's defaults).
CLUSTER = {"ranks": 128, "ranks_per_node": 8}


def _times(**inputs: object) -> dict[str, float]:
    table = calculators.compute("collective_time", **inputs).computed.table
    assert table is not None
    return {row[0]: float(row[1].split()[0]) for row in table.rows}


def test_ring_beats_tree_for_1_gib_on_128_gpus() -> None:
    # Issue 15, done-when: a 1 GiB allreduce on 128 GPUs over the network ranks the
    # ring above the tree (the tree moves 2S per rank at 92% of the link, the ring
    # 2(n-1)/n S at 100%), and auto picks the ring.
    times = _times(message_bytes="1GiB", **CLUSTER)
    assert times["ring"] < times["tree"]
    result = calculators.compute("collective_time", message_bytes="1GiB", **CLUSTER)
    assert result.value("algorithm_used") == "ring"


@pytest.mark.parametrize("size", ["4KiB", "64KiB", "1MiB", "16MiB"])
def test_tree_beats_ring_for_small_and_medium_messages(size: str) -> None:
    # ... and the tree above the ring where latency rules: 2(7 + log2 16) steps
    # against the ring's 2 x 127.
    times = _times(message_bytes=size, **CLUSTER)
    assert times["tree"] < times["ring"]
    result = calculators.compute("collective_time", message_bytes=size, **CLUSTER)
    assert result.value("algorithm_used") == "tree"


def test_nccl_own_model_agrees_on_both_rankings() -> None:
    # NCCL 2.20.3's full model (protocols, its latencies), 16 nodes whose 8 NICs pool to
    # 400 GB/s per GPU: tree at 64 KiB, ring at 4 GiB, for 8 or 16 channels.
    for channels in (8, 16):
        topo = nccl_model.Topology(ranks=128, nodes=16, nvlink_bw=450e9, net_bw=400e9,
                                   channels=channels)
        assert nccl_model.rank_allreduce(64 * KIB, topo)[0].algorithm == "tree"
        assert nccl_model.rank_allreduce(4 * GIB, topo)[0].algorithm == "ring"


def test_tree_bandwidth_is_nccl_tuning_model() -> None:
    # tuning.cc 2.20.3: tree busBw x 0.92, algbw = busBw x 0.5; ring algbw = busBw x
    # n / (2(n-1)). Without latency the ratio of the two times is 2/0.92 : 2(n-1)/n.
    ring = comm.flat_cost("allreduce", "ring", GIB, 128, 100e9, 0.0)
    tree = comm.flat_cost("allreduce", "tree", GIB, 128, 100e9, 0.0)
    assert comm.algbw(GIB, tree.time_s) == pytest.approx(100e9 * 0.92 * 0.5)
    assert comm.algbw(GIB, ring.time_s) == pytest.approx(100e9 * 128 / (2 * 127))
    assert tree.bytes_sent_per_rank == 2 * GIB
    assert comm.TREE_EFFICIENCY == 0.92


def test_latencies_are_pinned_to_nccl_2_20_3() -> None:
    # The defaults are tuning.cc 2.20.3's LL128 ring step latencies; NVLS its own.
    assert nccl_model.NCCL_VERSION == "2.20.3"
    ll128 = nccl_model.PROTOCOLS.index("LL128")
    simple = nccl_model.PROTOCOLS.index("Simple")
    calc = calculators.get("collective_time")
    hw = nccl_model.HW_LATENCY_US
    assert calc.param("latency").default == pytest.approx(hw["nvlink"]["ring"][ll128] * 1e-6)
    assert calc.param("inter_node_latency").default == pytest.approx(
        hw["net"]["ring"][ll128] * 1e-6)
    assert pytest.approx(hw["nvlink"]["nvls"][simple] * 1e-6) == nodes.NVLS_NVLINK_LATENCY_S
    assert pytest.approx(hw["net"]["nvls"][simple] * 1e-6) == nodes.NVLS_NETWORK_LATENCY_S


def test_tree_steps_follow_nccl() -> None:
    # tuning.cc: 2((nRanks/nNodes - 1) intra + log2(nNodes) inter) for the tree.
    assert nodes.intra_node_steps("allreduce", "tree", 128, 8) == 14
    assert nodes.inter_node_steps("allreduce", "tree", 128, 8) == 8
    # In one node the tree is a chain: as many steps as the ring.
    assert nodes.intra_node_steps("allreduce", "tree", 8, 8) == 14


def test_tree_is_charged_its_own_step_latencies() -> None:
    # Issue 32, item 11: the allreduce tree was charged the ring's per-step latency
    # (1.9 us NVLink, 4.0 us network) though tuning.cc 2.20.3 gives the tree its own
    # (LL128: 1.25 and 8.5 us). On 16 x 8 GPUs: 14 NVLink steps and 8 network steps,
    # 14 x 1.25 + 8 x 8.5 = 85.5 us (it was 14 x 1.9 + 8 x 4.0 = 58.6 us).
    ll128 = nccl_model.PROTOCOLS.index("LL128")
    hw = nccl_model.HW_LATENCY_US
    assert pytest.approx(hw["nvlink"]["tree"][ll128] * 1e-6) == nodes.TREE_NVLINK_LATENCY_S
    assert pytest.approx(hw["net"]["tree"][ll128] * 1e-6) == nodes.TREE_NETWORK_LATENCY_S
    calc = calculators.get("collective_time")
    assert calc.param("tree_latency").default == nodes.TREE_NVLINK_LATENCY_S
    assert calc.param("tree_inter_node_latency").default == nodes.TREE_NETWORK_LATENCY_S
    tree = calculators.compute("collective_time", algorithm="tree", message_bytes="64KiB",
                               **CLUSTER)
    assert tree.value("latency_time_s") == pytest.approx(14 * 1.25e-6 + 8 * 8.5e-6)
    # Without the NCCL base latency (0 for tree/Simple, 14 us for LL128 in both), the
    # calculator's tree latency is NCCL's own LL128 tree latency.
    topo = nccl_model.Topology(ranks=128, nodes=16, nvlink_bw=450e9, net_bw=400e9)
    base = nccl_model.BASE_LATENCY_US["tree"][ll128]
    assert tree.value("latency_time_s") == pytest.approx(
        (nccl_model.latency_us("tree", "LL128", topo) - base) * 1e-6)
    # The ring keeps the ring's latencies; other collectives' trees are not NCCL's.
    ring = calculators.compute("collective_time", algorithm="ring", message_bytes="64KiB",
                               tree_latency="1s", tree_inter_node_latency="1s", **CLUSTER)
    assert ring.value("latency_time_s") == pytest.approx(224 * 1.9e-6 + 30 * 4e-6)
    gather = calculators.compute("collective_time", collective="allgather",
                                 algorithm="tree", message_bytes="64KiB", **CLUSTER)
    assert gather.value("latency_time_s") == pytest.approx(3 * 1.9e-6 + 4 * 4e-6)


def test_one_node_tree_and_ring_rank_as_in_nccls_ll128_model() -> None:
    # In one node the tree takes as many steps as the ring, but NCCL charges an LL128
    # tree step 1.25 us against a ring step's 1.9: at 64 KiB the tree is ahead, as in
    # NCCL's own model for LL128 (tree 32 us, ring 41 us with their base latencies).
    times = _times(message_bytes="64KiB", ranks=8)
    assert times["tree"] < times["ring"]
    node = nccl_model.Topology(ranks=8, nodes=1, nvlink_bw=450e9, net_bw=50e9)
    nccl_tree = nccl_model.predict("tree", "LL128", 64 * KIB, node)
    nccl_ring = nccl_model.predict("ring", "LL128", 64 * KIB, node)
    assert nccl_tree is not None and nccl_ring is not None
    assert nccl_tree.time_s < nccl_ring.time_s


def test_in_network_factor_is_the_maintainers() -> None:
    # nccl-tests PR #239 (S. Jeaugey): NVLS algbw = busbw x n / (n+1); each rank moves
    # (n+1)/n S each way (derivation in collectives_nodes).
    assert nodes.in_network_factor(8) == pytest.approx(9 / 8)
    assert nccl_model.nvls_algbw_over_busbw(8) * nodes.in_network_factor(8) == pytest.approx(1)
    cost = nodes.in_network_cost(GIB, 8, 8, 450e9, 50e9, latency=0.0)
    assert comm.algbw(GIB, cost.time_s) == pytest.approx(450e9 * 8 / 9)


def test_in_network_across_nodes_sends_s_over_g_per_nic() -> None:
    # Across 16 nodes the NIC carries S/g each way (a ring would carry 2(N-1)/N S/g),
    # NVLink (g+1)/g S: with 450 and 50 GB/s both take the same time.
    cost = nodes.in_network_cost(GIB, 128, 8, 450e9, 50e9, latency=0.0,
                                 inter_node_latency=0.0)
    assert cost.bandwidth_s == pytest.approx(GIB / 8 / 50e9)
    assert cost.bandwidth_s == pytest.approx(9 / 8 * GIB / 450e9)


def test_nvls_busbw_uses_nccl_tests_factor_not_pr_239() -> None:
    # Issue 32, item 16. nccl-tests src/all_reduce.cu, AllReduceGetBw (master, v2.19.6):
    # busbw = algbw x 2(n-1)/n whatever NCCL_ALGO is. The (n-1)/(n+1) for
    # NCCL_ALGO=NVLS is nccl-tests PR #239 (commit 4ec7c79), open and never merged.
    for ranks in (8, 128):
        nvls = calculators.compute("collective_time", ranks=ranks, algorithm="in_network")
        factor = 2 * (ranks - 1) / ranks
        assert nvls.value("bus_factor") == pytest.approx(factor)
        algbw = nvls.value("algbw")
        assert isinstance(algbw, float)
        assert nvls.value("busbw") == pytest.approx(algbw * factor)
        note = next(n for n in nvls.computed.notes if "(g+1)/g" in n)
        assert "NCCL_ALGO=NVLS" in note and "never merged" in note
    # Neither formula's docstring credits nccl-tests' PERFORMANCE.md with PR #239's factor.
    for doc in (nodes.in_network_factor.__doc__, nccl_model.nvls_algbw_over_busbw.__doc__):
        assert doc is not None and "never merged" in doc
        assert "PERFORMANCE.md's summary lists" not in doc
        assert "summary of nccl-tests doc/PERFORMANCE.md lists" not in doc


def test_communication_chapter_states_what_nccl_tests_prints_for_nvls() -> None:
    chapter = Path(__file__).resolve().parents[3] / "docs" / "communication.md"
    text = " ".join(chapter.read_text("utf-8").split())
    section = text.split("### In-network reduction")[1].split("## ")[0]
    assert "PERFORMANCE.md lists a factor of (n−1)/(n+1)" not in section
    assert "was never merged" in section and "AllReduceGetBw" in section


def test_in_network_wins_large_allreduce_in_one_node() -> None:
    # As NCCL picks NVLS for large allreduces on one H100 node (nccl_model's own test),
    # and NVIDIA measures ~480 against ~370 GB/s busbw (nccl-tests #212).
    times = _times(ranks=8, message_bytes="1GiB")
    assert times["in_network"] < times["ring"]
    nvls = calculators.compute("collective_time", ranks=8, algorithm="in_network")
    assert nvls.value("busbw") > 450e9  # nccl-tests' factor: above any NVLink rate
    assert any("(g+1)/g" in note for note in nvls.computed.notes)


def test_alltoall_from_defaults_gives_a_result() -> None:
    # Issue 14: `bigmodel collective_time --collective alltoall` failed with the default
    # algorithm; auto resolves to NCCL's pairwise exchange.
    result = calculators.compute("collective_time", collective="alltoall")
    assert result.value("algorithm_used") == "direct"


@pytest.mark.parametrize("collective", list(ALGORITHMS))
@pytest.mark.parametrize("algorithm", list(ALGORITHM_LABELS))
@pytest.mark.parametrize("ranks", [8, 128])
def test_every_choice_of_every_select_computes(collective: str, algorithm: str,
                                               ranks: int) -> None:
    # One rule: an algorithm the collective lacks shows auto's choice, with a note.
    result = calculators.compute("collective_time", collective=collective,
                                 algorithm=algorithm, ranks=ranks)
    used = result.value("algorithm_used")
    assert used in ALGORITHMS[collective]
    if algorithm not in ALGORITHMS[collective] and algorithm != "auto":
        assert any("does not apply" in note for note in result.computed.notes)
        assert used in comm.NCCL_ALGORITHMS[collective]


def test_recursive_doubling_across_nodes_uses_each_gpus_own_nic() -> None:
    # Only NCCL's channelled algorithms pool a node's NICs: an allgather by recursive
    # doubling across 16 nodes sends its far halves through one NIC per GPU.
    assert nodes.pools_nics("allreduce", "tree")
    assert not nodes.pools_nics("allgather", "tree")
    times = _times(collective="allgather", message_bytes="1GiB", **CLUSTER)
    assert times["ring"] < times["tree"]
    small = _times(collective="allgather", message_bytes="4KiB", **CLUSTER)
    assert small["tree"] < small["ring"]
