"""docs/capstone.md, "Power at the site": every figure the section quotes is what
cluster_sizing computes for the chapter's Llama-class blocks (on H100s, on H800s, and
the same block on Ascend 910Cs), rounded as the prose rounds it."""

from __future__ import annotations

import re
from typing import Any

from calculators.catalogues import system_power
from calculators.formulas.site.power import swing_watts
from tests.unit.test_capstone_prose import _says, block, days_pm, layout, row, v


def mw(watts: float) -> str:
    return f"{watts / 1e6:.3g} MW"


def _parts(result: Any) -> tuple[float, float]:
    """(network W, storage W) per GPU, from the table's Site power row."""
    why = row(result, "Site power")[2]
    found = re.search(r"\+ ([\d.]+) W network \+ ([\d.]+) W storage", why)
    assert found is not None, why
    return float(found[1]), float(found[2])


def test_the_h100_cluster_at_the_site() -> None:
    result = block("llama3-70b-30-days")
    h100 = system_power.SYSTEMS["dgx_h100"]
    network, storage = _parts(result)
    _says(f"the rest of the server**, {h100.host_watts_per_gpu:.0f} W",
          f"10.2 kW for its eight GPUs, {h100.watts_per_gpu:,.0f} W each",
          f"**the scale-out fabric**, {network:.0f} W",
          f"{system_power.SWITCH_WATTS_PER_400G_PORT:.1f} W a port",
          f"**storage**, {storage:.0f} W",
          f"at {system_power.STORAGE_SERVER_WATTS:.0f} W each",
          f"That is {v(result, 'it_watts_per_gpu') / 1e3:.3g} kW per GPU",
          f"**IT load of {mw(v(result, 'it_load_watts'))}**",
          f"**facility load of {mw(v(result, 'facility_load_watts'))}**",
          f"Over {v(result, 'wall_clock_days'):.1f} days of wall-clock",
          f"read {v(result, 'site_energy_kwh') / 1e6:.3g} million kWh",
          f"twice the {v(result, 'energy_kwh') / 1e6:.3g} million",
          f"**{mw(v(result, 'power_swing_watts'))}** for this cluster")
    assert v(result, "site_energy_kwh") > 2 * v(result, "energy_kwh")
    share = system_power.WAIT_POWER_SHARE
    assert share == 0.2  # "dropping to a fifth of their power"
    _says("dropping to a fifth of their power",
          f"16,384 H100s gives {swing_watts(16_384, 700.0, 700.0 * share) / 1e6:.1f} MW")


def test_the_same_job_on_h800s() -> None:
    h100, h800 = block("llama3-70b-30-days"), block("llama3-70b-h800")
    ratio = system_power.SYSTEMS["dgx_h100"].ratio
    assert v(h800, "num_gpus") == v(h100, "num_gpus") == 8192
    for name in ("it_load_watts", "facility_load_watts", "power_swing_watts"):
        assert v(h800, name) == v(h100, name)
    assert layout(h100)[:2] == (1, 4) and layout(h800)[:2] == (2, 2)
    assert any("no published system power" in n for n in h800.to_dict()["notes"])
    _says(f"ratio of system to GPU power ({ratio:.2f})",
          f"The count is again {v(h800, 'num_gpus'):,.0f} GPUs, with the same "
          f"{mw(v(h800, 'it_load_watts'))} of IT load, {mw(v(h800, 'facility_load_watts'))} "
          f"at the facility and a swing of {mw(v(h800, 'power_swing_watts'))}",
          "(tensor and context parallelism of 2) instead of running context parallelism "
          "of 4",
          f"slows from {days_pm(h100).split(' days')[0]} to {days_pm(h800)}",
          f"shorter than the {_training_days(h800):.1f} days of the assumed MFU")


def _training_days(result: Any) -> float:
    text = row(result, "Training time (before failures)")[1]
    return float(text.split(" days")[0])


def test_the_same_job_on_ascend_910c() -> None:
    result = block("llama3-70b-30-days", gpu="ascend_910c")
    whole = system_power.WHOLE_SYSTEMS["ascend_910c"]
    assert result.value("power_swing_watts") is None
    _says(f"call for {v(result, 'num_gpus'):,.0f}",
          f"{whole.system_watts / 1e3:.0f} kW for {whole.chips} chips",
          f"gives {mw(v(result, 'it_load_watts'))} of IT load and "
          f"{mw(v(result, 'facility_load_watts'))} at the facility")
