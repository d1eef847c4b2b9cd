"""fabric_sizing: published fabrics through the calculator, the radix limits of the
papers, consistency with collective_time (one implementation of each cost), what
oversubscription does to each pattern, and every bad input.

Sources: Al-Fares, Loukissas, Vahdat, SIGCOMM 2008, Sec. 3 (k-ary fat tree: k^3/4
hosts); NVIDIA DGX SuperPOD reference architectures (H100 Table 4, B200 larger
configurations); Zhao et al. (DeepSeek), ISCA 2025, Sec. 5 (multi-plane fat tree:
"up to 16,384 GPUs", 768 switches). Switch counts are exact integers and compared
exactly.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

import calculators
from calculators.catalogues import fabrics, hardware, switches
from calculators.catalogues.presets import presets_for

NDR = 50e9  # 400 Gb/s per direction
#: The DGX SuperPOD H100/B200 switch, 64 ports of 400G (25.6 Tb/s): the tests of the
#: SuperPOD's and DeepSeek's figures name it; the calculator's default is 128 ports.
QM9700 = {"switch": "qm9700_ndr"}


def _fabric(**inputs: object) -> dict[str, Any]:
    result = calculators.compute("fabric_sizing", **inputs)
    return {name: result.value(name) for name in result.computed.values}


def _reference(fabric_id: str) -> dict[str, object]:
    ref = fabrics.get(fabric_id)
    return {"num_gpus": ref.num_gpus, "gpus_per_node": ref.gpus_per_node,
            "nics_per_node": ref.nics_per_node, "nic_port_bandwidth": ref.nic_bytes_per_s,
            "switch_radix": ref.radix, "switch_port_bandwidth": ref.port_bytes_per_s,
            "topology": ref.topology, "leaf_oversubscription": ref.leaf_oversubscription,
            **({} if ref.planes is None else {"planes": ref.planes})}


@pytest.mark.parametrize("fabric_id", ["dgx_superpod_h100_4su", "dgx_superpod_b200_16su",
                                       "dgx_superpod_b200_64su", "dgx_superpod_b300_xdr_4su"])
def test_superpod_rows_through_the_calculator(fabric_id: str) -> None:
    # Every tier's switch count as NVIDIA's tables print it: exact.
    ref = fabrics.get(fabric_id)
    out = _fabric(**_reference(fabric_id))
    assert (out["leaf_switches"], out["spine_switches"]) == (ref.leaf, ref.spine)
    assert out["core_switches"] == (ref.core or 0)
    assert out["switch_links"] == (ref.leaf_spine_links or 0) + (ref.spine_core_links or 0)
    assert out["bisection_fraction"] == pytest.approx(1.0)


@pytest.mark.parametrize(("fabric_id", "tiers"), [("deepseek_ft2", 2), ("deepseek_mpft", 2),
                                                  ("deepseek_ft3", 3), ("al_fares_k48", 3)])
def test_published_designs_have_their_tiers(fabric_id: str, tiers: int) -> None:
    # Their switch totals are published checks (published_checks/network.py).
    assert _fabric(**_reference(fabric_id))["tiers"] == tiers


def test_the_radix_limits_decide_the_tiers() -> None:
    # The limits themselves (k^2/2, k^3/4, DeepSeek's 16,384) are published checks;
    # here, what they decide on 64-port switches: one node past 2,048 GPUs takes a
    # third tier, and a rail-optimised and a node-per-leaf fabric have the same limits.
    assert _fabric(num_gpus=2_048, **QM9700)["tiers"] == 2
    assert _fabric(num_gpus=2_056, **QM9700)["tiers"] == 3
    tree = _fabric(topology="fat_tree", **QM9700)
    assert (tree["max_gpus_two_tiers"], tree["max_gpus_three_tiers"]) == (2_048, 65_536)
    planes = _fabric(topology="multi_plane", num_gpus=16_384, **QM9700)
    assert (planes["planes"], planes["tiers"]) == (8, 2)
    # A 3:1 leaf holds 48 hosts: the oversubscribed limits are larger, but the
    # non-blocking ones the output reports do not move.
    assert _fabric(leaf_oversubscription=3, **QM9700)["max_gpus_two_tiers"] == 2_048


def test_default_switch_is_the_51_2_tbps_generation() -> None:
    # Issue 32, item 11: the default 64-port 25.6 Tb/s switch forced three tiers at
    # 8,192 GPUs. The default is now 128 x 400G, a 51.2 Tb/s switch (NVIDIA SN5600,
    # SN5000 hardware user manual, Data Interfaces: 128 ports of 400GbE; Broadcom
    # Tomahawk 5 alike): k^2/2 = 8,192 GPUs in two tiers, k^3/4 = 524,288 in three.
    switch = switches.DEFAULT_SWITCH
    assert (switch.radix, switch.port_bytes_per_s) == (128, NDR)
    assert switch.capacity_bits_per_s == pytest.approx(51.2e12)
    assert switches.SWITCHES["qm9700_ndr"].capacity_bits_per_s == pytest.approx(25.6e12)
    calc = calculators.get("fabric_sizing")
    assert calc.param("switch").default == switch.id
    # The radix and port speed are overrides, blank by default: the switch fills them.
    assert calc.param("switch_radix").default is None
    assert calc.param("switch_port_bandwidth").default is None
    tree = _fabric(topology="fat_tree")
    assert (tree["max_gpus_two_tiers"], tree["max_gpus_three_tiers"]) == (8_192, 524_288)
    # 8,192 GPUs, rail-optimised, non-blocking: 128 leaves + 64 spines, two tiers.
    new = _fabric(num_gpus=8_192)
    assert (new["tiers"], new["leaf_switches"], new["spine_switches"]) == (2, 128, 64)
    assert new["switches"] == 192 and new["transceivers"] == 32_768
    # The 64-port switch needs a third tier there: 256 + 256 + 128 = 640 switches.
    old = _fabric(num_gpus=8_192, **QM9700)
    assert (old["tiers"], old["switches"], old["transceivers"]) == (3, 640, 49_152)
    # One node past 8,192 GPUs takes the third tier.
    assert _fabric(num_gpus=8_200)["tiers"] == 3


def test_oversubscription_hurts_the_alltoall_not_the_ring() -> None:
    # 1,024 GPUs on 3:1 rail leaves (48 down, 16 up): a rail leaf reaches 48 nodes
    # (384 GPUs) through PXN, so 5/8 of an alltoall climbs 16 uplinks shared by 48 NICs.
    full, thin = _fabric(**QM9700), _fabric(leaf_oversubscription=3, **QM9700)
    assert full["alltoall_bandwidth_per_gpu"] == pytest.approx(NDR)
    assert thin["alltoall_bandwidth_per_gpu"] == pytest.approx(NDR / (3 * 0.625))
    assert thin["allreduce_bandwidth_per_gpu"] == pytest.approx(NDR)
    assert thin["leaf_down_up"] == pytest.approx(3.0)
    # The uplinks bound the cut: 384 uplinks, half each way.
    assert thin["bisection_bandwidth"] == pytest.approx(384 / 2 * NDR)
    assert thin["switches"] < full["switches"]
    # A node-per-leaf fat tree loses more: its leaf holds only 6 whole nodes.
    tree = _fabric(topology="fat_tree", leaf_oversubscription=3, **QM9700)
    assert tree["alltoall_bandwidth_per_gpu"] == pytest.approx(NDR / (3 * (1024 - 48) / 1024))
    # On the default 128-port switch a 3:1 rail leaf (72 down, 24 up: 3 spines divide 24,
    # where 32 uplinks would need 4) reaches 72 nodes, so 7/16 of the alltoall climbs.
    rail = _fabric(leaf_oversubscription=3)
    assert (rail["leaf_switches"], rail["spine_switches"]) == (16, 3)
    assert rail["alltoall_bandwidth_per_gpu"] == pytest.approx(NDR / (3 * (128 - 72) / 128))


def test_incast_is_bound_by_the_receivers_not_the_fabric() -> None:
    one = _fabric(incast_senders=31)
    assert one["incast_bandwidth_per_gpu"] == pytest.approx(NDR / 31)
    # A sharded parameter server: 64 workers over 16 servers at 100 GbE.
    ps = _fabric(incast_senders=64, incast_receivers=16, receiver_bandwidth="100Gb/s")
    assert ps["incast_bandwidth_per_gpu"] == pytest.approx(16 * 12.5e9 / 64)
    # Oversubscribing the leaves does not change it.
    assert _fabric(incast_senders=31, leaf_oversubscription=3)[
        "incast_bandwidth_per_gpu"] == one["incast_bandwidth_per_gpu"]


@pytest.mark.parametrize("overrides", [
    {}, {"leaf_oversubscription": 3}, {"topology": "fat_tree", "leaf_oversubscription": 2},
    {"num_gpus": 8192, "topology": "fat_tree", "spine_oversubscription": 2},
    {"num_gpus": 4096, "nics_per_node": 4, "gpu": "b200"},
    {"num_gpus": 16, "gpu": "a100_80gb_sxm", "nic_port_bandwidth": "200Gb/s"},
], ids=["default", "rail-3to1", "tree-2to1", "three-tier-2to1", "b200-4nic", "two-nodes"])
def test_times_equal_collective_time_with_the_same_bandwidth(
        overrides: dict[str, object]) -> None:
    """One implementation of each cost: collective_time, given this fabric's per-GPU
    bandwidth at line rate with no latency, answers the same times."""
    out = _fabric(message_bytes="256MiB", **overrides)
    gpu = hardware.get(str(overrides.get("gpu", "h100_sxm")))
    common = {"message_bytes": "256MiB", "ranks": out_ranks(overrides),
              "ranks_per_node": 8, "intra_node_bandwidth": gpu.scale_up_bandwidth,
              "efficiency": 1, "latency": 0, "inter_node_latency": 0}
    ring = calculators.compute("collective_time", collective="allreduce", algorithm="ring",
                               inter_node_bandwidth=out["allreduce_bandwidth_per_gpu"],
                               **common)
    a2a = calculators.compute("collective_time", collective="alltoall",
                              algorithm="hierarchical",
                              inter_node_bandwidth=out["alltoall_bandwidth_per_gpu"], **common)
    assert out["allreduce_time_s"] == pytest.approx(ring.value("time_s"), rel=1e-12)
    assert out["alltoall_time_s"] == pytest.approx(a2a.value("time_s"), rel=1e-12)


def out_ranks(overrides: dict[str, object]) -> int:
    return int(str(overrides.get("num_gpus", 1024)))


def test_time_follows_the_bandwidth() -> None:
    # A 3:1 leaf slows the alltoall by the bandwidth ratio; the ring allreduce not at all.
    full, thin = _fabric(), _fabric(leaf_oversubscription=3)
    assert thin["allreduce_time_s"] == full["allreduce_time_s"]
    ratio = full["alltoall_bandwidth_per_gpu"] / thin["alltoall_bandwidth_per_gpu"]
    assert thin["alltoall_time_s"] == pytest.approx(full["alltoall_time_s"] * ratio, rel=1e-3)


def test_power_and_its_share() -> None:
    # 1,024 GPUs, rail-optimised 1:1: 1,024 NIC links + 1,024 leaf-spine links, optics
    # at both ends = 4,096 transceivers at NVIDIA's 8 W typical (MMA4Z00-NS400).
    out = _fabric(**QM9700)
    assert out["transceivers"] == 4_096
    assert out["fabric_power"] == pytest.approx(4_096 * 8.0)
    gpus = 1_024 * 700.0  # H100 SXM, 700 W board power
    assert out["fabric_power_share"] == pytest.approx(4_096 * 8.0 / (4_096 * 8.0 + gpus))
    copper = _fabric(host_links_optical=False, watts_per_switch=1000, **QM9700)
    assert copper["fabric_power"] == pytest.approx(2_048 * 8.0 + 48 * 1000.0)
    # The default 128-port switch: the same cables and optics on half the switches.
    assert _fabric()["transceivers"] == 4_096 and _fabric()["switches"] == 24
    none = _fabric(watts_per_transceiver="")
    assert none["fabric_power"] is None and none["fabric_power_share"] is None
    # TPU v5p publishes no per-chip power: no share.
    assert _fabric(gpu="tpu_v5p")["fabric_power_share"] is None


def test_chart_and_table() -> None:
    result = calculators.compute("fabric_sizing", num_gpus=8192, **QM9700)
    chart = result.computed.chart
    assert chart is not None and "alltoall" in chart and "this design" in chart
    table = result.computed.table
    assert table is not None
    assert [row[0] for row in table.rows] == ["NIC ports", "leaf", "spine", "core"]
    assert table.rows[3][1] == "128"  # B200 SuperPOD 32 SU: 128 core switches


def test_cluster_presets_fill_the_node() -> None:
    calc = calculators.REGISTRY["fabric_sizing"]
    assert {p.kind for p in presets_for(calc)} == {"cluster"}
    half = calc.compute(calculators.presets.preset_texts(
        calc, calculators.presets.get("dgx_h100_4nic")))
    assert half.inputs["nics_per_node"] == 4
    assert half.value("nic_bandwidth_per_gpu") == pytest.approx(NDR / 2)
    assert any("share" in w for w in half.computed.warnings)


@pytest.mark.parametrize(("raw", "name"), [
    ({"switch_radix": 63}, "switch_radix"),
    ({"switch_radix": 4, "leaf_oversubscription": 4}, "leaf_oversubscription"),
    ({"switch_radix": 8, "spine_oversubscription": 8}, "spine_oversubscription"),
    ({"num_gpus": 70_000, "topology": "fat_tree", **QM9700}, "num_gpus"),
    ({"num_gpus": 600_000, "topology": "fat_tree"}, "num_gpus"),
    ({"num_gpus": 4_096, "topology": "leaf_spine", **QM9700}, "topology"),
    ({"num_gpus": 8_200, "topology": "leaf_spine"}, "topology"),
    ({"incast_senders": 2_000}, "incast_senders"),
    ({"topology": "torus"}, "topology"),
    ({"gpus_per_node": 0}, "gpus_per_node"),
    ({"nic_port_bandwidth": "0 Gb/s"}, "nic_port_bandwidth"),
    ({"watts_per_transceiver": -1}, "watts_per_transceiver"),
    ({"incast_receivers": 0}, "incast_receivers"),
])
def test_bad_inputs_name_the_input(raw: dict[str, object], name: str) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("fabric_sizing", **raw)
    assert caught.value.input_name == name


def _two_tier_exhaustive(topology: str, nodes: int, rails: int, radix: int,
                         oversubscription: float) -> list[Any] | None:
    """two_tier's choice by trying every leaf port split, without its pruning."""
    from calculators.formulas.fabric import sizing
    from calculators.formulas.fabric.clos import split_ports, switches_above

    best = None
    top, _ = split_ports(radix, oversubscription)
    for down in range(top, 0, -1):
        leaves = sizing._leaves(topology, nodes, rails, down)
        if leaves > radix:
            break
        for up in range(math.ceil(down / oversubscription - 1e-9), radix - down + 1):
            try:
                spines = switches_above(leaves * up, radix, up)
            except ValueError:
                continue
            key = (leaves + spines, -down, -up, leaves)
            best = key if best is None or key < best else best
    if best is None:
        return None
    _, down, up, leaves = best
    return [sizing.Tier("leaf", leaves, -down, -up, leaves * -up),
            sizing.Tier("spine", switches_above(leaves * -up, radix, -up), radix, 0, 0)]


@pytest.mark.parametrize("radix", [4, 6, 10, 16, 18, 32, 34, 48, 64, 66, 100, 128, 512])
def test_two_tier_pruning_finds_what_trying_every_split_finds(radix: int) -> None:
    # Issue 36: trying every split took 1.3 s at 512 ports; the pruned search stops once
    # no split can beat the best, and must pick the same one.
    from calculators.formulas.fabric.sizing import two_tier

    wide = radix > 128  # the exhaustive search takes ~0.15 s a call at 512 ports
    for topology in ("leaf_spine", "rail_optimized"):
        for nodes in ((1000, 4096) if wide else (1, 3, 16, 31, 100, 257, 1000, 4096)):
            for rails in ((8,) if wide else (1, 4, 8)):
                for over in ((1.0, 1.1, 3.0) if wide else (1.0, 1.1, 1.5, 2.0, 3.0)):
                    if over > radix - 1:
                        continue
                    assert two_tier(topology, nodes, rails, radix, over) == \
                        _two_tier_exhaustive(topology, nodes, rails, radix, over)
