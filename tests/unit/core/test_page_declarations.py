"""What the page needs from each declaration: headline outputs, inputs that apply only
in some mode, and choices that only go with some others; and that the page's rule for
such choices (a choice that no longer applies moves to its default, or to the first that
applies) leaves no worked example in an error from a choice alone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import calculators
from bigmodel_guide.fence import parse_fence
from bigmodel_guide.render import condition_text
from calculators.core import bridge
from calculators.core.calculator import Calculator, Computed
from calculators.core.spec import Choice, Output, Param, When

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

ROOT = Path(__file__).resolve().parents[3]
CALCS = list(calculators.REGISTRY.values())
IDS = [c.id for c in CALCS]


def _examples() -> list[tuple[str, str, dict[str, object]]]:
    """Every widget's starting inputs: each fence of the guide, each reference widget."""
    found: list[tuple[str, str, dict[str, object]]] = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for match in re.finditer(r"```calculator\n(.*?)```", page.read_text(), re.S):
            fence = parse_fence(match.group(1))
            found.append((f"{page.name}#{fence.anchor}", fence.calc_id, dict(fence.overrides)))
    found += [(f"reference#{c}", c, {}) for c in calculators.REGISTRY]
    return found


EXAMPLES = _examples()
#: The examples of calculators with choices that go only with some others: the page's
#: resolution of those is what the native sweep checks (the browser tier sweeps every
#: select of every widget: tests/e2e/test_reading.py).
CONDITIONAL = [e for e in EXAMPLES
               if any(c.when for p in calculators.REGISTRY[e[1]].params for c in p.choices)]


def _echo(inputs: Inputs) -> Computed:
    return Computed(values={"x": 1.0})


def _calc(params: tuple[Param, ...], **extra: object) -> Calculator:
    return Calculator("demo", "Demo", "", params, (Output("x", "X"), Output("y", "Y")), _echo,
                      **extra)  # type: ignore[arg-type]


MODE = Param("mode", "Mode", "choice", "a", choices=(Choice("a", "A"), Choice("b", "B")))


def test_headline_must_name_distinct_outputs() -> None:
    assert _calc((MODE,)).headline_outputs[0].name == "x"  # default: the first outputs
    assert [o.name for o in _calc((MODE,), headline=("y",)).headline_outputs] == ["y"]
    for bad in (("z",), ("x", "x")):
        with pytest.raises(TypeError, match="headline"):
            _calc((MODE,), headline=bad)


@pytest.mark.parametrize("when", [When("nope", ("a",)), When("mode", ("c",)),
                                  When("size", ("1",)), When("mode", ())])
def test_a_condition_must_name_another_choice_and_its_values(when: When) -> None:
    size = Param("size", "Size", "int", 1, when=when)
    with pytest.raises(TypeError, match=r"depends on|names values"):
        _calc((MODE, size))
    choice = Param("pick", "Pick", "choice", "p",
                   choices=(Choice("p", "P"), Choice("q", "Q", when=when)))
    with pytest.raises(TypeError, match=r"depends on|names values"):
        _calc((MODE, Param("size", "Size", "int", 1), choice))


def test_when_holds_on_texts_and_values() -> None:
    when = When("flag", ("true",))
    assert when.holds({"flag": True}) and when.holds({"flag": "true"})
    assert not when.holds({"flag": False}) and not when.holds({})


@pytest.mark.parametrize("calc", CALCS, ids=IDS)
def test_every_calculator_declares_a_few_headline_outputs(calc: Calculator) -> None:
    assert 2 <= len(calc.headline) <= 5, calc.id


def _other_values(param: Param) -> list[object]:
    """A few valid values of ``param`` other than its default."""
    if param.kind == "choice":
        return [c for c in param.choice_values if c != param.default]
    if param.kind == "bool":
        return [not param.default]
    if param.kind == "text":
        return []
    base = param.default if isinstance(param.default, (int, float)) else (
        param.minimum or 1.0)
    candidates = [base * 2, base / 2, base + 1, param.maximum, param.minimum]
    values: list[object] = []
    for value in candidates:
        if value is None:
            continue
        try:
            checked = param.check(float(value))
        except calculators.ValidationError:
            continue
        if checked != param.default:
            values.append(checked)
    return values


def _answer(calc: Calculator, raw: dict[str, object]) -> str | None:
    try:
        result = calc.compute(raw).to_dict()
    except calculators.ValidationError:
        return None
    return repr((result["outputs"], result["table"], result["warnings"]))


