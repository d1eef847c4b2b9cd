"""formulas.collectives.achieved: the bus bandwidth NCCL reaches by message size, and the
plateau a collective's links set.

The nccl-tests points the curves were fitted to are checked in published_checks.kernels;
here the curve's shape (a Hill curve: 0 to the plateau, half of it at the half size),
which links set the plateau inside and across scale-up domains, NVLink SHARP's reach,
alltoall across domains, point-to-point sends, and bounds for every curve of the
catalogue.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculators.catalogues.link_speeds import LINK_SPEEDS, SCALE_UP_LINK
from calculators.formulas.collectives.achieved import (
    IN_NETWORK_MIN_RANKS,
    Fabric,
    LinkCurve,
    collective_time_s,
    plateau_bus_bandwidth,
    send_time_s,
    size_factor,
)
from calculators.formulas.collectives.costs import COLLECTIVES, Collective, bus_factor
from calculators.inputs.machine import fabric_for

MIB, GIB = 2.0**20, 2.0**30
CURVES = sorted(LINK_SPEEDS)
KINDS = list(COLLECTIVES)
#: The collectives NCCL runs as rings (no in-network reduction for them).
RINGS: tuple[Collective, ...] = ("reduce_scatter", "allgather", "broadcast")
#: Those priced by the NICs' ring share across domains.
ACROSS: tuple[Collective, ...] = ("allreduce", "reduce_scatter", "allgather")
#: 8 H100s per node on NVLink 4 (450 GB/s each way), one 400 Gb/s NIC per GPU.
H100 = fabric_for("h100_sxm", domain=8)
#: Round numbers for hand derivations: 400 GB/s scale-up at 0.8 (ring) and 0.7
#: (alltoall), SHARP 1.25 x; 50 GB/s NICs at 0.9 and 0.96.
INTRA = LinkCurve(0.8, 0.7, 16 * MIB, 0.75, 12e-6, in_network_allreduce=1.25,
                  send_half_bytes=4 * MIB, send_floor_s=10e-6)
INTER = LinkCurve(0.9, 0.96, 40 * MIB, 0.8, 46e-6, half_ranks=32, half_growth=0.27,
                  send_half_bytes=1 * MIB, send_floor_s=30e-6)
ROUND = Fabric(domain=8, intra_bandwidth=400e9, inter_bandwidth=50e9, intra=INTRA,
               inter=INTER)


def _busbw(kind: Collective, size: float, ranks: int, per_domain: int, fabric: Fabric) -> float:
    """nccl-tests' bus bandwidth: algbw x factor (doc/PERFORMANCE.md)."""
    time = collective_time_s(kind, size, ranks, per_domain, fabric)
    factor = 1.0 if kind == "broadcast" else bus_factor(kind, ranks)
    return factor * size / time


# --- the Hill curve ---------------------------------------------------------------------

def test_size_factor_is_half_at_the_half_size() -> None:
    # S^k / (S^k + S_half^k) = 1/2 at S = S_half, for any steepness.
    for steepness in (0.5, 0.74, 1.0, 2.0):
        assert size_factor(16 * MIB, 16 * MIB, steepness) == pytest.approx(0.5)


@settings(max_examples=50, deadline=None)
@given(st.floats(1e-3, 1e3), st.floats(1.0, 1e10), st.floats(0.3, 1.5))
def test_size_factor_is_a_share_and_rises_with_size(ratio: float, half: float,
                                                    steepness: float) -> None:
    # busbw / plateau: strictly between 0 and 1, and larger for a larger message (over
    # sizes from 1/1,000 to 1,000 x the half size, where floats still resolve it).
    size = ratio * half
    share = size_factor(size, half, steepness)
    assert 0.0 < share < 1.0
    assert size_factor(size * 2, half, steepness) > share


def test_size_factor_by_hand() -> None:
    # At four times the half size with k = 1/2: 1 / (1 + (1/4)^(1/2)) = 2/3.
    assert size_factor(4 * MIB, MIB, 0.5) == pytest.approx(2 / 3)
    assert size_factor(0.0, MIB, 0.5) == 0.0


# --- time, floor, monotonicity ----------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("ranks", "per_domain"), [(2, 8), (8, 8), (16, 8), (64, 8),
                                                   (1024, 8), (144, 72)])
def test_time_is_at_least_the_floor_and_grows_with_size(kind: Collective, ranks: int,
                                                        per_domain: int) -> None:
    # No collective beats the latency floor; a larger message never takes less time
    # (the Hill curve's S / busbw(S) = (S + S_half^k S^(1-k)) / plateau rises with S
    # for k <= 1, and every fitted steepness is below 1).
    sizes = [2.0**p for p in range(4, 36)]
    times = [collective_time_s(kind, s, ranks, per_domain, H100)
             for s in sizes]
    crosses = ranks > per_domain
    floor = (H100.inter if crosses else H100.intra).floor_s
    assert all(t >= floor for t in times)
    assert times == sorted(times)


