"""The switch catalogue (catalogues.switches), the ``switch`` choice of fabric_sizing
with its radix and port-speed overrides, planes (a NIC's ports divided among
independent fabrics), and the reference designs built on them (catalogues.fabrics).

The counts the sources print are published checks (published_checks/network.py); here
the calculator is held to the catalogue's entries, and the rules are held as rules.
"""

from __future__ import annotations

from typing import Any

import pytest

import calculators
from calculators.catalogues import fabrics, switches
from calculators.core import share
from calculators.core.spec import ValidationError
from calculators.formulas.fabric import sizing

GBPS = 1e9 / 8


def _fabric(**inputs: object) -> dict[str, Any]:
    result = calculators.compute("fabric_sizing", **inputs)
    return {name: result.value(name) for name in result.computed.values}


@pytest.mark.parametrize("switch", switches.SWITCHES.values(), ids=list(switches.SWITCHES))
def test_ports_times_speed_is_the_chip(switch: switches.Switch) -> None:
    # Every way of running a chip uses all of it: radix x port speed = its capacity.
    assert switch.capacity_bits_per_s == pytest.approx(switch.chip_bits_per_s, rel=1e-12)
    assert switch.radix % 2 == 0 and switch.source
    assert switch.name.startswith(f"{switch.chip_bits_per_s / 1e12:g} Tb/s")


def test_the_generations() -> None:
    by_chip: dict[float, set[int]] = {}
    for switch in switches.SWITCHES.values():
        by_chip.setdefault(switch.chip_bits_per_s, set()).add(switch.radix)
    # 25.6, 51.2, 102.4 Tb/s single chips, and the 144-port InfiniBand and the
    # multi-chip 512 x 800G systems.
    assert sorted(by_chip) == [25.6e12, 51.2e12, 102.4e12, 115.2e12, 409.6e12]
    assert by_chip[51.2e12] == {64, 128, 256}
    assert by_chip[102.4e12] == {64, 128, 256, 512}
    # Only NVIDIA's Spectrum-6 parts are announced rather than shipping.
    assert {s.id for s in switches.SWITCHES.values() if s.announced} == {
        "sn6810_800g", "sn6810_200g", "sn6800_800g"}
    with pytest.raises(ValueError, match="unknown switch"):
        switches.get("tomahawk7")


def test_the_switch_choice_fills_radix_and_port_speed() -> None:
    calc = calculators.get("fabric_sizing")
    assert {c.value for c in calc.param("switch").choices} == set(switches.SWITCHES)
    for switch_id in ("qm9700_ndr", "sn5600_800g", "tomahawk6_200g", "q3400_xdr"):
        switch = switches.SWITCHES[switch_id]
        chosen = _fabric(switch=switch_id, num_gpus=2048)
        given = _fabric(switch_radix=switch.radix, num_gpus=2048,
                        switch_port_bandwidth=switch.port_bytes_per_s)
        assert chosen == given, switch_id
    # An override wins over the switch, and the note says so.
    result = calculators.compute("fabric_sizing", switch="tomahawk6_200g", switch_radix=64,
                                 switch_port_bandwidth="400Gb/s")
    assert result.value("switches") == _fabric(switch="qm9700_ndr")["switches"]
    assert "given instead of" in result.computed.notes[0]
    announced = calculators.compute("fabric_sizing", switch="sn6810_800g")
    assert "Announced" in announced.computed.notes[0]
    with pytest.raises(ValidationError) as err:
        calculators.compute("fabric_sizing", switch_radix=63)
    assert err.value.input_name == "switch_radix"


def test_old_links_still_decode() -> None:
    # Before the switch choice a link carried the radix and port speed themselves; they
    # load as overrides and give the same fabric as the switch they described.
    calc = calculators.get("fabric_sizing")
    texts, notices = share.decode_state(calc, "num_gpus:16384,switch_radix:64")
    assert notices == []
    old = calculators.compute("fabric_sizing", **texts)
    assert old.value("switches") == _fabric(num_gpus=16384, switch="qm9700_ndr")["switches"]
    # A link without them (the old default, 128 x 400G) is the new default switch.
    texts, _ = share.decode_state(calc, "num_gpus:8192")
    assert calculators.compute("fabric_sizing", **texts).value("tiers") == 2


def test_planes_divide_the_nic_ports() -> None:
    assert sizing.plane_count("multi_plane", 8, None) == 8
    assert sizing.plane_count("rail_optimized", 16, None) == 1
    assert sizing.plane_count("rail_optimized", 16, 2) == 2
    with pytest.raises(ValueError, match="divide"):
        sizing.plane_count("rail_optimized", 8, 3)
    with pytest.raises(ValidationError) as err:
        calculators.compute("fabric_sizing", planes=3)
    assert err.value.input_name == "planes"
    # One plane given explicitly is the plain fabric.
    assert _fabric(planes=1) == _fabric()