MODED = [(c, p) for c in CALCS for p in c.params if p.when is not None]


@pytest.mark.parametrize(("calc", "param"), MODED,
                         ids=[f"{c.id}.{p.name}" for c, p in MODED])
def test_a_hidden_input_changes_nothing(calc: Calculator, param: Param) -> None:
    """Where the page hides an input (its condition fails), no value of it changes any
    output, table or warning: hiding it hides nothing the reader could see change."""
    assert param.when is not None
    target = calc.param(param.when.input)
    values = target.choice_values if target.kind == "choice" else ("true", "false")
    for off in (v for v in values if v not in param.when.values):
        base = _answer(calc, {target.name: off})
        if base is None:
            continue
        for value in _other_values(param):
            changed = _answer(calc, {target.name: off, param.name: value})
            assert changed in (None, base), f"{param.name}={value!r} matters when {off}"


def _resolve(calc: Calculator, texts: dict[str, object]) -> dict[str, object]:
    """The page's rule (form.js applyConditions): a chosen option whose condition fails
    moves to the select's default if that applies, else to the first that applies."""
    values = dict(calc.validate(texts))
    for _ in range(2):
        for param in calc.params:
            if param.kind != "choice":
                continue
            chosen = next(c for c in param.choices if c.value == values[param.name])
            if chosen.when is None or chosen.when.holds(values):
                continue
            usable = [c.value for c in param.choices if c.when is None or c.when.holds(values)]
            values[param.name] = param.default if param.default in usable else usable[0]
    return values


@pytest.mark.parametrize(("where", "calc_id", "example"), CONDITIONAL,
                         ids=[e[0] for e in CONDITIONAL])
def test_every_choice_computes_or_is_refused_with_its_reason(
        where: str, calc_id: str, example: dict[str, object]) -> None:
    """From each widget's own inputs, every option the page leaves enabled in every
    select, after the page's resolution of declared conditions, either computes or is
    refused with a validation error naming an input and saying why: the page then
    keeps the previous choice and disables that option with the message
    (tests/e2e/test_reading.py checks the page side). Nothing else may go wrong."""
    calc = calculators.REGISTRY[calc_id]
    start = dict(calc.validate(example))
    calc.compute(start)
    for param in calc.params:
        if param.kind not in ("choice", "bool"):
            continue
        options = param.choices if param.kind == "choice" else (
            Choice("true", "yes"), Choice("false", "no"))
        for option in options:
            if option.when is not None and not option.when.holds(start):
                continue  # disabled in the page, with its reason
            picked = _resolve(calc, {**start, param.name: option.value})
            try:
                calc.compute(picked)
            except calculators.ValidationError as err:
                assert err.input_name in {p.name for p in calc.params}, (where, err)
                assert len(err.message) > 10, (where, err)


def test_declared_conditions_resolve_collective_time() -> None:
    """collective_time declares which algorithms go with which collectives: from the
    defaults, every collective, with the algorithm the page then keeps, computes."""
    calc = calculators.REGISTRY["collective_time"]
    for collective in calc.param("collective").choice_values:
        for algorithm in calc.param("algorithm").choice_values:
            picked = _resolve(calc, {"collective": collective, "algorithm": algorithm})
            chosen = next(c for c in calc.param("algorithm").choices
                          if c.value == picked["algorithm"])
            assert chosen.when is None or chosen.when.holds(picked)
            calc.compute(picked)


def test_condition_text_names_labels() -> None:
    calc = _calc((MODE, Param("size", "Size", "int", 1, when=When("mode", ("b",)))))
    assert condition_text(calc, When("mode", ("b",))) == "Mode is B"


def test_the_bridge_says_when_valid_values_do_not_go_together() -> None:
    """A value bad on its own is the reader's to fix (an error next to it); valid values
    that do not go together are flagged, so that the page can refuse the choice."""
    calc = {"calc": "collective_time"}
    apart = json.loads(bridge.call("compute", json.dumps(calc | {"inputs": {
        "algorithm": "hierarchical", "ranks": "64", "ranks_per_node": "72"}})))
    assert apart["ok"] is False and apart["error"]["together"] is True
    assert apart["error"]["input"] == "ranks"
    bad = json.loads(bridge.call("compute", json.dumps(calc | {"inputs": {"ranks": "x"}})))
    assert bad["ok"] is False and "together" not in bad["error"]
