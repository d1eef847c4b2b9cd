"""The one acceptable outcome of any input, shared by the fuzz and the corner tests."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import calculators

if TYPE_CHECKING:
    from collections.abc import Mapping

    from calculators.core.calculator import Calculator, Result


def assert_validates_or_sensible(calc: Calculator, inputs: Mapping[str, object]) -> Result | None:
    """Either the one validation error, naming an input, or finite non-negative outputs
    (sizes, times, rates, counts, fractions) and JSON without NaN or infinity. Returns
    the result, or None when the inputs were refused."""
    try:
        result = calc.compute(inputs)
    except calculators.ValidationError as err:
        assert err.input_name in {p.name for p in calc.params}, (err.input_name, inputs)
        return None
    for out in calc.outputs:
        value = result.value(out.name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert math.isfinite(value), (out.name, value, inputs)
            assert value >= 0, (out.name, value, inputs)
    json.dumps(result.to_dict(), allow_nan=False)
    return result
