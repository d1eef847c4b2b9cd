"""The goodput calculator: Young 1974 and Daly 2006 written out independently, Llama 3's
reported figures (Dubey et al. 2024), its warnings and charts, and its bad inputs."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.catalogues import failure_rates as fr
from calculators.core import charts
from calculators.core.calculator import Result
from calculators.formulas.failures import goodput as gm
from calculators.formulas.failures import reliability as rel

if TYPE_CHECKING:
    from collections.abc import Mapping

MINUTE, HOUR, DAY = 60.0, 3600.0, 86_400.0


def run(**inputs: object) -> Result:
    return calculators.compute("goodput", **inputs)


def value(result: Result, name: str) -> float:
    v = result.value(name)
    assert isinstance(v, (int, float)), (name, v)
    return float(v)


# --- the papers' formulas, written out here, not called ------------------------------

def young(delta: float, m: float) -> float:
    """Young 1974, CACM 17(9): T_opt = sqrt(2 T_s T_f)."""
    return math.sqrt(2 * delta * m)


def daly_eq37(delta: float, m: float) -> float:
    """Daly 2006, FGCS 22(3), Eq. 37."""
    if delta >= 2 * m:
        return m
    x = delta / (2 * m)
    return math.sqrt(2 * delta * m) * (1 + math.sqrt(x) / 3 + x / 9) - delta


def daly_wall_per_segment(tau: float, delta: float, r: float, m: float) -> float:
    """Daly 2006's expected wall-clock to complete one segment of tau + delta under
    exponential failures with restart R: M e^{R/M} (e^{(tau + delta)/M} - 1)."""
    return m * math.exp(r / m) * (math.exp((tau + delta) / m) - 1)


def test_interval_is_daly_eq37_of_the_stall_and_young_is_its_first_term() -> None:
    result = run()
    stall, m = value(result, "checkpoint_stall"), value(result, "mtbi")
    assert value(result, "checkpoint_interval") == pytest.approx(daly_eq37(stall, m), rel=1e-12)
    assert value(result, "young_interval") == pytest.approx(young(stall, m), rel=1e-12)
    # Eq. 37 = Young - 2 delta / 3 + ...: shorter, by about 2/3 of the stall here.
    gap = value(result, "young_interval") - value(result, "checkpoint_interval")
    assert gap == pytest.approx(2 * stall / 3, rel=0.05)


def restart_of(inputs: Mapping[str, Any]) -> float:
    """The restart written out from its parts: start-up + NCCL's initialisation, linear in
    the GPUs + the checkpoint read back at the write's rate + warm-up; or the override."""
    if inputs["restart_time"] is not None:
        return float(inputs["restart_time"])
    gpus = int(inputs["num_gpus"])
    nodes = math.ceil(gpus / int(inputs["gpus_per_node"]))
    size = float(inputs["params"]) * 14
    read = size / min(nodes * float(inputs["node_write_bandwidth"]),
                      float(inputs["storage_bandwidth"]))
    return (float(inputs["startup_time"]) + gpus * float(inputs["comm_init_per_gpu"])
            + read + float(inputs["warmup_time"]))


@pytest.mark.parametrize("overrides", [{}, {"storage_bandwidth": "100GB/s"},
                                       {"num_gpus": 65536, "hot_spares": False},
                                       {"checkpoint_interval": "30 min"},
                                       {"restart_time": "3 min"}])
def test_goodput_is_dalys_segment_model(overrides: dict[str, object]) -> None:
    # Goodput = tau / (Daly's expected wall-clock per segment), then planned stops take
    # one restart each out of every day. Recovery R = detection + restart (+ the wait
    # for a node, for 78% of interruptions, without hot spares).
    result = run(**overrides)
    inputs = result.inputs
    m, delta = value(result, "mtbi"), value(result, "checkpoint_stall")
    tau = value(result, "checkpoint_interval")
    restart = restart_of(inputs)
    assert value(result, "time_to_restart") == pytest.approx(restart, rel=1e-12)
    r = float(inputs["detection_time"]) + restart  # type: ignore[arg-type]
    if not inputs["hot_spares"]:
        r += 0.78 * 3600
    assert value(result, "recovery_time") == pytest.approx(r)
    planned = 0.87 * restart / DAY
    expected = tau / daly_wall_per_segment(tau, delta, r, m) * (1 - planned)
    assert value(result, "goodput") == pytest.approx(expected, rel=1e-9)


