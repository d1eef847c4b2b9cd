"""The Validation page's speed section (bigmodel_guide.validation_speed): a row per
measured run with the prediction and error computed now, the summary the calculators'
band is measured from, a miss flagged in words, and a build that stops, naming the run,
when a run cannot be predicted at all."""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from jinja2 import Environment, FileSystemLoader

import calculators
from bigmodel_guide.validation import validation_markdown
from bigmodel_guide.validation_links import link_for
from bigmodel_guide.validation_speed import (
    MISS,
    RunFailedError,
    SpeedSection,
    source_label,
    speed_section,
)
from calculators.core import share, units
from published_checks import all_checks, speed
from published_checks.speed import RUNS, MeasuredRun

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def env() -> Environment:
    """The page's templates alone (the build renders them through the theme's
    environment, which only adds the theme's own templates)."""
    return Environment(loader=FileSystemLoader(ROOT / "templates"))


@pytest.fixture(scope="module")
def page(env: Environment) -> str:
    return validation_markdown(env, DOCS)


@pytest.fixture(scope="module")
def section() -> SpeedSection:
    return speed_section()


def _row(page: str, run_id: str) -> str:
    """The HTML of the run's row."""
    start = page.index(f'<tr id="run-{run_id}"')
    return page[start:page.index("</tr>", start)]


def test_the_section_has_a_row_per_run_in_order(page: str) -> None:
    assert re.findall(r'<tr id="run-([^"]+)"', page) == [run.id for run in RUNS]


def test_the_section_comes_before_the_figures_by_chapter(page: str) -> None:
    assert "## Speeds: measured training runs { #speed }" in page
    assert page.index("{ #speed }") < page.index("{ #validation-compute }")


@pytest.mark.parametrize("run", RUNS, ids=[run.id for run in RUNS])
def test_each_row_shows_its_prediction_error_and_link(page: str, run: MeasuredRun) -> None:
    predicted = run.predict()
    error = predicted / run.measured_step_s - 1.0
    row = _row(page, run.id)
    shown = units.format_value(predicted, "s", "fixed")
    assert f'<strong class="bm-validation__predicted">{shown}</strong>' in row
    assert f"<br>{error:+.1%}, " in row
    assert ("miss: outside" in row) == (abs(error) > MISS)
    assert f'href="{html.escape(link_for(run))}"' in row
    assert html.escape(run.published) in row
    assert html.escape(run.url) in row


def test_the_summary_is_what_the_runs_measure(page: str, section: SpeedSection) -> None:
    errors = speed.errors()
    summary = speed.summarise(errors)
    assert section.summary == summary
    worst = max(errors, key=lambda run_id: abs(errors[run_id]))
    assert section.overall.worst_id == worst
    assert (f"**{summary.count} runs: mean absolute error {summary.mean_abs:.1%}, worst "
            f"{summary.worst:.1%} ([{worst}](#run-{worst})), {summary.within_10} of "
            f"{summary.count} within 10%**") in page


def test_each_group_summarises_its_own_runs(section: SpeedSection) -> None:
    errors = speed.errors()
    for groups, key in ((section.by_source, source_label),
                        (section.by_accelerator, lambda r: r.accelerator)):
        assert sum(g.summary.count for g in groups) == len(RUNS)
        for group in groups:
            members = {r.id: errors[r.id] for r in RUNS if key(r) == group.label}
            assert group.summary == speed.summarise(members), group.label
    assert [g.label for g in section.by_accelerator] == ["A100", "H100", "H800"]
    assert len(section.by_source) == len({r.url for r in RUNS})


@pytest.mark.parametrize("run_id", [RUNS[0].id, next(r.id for r in RUNS
                                                      if r.calculator == "moe_plan")])
def test_the_open_link_carries_exactly_the_run(run_id: str) -> None:
    """Decoded as the page decodes it, the link's state computes the same step."""
    run = next(r for r in RUNS if r.id == run_id)
    link = urlsplit(link_for(run))
    calc = calculators.REGISTRY[run.calculator]
    assert link.path == f"../calculators/{run.calculator.replace('_', '-')}/"
    texts, notices = share.decode_state(calc, parse_qs(link.query)[run.calculator][0])
    assert notices == []
    restored = calculators.compute(run.calculator, **texts).value("step_time")
    assert restored == run.predict()


def test_a_check_and_a_run_share_the_link_machinery() -> None:
    check = next(c for c in all_checks() if c.calculator is not None and c.inputs)
    as_run = dataclasses.replace(RUNS[0], calculator=str(check.calculator),
                                 inputs=check.inputs)
    assert "?" in link_for(check)
    assert link_for(check) == link_for(as_run)


def test_a_miss_is_shown_in_words_and_does_not_stop_the_build(env: Environment) -> None:
    # The same run, set against a step twice as long: the prediction is half of it.
    run = dataclasses.replace(RUNS[0], measured_step_s=2 * RUNS[0].measured_step_s)
    page = validation_markdown(env, DOCS, runs=(run, *RUNS[1:]))
    assert "miss: outside ±10%" in _row(page, run.id)
    assert all("miss: outside" not in _row(page, r.id) for r in RUNS[1:]
               if abs(r.error()) <= MISS)
    assert "(1 miss)" in page


def test_a_run_that_cannot_be_predicted_stops_the_build_naming_it(env: Environment) -> None:
    # Tensor parallelism over 6 GPUs cannot split the 22B model's 64 heads.
    base = RUNS[0]
    heads = dataclasses.replace(base, id="k5-22b-tp6",
                                inputs={**base.inputs, "tp": 6, "num_gpus": 6})
    # The 1T model on one node: the layout holds no step time (it does not fit).
    big = next(r for r in RUNS if r.id == "k5-1t-full")
    fits_not = dataclasses.replace(big, id="k5-1t-one-node", inputs={
        **big.inputs, "pp": 1, "num_gpus": 8, "global_batch": 8})
    with pytest.raises(RunFailedError) as failed:
        validation_markdown(env, DOCS, runs=(base, heads, fits_not))
    message = str(failed.value)
    assert "k5-22b-tp6" in message and "ValidationError" in message
    assert "k5-1t-one-node" in message
    assert f"{base.id} (" not in message  # the run that can be predicted is not named