@pytest.mark.parametrize("link", CURVES)
def test_every_catalogue_curve_is_monotone(link: str) -> None:
    # The monotonicity above needs k <= 1: check every curve, inside a domain of 8
    # (scale-up links) and across 4 domains (NICs).
    curve = LINK_SPEEDS[link].curve
    assert 0.0 < curve.steepness <= 1.0
    fabric = Fabric(domain=8, intra_bandwidth=400e9, inter_bandwidth=50e9, intra=curve,
                    inter=curve)
    for ranks in (8, 32):
        times = [collective_time_s("allreduce", 2.0**p, ranks, 8, fabric)
                 for p in range(4, 36)]
        assert times == sorted(times)


def test_no_collective_on_one_rank_or_no_bytes() -> None:
    assert collective_time_s("allreduce", GIB, 1, 8, H100) == 0.0
    assert collective_time_s("allreduce", 0.0, 8, 8, H100) == 0.0
    assert send_time_s(0.0, True, H100) == 0.0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("ranks", "per_domain"), [(8, 8), (4, 8), (16, 8), (256, 8)])
def test_bus_bandwidth_rises_to_the_plateau(kind: Collective, ranks: int, per_domain: int) -> None:
    # nccl-tests' large-message busbw approaches the plateau and never exceeds it: at
    # 10^4 x the half size the Hill curve is within 1% of it.
    plateau, curve = plateau_bus_bandwidth(kind, ranks, per_domain, H100)
    half = curve.half_at(ranks)
    sizes = [half / 100, half, half * 1e4]
    busbw = [_busbw(kind, s, ranks, per_domain, H100) for s in sizes]
    assert busbw == sorted(busbw)
    assert all(b <= plateau * (1 + 1e-12) for b in busbw)
    assert busbw[-1] == pytest.approx(plateau, rel=0.01)
    # At the half size, unless the floor binds, half the plateau.
    if collective_time_s(kind, half, ranks, per_domain, H100) > curve.floor_s:
        assert busbw[1] == pytest.approx(plateau / 2)


# --- plateaus inside a domain: ring, alltoall, NVLink SHARP -----------------------------

def test_plateaus_inside_a_domain_by_hand() -> None:
    # Inside one scale-up domain the domain's links carry everything: ring collectives
    # at the ring's share of the line rate, alltoall at its own.
    for kind in RINGS:
        assert plateau_bus_bandwidth(kind, 8, 8, ROUND)[0] == pytest.approx(400e9 * 0.8)
    assert plateau_bus_bandwidth("alltoall", 8, 8, ROUND)[0] == pytest.approx(400e9 * 0.7)
    assert plateau_bus_bandwidth("allreduce", 4, 8, ROUND)[0] == pytest.approx(400e9 * 0.8)


@pytest.mark.parametrize("ranks", range(2, 9))
def test_nvlink_sharp_needs_five_gpus(ranks: int) -> None:
    # NVLink SHARP reduces in the switch only from 5 GPUs (NVIDIA/nccl issue 1455: below
    # 5 the ring is faster), and only an allreduce gains: the other collectives move
    # the same bytes whether the switch reduces or not.
    sharp = ranks >= IN_NETWORK_MIN_RANKS
    ring = 400e9 * 0.8
    allreduce = plateau_bus_bandwidth("allreduce", ranks, 8, ROUND)[0]
    assert allreduce == pytest.approx(ring * 1.25 if sharp else ring)
    for kind in RINGS:
        assert plateau_bus_bandwidth(kind, ranks, 8, ROUND)[0] == pytest.approx(ring)


def test_nvlink_sharp_stays_inside_the_domain() -> None:
    # Across domains the NICs (or the domain's ring) set the plateau: no SHARP factor,
    # which only the NVSwitch inside a domain applies.
    across = plateau_bus_bandwidth("allreduce", 16, 8, ROUND)[0]
    assert across == pytest.approx(min(400e9 * 0.8, 8 * 50e9 * 0.9))
    assert IN_NETWORK_MIN_RANKS == 5