def test_restart_grows_with_the_job() -> None:
    # Issue 32: the restart was a fixed 10 minutes (with detection) from 1,024 to 131,072
    # GPUs. NCCL's initialisation grows with the GPUs: about 265 s at 96K (stock NCCL,
    # Meta's NCCLX paper), so 2.76 ms per GPU; the other parts are fixed here.
    small, llama, large = (run(num_gpus=n) for n in (1024, 16384, 131072))
    restart = [value(r, "time_to_restart") for r in (small, llama, large)]
    assert restart[0] < restart[1] < restart[2]
    per_gpu = fr.NCCL_INIT_AT_96K.seconds / fr.NCCL_INIT_AT_96K.gpus
    assert restart[2] - restart[0] == pytest.approx((131072 - 1024) * per_gpu, rel=1e-9)
    assert restart[2] - restart[0] > 5 * MINUTE
    # At Llama 3's size the parts come to about the 8 minutes the guide assumed before.
    assert restart[1] / MINUTE == pytest.approx(7.8, abs=0.05)
    assert any(note.startswith("Restart: 7.8 min at this size") for note in llama.computed.notes)
    # The override replaces the parts, and the note says what it replaced.
    given = run(restart_time="3 min")
    assert value(given, "time_to_restart") == 180
    assert any("replaces the model's 7.8 min" in note for note in given.computed.notes)


def test_daly_figures_3_to_5_through_the_calculator() -> None:
    # Daly 2006, Figs. 3-5: delta = 5 min, M = 24 h and 6 h give tau_opt = 117 and 57 min.
    # A 1-GPU job with an observed MTBI of M and a checkpoint that writes in 5 min.
    for m_hours, published_min in ((24, 117.0), (6, 57.0)):
        result = run(failure_model="observed", observed_interruptions=1,
                     observed_days=m_hours / 24, observed_gpus=1, num_gpus=1,
                     gpus_per_node=1, checkpoint_bytes=300e9, node_write_bandwidth="1GB/s",
                     planned_stops_per_day=0)
        assert value(result, "checkpoint_stall") == pytest.approx(5 * MINUTE)
        # rel 0.01: the captions round to 2-3 significant figures.
        assert value(result, "checkpoint_interval") / MINUTE == pytest.approx(
            published_min, rel=0.01)


# --- Llama 3 ---------------------------------------------------------------------------

def test_defaults_are_llama3_and_meet_its_reported_effective_training_time() -> None:
    # Dubey et al. 2024, Sec. 3.3.4: 419 unexpected interruptions in 54 days (one every
    # 3.09 h), 47 planned, "higher than 90% effective training time". Our assumptions
    # (catalogues.failure_rates): 2 min to notice a failure, a restart of 7.8 min at this
    # size (also per planned stop), hot spares, 5.67 TB checkpoint at Tectonic's 2 TB/s.
    # How close: 92.3% (test_goodput_sizing.py::test_long_runs_chapter_figures), 2.3
    # points above the published lower bound.
    result = run()
    assert value(result, "mtbi") / HOUR == pytest.approx(54 * 24 / 419, rel=1e-12)
    assert value(result, "checkpoint_bytes") == pytest.approx(405e9 * 14)
    assert value(result, "checkpoint_write_time") == pytest.approx(405e9 * 14 / 2e12)
    assert value(result, "goodput") > fr.LLAMA3_405B.effective_training_time_min
    # In 54 days of wall-clock the model expects 54 x 24 / 3.09 = 419 interruptions.
    per_day = value(result, "interruptions") / value(result, "wall_clock_days")
    assert per_day * 54 == pytest.approx(fr.LLAMA3_405B.unexpected, rel=1e-9)


def test_llama3_checkpoint_per_gpu_is_inside_the_published_range() -> None:
    # Sec. 3.3.1: each GPU's checkpoint is 1 MB to 4 GB. 5.67 TB over 16,384 GPUs: 346 MB
    # (published_checks.long_runs: llama3-checkpoint-per-gpu).
    per_gpu = value(run(), "checkpoint_bytes") / 16_384
    assert fr.LLAMA3_STORAGE.state_bytes_per_gpu_min < per_gpu < (
        fr.LLAMA3_STORAGE.state_bytes_per_gpu_max)


