"""Every calculator at the corners of its declared bounds.

Random fuzzing rarely lands on the worst combination: one divisor at the smallest value
its bound admits while every numerator sits at its largest. These cases are enumerated:
all inputs low, all high, and each input alone at one end with the rest at the other.
Each either raises the one validation error naming an input, or gives finite,
non-negative outputs.
"""

from __future__ import annotations

import math

import pytest

import calculators
from calculators.core.calculator import Calculator
from calculators.core.spec import Param
from tests.unit.core.outcomes import assert_validates_or_sensible

CALCS = list(calculators.REGISTRY.values())


def _low(param: Param) -> str | None:
    if param.minimum is None:
        return None
    value = float(param.minimum)
    if param.exclusive_minimum:
        value = math.nextafter(value, math.inf) if param.kind == "float" else value + 1
    return str(int(value)) if param.kind == "int" else repr(value)


def _high(param: Param) -> str | None:
    if param.maximum is None:
        return None
    return str(int(param.maximum)) if param.kind == "int" else repr(float(param.maximum))


def _corners(calc: Calculator) -> list[dict[str, str]]:
    numeric = [p for p in calc.params if p.kind in ("int", "float")]
    low = {p.name: v for p in numeric if (v := _low(p)) is not None}
    high = {p.name: v for p in numeric if (v := _high(p)) is not None}
    cases = [low, high]
    for p in numeric:
        if p.name in low:
            cases.append({**high, p.name: low[p.name]})
        if p.name in high:
            cases.append({**low, p.name: high[p.name]})
    return cases


@pytest.mark.parametrize("calc", CALCS, ids=[c.id for c in CALCS])
def test_corners_of_the_declared_bounds(calc: Calculator) -> None:
    for inputs in _corners(calc):
        assert_validates_or_sensible(calc, inputs)
