"""The design-review export (issue 37): the capstone's Llama-3-70B scenario as one
Markdown block with every input that applies (defaults included, with units), every
output the mode gives with its band, the notes, the explanation table, the baseline
comparison and the link; the same as CSV and JSON; nothing blank or "n/a"."""

from __future__ import annotations

import csv
import io
import json

import pytest

import calculators
from calculators.core import bridge, review, share
from tests.unit.test_capstone_prose import _blocks

LINK = "http://127.0.0.1:8000/capstone/?cluster_sizing=deadline_days:30#llama3-70b-30-days"


def _llama() -> calculators.Result:
    calc_id, inputs = _blocks()["llama3-70b-30-days"]
    return calculators.compute(calc_id, **inputs)


def test_llama_scenario_exports_everything_a_reviewer_needs() -> None:
    result = _llama()
    text = review.review_markdown(result, link=LINK)
    # The link, and the inputs behind cost and emissions that equal their defaults.
    assert f"<{LINK}>" in text
    for line in ("| Accelerator (`gpu`) | NVIDIA H100 SXM5 80GB (h100_sxm) |  |",
                 "| Price per GPU-hour (`price_per_gpu_hour`) | 2 | USD/h |",
                 "| Power usage effectiveness (`pue`) | 1.1 |  |",
                 "| Grid carbon intensity (`carbon_intensity`) | 0.385 | kgCO2e/kWh |"):
        assert line in text, line
    # Every input that applies, blank ones saying what they stand for, none "name = ".
    for param in review.applying_inputs(result):
        assert f"(`{param.name}`) |" in text
    assert "| Goodput (share of wall-clock that trains) (`goodput`) | blank (" in text
    assert " = |" not in text and "n/a" not in text
    # The sparse inputs do not apply to a dense model, and say so by their absence.
    for name in ("epochs", "tables", "embedding_dtype", "num_ps_servers", "host_memory"):
        assert f"(`{name}`)" not in text
    assert "(`params`)" in text  # the override applies to a dense model only
    # Headline outputs first, the planner's time with its band, then notes and table.
    outputs = text.split("| Output | Value |")[1]
    assert outputs.index("| GPUs |") < outputs.index("| Training compute C |")
    assert f"| Time at the planner's step estimate | {result.text('planner_days')} |" in text
    assert "±" in result.text("planner_days")
    assert "**Assumptions and notes**" in text
    for note in result.computed.notes:
        assert note.replace("|", "\\|") in text
    table = result.computed.table
    assert table is not None and f"**{table.caption}**" in text
    for row in table.rows:
        assert f"| {row[0]} | {row[1]} |" in text


def test_sparse_export_has_no_rows_of_other_modes() -> None:
    result = calculators.compute("cluster_sizing", model_kind="sparse")
    text = review.review_markdown(result)
    assert "n/a" not in text and "outputs of other modes are not given here" in text
    assert "(`tokens`)" not in text and "(`epochs`)" in text and "(`params`)" not in text
    shown, missing = review.shown_outputs(result)
    assert missing == sum(result.value(o.name) is None for o in result.calculator.outputs)
    assert all(f"| {o.label} |" in text for o in shown)


def test_baseline_comparison_lists_what_changed() -> None:
    base = calculators.compute("training_compute", num_gpus=1024)
    current = calculators.compute("training_compute", num_gpus=2048)
    text = review.review_markdown(current, comparison=share.compare(base, current))
    assert "**Against the pinned baseline**" in text
    label = next(o.label for o in current.calculator.outputs if o.name == "wall_clock_days")
    before, after = base.text("wall_clock_days"), current.text("wall_clock_days")
    assert f"| {label} | {before} | {after} |" in text
    assert "| Training compute C | " not in text.split("Against the pinned baseline")[1]
    same = review.review_markdown(current, comparison=share.compare(current, current))
    assert "No output differs from the baseline." in same


def test_csv_and_json_carry_the_same_scenario() -> None:
    result = _llama()
    rows = list(csv.DictReader(io.StringIO(review.review_csv(result, link=LINK))))
    inputs = {r["name"]: r for r in rows if r["section"] == "input"}
    assert list(inputs) == [p.name for p in review.applying_inputs(result)]
    assert inputs["carbon_intensity"]["unit"] == "kgCO2e/kWh"
    outputs = {r["name"]: r for r in rows if r["section"] == "output"}
    assert float(outputs["num_gpus"]["value"]) == result.value("num_gpus")
    assert "±" in outputs["planner_days"]["detail"]
    assert [r["value"] for r in rows if r["section"] == "link"] == [LINK]
    assert sum(r["section"] == "table" for r in rows) == len(result.computed.table.rows)
    data = review.review_json(result, link=LINK)
    assert data["link"] == LINK and data["outputs"] == result.to_dict()["outputs"]
    assert [i["name"] for i in data["applying_inputs"]] == list(inputs)  # type: ignore[union-attr]


@pytest.mark.parametrize("fmt", ["markdown", "csv", "json"])
def test_bridge_exports_with_link_and_baseline(fmt: str) -> None:
    payload = {"calc": "training_compute", "inputs": {"num_gpus": "2048"}, "format": fmt,
               "link": LINK, "base": {"num_gpus": "1024"}}
    answer = json.loads(bridge.call("export", json.dumps(payload)))
    assert answer["ok"], answer
    assert LINK in answer["text"]
    assert "-50%" in answer["text"]