def test_h100_nvls_against_ring_on_the_catalogue() -> None:
    # On 8 H100s NVLink SHARP makes an allreduce faster than the ring at large sizes,
    # and leaves a 4-GPU allreduce alone.
    sharp = collective_time_s("allreduce", GIB, 8, 8, H100)
    no_sharp = replace(H100, intra=replace(H100.intra, in_network_allreduce=1.0))
    assert sharp < collective_time_s("allreduce", GIB, 8, 8, no_sharp)
    assert collective_time_s("allreduce", GIB, 4, 8, H100) == collective_time_s(
        "allreduce", GIB, 4, 8, no_sharp)


# --- across domains ---------------------------------------------------------------------

def test_h100_nodes_with_400g_nics_by_hand() -> None:
    # 8 H100s per node, one 400 Gb/s NIC per GPU. NCCL runs one ring per NIC, through
    # NVLink and the NICs at once, so the slower of the two sets the plateau:
    #   NVLink ring:  450 GB/s x the NVLink 4 ring share
    #   the node's NICs: 8 x 400/8 GB/s x the NIC ring share.
    nvlink = 450e9 * LINK_SPEEDS["nvlink4"].curve.ring_efficiency
    nics = 8 * 400e9 / 8 * LINK_SPEEDS["ib_ndr"].curve.ring_efficiency
    for ranks in (16, 64, 1024):
        for kind in ACROSS:
            plateau, curve = plateau_bus_bandwidth(kind, ranks, 8, H100)
            assert plateau == pytest.approx(min(nvlink, nics))
            assert curve == H100.inter  # the NICs' curve: their half size and floor


def test_fewer_gpus_per_node_leave_the_nics_binding() -> None:
    # A group with 2 GPUs in each node (TP 4 x DP across nodes, say) uses only those
    # GPUs' 2 NICs: 2 x 50 GB/s x 0.9, below the NVLink ring's 320.
    assert plateau_bus_bandwidth("allreduce", 32, 2, ROUND)[0] == pytest.approx(2 * 50e9 * 0.9)
    # And the plateau grows with the GPUs of the group in each node, up to the ring's.
    plateaus = [plateau_bus_bandwidth("allgather", 64, g, ROUND)[0] for g in (1, 2, 4, 8)]
    assert plateaus == sorted(plateaus)
    assert plateaus[-1] == pytest.approx(min(400e9 * 0.8, 8 * 50e9 * 0.9))


def test_crossing_domains_is_slower_than_staying_inside() -> None:
    # 16 GPUs in two nodes against 8 in one: the NICs' curve reaches its plateau later
    # (40 against 16.5 MiB), and its floor is higher.
    for size in (MIB, 64 * MIB, GIB):
        inside = _busbw("allreduce", size, 8, 8, H100)
        across = _busbw("allreduce", size, 16, 8, H100)
        assert across < inside
    # A tiny collective pays at least the floor of the links it crosses, and not much
    # more (the curve's share of a 256-byte message is what it is at the floor).
    across, inside = (collective_time_s("allreduce", 256.0, n, 8, H100) for n in (16, 8))
    assert H100.inter.floor_s <= across < 1.5 * H100.inter.floor_s
    assert H100.intra.floor_s <= inside < 1.5 * H100.intra.floor_s
    assert H100.inter.floor_s > H100.intra.floor_s


def test_alltoall_across_domains_by_hand() -> None:
    # Every GPU sends (n - g)/n of its buffer through its own NIC (the rest over the
    # scale-up links, at the same time): t = (n - g)/n x S / (NIC x share), and
    # nccl-tests' busbw = (n - 1)/n x S / t = NIC x share x (n - 1)/(n - g).
    # 16 GPUs in 2 nodes of 8 and 64 in 8; and 2 GPUs in 2 domains, one NIC's share.
    for ranks in (16, 64):
        plateau, curve = plateau_bus_bandwidth("alltoall", ranks, 8, ROUND)
        assert curve == INTER
        assert plateau == pytest.approx(50e9 * 0.96 * (ranks - 1) / (ranks - 8))
        assert plateau > 50e9 * 0.96  # more than one NIC's share: part stays inside
    assert plateau_bus_bandwidth("alltoall", 2, 1, ROUND)[0] == pytest.approx(50e9 * 0.96)
    # The more nodes, the larger the share that leaves the node, the lower the busbw.
    plateaus = [plateau_bus_bandwidth("alltoall", n, 8, ROUND)[0] for n in (16, 64, 1024)]
    assert plateaus == sorted(plateaus, reverse=True)