def test_two_planes_of_slower_ports_reach_further() -> None:
    # An 800G NIC on the 51.2 Tb/s chip: as 64 x 800G, one port per NIC, two tiers hold
    # k^2/2 = 2,048 GPUs; as 128 x 400G with the NIC's two ports on two planes, 8,192,
    # each GPU still at 800G, on twice the switches per GPU.
    fast = _fabric(switch="sn5600_800g", nic_port_bandwidth="800Gb/s", num_gpus=2048)
    split = _fabric(switch="sn5600_400g", nic_port_bandwidth="800Gb/s", num_gpus=2048,
                    planes=2)
    assert (fast["max_gpus_two_tiers"], split["max_gpus_two_tiers"]) == (2048, 8192)
    assert fast["nic_bandwidth_per_gpu"] == split["nic_bandwidth_per_gpu"] == 800 * GBPS
    assert split["alltoall_bandwidth_per_gpu"] == pytest.approx(800 * GBPS)
    assert (fast["switches"], split["switches"]) == (96, 96)
    assert split["host_links"] == 2 * fast["host_links"]
    # Past 2,048 GPUs the 800G ports need a third tier; the two planes stay at two.
    assert _fabric(switch="sn5600_800g", nic_port_bandwidth="800Gb/s",
                   num_gpus=8192)["tiers"] == 3
    assert _fabric(switch="sn5600_400g", nic_port_bandwidth="800Gb/s", num_gpus=8192,
                   planes=2)["tiers"] == 2


def _reference(ref: fabrics.ReferenceFabric) -> dict[str, object]:
    return {"num_gpus": ref.num_gpus, "gpus_per_node": ref.gpus_per_node,
            "nics_per_node": ref.nics_per_node, "nic_port_bandwidth": ref.nic_bytes_per_s,
            "switch_radix": ref.radix, "switch_port_bandwidth": ref.port_bytes_per_s,
            "topology": ref.topology, "leaf_oversubscription": ref.leaf_oversubscription,
            **({} if ref.planes is None else {"planes": ref.planes})}


NEW_DESIGNS = [f for f in fabrics.REFERENCE_FABRICS
               if f.id == "alibaba_hpn_pod" or f.id.startswith("rail_2tier_")]


@pytest.mark.parametrize("ref", NEW_DESIGNS, ids=[f.id for f in NEW_DESIGNS])
def test_reference_designs_through_the_calculator(ref: fabrics.ReferenceFabric) -> None:
    out = _fabric(**_reference(ref))
    assert out["tiers"] == 2
    assert out["planes"] == ref.planes
    assert (out["leaf_switches"], out["spine_switches"]) == (ref.leaf, ref.spine)
    assert out["host_links"] == ref.host_links
    if ref.leaf_spine_links is not None:
        assert out["switch_links"] == ref.leaf_spine_links
    if ref.derived:  # the construction fills every port: the largest two-tier fabric
        assert out["max_gpus_two_tiers"] == ref.num_gpus
        assert out["bisection_fraction"] == pytest.approx(1.0)


def test_alibaba_hpn_pod() -> None:
    ref = fabrics.get("alibaba_hpn_pod")
    out = _fabric(**_reference(ref))
    # Each plane takes one 200G port of every NIC: half the NIC at half the port speed.
    assert out["nic_bandwidth_per_gpu"] == 400 * GBPS and ref.port_bytes_per_s == 200 * GBPS
    # A ToR holds one port of 128 hosts: a segment of 1,024 GPUs is one leaf hop apart.
    result = calculators.compute("fabric_sizing", **_reference(ref))
    assert "under one leaf for 1,024 GPUs" in result.computed.notes[1]
    # 128 down, 120 up: 1.067:1 costs a uniform alltoall nothing, since 1/15 of it stays
    # in the segment (15 x 1.067 / 16 < 1), and the bisection is 120/128 of full.
    assert out["leaf_down_up"] == pytest.approx(128 / 120)
    assert out["alltoall_bandwidth_per_gpu"] == pytest.approx(400 * GBPS)
    assert out["bisection_fraction"] == pytest.approx(120 / 128)
    # On one plane the same 51.2 Tb/s switches at 400G need a third tier for the pod.
    one = _fabric(num_gpus=ref.num_gpus, switch="sn5600_400g")
    assert one["tiers"] == 3
