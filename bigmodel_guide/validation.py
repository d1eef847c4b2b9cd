"""The generated Validation page: the published measured runs the planners predict
(``validation_speed``, first: what a reader sizing a cluster needs), then every published
figure the guide reproduces (``published_checks``), each computed now, with a link that
opens the calculator with exactly the row's inputs. A failing check fails the build,
named; so does a run that cannot be predicted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import calculators
from bigmodel_guide.site_text import site_
from bigmodel_guide.validation_links import link_for
from bigmodel_guide.validation_speed import speed_section
from calculators.core import i18n, units
from published_checks import Outcome, all_checks, run, speed
from published_checks import kernels as kernel_checks

if TYPE_CHECKING:
    from pathlib import Path

    from jinja2 import Environment

    from published_checks import Check
    from published_checks.speed import MeasuredRun

VALIDATION_PATH = "reference/validation.md"
VALIDATION_TEMPLATE = "calculator/validation.md"
#: A heading's attribute list (``{ #anchor }``), which the page's own headings replace.
ATTRIBUTES = re.compile(r"\s*\{\s*#[^}]*\}\s*$")


class CheckFailedError(Exception):
    """One or more published figures are no longer reproduced."""


@dataclass(frozen=True)
class Row:
    """One check as the page shows it."""

    outcome: Outcome
    published_text: str
    computed_text: str
    difference_text: str
    tolerance_text: str
    link: str
    what: str

    @property
    def check(self) -> Check:
        return self.outcome.check


def _format(check: Check, value: float) -> str:
    if check.unit == "GiB":  # bytes, shown in binary units (what du and the heading say)
        return units.format_value(value, "B", "iec")
    if check.calculator is None:
        return _format_formula(check.unit, value)
    calc = calculators.REGISTRY[check.calculator]
    out = next(o for o in calc.outputs if o.name == check.output)
    fmt = "sci" if abs(value) >= 1e21 else out.fmt
    return units.format_value(value, check.unit or out.unit, fmt)


def _format_formula(unit: str, value: float) -> str:
    """A formula check's value in its ``unit``: "%" shows a fraction as a percentage,
    "param" and "count" a count, "" or "1" a plain number, any other an SI unit."""
    if unit == "%":
        return units.format_value(value, "1", "percent")
    if unit in ("param", "count"):
        return units.format_value(value, "" if unit == "count" else unit, "count")
    if unit in ("", "1"):
        return units.format_value(value, "1", "fixed")
    return units.format_value(value, unit, "si")


def _tolerance(check: Check) -> str:
    return site_("exact") if check.rel_tol < 1e-6 else f"±{100 * check.rel_tol:.3g}%"


def _what(check: Check) -> str:
    if check.calculator is None:
        return site_("formula {name}").format(name=check.formula_name)
    calc = calculators.REGISTRY[check.calculator]
    out = next(o for o in calc.outputs if o.name == check.output)
    return f"{calc.id}: {i18n._(out.label)}"


def rows() -> list[Row]:
    """Every check computed now; raises ``CheckFailedError`` naming each that fails."""
    made = []
    for check in all_checks():
        outcome = run(check)
        made.append(Row(outcome, _format(check, check.published),
                        _format(check, outcome.value), f"{outcome.difference:+.2%}",
                        _tolerance(check), link_for(check), _what(check)))
    failed = [r for r in made if not r.outcome.passed]
    if failed:
        raise CheckFailedError("; ".join(
            f"{r.check.id} ({r.check.source}): computed {r.computed_text}, published "
            f"{r.published_text}, difference {r.difference_text}, tolerance "
            f"{r.check.rel_tol:.2%}" for r in failed))
    return made


def chapter_titles(docs_dir: Path, chapters: list[str]) -> dict[str, str]:
    """Each chapter's first heading, for the page's section titles, from the chapter in
    the language being built (``compute.zh.md``) where there is one."""
    titles = {}
    lang = i18n.current_language()
    for chapter in chapters:
        path = docs_dir / chapter
        translated = path.with_suffix(f".{lang}.md")
        if lang != i18n.SOURCE_LANGUAGE and translated.exists():
            path = translated
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        heading = next((line[2:].strip() for line in lines if line.startswith("# ")), chapter)
        titles[chapter] = ATTRIBUTES.sub("", heading)  # a zh heading keeps its English anchor
    return titles


def validation_markdown(env: Environment, docs_dir: Path,
                        runs: tuple[MeasuredRun, ...] = speed.RUNS) -> str:
    """Markdown (with HTML tables, so that every row has an anchor) for the page; raises
    ``CheckFailedError`` or ``validation_speed.RunFailedError``, naming the rows."""
    speeds = speed_section(runs)
    made = rows()
    chapters: list[str] = []
    for row in made:
        if row.check.chapter not in chapters:
            chapters.append(row.check.chapter)
    return env.get_template(VALIDATION_TEMPLATE).render(
        rows=made, chapters=chapters, titles=chapter_titles(docs_dir, chapters),
        total=len(made), derived=sum(r.check.derived for r in made), speed=speeds,
        kernel_anchor=f"check-{kernel_checks.CHECKS[0].id}", site_=site_)
