"""cluster_sizing when no GPU count meets the deadline (issue 32, item 3): the MoE path
warns as the dense one does, the fallback is the fastest of the counts tried (not the
first that fits), and the MoE network figures use the step the training time rests on.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import pytest

from calculators.catalogues import hardware
from calculators.cluster_sizing.steps import Plan
from tests.unit.planner.moe_screens import sized_with_screens

DAY = 86_400.0
#: DeepSeek-V3's shape (the capstone's), a batch of 3,840 sequences and 25 days on
#: H100s whose NICs give 19.6 GB/s (a 3:1 oversubscribed fabric's bisection): no count
#: the scan tries meets the deadline. Goodput 1 keeps the comparison to step times.
MISSES: dict[str, object] = {
    "model_kind": "moe", "layers": 61, "hidden": 7168, "vocab": 129280, "heads": 128,
    "ffn_hidden": 18432, "gated_mlp": True, "tied_embeddings": False, "seq_len": 4096,
    "global_batch": 3840, "tokens": "14.8T", "gpu": "h100_sxm", "deadline_days": 25,
    "utilization": "34.6%", "flops_per_param_token": 6, "goodput": 1,
    "nic_bandwidth": "19.6 GB/s"}


@cache
def _sized_with_screens() -> tuple[Any, dict[int, Plan]]:
    """The sizing, and every micro-batch-1 screen the scan made, by GPU count."""
    return sized_with_screens(MISSES)


def test_moe_sizing_that_misses_its_deadline_says_so() -> None:
    result, screens = _sized_with_screens()
    days = float(result.value("wall_clock_days"))
    assert days > 25
    # Before: no warning at all (the dense path warned).
    late = [w for w in result.computed.warnings if "misses its 25-day deadline" in w]
    assert len(late) == 1, result.computed.warnings
    assert f"{days:,.1f} days of wall-clock" in late[0]
    assert f"{len(screens)} counts tried" in late[0]
    gpus = next(r for r in result.to_dict()["table"]["rows"] if r[0] == "GPUs")
    assert "none of the whole 8-GPU node counts tried" in gpus[2]
    # The search bound stopped the scan (issue 36): the table says so, and a note says
    # that the count is the best found so far.
    assert "where the search bound stopped it" in gpus[2]
    (note,) = [n for n in result.computed.notes if "search bound" in n]
    assert f"after {len(screens)} node counts" in note and "best found so far" in note


def test_the_fallback_is_the_fastest_count_tried() -> None:
    result, screens = _sized_with_screens()
    assert len(screens) >= 2
    total = float(result.value("total_flops"))
    gpu_s = total / (hardware.get("h100_sxm").peak_bf16_flops * 0.346)  # GPU-seconds
    steps = 14.8e12 / (3840 * 4096)

    def wall_s(n: int) -> float:
        lay = screens[n].choose(lambda _: False)  # the winner: none meets the deadline
        return math.inf if lay is None else max(gpu_s / n, steps * lay.step_s)

    chosen = int(result.value("num_gpus"))
    fastest = min(screens, key=lambda n: (wall_s(n), n))
    assert chosen == fastest
    # Before: the first count that fits, which is slower here.
    first = min(n for n in screens if math.isfinite(wall_s(n)))
    assert first != chosen and wall_s(first) > wall_s(chosen)


def test_moe_network_is_set_against_the_step_the_time_rests_on() -> None:
    result, _ = _sized_with_screens()
    steps = 14.8e12 / (3840 * 4096)
    planner_days = float(result.value("planner_days"))
    wall_days = float(result.value("wall_clock_days"))
    assert planner_days == pytest.approx(wall_days)  # the planner's step sets the time
    step = planner_days * DAY / steps
    assert step > float(result.value("step_time"))  # longer than the assumed MFU's step
    # Before: bytes over the assumed MFU's shorter step.
    assert float(result.value("inter_node_bandwidth_needed")) == pytest.approx(
        float(result.value("inter_node_bytes_per_step")) / step, rel=1e-9)
    row = next(r for r in result.to_dict()["table"]["rows"] if r[0] == "Network traffic per GPU")
    assert "over the planner's" in row[2]