@pytest.mark.parametrize(("ranks", "per_domain"), [(2, 1), (4, 1), (16, 8), (64, 8)])
def test_alltoall_across_domains_is_never_faster_than_its_nic_traffic(
        ranks: int, per_domain: int) -> None:
    # Every GPU sends (n - g)/n of its buffer S through its own NIC (the module's own
    # derivation, and formulas.collectives.costs' hierarchical alltoall), so the time
    # is at least that traffic over the NIC at its alltoall share. nccl-tests' busbw is
    # (n - 1)/n x S / t, so the plateau must be NIC x share x (n - 1)/(n - g). For 2
    # GPUs in 2 nodes this is plain: each sends S/2 to the other, through the NIC.
    size = 1e4 * INTER.half_at(ranks)  # the curve within 0.1% of its plateau
    nic_traffic = (ranks - per_domain) / ranks * size
    time = collective_time_s("alltoall", size, ranks, per_domain, ROUND)
    assert time >= nic_traffic / (50e9 * 0.96) * (1 - 1e-3)


# --- the half size across nodes ---------------------------------------------------------

def test_half_size_grows_beyond_half_ranks() -> None:
    # Across nodes nccl-tests reaches half its plateau at larger sizes on more GPUs:
    # half_bytes x (ranks / half_ranks)^growth beyond half_ranks, constant below.
    assert INTER.half_at(8) == INTER.half_at(32) == 40 * MIB
    assert INTER.half_at(64) == pytest.approx(40 * MIB * 2**0.27)
    assert INTER.half_at(8192) == pytest.approx(40 * MIB * (8192 / 32) ** 0.27)
    sizes = [INTER.half_at(n) for n in (32, 64, 128, 1024, 8192)]
    assert sizes == sorted(sizes)
    assert len(set(sizes)) == len(sizes)
    # A curve with no growth keeps its half size at any scale (inside a domain).
    assert INTRA.half_at(72) == INTRA.half_at(2) == 16 * MIB


def test_larger_groups_reach_less_of_the_plateau_at_one_size() -> None:
    # Hence at one message size, busbw across 1,024 GPUs is below that across 64.
    small = _busbw("allreduce", 256 * MIB, 64, 8, H100)
    large = _busbw("allreduce", 256 * MIB, 1024, 8, H100)
    assert large < small


# --- point-to-point sends ---------------------------------------------------------------

@pytest.mark.parametrize("crosses", [False, True])
def test_send_time(crosses: bool) -> None:
    # A pipeline send: busbw = algbw = S / t. At large sizes it approaches the link's
    # line rate x the ring share; small sends pay the floor; more bytes never take less.
    bandwidth = 50e9 if crosses else 400e9
    curve = INTER if crosses else INTRA
    large = 1e4 * curve.send_half_bytes
    assert send_time_s(large, crosses, ROUND) == pytest.approx(
        large / (bandwidth * curve.ring_efficiency), rel=0.01)
    assert send_time_s(1.0, crosses, ROUND) == curve.send_floor_s
    half = curve.send_half_bytes
    if send_time_s(half, crosses, ROUND) > curve.send_floor_s:
        assert send_time_s(half, crosses, ROUND) == pytest.approx(
            2 * half / (bandwidth * curve.ring_efficiency))
    times = [send_time_s(2.0**p, crosses, ROUND) for p in range(4, 36)]
    assert times == sorted(times)


def test_send_across_nodes_is_slower_than_inside() -> None:
    for size in (64 * 1024, 16 * MIB, GIB):
        assert send_time_s(size, True, H100) > send_time_s(size, False, H100)


def test_sends_reach_their_plateau_sooner_than_collectives() -> None:
    # A point-to-point send has no ring to fill: its half size is below the
    # collectives' on every link of the catalogue.
    for link in CURVES:
        curve = LINK_SPEEDS[link].curve
        assert curve.send_half_bytes < curve.half_bytes
        assert curve.send_floor_s <= curve.floor_s


# --- the builder ------------------------------------------------------------------------

@pytest.mark.parametrize("gpu", sorted(SCALE_UP_LINK))
def test_link_efficiency_override_replaces_every_plateau(gpu: str) -> None:
    # fabric_for's link_efficiency: one share of the line rate for every collective,
    # SHARP off; then an allreduce inside the domain plateaus at the line rate x it.
    fabric = fabric_for(gpu, domain=8, link_efficiency=0.5)
    assert plateau_bus_bandwidth("allreduce", 8, 8, fabric)[0] == pytest.approx(
        fabric.intra_bandwidth * 0.5)
    assert plateau_bus_bandwidth("alltoall", 8, 8, fabric)[0] == pytest.approx(
        fabric.intra_bandwidth * 0.5)
    assert plateau_bus_bandwidth("allgather", 16, 1, fabric)[0] == pytest.approx(
        min(fabric.intra_bandwidth, fabric.inter_bandwidth) * 0.5)
    assert math.isfinite(collective_time_s("allreduce", GIB, 16, 8, fabric))