def test_components_at_llama3_scale_give_back_its_rate() -> None:
    # The per-part MTBFs are Table 5's rows over the assumed machine, rounded to 3
    # figures: at 16,384 GPUs they must give 54 days / 419 again (rel 2e-3: rounding).
    result = run(failure_model="components")
    assert value(result, "mtbi") / HOUR == pytest.approx(54 * 24 / 419, rel=2e-3)
    # Table 5 per pool: 268 GPU, 46 host, 7 NIC, 35 switch/cable, 63 software rows.
    assert fr.failures_by_pool() == {"gpu": 268, "host": 46, "nic": 7, "switch": 35,
                                     "other": 63}


def test_ideal_days_default_is_training_computes_llama3() -> None:
    # 6 x 405B x 15.6T at 40% MFU on 16,384 H100s: 67.7 days (compute.md's example).
    tc = calculators.compute("training_compute", params="405B", tokens="15.6T",
                             gpu="h100_sxm", num_gpus=16384)
    assert value(tc, "wall_clock_days") == pytest.approx(67.7, rel=1e-3)
    assert run().inputs["ideal_days"] == 67.7


# --- how goodput moves ----------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(gpus=st.integers(1024, 500_000), model=st.sampled_from(["llama3", "components"]))
def test_goodput_falls_as_the_job_grows(gpus: int, model: str) -> None:
    # From 128 nodes up the 2 TB/s storage, not the nodes' 25 GB/s each, sets the write
    # time; below that, more nodes write faster, which can outweigh the added failures.
    small = value(run(num_gpus=gpus, failure_model=model), "goodput")
    large = value(run(num_gpus=2 * gpus, failure_model=model), "goodput")
    assert large < small


def test_the_optimum_beats_nearby_intervals() -> None:
    best = run()
    tau = value(best, "checkpoint_interval")
    for factor in (0.5, 0.8, 1.25, 2.0):
        other = run(checkpoint_interval=tau * factor)
        assert value(other, "goodput") < value(best, "goodput")


def test_asynchronous_saves_stall_only_for_the_snapshot() -> None:
    # Slow storage (100 GB/s): a synchronous save stalls 56.7 s; an asynchronous one
    # only for the GPU -> host copy, 5.67 TB / 16,384 GPUs / 25 GB/s = 13.8 ms.
    sync = run(storage_bandwidth="100GB/s")
    asyn = run(storage_bandwidth="100GB/s", asynchronous=True)
    assert value(sync, "checkpoint_stall") == pytest.approx(56.7)
    assert value(asyn, "checkpoint_stall") == pytest.approx(5.67e12 / 16_384 / 25e9)
    assert value(asyn, "goodput") > value(sync, "goodput")
    # Daly's interval for 13.8 ms is shorter than the 56.7 s write: raised to it, warned.
    assert value(asyn, "checkpoint_interval") == pytest.approx(56.7)
    assert any("saves would queue" in w for w in asyn.computed.warnings)


def test_async_interval_shorter_than_persist_warns_and_stretches_the_stall() -> None:
    result = run(storage_bandwidth="100GB/s", asynchronous=True, checkpoint_interval=20)
    assert any("shorter than the" in w and "persist" in w for w in result.computed.warnings)
    # Each save waits for the one before: stall = persist - interval = 56.7 - 20 s.
    assert value(result, "checkpoint_stall") == pytest.approx(56.7 + 5.67e12 / 16_384 / 25e9
                                                              - 20)


def test_stall_beyond_twice_mtbi_warns_and_uses_m() -> None:
    result = run(storage_bandwidth="1GB/s", num_gpus=262_144)
    assert value(result, "checkpoint_stall") >= 2 * value(result, "mtbi")
    assert value(result, "checkpoint_interval") == pytest.approx(value(result, "mtbi"))
    assert any("delta >= 2M" in w for w in result.computed.warnings)
    assert any("Goodput is" in w for w in result.computed.warnings)


def test_a_job_that_never_finishes_reports_no_days() -> None:
    result = run(num_gpus=10_000_000, restart_time=1e6)
    assert result.value("wall_clock_days") is None
    assert result.value("extra_cost_usd") is None
    assert any("never finishes" in w for w in result.computed.warnings)


def test_without_hot_spares_each_hardware_failure_waits_for_a_node() -> None:
    spares, none = run(), run(hot_spares=False)
    assert value(none, "recovery_time") - value(spares, "recovery_time") == pytest.approx(
        0.78 * 3600)
    assert value(none, "goodput") < value(spares, "goodput")


