"""Hypothesis strategies built from a calculator's declaration (issue 36).

Every input is drawn within its declared bounds: whole numbers and numbers uniformly,
log-uniformly when the range spans decades, and at its exact ends; a choice from its
choices; an optional input also blank (derived). Half the draws change one to three
inputs of the working example the defaults make, the others any number of inputs at
once, which a cross-input rule (heads dividing the width) more often refuses. Inputs
hidden by a ``when=`` condition are drawn too: the calculator must ignore them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from hypothesis import strategies as st

if TYPE_CHECKING:
    from calculators.core.calculator import Calculator
    from calculators.core.spec import Param

#: A range whose ends differ by this factor or more is also drawn log-uniformly.
DECADES = 1000.0
#: Valid texts for the text inputs, besides blank: layer patterns and table lists.
TEXTS: dict[str, tuple[str, ...]] = {
    "layer_pattern": ("F", "SF", "5S1F", "3L1F", "L", "2S"),
    "tables": ("criteo_kaggle", "criteo_1tb_torchrec", "criteo_1tb_mlperf",
               "criteo_1tb_10m", "C3 10131227 16\nC4 1000 8", "5000000 64"),
}


def low_end(param: Param) -> float:
    """The smallest value the declaration admits (past an exclusive minimum)."""
    assert param.minimum is not None
    low = float(param.minimum)
    if not param.exclusive_minimum:
        return low
    return low + 1 if param.kind == "int" else math.nextafter(low, math.inf)


def _log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    """Numbers spread evenly over the decades of [low, high] (low > 0)."""
    lo, hi = math.log(low), math.log(high)
    return st.floats(lo, hi).map(lambda x: min(high, max(low, math.exp(x))))


def number(param: Param) -> st.SearchStrategy[int] | st.SearchStrategy[float]:
    """A value of a numeric input within its bounds, ends included."""
    assert param.minimum is not None and param.maximum is not None, param.name
    low, high = low_end(param), float(param.maximum)
    if param.kind == "int":
        ints: list[st.SearchStrategy[int]] = [
            st.integers(int(low), int(high)), st.sampled_from((int(low), int(high)))]
        if high >= DECADES * max(low, 1.0):
            ints.append(_log_uniform(max(low, 1.0), high).map(round))
        return st.one_of(ints)
    floats: list[st.SearchStrategy[float]] = [
        st.floats(low, high, allow_nan=False, allow_infinity=False),
        st.sampled_from((low, high))]
    if high >= DECADES * max(low, 1e-300):
        floats.append(_log_uniform(max(low, high / 1e12, 1e-300), high))
    return st.one_of(floats)


def value(param: Param) -> st.SearchStrategy[object]:
    """Any value the form would accept for ``param`` (blank included when optional)."""
    drawn: st.SearchStrategy[object]
    if param.kind == "choice":
        drawn = st.sampled_from(param.choice_values)
    elif param.kind == "bool":
        drawn = st.booleans()
    elif param.kind == "text":
        drawn = st.sampled_from(TEXTS.get(param.name, ()) or ("",))
    else:
        drawn = number(param)
    if param.optional:
        return st.one_of(st.none(), drawn)
    return drawn


@st.composite
def _changes(draw: st.DrawFn, calc: Calculator) -> dict[str, object]:
    names = [p.name for p in calc.params]
    if draw(st.booleans()):  # a few inputs changed from a working example
        chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    else:  # any number of them
        chosen = [name for name in names if draw(st.booleans())]
    return {name: draw(value(calc.param(name))) for name in chosen}


def inputs(calc: Calculator) -> st.SearchStrategy[dict[str, object]]:
    """A set of in-bounds inputs for ``calc``: half the time one to three inputs
    changed from the defaults, else any of them; the rest keep their defaults."""
    return _changes(calc)
