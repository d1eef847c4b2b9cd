"""docs/network.md and docs/capstone.md: the fabric figures their prose quotes are what
fabric_sizing computes for the blocks they sit under, and the blocks that reproduce a
published design keep that design's switch.

Issue 32, item 11: the default switch became the 51.2 Tb/s generation (128 x 400G), so
every figure that came from the old 64-port default moved; a figure quoted from a paper
keeps the paper's switch in its block's inputs.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

import calculators
from bigmodel_guide.fence import find_fences, parse_fence
from calculators.catalogues import fabrics, switches

DOCS = Path(__file__).resolve().parents[3] / "docs"


@cache
def _text(chapter: str) -> str:
    """The chapter with its line breaks folded, as a reader sees a paragraph."""
    return " ".join((DOCS / chapter).read_text("utf-8").split())


@cache
def _blocks(chapter: str) -> dict[str, dict[str, object]]:
    found: dict[str, dict[str, object]] = {}
    for located in find_fences((DOCS / chapter).read_text("utf-8")):
        fence = parse_fence(located.source)
        if fence.calc_id == "fabric_sizing":
            assert fence.anchor is not None
            found[fence.anchor] = dict(fence.overrides)
    return found


def _run(chapter: str, anchor: str, *, default_switch: bool = False,
         **over: object) -> dict[str, Any]:
    """The block ``anchor`` with ``over`` changed; ``default_switch`` drops the block's
    own switch for the calculator's default."""
    inputs = {**_blocks(chapter)[anchor], **over}
    if default_switch:
        inputs.pop("switch", None)
        inputs.pop("switch_radix", None)
        inputs.pop("switch_port_bandwidth", None)
    result = calculators.compute("fabric_sizing", **inputs)
    return {name: result.value(name) for name in result.computed.values}


def _says(chapter: str, *phrases: str) -> None:
    for phrase in phrases:
        assert phrase in _text(chapter), f"docs/{chapter} should say: {phrase!r}"


@pytest.mark.parametrize(("chapter", "anchor"), [
    ("network.md", "superpod-1024"), ("network.md", "three-tiers-16k"),
    ("network.md", "multi-plane-16k"), ("network.md", "leaf-three-to-one"),
    ("capstone.md", "deepseek-v3-fabric"), ("capstone.md", "deepseek-v3-fabric-oversubscribed"),
])
def test_published_designs_keep_their_switch(chapter: str, anchor: str) -> None:
    # NVIDIA's SuperPOD tables and DeepSeek's comparison are built on 64-port 400G
    # switches: their blocks name that switch (or its radix), whatever the calculator's
    # default is.
    block = _blocks(chapter)[anchor]
    qm9700 = switches.SWITCHES["qm9700_ndr"]
    assert block.get("switch") == qm9700.id or block.get("switch_radix") == qm9700.radix


def test_network_chapter_superpod_figures() -> None:
    out = _run("network.md", "superpod-1024")
    assert (out["leaf_switches"], out["spine_switches"], out["switches"]) == (32, 16, 48)
    _says("network.md", "Two tiers, 32 leaves and 16 spines: 48 switches")
    default = _run("network.md", "superpod-1024", default_switch=True)
    assert (default["leaf_switches"], default["spine_switches"]) == (16, 8)
    assert default["transceivers"] == out["transceivers"]
    _says("network.md", "the same cluster takes 16 leaves and 8 spines, 24 switches")
    three = _run("network.md", "three-tiers-16k")
    assert three["switches"] == 1_280
    assert _run("network.md", "three-tiers-16k", default_switch=True)["switches"] == 640
    _says("network.md", "640 switches at 16,384 GPUs, half the 64-port fabric's 1,280")


def test_network_chapter_two_tiers_at_8k_on_the_default_switch() -> None:
    # The figure: 8,192 GPUs on 128-port switches take two tiers and 192
    # switches; on 64-port switches three tiers and 640.
    assert "switch_radix" not in _blocks("network.md")["two-tiers-8k"]
    new = _run("network.md", "two-tiers-8k")
    assert (new["tiers"], new["leaf_switches"], new["spine_switches"]) == (2, 128, 64)
    assert new["switches"] == 192
    old = _run("network.md", "two-tiers-8k", switch_radix=64)
    assert (old["tiers"], old["leaf_switches"], old["spine_switches"],
            old["core_switches"]) == (3, 256, 256, 128)
    _says("network.md",
          f"(256 leaves, 256 spines and 128 core switches: 640, with "
          f"{old['transceivers']:,} transceivers)",
          f"128 leaves and 64 spines, 192 switches, {new['transceivers']:,} transceivers",
          f"two tiers hold {new['max_gpus_two_tiers']:,} GPUs",
          f"and three {new['max_gpus_three_tiers']:,}")


