"""The Validation page's speed section: every published measured run
(``published_checks.speed.RUNS``) predicted now by its planner with the published layout
pinned, set against the measured step time.

Unlike a published figure, a run outside its band does not stop the build: the page
shows the miss, flagged, because the error band every step time carries is measured
here and must include the misses. A run the planner cannot predict at all (it raises, or
returns no finite time) does stop it, named: that is a broken declaration or a broken
planner, not a measured error. Each run is predicted once per build.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

import calculators
from bigmodel_guide.site_text import site_
from bigmodel_guide.validation_links import link_for
from calculators.catalogues.speed_validation import STEP_TIME_BAND
from calculators.core import i18n, units
from published_checks import speed

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from calculators.core.spec import Value
    from published_checks.speed import MeasuredRun, SpeedSummary

#: A run whose predicted step is further than this from the measured one is a miss
#: (the bound ``speed.summarise`` counts runs within).
MISS = 0.10
#: The parallel sizes a layout pins, in the order the page shows them.
_SIZES = (("tp", "TP"), ("cp", "CP"), ("pp", "PP"), ("dp", "DP"), ("ep", "EP"))


class RunFailedError(Exception):
    """One or more measured runs cannot be predicted at all."""


@dataclass(frozen=True)
class SpeedRow:
    """One measured run as the page shows it."""

    run: MeasuredRun
    predicted_s: float
    error: float  # predicted / measured - 1
    link: str

    @property
    def miss(self) -> bool:
        return abs(self.error) > MISS

    @property
    def source_head(self) -> str:
        """The source's authors and year (``source_label``)."""
        return source_label(self.run)

    @property
    def source_rest(self) -> str:
        """The source after its authors and year: table, row, model."""
        return self.run.source.partition(",")[2].strip()

    @property
    def gpus_text(self) -> str:
        gpus = _input(self.run, "num_gpus")
        count = f"{gpus:,}" if isinstance(gpus, int) else str(gpus)
        return f"{count} × {self.run.accelerator}"

    @property
    def sizes_text(self) -> str:
        """The parallel sizes the run pins: "TP 8 · CP 1 · PP 16 · DP 64"."""
        return " · ".join(f"{label} {self.run.inputs[name]}" for name, label in _SIZES
                          if self.run.inputs.get(name) is not None)

    @property
    def settings_text(self) -> str:
        """Micro-batch, schedule, recomputation and the rest the run pins, where given."""
        return " · ".join(_settings(self.run))

    @property
    def measured_text(self) -> str:
        """The measured step to four figures: it is often a published number of
        seconds ("18.13 s per iteration"), which three figures would round."""
        return site_("{seconds} s").format(seconds=f"{self.run.measured_step_s:.4g}")

    @property
    def derivation_text(self) -> str:
        """How the measured step comes from the published figure, as a sentence."""
        text = site_(self.run.derivation).strip()
        return text[:1].upper() + text[1:] + ("" if text.endswith((".", "。")) else site_("."))

    @property
    def predicted_text(self) -> str:
        """The predicted step as the calculator's widget prints it (without its band)."""
        return units.format_value(self.predicted_s, "s", "fixed")

    @property
    def error_text(self) -> str:
        return f"{self.error:+.1%}"


@dataclass(frozen=True)
class SpeedGroup:
    """The errors of a set of runs: all of them, one source's or one accelerator's."""

    label: str
    summary: SpeedSummary
    mean_signed: float  # above 0: the planner predicts slower steps than measured
    worst_id: str

    @property
    def mean_abs_text(self) -> str:
        return f"{self.summary.mean_abs:.1%}"

    @property
    def mean_signed_text(self) -> str:
        return f"{self.mean_signed:+.1%}"

    @property
    def worst_text(self) -> str:
        return f"{self.summary.worst:.1%}"

    @property
    def within_text(self) -> str:
        return site_("{within} of {count}").format(within=self.summary.within_10,
                                                   count=self.summary.count)


