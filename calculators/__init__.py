"""Calculators for sizing large-model training: pure Python, standard library only.

The same modules run natively (tests, CLI, build-time pre-rendering) and in the
reader's browser under Pyodide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Import the submodule ``calculators.compute`` before defining the function of the same
# name below: a later first import of the submodule would rebind the package attribute.
import calculators.compute  # noqa: F401
from calculators.registry import REGISTRY
from calculators.spec import ValidationError

if TYPE_CHECKING:
    from calculators.spec import Calculator, Result

__all__ = ["REGISTRY", "ValidationError", "compute", "get"]


def get(calc_id: str) -> Calculator:
    """The calculator declared under ``calc_id``; an unknown id is a validation error."""
    try:
        return REGISTRY[calc_id]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise ValidationError(
            "calculator", f"unknown calculator {calc_id[:60]!r}; known: {known}"
        ) from None


def compute(calc_id: str, **inputs: object) -> Result:
    """Validate ``inputs`` (numbers, or text with units) and compute; see ``Result.to_dict``."""
    return get(calc_id).compute(inputs)
