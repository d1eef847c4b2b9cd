"""The system-power catalogue against the figures its entries cite, one test per system,
and the rule for parts with no published system (catalogues.system_power)."""

from __future__ import annotations

import pytest

from calculators.catalogues import hardware, system_power
from calculators.catalogues.system_power import SYSTEMS, host_share


@pytest.mark.parametrize(("system_id", "kw", "gpus", "gpu_watts"), [
    ("dgx_a100", 6.5, 8, 400.0),     # NVIDIA DGX A100 user guide: 6.5 kW max
    ("dgx_h100", 10.2, 8, 700.0),    # NVIDIA DGX H100/H200 user guide: 10.2 kW max
    ("dgx_b200", 14.3, 8, 1000.0),   # NVIDIA DGX B200 user guide: 14.3 kW max
    ("dgx_b300", 14.5, 8, 1100.0),   # NVIDIA DGX B300 user guide: 14.5 kW max
    ("gb200_nvl72", 120.0, 72, 1200.0),  # GB200 NVL72 rack, GTC 2024: 120 kW
    ("gb300_nvl72", 132.0, 72, 1400.0),  # Supermicro GB300 NVL72: 132-140 kW, low end
])
def test_each_published_system(system_id: str, kw: float, gpus: int,
                               gpu_watts: float) -> None:
    system = SYSTEMS[system_id]
    assert (system.system_watts, system.gpus, system.gpu_watts) == (kw * 1e3, gpus, gpu_watts)
    assert system.watts_per_gpu == pytest.approx(kw * 1e3 / gpus)
    assert system.host_watts_per_gpu == pytest.approx(kw * 1e3 / gpus - gpu_watts)
    assert system.source


def test_dgx_h100_by_hand() -> None:
    """10.2 kW / 8 = 1,275 W a GPU, 575 W beyond the 700 W board; ratio 10.2 / 5.6."""
    h100 = SYSTEMS["dgx_h100"]
    assert h100.watts_per_gpu == 1275.0
    assert h100.host_watts_per_gpu == 575.0
    assert h100.ratio == pytest.approx(1.8214, rel=1e-4)


def test_systems_hold_the_board_power_the_hardware_catalogue_has() -> None:
    for accelerator_id, system_id in system_power.BY_ACCELERATOR.items():
        assert hardware.get(accelerator_id).power_watts == SYSTEMS[system_id].gpu_watts


def test_a_part_with_no_published_system_is_derived_and_says_so() -> None:
    """The H800: the H100's 700 W board in an HGX H100 chassis, 700 x (1.82 - 1) = 575 W."""
    share = host_share("h800", 700.0)
    assert share.derived
    assert share.watts == pytest.approx(575.0)
    assert "assumption" in share.basis
    published = host_share("h100_sxm", 700.0)
    assert not published.derived and published.watts == 575.0


def test_an_unknown_part_falls_back_on_the_dgx_h100_ratio() -> None:
    share = host_share("some_future_part", 1000.0)
    assert share.derived
    assert share.watts == pytest.approx(1000.0 * (10_200 / 5_600 - 1))


def test_every_accelerator_with_a_board_power_gets_a_host_share() -> None:
    for gpu in hardware.ACCELERATORS.values():
        if gpu.power_watts is not None:
            share = host_share(gpu.id, gpu.power_watts)
            assert share.watts > 0
            assert share.derived == (gpu.id not in system_power.BY_ACCELERATOR)


def test_switch_and_storage_figures() -> None:
    """QM97X0 user manual: 747 W typical (passive cables), 1,720 W max (active), 64 ports;
    Llama 3: 7,500 storage servers for 16,384 GPUs, at an assumed 300 W each."""
    assert system_power.QM9700_TYPICAL_WATTS == 747.0
    assert system_power.QM9700_MAX_WATTS == 1720.0
    assert abs(system_power.SWITCH_WATTS_PER_400G_PORT - 747 / 64) < 1e-12
    assert round(system_power.SWITCH_WATTS_PER_400G_PORT, 2) == 11.67
    assert system_power.TRANSCEIVER_WATTS == 8.0
    assert system_power.storage_watts_per_gpu() == pytest.approx(7500 * 300 / 16384)
    assert 0 < system_power.WAIT_POWER_SHARE < 1