@dataclass(frozen=True)
class SpeedSection:
    """Every run's row and the errors over them, all and by source and accelerator."""

    rows: tuple[SpeedRow, ...]
    overall: SpeedGroup
    by_source: tuple[SpeedGroup, ...]
    by_accelerator: tuple[SpeedGroup, ...]
    #: The band the calculators print next to a step time (catalogues.speed_validation).
    band: str

    @property
    def summary(self) -> SpeedSummary:
        return self.overall.summary

    @property
    def misses(self) -> int:
        return sum(row.miss for row in self.rows)


def _input(run: MeasuredRun, name: str) -> Value:
    """``run``'s value for an input as the calculator reads it (a text with units
    parsed), or the calculator's default when the run sets none."""
    param = calculators.REGISTRY[run.calculator].param(name)
    return param.parse(run.inputs[name]) if name in run.inputs else param.default


def _settings(run: MeasuredRun) -> list[str]:
    inputs = run.inputs
    calc = calculators.REGISTRY[run.calculator]
    made = []
    if inputs.get("micro_batch") is not None:
        made.append(site_("micro-batch {size}").format(size=inputs["micro_batch"]))
    if "schedule" in inputs:
        choice = next(c for c in calc.param("schedule").choices
                      if c.value == inputs["schedule"])
        chunks = (site_(", {chunks} chunks per GPU").format(chunks=_input(run, "virtual_stages"))
                  if inputs["schedule"] == "interleaved" else "")
        made.append(f"{i18n._(choice.label)}{chunks}")
    if "recompute" in inputs:
        made.append(site_("recompute: {how}").format(how=inputs["recompute"]))
    if inputs.get("sequence_parallel") is True:
        made.append(site_("sequence parallel"))
    if inputs.get("zero_stage"):
        made.append(f"ZeRO-{inputs['zero_stage']}")
    return made


def predictions(runs: Iterable[MeasuredRun]) -> dict[str, float]:
    """Each run's predicted step time, seconds, by id; raises ``RunFailedError`` naming
    every run that cannot be predicted (the calculator raised, or gave no finite,
    positive time)."""
    made: dict[str, float] = {}
    failed: list[str] = []
    for run in runs:
        try:
            value = run.predict()
        except Exception as err:  # noqa: BLE001 - whatever broke, the build names the run
            failed.append(f"{run.id} ({run.source}): {type(err).__name__}: {err}")
            continue
        if not math.isfinite(value) or value <= 0:
            failed.append(f"{run.id} ({run.source}): predicted step time {value!r} s")
            continue
        made[run.id] = value
    if failed:
        raise RunFailedError("; ".join(failed))
    return made


def _group(label: str, rows: list[SpeedRow]) -> SpeedGroup:
    errors = {r.run.id: r.error for r in rows}
    worst = max(rows, key=lambda r: abs(r.error))
    return SpeedGroup(label, speed.summarise(errors), statistics.fmean(errors.values()),
                      worst.run.id)


def _groups(rows: tuple[SpeedRow, ...], key: Callable[[SpeedRow], str]) -> tuple[SpeedGroup, ...]:
    """One group per distinct ``key``, in the order the runs are declared."""
    by: dict[str, list[SpeedRow]] = {}
    for row in rows:
        by.setdefault(key(row), []).append(row)
    return tuple(_group(label, members) for label, members in by.items())


def source_label(run: MeasuredRun) -> str:
    """The source's authors and year, its text before the first comma: "Korthikanti et
    al. 2022"."""
    return run.source.partition(",")[0].strip()


def speed_section(runs: tuple[MeasuredRun, ...] = speed.RUNS) -> SpeedSection:
    """Every run predicted (once), with its error and link, and the errors summarised."""
    predicted = predictions(runs)
    errors = speed.errors(runs, predict=lambda run: predicted[run.id])
    rows = tuple(SpeedRow(run, predicted[run.id], errors[run.id], link_for(run))
                 for run in runs)
    return SpeedSection(
        rows=rows, overall=_group(site_("All runs"), list(rows)),
        by_source=_groups(rows, lambda r: source_label(r.run)),
        by_accelerator=_groups(rows, lambda r: r.run.accelerator),
        band=i18n._(STEP_TIME_BAND.words()))
