"""Fabric sizing against published designs, traffic-pattern bandwidths, invariants.

Sources: Al-Fares, Loukissas, Vahdat, SIGCOMM 2008, Sec. 3 (k-ary fat tree); NVIDIA DGX
SuperPOD reference architectures (H100 Table 4, B200 larger-configuration table, B300
XDR Table 3); Zhao et al. (DeepSeek), ISCA 2025, Sec. 5 topology comparison table.
Switch and cable counts are integers produced by exact rules, so they are compared
exactly: a single switch off is a wrong design, not a rounding error.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.catalogues import fabrics as catalogue
from calculators.formulas.fabric import clos
from calculators.formulas.fabric import sizing as fabric
from calculators.formulas.fabric import traffic as fabric_traffic
from calculators.formulas.fabric.sizing import FabricPlan

NDR = 400e9 / 8  # 400 Gb/s in B/s per direction
UFM_CABLES = 4  # the H100 table's host-cable column adds four UFM links


def _size(ref: catalogue.ReferenceFabric, **overrides: object) -> FabricPlan:
    args: dict[str, object] = {
        "num_gpus": ref.num_gpus, "gpus_per_node": ref.gpus_per_node,
        "nics_per_node": ref.nics_per_node, "nic_bytes_per_s": ref.nic_bytes_per_s,
        "radix": ref.radix, "port_bytes_per_s": ref.port_bytes_per_s,
        "topology": ref.topology}
    args.update(overrides)
    return fabric.size_fabric(**args)  # type: ignore[arg-type]


def _tier(plan: FabricPlan, name: str) -> clos.Tier | None:
    return next((t for t in plan.tiers if t.name == name), None)


# --- Al-Fares et al. 2008, Sec. 3: k = 48 gives 27,648 hosts on 2,880 switches.

def test_al_fares_k48_closed_forms() -> None:
    # The paper's k^3/4 hosts on 5k^2/4 switches; the figures for k = 48 are published
    # checks (published_checks.network: al-fares-k48-hosts, -switches).
    k = 48
    assert clos.max_hosts_fat_tree(k) == k**3 // 4
    assert clos.switches_fat_tree(k) == 5 * k**2 // 4
    assert clos.max_endpoints(k, 3) == clos.max_hosts_fat_tree(k)


def test_al_fares_k48_built_tier_by_tier() -> None:
    ref = catalogue.get("al_fares_k48")
    plan, k = _size(ref), ref.radix
    # k pods x k/2 edge, k pods x k/2 aggregation, (k/2)^2 core.
    assert [t.switches for t in plan.tiers] == [k * k // 2, k * k // 2, (k // 2) ** 2]
    assert plan.switches == ref.switches
    assert all(t.oversubscription in (1.0, None) for t in plan.tiers)
    # Full bisection (the paper's goal): half the hosts at line rate.
    assert plan.bisection_bytes_per_s == pytest.approx(ref.num_gpus / 2 * ref.nic_bytes_per_s)


# --- Two-tier limits: k^2/2 hosts on 3k/2 switches; DeepSeek's FT2 row (64 ports).

def test_leaf_spine_limits_match_deepseek_ft2() -> None:
    assert clos.max_hosts_leaf_spine(64) == 2_048
    assert clos.switches_leaf_spine(64) == 96
    plan = _size(catalogue.get("deepseek_ft2"))
    assert plan.switches == catalogue.get("deepseek_ft2").switches == 96
    assert plan.switch_links == 2_048
    assert clos.tiers_needed(2_048, 64) == 2
    assert clos.tiers_needed(2_049, 64) == 3


def test_leaf_spine_refuses_what_needs_three_tiers() -> None:
    with pytest.raises(ValueError, match="three tiers"):
        _size(catalogue.get("deepseek_ft2"), num_gpus=2_056)


@pytest.mark.parametrize("fabric_id", ["deepseek_mpft", "deepseek_ft3"])
def test_deepseek_topology_table_switch_counts(fabric_id: str) -> None:
    ref = catalogue.get(fabric_id)
    plan = _size(ref)
    assert plan.switches == ref.switches
    assert plan.endpoints == ref.num_gpus


def test_multi_plane_stays_two_tier_where_one_plane_needs_three() -> None:
    # 16,384 GPUs: eight 2,048-GPU planes of two tiers (DeepSeek: 768 switches) against
    # one rail-optimised three-tier fabric (B200 SuperPOD 64-SU row: 512+512+256).
    mpft = _size(catalogue.get("deepseek_mpft"))
    single = _size(catalogue.get("dgx_superpod_b200_64su"))
    assert len(mpft.tiers) == 2 and mpft.planes == 8
    assert len(single.tiers) == 3
    assert single.switches == 1_280
    assert mpft.switches / single.switches == pytest.approx(0.6)
    # Same bisection: both are 1:1 everywhere.
    assert mpft.bisection_bytes_per_s == pytest.approx(single.bisection_bytes_per_s)


# --- NVIDIA DGX SuperPOD tables, reproduced row by row.

@pytest.mark.parametrize("ref", [f for f in catalogue.REFERENCE_FABRICS
                                 if f.id.startswith("dgx_superpod")], ids=lambda f: f.id)
def test_dgx_superpod_rows(ref: catalogue.ReferenceFabric) -> None:
    plan = _size(ref)
    leaf, spine, core = (_tier(plan, n) for n in ("leaf", "spine", "core"))
    assert leaf is not None and spine is not None
    assert (leaf.switches, spine.switches) == (ref.leaf, ref.spine)
    assert leaf.links_up == ref.leaf_spine_links
    if ref.core is None:
        assert core is None
    else:
        assert core is not None and core.switches == ref.core
        assert spine.links_up == ref.spine_core_links
    ufm = UFM_CABLES if ref.id.startswith("dgx_superpod_h100") else 0
    assert plan.host_links + ufm == ref.host_links


def test_h100_three_sus_need_sixteen_spines_not_twelve() -> None:
    # 24 leaves x 32 uplinks = 768 links would fit 12 spines, but 12 does not divide
    # a leaf's 32 uplinks; Table 4 provisions 16 (published_checks.network:
    # superpod-h100-3su-spines), as many as for 4 units' 1,024 links.
    assert clos.switches_above(768, 64, 32) == clos.switches_above(1_024, 64, 32)
    assert clos.switches_above(768, 64, 32) > 768 // 64


# --- Oversubscription, optics, power.

def test_three_to_one_leaf() -> None:
    assert clos.split_ports(64, 3.0) == (48, 16)
    assert clos.max_endpoints(64, 2, leaf_oversubscription=3.0) == 64 * 48
    # The largest 3:1 two-tier fabric of 64-port switches: 64 leaves of 48 hosts.
    plan = _size(catalogue.get("deepseek_ft2"), num_gpus=3_072, leaf_oversubscription=3.0)
    leaf = _tier(plan, "leaf")
    assert leaf is not None and leaf.oversubscription == pytest.approx(3.0)
    assert (leaf.switches, plan.switches) == (64, 64 + 16)
    # The uplinks, not the hosts, now bound the cut: a third of full bisection.
    assert plan.bisection_bytes_per_s == pytest.approx(3_072 / 2 * NDR / 3)


def test_transceivers_count_two_per_link() -> None:
    ref = catalogue.get("dgx_superpod_h100_4su")
    optical = _size(ref)
    copper = _size(ref, host_links_optical=False)
    assert copper.transceivers == 2 * 1_024
    assert optical.transceivers == 2 * (1_024 + 1_016)


def test_power_is_blank_unless_a_figure_is_given() -> None:
    ref = catalogue.get("dgx_superpod_h100_4su")
    assert _size(ref).power_watts is None
    watts = catalogue.TRANSCEIVER_WATTS_PER_400G_END["switch_side_twin_port_sr8"]
    assert watts == pytest.approx(7.5)  # 15 W per twin-port module, two 400G ends
    optics = _size(ref, watts_per_transceiver=watts).power_watts
    both = _size(ref, watts_per_transceiver=watts, watts_per_switch=1.0).power_watts
    assert optics is not None and both is not None
    assert both - optics == pytest.approx(48.0)  # 32 leaves + 16 spines at 1 W


# --- Bad inputs.

@pytest.mark.parametrize(("overrides", "match"), [
    ({"topology": "torus"}, "topology"),
    ({"radix": 63}, "radix"),
    ({"radix": 2}, "radix"),
    ({"leaf_oversubscription": 0.5}, "oversubscription"),
    ({"num_gpus": 0}, "num_gpus"),
    ({"nics_per_node": 0}, "nics_per_node"),
    ({"nic_bytes_per_s": 0.0}, "speeds"),
    ({"watts_per_switch": -1.0}, "watts_per_switch"),
    ({"topology": "fat_tree", "num_gpus": 70_000}, "three-tier"),
])
def test_bad_inputs(overrides: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _size(catalogue.get("dgx_superpod_h100_4su"), **overrides)


def test_unknown_reference_names_the_choices() -> None:
    with pytest.raises(ValueError, match="al_fares_k48"):
        catalogue.get("nope")


# --- Invariants: ports are never over-committed, hosts always fit.

@settings(max_examples=150, deadline=None)
@given(gpus=st.integers(1, 40_000), per_node=st.sampled_from([1, 4, 8]),
       radix=st.sampled_from([16, 32, 64, 128]),
       topology=st.sampled_from(fabric.TOPOLOGIES),
       ratio=st.sampled_from([1.0, 1.5, 3.0]))
def test_ports_are_never_overcommitted(gpus: int, per_node: int, radix: int,
                                       topology: str, ratio: float) -> None:
    try:
        plan = fabric.size_fabric(num_gpus=gpus, gpus_per_node=per_node,
                                  nics_per_node=per_node, nic_bytes_per_s=NDR, radix=radix,
                                  port_bytes_per_s=NDR, topology=topology,
                                  leaf_oversubscription=ratio)
    except ValueError as err:  # too big for the radix: the one allowed failure
        assert "tier" in str(err) or "fit" in str(err)
        return
    leaf = plan.tiers[0]
    assert plan.endpoints <= leaf.switches * leaf.down_ports
    for lower, upper in zip(plan.tiers, plan.tiers[1:], strict=False):
        assert lower.links_up == lower.switches * lower.up_ports
        assert lower.links_up <= upper.switches * upper.down_ports
    assert plan.bisection_bytes_per_s <= plan.endpoints / 2 * NDR * (1 + 1e-12)
    assert plan.transceivers == 2 * plan.links


# --- Traffic patterns.

def test_ring_allreduce_rail_aligned_ignores_spine_oversubscription() -> None:
    # One ring per rail leaves a 3:1 leaf (16 x 400G uplinks) through one flow.
    uplinks = 16 * NDR
    bw = fabric_traffic.ring_allreduce_bytes_per_s_per_gpu(
        NDR, leaves_spanned=4, rings_per_leaf=1, leaf_uplink_bytes_per_s=uplinks)
    assert bw == NDR
    # A node-local leaf whose 8 rings share one 400G uplink gets an eighth.
    thin = fabric_traffic.ring_allreduce_bytes_per_s_per_gpu(
        NDR, leaves_spanned=4, rings_per_leaf=8, leaf_uplink_bytes_per_s=NDR)
    assert thin == pytest.approx(NDR / 8)


def test_ring_allreduce_time_uses_nccl_factor() -> None:
    # nccl-tests PERFORMANCE.md: busbw = algbw x 2(n-1)/n. Scaling-book: an H100 node
    # egresses 8 x 400 Gb/s = 400 GB/s, NDR's 50 GB/s per GPU.
    t = fabric_traffic.ring_allreduce_time_s(1e9, 1024, NDR)
    assert t == pytest.approx(2 * 1023 / 1024 * 1e9 / NDR)
    assert fabric_traffic.alltoall_time_s(1e9, 8, NDR) == pytest.approx(7 / 8 * 1e9 / NDR)


def test_alltoall_spine_share() -> None:
    # SuperPOD H100, 1,024 GPUs; a rail leaf reaches 32 nodes = 256 GPUs with PXN.
    local = fabric_traffic.gpus_under_one_leaf(leaf_down_ports=32, gpus_per_node=8,
                                               nics_per_node=8, rail_optimized=True)
    assert local == 256
    assert fabric_traffic.alltoall_cross_fraction(1024, local) == pytest.approx(0.75)
    assert fabric_traffic.alltoall_bytes_per_s_per_gpu(NDR, 1024, [(local, 1.0)]) == NDR
    at_3 = fabric_traffic.alltoall_bytes_per_s_per_gpu(NDR, 1024, [(local, 3.0)])
    assert at_3 == pytest.approx(NDR / (3 * 0.75))
    # Without rail optimisation a 32-port leaf holds 4 whole nodes: 32 GPUs.
    node_local = fabric_traffic.gpus_under_one_leaf(leaf_down_ports=32, gpus_per_node=8,
                                                    nics_per_node=8, rail_optimized=False)
    assert node_local == 32
    worse = fabric_traffic.alltoall_bytes_per_s_per_gpu(NDR, 1024, [(node_local, 3.0)])
    assert worse == pytest.approx(NDR / (3 * 992 / 1024))
    # Three tiers: the tighter of the leaf and the pod boundary wins.
    both = fabric_traffic.alltoall_bytes_per_s_per_gpu(NDR, 4096, [(256, 1.0), (1024, 2.0)])
    assert both == pytest.approx(NDR / (2 * 0.75))


def test_incast_is_receiver_bound() -> None:
    assert fabric_traffic.incast_bytes_per_s_per_sender(31, NDR, NDR) == pytest.approx(NDR / 31)
    assert fabric_traffic.incast_bytes_per_s_per_sender(1, NDR, NDR / 2) == NDR / 2
    assert fabric_traffic.incast_time_s(31, 2**20, NDR) == pytest.approx(31 * 2**20 / NDR)
    with pytest.raises(ValueError, match="n_senders"):
        fabric_traffic.incast_bytes_per_s_per_sender(0, NDR, NDR)


def test_more_leaf_oversubscription_never_buys_more_switches() -> None:
    # Found on screen: 1.1:1 on 64-port switches split 33:31, and 31 (prime) uplinks
    # needed 31 spines (63 switches against 48 non-blocking). A leaf leaves an up port
    # unused instead: 33 down, 30 up, 15 spines, 1.1:1 as built.
    counts = []
    for step in range(41):
        r = 1 + step / 20
        result = calculators.compute("fabric_sizing", leaf_oversubscription=r)
        counts.append(result.value("switches"))
        assert result.value("leaf_down_up") <= r + 1e-9
    assert all(b <= a for a, b in itertools.pairwise(counts)), counts
    (leaf, spine) = fabric.two_tier("leaf_spine", 128, 8, 64, 1.1) or []
    assert (leaf.down_ports, leaf.up_ports, spine.switches) == (33, 30, 15)
