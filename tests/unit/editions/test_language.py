"""One declaration, two languages: the same numbers, units and names, other words."""

from __future__ import annotations

import json

import pytest

import calculators
from calculators.core import bridge, i18n, units
from calculators.core.cli import language_of, main
from calculators.core.localise import localised
from calculators.core.spec import ValidationError


def test_languages_are_normalised_and_unknown_ones_refused() -> None:
    assert i18n.check_language("zh-CN") == "zh"
    assert i18n.check_language("zh_Hans") == "zh"
    assert i18n.check_language("EN") == "en"
    with pytest.raises(i18n.UnknownLanguageError):
        i18n.check_language("fr")


@pytest.mark.parametrize("calc_id", list(calculators.REGISTRY))
def test_a_localised_calculator_keeps_every_name_value_unit_and_bound(calc_id: str) -> None:
    english = calculators.REGISTRY[calc_id]
    chinese = localised(english, "zh")
    assert chinese.title != english.title
    for en, zh in zip(english.params, chinese.params, strict=True):
        assert (zh.name, zh.kind, zh.default, zh.unit, zh.minimum, zh.maximum) == \
            (en.name, en.kind, en.default, en.unit, en.minimum, en.maximum)
        assert zh.choice_values == en.choice_values
        for choice in en.choices:  # an English label (a link, a script) still parses
            assert zh.parse(choice.label) == choice.value
    assert [o.name for o in chinese.outputs] == [o.name for o in english.outputs]


@pytest.mark.parametrize("calc_id", list(calculators.REGISTRY))
def test_results_are_the_same_numbers_in_both_languages(calc_id: str) -> None:
    calc = calculators.REGISTRY[calc_id]
    english = calc.compute({}).to_dict()
    with i18n.language("zh"):
        chinese = localised(calc, "zh").compute({}).to_dict()
    assert chinese.keys() == english.keys()
    assert chinese["inputs"] == english["inputs"]
    for name, out in english["outputs"].items():  # type: ignore[union-attr]
        zh = chinese["outputs"][name]  # type: ignore[index]
        assert zh["unit"] == out["unit"]
        if not isinstance(out["value"], str):  # a text output (a verdict) is in words
            assert (zh["value"], zh["raw"]) == (out["value"], out["raw"]), name


@pytest.mark.parametrize(("value", "unit", "fmt", "english", "chinese"), [
    (175e9, "param", "count", "175 billion param", "1750 亿参数"),   # GPT-3's N
    (701_000, "GPU-h", "count", "701,000 GPU-h", "70.1 万卡时"),
    (3.5e12, "tokens", "count", "3.5 trillion tokens", "3.5 万亿 token"),
    (1.4e6, "USD", "usd", "$1.4 million", "140 万美元"),
    (2.0, "USD", "usd", "$2", "2 美元"),
    (28.5 * 86_400, "s", "duration", "28.5 days", "28.5 天"),
    (1024, "GPU", "count", "1,024 GPU", "1,024 张 GPU"),
    (80e9, "B", "si", "80 GB", "80 GB"),                         # symbols stay
    (None, "", "si", "n/a", "不适用"),
])
def test_counts_read_in_wan_and_yi_in_chinese(
        value: float | None, unit: str, fmt: units.Format, english: str, chinese: str) -> None:
    assert units.format_value(value, unit, fmt) == english
    with i18n.language("zh"):
        assert units.format_value(value, unit, fmt) == chinese


def test_a_chinese_count_parses_back() -> None:
    calc = calculators.REGISTRY["training_compute"]
    assert calc.param("params").parse("1750 亿") == 175e9
    assert calc.param("tokens").parse("3.5万亿") == 3.5e12


def test_the_bridge_answers_in_the_payload_language_with_the_same_numbers() -> None:
    asked = {"calc": "training_compute", "inputs": {"num_gpus": "2048"}}
    english = json.loads(bridge.call("compute", json.dumps(asked)))
    chinese = json.loads(bridge.call("compute", json.dumps({**asked, "lang": "zh"})))
    assert english["ok"] and chinese["ok"]
    assert chinese["result"]["outputs"]["gpu_hours"]["value"] == \
        english["result"]["outputs"]["gpu_hours"]["value"]
    assert chinese["result"]["outputs"]["wall_clock_days"]["text"].endswith("天")
    refused = json.loads(bridge.call("compute", json.dumps(
        {"calc": "training_compute", "inputs": {"num_gpus": "-1"}, "lang": "zh"})))
    assert refused["error"]["input"] == "num_gpus"
    assert "不允许" in refused["error"]["message"]
    unknown = json.loads(bridge.call("compute", json.dumps({**asked, "lang": "xx"})))
    assert unknown["result"]["outputs"] == english["result"]["outputs"]


def test_the_cli_takes_lang_anywhere_or_the_locale() -> None:
    assert language_of(["--lang", "zh", "list"], {}) == ("zh", ["list"])
    assert language_of(["list", "--lang=en"], {"LANG": "zh_CN.UTF-8"}) == ("en", ["list"])
    assert language_of(["list"], {"LANG": "zh_CN.UTF-8"}) == ("zh", ["list"])
    assert language_of(["list"], {"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}) == ("zh", ["list"])
    assert language_of(["list"], {"LANG": "de_DE.UTF-8"}) == ("en", ["list"])
    with pytest.raises(ValidationError):
        language_of(["--lang", "xx"], {})


def test_the_cli_json_is_the_same_in_both_languages(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["training_compute", "--json"]) == 0
    english = json.loads(capsys.readouterr().out)
    assert main(["--lang", "zh", "training_compute", "--json"]) == 0
    chinese = json.loads(capsys.readouterr().out)
    numbers = {k for k, v in english["outputs"].items() if not isinstance(v["value"], str)}
    assert {k: chinese["outputs"][k]["value"] for k in numbers} == \
        {k: english["outputs"][k]["value"] for k in numbers}
    assert main(["--lang", "zh", "training_compute"]) == 0
    assert "训练" in capsys.readouterr().out
