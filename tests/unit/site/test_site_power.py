"""Power as a site sees it (formulas.site.power), by hand, and cluster_sizing's outputs
of it for every accelerator that has a board power."""

from __future__ import annotations

import math

import pytest

import calculators
from calculators.catalogues import hardware, system_power
from calculators.formulas.fabric.sizing import size_fabric
from calculators.formulas.model.flops import energy_kwh
from calculators.formulas.site.power import (
    SitePower,
    fabric_watts_per_port,
    facility_load_watts,
    network_watts_per_gpu,
    swing_watts,
)

PORT_W = system_power.SWITCH_WATTS_PER_400G_PORT


def test_16384_h100s_at_the_dgx_h100_figure() -> None:
    """Llama 3 405B's 16,384 H100s, servers alone: 16,384 x 10.2 kW / 8 = 20.9 MW of IT,
    23.0 MW at a PUE of 1.1; the boards' swing from 700 W to 140 W is 9.18 MW."""
    site = SitePower(16_384, 700.0, 575.0, 0.0, 0.0, 1.1)
    assert site.it_watts == 16_384 * 10_200 / 8 == 20_889_600
    assert site.facility_watts == pytest.approx(22_978_560)
    assert swing_watts(16_384, 700.0, 0.2 * 700.0) == pytest.approx(16_384 * 560)
    assert swing_watts(16_384, 700.0, 0.2 * 700.0) == pytest.approx(9.175e6, rel=1e-3)


def test_energy_is_meta_s_method_with_the_whole_it_load() -> None:
    """GPU-hours x IT power per GPU x PUE: the Energy output's form, and never below it."""
    site = SitePower(8, 700.0, 575.0, 67.0, 137.0, 1.1)
    assert site.energy_kwh(1000.0) == pytest.approx(energy_kwh(1000.0, 1479.0, 1.1))
    assert site.energy_kwh(1000.0) == pytest.approx(1000 * 1.479 * 1.1)
    assert site.energy_kwh(1000.0) > energy_kwh(1000.0, 700.0, 1.1)


def test_facility_and_swing_refuse_the_impossible() -> None:
    with pytest.raises(ValueError, match="PUE"):
        facility_load_watts(1e6, 0.9)
    with pytest.raises(ValueError, match="waiting"):
        swing_watts(8, 700.0, 800.0)


def test_a_full_tree_per_port() -> None:
    """Two tiers: 3 switch ports and 4 link ends a NIC port; three: 5 and 6."""
    assert fabric_watts_per_port(tiers=2, watts_per_switch_port=10.0,
                                 watts_per_transceiver=1.0) == 34.0
    assert fabric_watts_per_port(tiers=3, watts_per_switch_port=10.0,
                                 watts_per_transceiver=1.0) == 56.0


def test_the_network_of_8192_gpus_by_hand() -> None:
    """fabric_sizing's default fabric for 1,024 nodes: 192 switches of 128 ports and 32,768
    optics; (192 x 128 x 747/64 + 32,768 x 8) / 8,192 = 67.0 W a GPU."""
    plan = size_fabric(num_gpus=8192, gpus_per_node=8, nics_per_node=8,
                       nic_bytes_per_s=50e9, radix=128, port_bytes_per_s=50e9,
                       topology="rail_optimized")
    assert (plan.switches, plan.transceivers) == (192, 32_768)
    watts = network_watts_per_gpu(num_gpus=8192, gpus_per_node=8, nics_per_node=8,
                                  nic_bytes_per_s=50e9, radix=128, port_bytes_per_s=50e9,
                                  watts_per_switch_port=PORT_W, watts_per_transceiver=8.0)
    assert watts == pytest.approx((192 * 128 * 747 / 64 + 32_768 * 8) / 8192)
    assert watts == pytest.approx(67.0, abs=0.05)


def test_a_node_the_fabric_calculator_does_not_take_is_priced_as_a_full_tree() -> None:
    """72 GPUs and 72 NICs a node (an NVL72 rack as one node): 1,152 GPUs are 1,152 NIC
    ports, two tiers of 128-port switches."""
    watts = network_watts_per_gpu(num_gpus=1152, gpus_per_node=72, nics_per_node=72,
                                  nic_bytes_per_s=50e9, radix=128, port_bytes_per_s=50e9,
                                  watts_per_switch_port=PORT_W, watts_per_transceiver=8.0)
    assert watts == pytest.approx(3 * PORT_W + 4 * 8.0)


GPUS = [g.id for g in hardware.ACCELERATORS.values() if g.power_watts is not None]


@pytest.mark.parametrize("gpu", sorted({"h100_sxm", "h800", "gb200", *GPUS}))
def test_cluster_sizing_gives_megawatts_for_every_part(gpu: str) -> None:
    result = calculators.compute("cluster_sizing", gpu=gpu, goodput=1)
    values = {name: result.value(name) for name in (
        "num_gpus", "it_watts_per_gpu", "it_load_watts", "facility_load_watts",
        "power_swing_watts", "site_energy_kwh", "energy_kwh")}
    for name, value in values.items():
        assert isinstance(value, float) and math.isfinite(value) and value > 0, name
    board = hardware.get(gpu).power_watts
    assert values["it_watts_per_gpu"] > board
    assert values["it_load_watts"] == pytest.approx(values["num_gpus"] * values["it_watts_per_gpu"])
    assert values["facility_load_watts"] == pytest.approx(values["it_load_watts"] * 1.1)
    assert values["power_swing_watts"] == pytest.approx(values["num_gpus"] * board * 0.8)
    assert values["site_energy_kwh"] > values["energy_kwh"]
    assert "MW" in result.to_dict()["outputs"]["facility_load_watts"]["text"] or \
        values["facility_load_watts"] < 1e6


def test_a_part_with_no_board_power_leaves_the_site_blank() -> None:
    result = calculators.compute("cluster_sizing", gpu="tpu_v5p", goodput=1)
    assert result.value("it_load_watts") is None
    given = calculators.compute("cluster_sizing", gpu="tpu_v5p", goodput=1,
                                gpu_power_watts=500)
    assert given.value("it_load_watts") > 0


def test_overrides_replace_each_part() -> None:
    result = calculators.compute("cluster_sizing", gpu="h100_sxm", goodput=1,
                                 host_watts_per_gpu=0, network_watts_per_gpu=0,
                                 storage_watts_per_gpu=0, wait_power_share=1)
    assert result.value("it_watts_per_gpu") == 700.0
    assert result.value("power_swing_watts") == 0.0


def test_an_ascend_910c_cluster_gets_megawatts_from_its_supernode() -> None:
    """No chip power is published; SemiAnalysis's 559 kW for CloudMatrix 384's 384 chips
    stands for the chip and its system: IT load, facility load, energy, but no swing."""
    result = calculators.compute("cluster_sizing", gpu="ascend_910c", goodput=1)
    per_gpu = result.value("it_watts_per_gpu")
    assert per_gpu > 559_000 / 384
    assert result.value("it_load_watts") == pytest.approx(result.value("num_gpus") * per_gpu)
    assert result.value("facility_load_watts") > 0
    assert result.value("power_swing_watts") is None
    assert any("559 kW" in note for note in result.to_dict()["notes"])
