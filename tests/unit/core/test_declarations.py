"""Every declared calculator, generically: defaults compute, JSON has the contract's
shape, every bound is enforced with an error naming the input, the CLI agrees with the
API, and any input either validates or raises the one validation error."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calculators
from calculators.core.bridge import compute_json
from calculators.core.calculator import Calculator
from calculators.core.cli import main
from calculators.core.spec import Param
from tests.unit.core.outcomes import assert_validates_or_sensible

CALCS = list(calculators.REGISTRY.values())
IDS = [c.id for c in CALCS]
NUMERIC = [(c, p) for c in CALCS for p in c.params if p.kind in ("int", "float")]
NUMERIC_IDS = [f"{c.id}.{p.name}" for c, p in NUMERIC]


@pytest.mark.parametrize("calc", CALCS, ids=IDS)
def test_defaults_compute_with_contract_json(calc: Calculator) -> None:
    data = calc.compute({}).to_dict()
    assert set(data) >= {"calculator", "inputs", "outputs", "warnings", "table"}
    assert data["calculator"] == calc.id
    assert set(data["inputs"]) == {p.name for p in calc.params}  # type: ignore[arg-type]
    for out in calc.outputs:
        entry = data["outputs"][out.name]  # type: ignore[index]
        assert set(entry) >= {"value", "unit", "text"}
        value = entry["value"]
        if isinstance(value, float):
            assert math.isfinite(value), out.name
    json.dumps(data)  # serialisable as is


@pytest.mark.parametrize(("calc", "param"), NUMERIC, ids=NUMERIC_IDS)
def test_numeric_bounds_are_enforced(calc: Calculator, param: Param) -> None:
    bad: list[object] = [float("nan"), float("inf"), "text", "1 parsec"]
    if param.minimum is not None:
        bad.append(param.minimum - 1 if not param.exclusive_minimum else param.minimum)
    if param.maximum is not None:
        bad.append(param.maximum * 2 + 1)
    if param.kind == "int":
        bad.append(1.5)
    for value in bad:
        with pytest.raises(calculators.ValidationError) as caught:
            calc.compute({param.name: value})
        assert caught.value.input_name == param.name, value
        assert param.name in str(caught.value)


@pytest.mark.parametrize("calc", CALCS, ids=IDS)
def test_choices_are_enforced(calc: Calculator) -> None:
    for param in calc.params:
        if param.kind == "choice":
            with pytest.raises(calculators.ValidationError) as caught:
                calc.compute({param.name: "no-such-choice"})
            assert caught.value.input_name == param.name


@pytest.mark.parametrize("calc", CALCS, ids=IDS)
def test_cli_json_equals_api(calc: Calculator, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([calc.id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == calc.compute({}).to_dict()


@pytest.mark.parametrize(("calc", "param"), NUMERIC, ids=NUMERIC_IDS)
def test_cli_bad_value_exits_2_naming_the_input(
    calc: Calculator, param: Param, capsys: pytest.CaptureFixture[str]
) -> None:
    flag = f"--{param.name.replace('_', '-')}"
    assert main([calc.id, flag, "NaN"]) == 2
    err = capsys.readouterr().err
    assert flag in err


def test_cli_accepts_underscore_and_hyphen_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["training_compute", "--num_gpus", "64", "--json"]) == 0
    underscore = json.loads(capsys.readouterr().out)
    assert main(["training_compute", "--num-gpus", "64", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == underscore
    assert underscore["inputs"]["num_gpus"] == 64


def test_cli_list_names_every_calculator(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for calc_id in calculators.REGISTRY:
        assert calc_id in out


def test_cli_unknown_calculator_exits_2() -> None:
    with pytest.raises(SystemExit) as caught:
        main(["no_such_calculator"])
    assert caught.value.code == 2


def test_bridge_reports_errors_as_data() -> None:
    answer = json.loads(compute_json("training_compute", json.dumps({"params": "-1"})))
    assert answer == {
        "ok": False,
        "error": {"input": "params", "message": answer["error"]["message"]},
    }
    assert json.loads(compute_json("nope", "{}"))["error"]["input"] == "calculator"
    assert json.loads(compute_json("training_compute", "[1, 2]"))["ok"] is False
    assert json.loads(compute_json("training_compute", "{not json"))["ok"] is False


_TEXTS = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "",
            " ",
            "0",
            "-0",
            "1e308",
            "1e-308",
            "nan",
            "inf",
            "-inf",
            "1,000",
            "175B",
            "80 GiB",
            "400 Gb/s",
            "40%",
            "1e400",
            "0x10",
            "--1",
            "1e",
            "$",
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
)


@pytest.mark.parametrize("calc", CALCS, ids=IDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_input_validates_or_raises_the_one_error(calc: Calculator, data: st.DataObject) -> None:
    names = data.draw(
        st.lists(st.sampled_from([p.name for p in calc.params]), max_size=3, unique=True)
    )
    raw = {name: data.draw(_TEXTS) for name in names}
    assert_validates_or_sensible(calc, raw)


@pytest.mark.parametrize("calc", CALCS, ids=IDS)
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cli_never_crashes(calc: Calculator, data: st.DataObject,
                           capsys: pytest.CaptureFixture[str]) -> None:
    names = data.draw(st.lists(st.sampled_from([p.name for p in calc.params]), max_size=3,
                               unique=True))
    argv = [calc.id]
    for name in names:
        argv += [f"--{name.replace('_', '-')}", data.draw(_TEXTS.filter(
            lambda t: not t.startswith("-")))]
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 2)
    if code == 0:
        json.loads(out)
    else:
        assert err.startswith(f"bigmodel {calc.id}: invalid --")


def test_cli_preset_then_explicit_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    from calculators.catalogues import presets

    calc = calculators.REGISTRY["training_compute"]
    preset = presets.get("llama3_405b")
    assert main(["training_compute", "--preset", "llama3_405b", "--num-gpus", "16384",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = calc.compute({**presets.preset_texts(calc, preset), "num_gpus": "16384"})
    assert data == expected.to_dict()


@pytest.mark.parametrize("preset", ["nope", "dgx_a100_8nic"])
def test_cli_bad_preset_exits_2(preset: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["training_compute", "--preset", preset]) == 2
    assert "--preset" in capsys.readouterr().err
