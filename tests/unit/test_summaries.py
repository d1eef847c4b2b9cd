"""Summaries that are whole and true (issue 37), over every widget the chapters place:
a layout summary names every dimension and multiplies to the GPU count (the capstone
gave 4,608 GPUs as TP 1, PP 9, DP 64, leaving out CP 8), and a sizing that misses its
deadline says so in its summary, not only in a warning 2,000 px below."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import calculators
from bigmodel_guide.fence import find_fences, parse_fence

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = re.compile(r"TP ([\d,]+) x CP ([\d,]+) x PP ([\d,]+) x DP ([\d,]+) = ([\d,]+) GPUs"
                    r"(?:, EP ([\d,]+))?$")


def _fences() -> list[tuple[str, str, dict[str, object]]]:
    """(page and anchor, calculator, example inputs) of every widget with a layout."""
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for located in find_fences(page.read_text(encoding="utf-8")):
            fence = parse_fence(located.source)
            calc = calculators.REGISTRY[fence.calc_id]
            if any(o.name == "layout" for o in calc.outputs):
                found.append((f"{page.name}#{fence.anchor}", fence.calc_id,
                              dict(fence.overrides)))
    return found


FENCES = _fences()


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_planners_and_the_sizing_are_placed_in_the_chapters() -> None:
    ids = {calc_id for _, calc_id, _ in FENCES}
    assert ids == {"parallel_plan", "moe_plan", "cluster_sizing", "generative_recommender"}
    assert len(FENCES) >= 20


@pytest.mark.parametrize(("where", "calc_id", "inputs"), FENCES,
                         ids=[where for where, _, _ in FENCES])
def test_every_layout_summary_multiplies_to_the_gpu_count(
        where: str, calc_id: str, inputs: dict[str, object]) -> None:
    result = calculators.compute(calc_id, **inputs)
    summary = result.value("layout")
    if calc_id == "generative_recommender":  # data and tensor parallelism only
        match = re.match(r"TP ([\d,]+) x DP ([\d,]+) = ([\d,]+) GPUs", str(summary))
        assert match, (where, summary)
        tp, dp, gpus = (_number(g) for g in match.groups())
        assert tp * dp == gpus == result.inputs["num_gpus"], (where, summary)
        return
    if summary is None:  # no layout fits: nothing to summarise, and the outputs agree
        assert result.value("tp") is None, where
        return
    if calc_id == "cluster_sizing" and result.value("training_mode") in ("collective", "ps",
                                                                          "neither"):
        assert "TP" not in summary, where
        return
    match = LAYOUT.match(summary)
    assert match, (where, summary)
    tp, cp, pp, dp, gpus = (_number(g) for g in match.groups()[:5])
    assert tp * cp * pp * dp == gpus, (where, summary)
    assert (tp, cp, pp, dp) == tuple(int(result.value(n)) for n in ("tp", "cp", "pp", "dp"))
    total = result.value("num_gpus") if calc_id == "cluster_sizing" else result.inputs["num_gpus"]
    assert gpus == total, (where, summary)
    if calc_id != "parallel_plan":
        assert (match.group(6) is not None and _number(match.group(6)) == result.value("ep")) \
            or (calc_id == "cluster_sizing" and result.value("ep") is None)
    # The summary is what the sticky headline shows.
    assert "layout" in result.calculator.headline


def test_a_missed_deadline_is_flagged_in_the_summary() -> None:
    # The capstone's Llama 3 70B with a 10-day deadline and failures counted: before,
    # 15.1 days sat beside a green dot, the warning far below.
    text = (ROOT / "docs/capstone.md").read_text(encoding="utf-8")
    fence = next(f for f in (parse_fence(x.source) for x in find_fences(text))
                 if f.anchor == "llama3-70b-20-days")
    calc_id, inputs = fence.calc_id, dict(fence.overrides)
    late = calculators.compute(calc_id, **{**inputs, "deadline_days": 10})
    assert "deadline_status" in late.calculator.headline
    status = str(late.value("deadline_status"))
    days = float(str(late.value("wall_clock_days")))
    assert days > 10 and status.startswith(f"MISSED by {days - 10:,.1f} days"), status
    met = calculators.compute(calc_id, **inputs)
    assert str(met.value("deadline_status")).startswith("met: "), met.value("deadline_status")
