"""Link state, exports and comparison: round trips for every calculator, hostile links."""

from __future__ import annotations

import json
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.core import share
from calculators.core.bridge import call
from calculators.core.calculator import Calculator
from calculators.core.cli import main
from calculators.core.spec import Param

CALCS = list(calculators.REGISTRY.values())
IDS = [c.id for c in CALCS]


def _values(param: Param) -> st.SearchStrategy[object]:
    if param.kind == "choice":
        return st.sampled_from(param.choice_values)
    if param.kind == "bool":
        return st.booleans()
    if param.kind == "text":
        return st.just(param.default)
    low = param.minimum if param.minimum is not None else -1e12
    high = param.maximum if param.maximum is not None else 1e12
    if param.kind == "int":
        return st.integers(int(low) + (1 if param.exclusive_minimum else 0), int(min(high, 1e9)))
    return st.floats(low, high, exclude_min=param.exclusive_minimum, allow_nan=False)


@pytest.mark.parametrize("calc", CALCS, ids=IDS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_link_state_round_trips(calc: Calculator, data: st.DataObject) -> None:
    chosen = data.draw(
        st.lists(st.sampled_from(calc.params), max_size=4, unique_by=lambda p: p.name)
    )
    texts = {p.name: p.as_text(data.draw(_values(p))) for p in chosen}
    state = share.encode_state(calc, texts)
    decoded, notices = share.decode_state(calc, state)
    assert notices == []
    for name, text in texts.items():
        param = calc.param(name)
        if param.parse(text) == param.default:
            assert name not in decoded  # only non-default inputs travel
        else:
            assert param.parse(decoded[name]) == param.parse(text)


def test_link_is_readable() -> None:
    calc = calculators.REGISTRY["training_compute"]
    state = share.encode_state(calc, {"params": "70B", "tokens": "2T", "pue": "1.1"})
    assert state == "params:70B,tokens:2T"


@pytest.mark.parametrize(
    ("state", "kept", "notice"),
    [
        ("params:70B,bogus:1", {"params": "70B"}, "no such input"),
        ("params:70B,params:1B", {"params": "70B"}, "repeated"),
        ("params:-5", {}, "params"),
        ("params:%3Cscript%3Ealert(1)%3C%2Fscript%3E", {}, "params"),
        ("gpu:a200", {}, "gpu"),
        ("params", {}, "no such input"),
        ("x" * 9000, {}, "longer than"),
    ],
)
def test_hostile_links_are_ignored_with_a_notice(
    state: str, kept: dict[str, str], notice: str
) -> None:
    inputs, notices = share.decode_state(calculators.REGISTRY["training_compute"], state)
    assert inputs == kept
    assert any(notice in n for n in notices)


def test_command_line_reproduces_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    calc = calculators.REGISTRY["training_compute"]
    texts = {"params": "70B", "tokens": "2T", "gpu": "h100_sxm", "utilization": "0.4"}
    line = share.command_line(calc, texts)
    assert line == "bigmodel training_compute --params 70B --tokens 2T --gpu h100_sxm"
    assert main([*shlex.split(line)[1:], "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == calc.compute(texts).to_dict()


def test_compare_gives_deltas() -> None:
    base = calculators.compute("training_compute", num_gpus=1024)
    current = calculators.compute("training_compute", num_gpus=2048)
    rows = {r["name"]: r for r in share.compare(base, current)}
    assert rows["wall_clock_days"]["percent"] == "-50%"
    assert rows["gpu_hours"]["delta"] == "0"
    assert rows["total_flops"]["delta"] == "0"


@pytest.mark.parametrize(
    ("op", "payload", "ok"),
    [
        ("decode", {"calc": "training_compute", "state": "params:70B"}, True),
        ("encode", {"calc": "training_compute", "inputs": {"params": "70B"}}, True),
        ("export", {"calc": "training_compute", "inputs": {}, "format": "markdown"}, True),
        ("export", {"calc": "training_compute", "inputs": {}, "format": "pdf"}, False),
        ("compare", {"calc": "training_compute", "base": {}, "inputs": {"params": "1B"}}, True),
        ("explode", {"calc": "training_compute"}, False),
        ("compute", {"calc": "nope"}, False),
    ],
)
def test_bridge_operations(op: str, payload: dict[str, object], ok: bool) -> None:
    answer = json.loads(call(op, json.dumps(payload)))
    assert answer["ok"] is ok
