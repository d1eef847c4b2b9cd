"""The explicit registry: calculator id -> declaration. Add new calculators here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.compute import TRAINING_COMPUTE

if TYPE_CHECKING:
    from calculators.spec import Calculator

REGISTRY: dict[str, Calculator] = {
    calc.id: calc
    for calc in (
        TRAINING_COMPUTE,
    )
}