def test_extra_days_and_cost() -> None:
    result = run()
    g = value(result, "goodput")
    assert value(result, "wall_clock_days") == pytest.approx(67.7 / g)
    assert value(result, "extra_days") == pytest.approx(67.7 / g - 67.7)
    assert value(result, "extra_cost_usd") == pytest.approx(
        16_384 * (67.7 / g - 67.7) * 24 * 2.0)


def test_spare_nodes_by_littles_law() -> None:
    # Hardware interruptions arrive every 3.09 h / 0.78; each node is out 3 days.
    result = run()
    expected = 3 * DAY / (value(result, "mtbi") / 0.78)
    assert value(result, "spare_nodes") == pytest.approx(expected)
    assert value(result, "spare_nodes") == pytest.approx(18.2, rel=1e-2)


def test_checkpoint_size_from_the_memory_formulas() -> None:
    # Weights + optimizer state, no gradients: FP32 with SGD momentum is 4 + 4 = 8 B.
    assert value(run(precision="fp32", optimizer="sgd_momentum"), "checkpoint_bytes") == (
        pytest.approx(405e9 * 8))
    assert value(run(checkpoint_bytes="1TB"), "checkpoint_bytes") == 1e12


def test_switch_count_of_a_clos() -> None:
    # Al-Fares et al. 2008, Sec. 3: a k-ary fat tree holds k^3/4 hosts on 5k^2/4 switches.
    for k in (4, 8, 48, 64):
        assert gm.clos_switches(k**3 // 4, k) == 5 * k**2 // 4
    assert gm.clos_switches(64, 64) == 1
    assert gm.clos_switches(2048, 64) == 64 + 32  # two tiers: 64 leaves + 32 spines


def test_day_split_adds_up_to_a_day() -> None:
    table = run().computed.table
    assert table is not None
    assert sum(float(row[1]) for row in table.rows) == pytest.approx(24.0, abs=0.02)


def _tag(element: ET.Element) -> str:
    return element.tag.rsplit("}", 1)[-1]


def test_charts_are_one_svg_with_two_panels_and_the_optimum_marked() -> None:
    result = run()
    chart = result.computed.chart
    assert chart is not None
    ET.fromstring(chart)  # one well-formed document, as the page parses it
    root = ET.fromstring(charts.layouts(chart)["wide"])
    panels = [el for el in root if _tag(el) == "svg"]
    assert len(panels) == 2
    polylines = [el for el in panels[0].iter() if _tag(el) == "polyline"]
    assert len(polylines) == 2  # synchronous and asynchronous saves
    texts = [el.text or "" for el in root.iter() if _tag(el) == "text"]
    tau = value(result, "checkpoint_interval") / MINUTE
    assert f"optimum {tau:.3g} min" in texts
    assert "16,384 GPUs" in texts


@pytest.mark.parametrize(("name", "bad"), [
    ("params", 0), ("num_gpus", 0), ("num_gpus", 1.5), ("gpus_per_node", 0),
    ("ideal_days", 0), ("observed_interruptions", 0), ("observed_days", -1),
    ("gpu_mtbf_hours", 0), ("switches", -1), ("planned_stops_per_day", 101),
    ("node_write_bandwidth", "0 B/s"), ("storage_bandwidth", "lots"),
    ("checkpoint_interval", 0), ("detection_time", -1), ("restart_time", "1e9"),
    ("hardware_fraction", 1.5), ("failure_model", "guess"), ("asynchronous", "maybe"),
    ("checkpoint_bytes", 0),
])
def test_bad_inputs_name_the_input(name: str, bad: object) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        run(**{name: bad})
    assert caught.value.input_name == name


def test_planned_stops_are_llama3s() -> None:
    assert fr.PLANNED_PER_DAY.value == pytest.approx(47 / 54)
    assert run().inputs["planned_stops_per_day"] == 0.87
    assert rel.goodput_with_planned_stops(1.0, 0.87, DAY, 480) == pytest.approx(
        1 - 0.87 * 480 / DAY)


def test_a_tiny_hardware_share_puts_almost_no_node_in_repair() -> None:
    """Found by the CLI sweep: 5e-324 of interruptions taking a node out overflowed the
    node-failure MTBI (MTBI / share) to infinity. The count scales with the share."""
    tiny = calculators.compute("goodput", hardware_fraction="5e-324")
    whole = calculators.compute("goodput", hardware_fraction="1")
    assert float(whole.value("spare_nodes")) > 0
    assert 0 <= float(tiny.value("spare_nodes")) < 1e-300
