"""No silent input in the capstone's sizing (issue 37): every input the page shows for a
kind of model changes an output when edited (doubled, halved, stepped, or each other
choice), or is one of the few whose effect depends on the answer itself (listed with
the reason, which the page says beside the field when an edit changes nothing:
dom.js markSilent); an input that cannot apply to a mode is hidden by its condition.
Before: the sparse inputs showed on a dense model, the parameter override on a mixture
of experts, GPT-style biases' alternatives with biases on."""

from __future__ import annotations

import pytest

import calculators
from calculators.core.calculator import Calculator
from calculators.core.spec import Param, ValidationError

CALC = calculators.REGISTRY["cluster_sizing"]
#: Inputs shown whose effect depends on what the sizing decides, by mode, with why.
DEPENDS_ON_THE_ANSWER: dict[str, dict[str, str]] = {
    "dense": {},
    "sparse": {
        "host_memory": "sizes the parameter servers, which a collective design does not use",
        "host_reserve": "sizes the parameter servers, which a collective design does not use",
        "price_per_ps_host_hour": "prices the parameter servers, which a collective design "
                                  "does not use",
    },
}


def _edits(param: Param, value: object) -> list[object]:
    """The edits a reader might try: the other choices, or the value doubled, halved
    and stepped, within the bounds."""
    if param.kind == "bool":
        return ["false" if value else "true"]
    if param.kind == "choice":
        return [c.value for c in param.choices if c.value != value]
    if param.kind not in ("int", "float") or value is None:
        return []
    assert isinstance(value, (int, float))
    low = param.minimum if param.minimum is not None else -float("inf")
    high = param.maximum if param.maximum is not None else float("inf")
    steps = (value * 2, value / 2, value + 1 if param.kind == "int" else value * 1.1)
    return [int(v) if param.kind == "int" else v for v in steps
            if low <= v <= high and v != value]


def _seen(result: calculators.Result) -> object:
    data = result.to_dict()
    return data["outputs"], data["table"], data["notes"], data["warnings"]


def silent_inputs(calc: Calculator, fixed: dict[str, object]) -> set[str]:
    """The inputs of ``calc`` shown with ``fixed`` set (the others at their defaults)
    that no edit changes anything of, in words or numbers; ``fixed``'s own are skipped."""
    base = calc.compute(fixed)
    seen = _seen(base)
    silent = set()
    for param in calc.params:
        if param.name in fixed or (param.when and not param.when.holds(base.inputs)):
            continue
        edits = _edits(param, base.inputs[param.name])
        changed = False
        for edit in edits:
            try:
                result = calc.compute({**fixed, param.name: edit})
            except ValidationError:
                continue
            if _seen(result) != seen:
                changed = True
                break
        if edits and not changed:
            silent.add(param.name)
    return silent


def _silent(mode: str) -> set[str]:
    return silent_inputs(CALC, {"model_kind": mode})


@pytest.mark.parametrize("mode", sorted(DEPENDS_ON_THE_ANSWER))
def test_every_input_shown_changes_an_output(mode: str) -> None:
    assert _silent(mode) == set(DEPENDS_ON_THE_ANSWER[mode])


def test_the_parameter_servers_inputs_count_once_the_servers_hold_the_tables() -> None:
    # The reason given above holds: with tables too large for the GPUs, a PS design.
    inputs = {"model_kind": "sparse", "num_tables": 1000, "rows_per_table": 93.75e6}
    base = CALC.compute(inputs)
    assert base.value("training_mode") == "ps"
    less = CALC.compute({**inputs, "host_memory": 5e11})  # half the default 1 TB
    assert less.value("ps_hosts") > base.value("ps_hosts")


def test_inputs_of_one_attention_apply_only_with_it() -> None:
    # An MoE's GQA-only inputs (attention biases, sinks, output gate) keep their own
    # condition beside the model kind's: with MLA they are hidden.
    for name in ("attention_bias", "attention_sinks", "output_gate"):
        when = CALC.param(name).when
        assert when is not None and when.input == "model_kind" and when.also is not None
        assert when.also.input == "attention" and when.also.values == ("gqa",)
        assert not when.holds({"model_kind": "moe", "attention": "mla"})
        assert when.holds({"model_kind": "moe", "attention": "gqa"})
