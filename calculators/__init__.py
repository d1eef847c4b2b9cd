"""Calculators for sizing large-model training: pure Python, standard library only.

The same modules run natively (tests, CLI, build-time pre-rendering) and in the
reader's browser under Pyodide. The folder is the table of contents: ``core/`` is the
machinery that knows nothing about training, ``formulas/`` the science (each formula
cited), ``catalogues/`` the data with sources, ``inputs/`` the input declarations that
several calculators share, and every other module is one calculator, named by its id.
Imports point one way: calculator -> inputs, formulas, catalogues -> core.

This module is the public API: ``compute``, ``get``, ``REGISTRY``, ``ValidationError``,
the ``presets`` catalogue and ``import_config`` (a Hugging Face config.json read into a
calculator's inputs): what ``core``'s command line and bridge reach.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues import presets
from calculators.core.spec import ValidationError
from calculators.inputs.hf_config import apply_config as import_config
from calculators.registry import REGISTRY

if TYPE_CHECKING:
    from calculators.core.calculator import Calculator, Result

__all__ = ["REGISTRY", "ValidationError", "compute", "get", "import_config", "presets"]


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