def test_capstone_llama_fabric_on_the_default_switch() -> None:
    block = _blocks("capstone.md")["llama3-70b-fabric"]
    assert "switch_radix" not in block
    out = _run("capstone.md", "llama3-70b-fabric")
    assert (out["tiers"], out["leaf_switches"], out["spine_switches"]) == (2, 128, 64)
    kw = out["fabric_power"] / 1e3
    _says("capstone.md",
          f"128 leaves and 64 spines, {out['switches']} switches in all, with "
          f"{out['transceivers']:,} transceivers drawing {kw:.0f} kW at 8 W each, about "
          f"{out['fabric_power_share']:.0%} of the GPUs' and the fabric's power")
    old = _run("capstone.md", "llama3-70b-fabric", switch_radix=64)
    _says("capstone.md", f"{old['switches']} switches and {old['fabric_power'] / 1e3:.0f} kW.")
    thin = _run("capstone.md", "llama3-70b-fabric", leaf_oversubscription=3)
    _says("capstone.md",
          f"shrinks to {thin['switches']} switches and {thin['fabric_power'] / 1e3:.0f} kW",
          f"at {thin['alltoall_bandwidth_per_gpu'] / 1e9:.1f} GB/s per GPU")
    assert thin["allreduce_bandwidth_per_gpu"] == pytest.approx(50e9)


def test_capstone_deepseek_fabric_figures() -> None:
    full = _run("capstone.md", "deepseek-v3-fabric")
    thin = _run("capstone.md", "deepseek-v3-fabric-oversubscribed")
    assert full["tiers"] == 3 and thin["tiers"] == 2
    _says("capstone.md",
          f"two tiers and {thin['switches']} switches, from {full['switches']}",
          f"an alltoall gets {thin['alltoall_bandwidth_per_gpu'] / 1e9:.1f} GB/s per GPU")
    # And what the default switch would give, quoted beside them.
    new_full = _run("capstone.md", "deepseek-v3-fabric", default_switch=True)
    new_thin = _run("capstone.md", "deepseek-v3-fabric-oversubscribed", default_switch=True)
    assert new_full["tiers"] == 2
    _says("capstone.md",
          f"the non-blocking fabric takes two tiers and {new_full['switches']} switches, "
          f"and 3:1 leaves {new_thin['switches']} switches and "
          f"{new_thin['alltoall_bandwidth_per_gpu'] / 1e9:.1f} GB/s per GPU")


def test_network_chapter_cites_the_switch_and_hpn() -> None:
    _says("network.md", "SN5000 hardware user manual, Data Interfaces", "Tomahawk 5",
          "Qian et al.", "SIGCOMM 2024", "dual-plane")


def test_network_chapter_switch_table_and_two_tier_reach() -> None:
    # Every row of the chapter's table of switch cuts is what the calculator gives for
    # that switch with a NIC at the port's speed: k^2/2 on two tiers, k^3/4 on three.
    for switch in switches.SWITCHES.values():
        if switch.announced or switch.id in ("qm9700_ndr", "tomahawk4_200g"):
            continue  # the table names these under another entry of the same cut
        out = calculators.compute("fabric_sizing", switch=switch.id, num_gpus=64,
                                  nic_port_bandwidth=switch.port_bytes_per_s)
        two, three = out.value("max_gpus_two_tiers"), out.value("max_gpus_three_tiers")
        gbps = switch.port_gbps
        speed = f"{gbps / 1000:g}T" if gbps >= 1000 else f"{gbps:g}G"
        _says("network.md", f"| {switch.radix} × {speed} | {two:,} | {three:,} |")


def test_network_chapter_2026_fabrics() -> None:
    big = _run("network.md", "two-tiers-131k")
    assert (big["tiers"], big["planes"], big["max_gpus_two_tiers"]) == (2, 2, 131_072)
    _says("network.md",
          f"{big['leaf_switches']:,} leaves and {big['spine_switches']} spines over the two "
          f"planes, {big['switches']:,} switches, with {big['host_links']:,} NIC cables and "
          f"{big['transceivers']:,} link ends with optics")
    one = _run("network.md", "two-tiers-131k", switch="tomahawk6_400g", planes=1)
    assert one["tiers"] == 3
    _says("network.md", f"three tiers for this cluster: {one['switches']:,} switches but "
                        f"{one['transceivers']:,} link ends")
    assert one["transceivers"] == big["transceivers"] * 3 // 4  # "a quarter fewer optics"
    hpn = _run("network.md", "alibaba-hpn-pod")
    ref = fabrics.get("alibaba_hpn_pod")
    assert (hpn["leaf_switches"], hpn["spine_switches"]) == (ref.leaf, ref.spine)
    _says("network.md",
          f"{hpn['leaf_switches']} ToRs and {hpn['spine_switches']} aggregation switches",
          f"{hpn['host_links']:,} NIC cables")
    assert hpn["bisection_fraction"] == pytest.approx(120 / 128)


def test_network_chapter_hpn_reach_without_a_core() -> None:
    hpn = _run("network.md", "alibaba-hpn-pod")
    _says("network.md", f"two planes of these switches would reach "
                        f"{hpn['max_gpus_two_tiers']:,} GPUs, k²/2 per plane")
