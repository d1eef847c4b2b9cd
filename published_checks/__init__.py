"""Every published figure the guide reproduces, declared once.

A ``Check`` names its source (paper and section or table, a link where public), what
is computed (a calculator with its inputs and one output, or, for a formula no
calculator shows alone, a formula with its arguments), the published value, the
tolerance and why that tolerance. The same declarations drive the unit tests
(``tests/unit/test_published.py``) and the generated Validation page
(``bigmodel_guide/validation.py``): no check is written twice. A check that is derived
rather than published says so, and its row writes out the arithmetic that takes published
numbers to its value (``6 x 37e9 x 14.8e12 FLOP / ... = 34.6%``). What the guide's own
model gives with its own assumptions or defaults is not a check: it is a regression test
in the unit tests of its subject.

Checks live in one module per chapter; ``CHECKS`` lists them all in the guide's order.
This package is build- and test-time only: it is not in the browser wheel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import calculators

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

Value = float | int | str | bool


@dataclass(frozen=True)
class Check:
    """One published (or derived) figure and how the guide reproduces it."""

    #: Stable id: the anchor of its row on the Validation page (``#check-<id>``).
    id: str
    #: The chapter that quotes the figure (e.g. "compute.md").
    chapter: str
    #: What is checked, in a few words a reader understands.
    claim: str
    #: Paper and section, table or equation; datasheet; or "Derivation: ...".
    source: str
    #: The published value, in the output's unit.
    published: float
    #: Relative tolerance, and why it is that wide.
    rel_tol: float
    why_tolerance: str
    #: Calculator id, inputs (numbers or texts with units) and the output compared.
    calculator: str | None = None
    inputs: Mapping[str, Value] = field(default_factory=dict)
    output: str = ""
    #: For a formula no calculator shows alone: it and a description of its arguments.
    formula: Callable[[], float] | None = None
    formula_name: str = ""
    #: A public link to the source, when there is one.
    url: str = ""
    #: True when the figure is derived from published numbers by arithmetic that the claim,
    #: source or tolerance writes out (an identity, a hand calculation), not published.
    derived: bool = False
    #: The unit the value is shown in, when not the calculator output's: for a formula,
    #: "%" (a fraction), "param" or "count", or an SI unit; "GiB" shows bytes in binary
    #: units. Values are always in SI base units.
    unit: str = ""

    def __post_init__(self) -> None:
        if (self.calculator is None) == (self.formula is None):
            raise TypeError(f"check {self.id!r}: give a calculator or a formula, not both")
        if self.calculator is not None and not self.output:
            raise TypeError(f"check {self.id!r}: a calculator check names its output")
        if not 0 <= self.rel_tol < 1 or not self.why_tolerance:
            raise TypeError(f"check {self.id!r}: a tolerance in [0, 1) with its reason")
        if not self.id.replace("-", "").isalnum() or self.id != self.id.lower():
            raise TypeError(f"check id {self.id!r}: lower-case letters, digits and dashes")


@dataclass(frozen=True)
class Outcome:
    """A check computed now: the value, its relative difference, pass or fail."""

    check: Check
    value: float

    @property
    def difference(self) -> float:
        """(computed - published) / published; the absolute difference when published is 0."""
        published = self.check.published
        return self.value - published if published == 0 else (self.value - published) / published

    @property
    def passed(self) -> bool:
        published = self.check.published
        return math.isfinite(self.value) and math.isclose(
            self.value, published, rel_tol=self.check.rel_tol, abs_tol=0.0 if published else
            self.check.rel_tol)


def run(check: Check) -> Outcome:
    """Compute ``check`` with today's code."""
    if check.formula is not None:
        return Outcome(check, float(check.formula()))
    result = calculators.compute(str(check.calculator), **dict(check.inputs))
    value = result.value(check.output)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"check {check.id!r}: output {check.output!r} is not a number")
    return Outcome(check, float(value))


def all_checks() -> tuple[Check, ...]:
    """Every check, in the guide's chapter order (mkdocs.yml's nav), each id once."""
    from published_checks import (  # chapters import this module: a late import
        capstone,
        communication,
        compute,
        dense,
        expert_kernels,
        kernels,
        long_runs,
        moe,
        network,
        post_training,
        recsys_generative,
        recsys_streaming,
        recsys_tables,
        sparse,
    )

    checks = (*compute.CHECKS, *dense.CHECKS, *kernels.CHECKS, *moe.CHECKS,
              *expert_kernels.CHECKS, *post_training.CHECKS, *communication.CHECKS,
              *network.CHECKS, *sparse.CHECKS,
              *recsys_generative.CHECKS, *recsys_tables.CHECKS, *recsys_streaming.CHECKS,
              *long_runs.CHECKS, *capstone.CHECKS)
    ids = [c.id for c in checks]
    if len(set(ids)) != len(ids):
        raise TypeError("check ids repeat: " + ", ".join(sorted(
            {i for i in ids if ids.count(i) > 1})))
    return checks


def get(check_id: str) -> Check:
    """The check named ``check_id``: for a test that asserts more about the same figure
    (a bound, another code path) without writing the published value a second time."""
    for check in all_checks():
        if check.id == check_id:
            return check
    raise KeyError(f"no published check {check_id!r}")


def preset_inputs(calc_id: str, preset_id: str, **extra: Value) -> dict[str, Value]:
    """A preset's values for a calculator's inputs (what choosing the preset in the
    widget fills in), with ``extra`` inputs on top."""
    from calculators.catalogues import presets

    calc = calculators.REGISTRY[calc_id]
    return {**presets.assignments(calc, presets.get(preset_id)), **extra}
