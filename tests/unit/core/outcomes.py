"""The one acceptable outcome of any input, shared by the fuzz and the corner tests."""

from __future__ import annotations

import json
import math

import calculators
from calculators.core.calculator import Calculator


def assert_validates_or_sensible(calc: Calculator, inputs: dict[str, str]) -> None:
    """Either the one validation error, naming an input, or finite non-negative outputs
    (sizes, times, rates, counts, fractions) and JSON without NaN or infinity."""
    try:
        result = calc.compute(inputs)
    except calculators.ValidationError as err:
        assert err.input_name in {p.name for p in calc.params}, (err.input_name, inputs)
        return
    for out in calc.outputs:
        value = result.value(out.name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert math.isfinite(value), (out.name, value, inputs)
            assert value >= 0, (out.name, value, inputs)
    json.dumps(result.to_dict(), allow_nan=False)
