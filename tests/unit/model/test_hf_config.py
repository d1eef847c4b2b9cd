"""Importing a released config.json: each mapped family's release fills the inputs its
preset fills, and the count that follows is the checkpoint's (the configs retyped with
their sources in tests/fixtures/hf_configs; LAYOUTS.md there has the hand counts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import calculators
from calculators.catalogues import moe_models, presets
from calculators.formulas.moe import architecture as moe
from calculators.inputs.hf_config import ConfigError, apply_config, read_config
from calculators.inputs.moe import moe_architecture

FIXTURES = Path(__file__).parents[2] / "fixtures" / "hf_configs"

#: fixture -> (the family's preset, what the released total holds beyond the model the
#: preset counts). Gemma 3's release also holds its SigLIP vision tower and projector
#: (LAYOUTS.md: 416,866,032 + 6,194,304); DeepSeek-V3's, its MTP module with its own
#: copies of the table and head (checkpoint_params) and 41,540,496 FP8 block scales;
#: Qwen3-Next's, its MTP block (mtp_params).
RELEASES = {
    "meta-llama__Llama-3.1-8B": ("llama3_8b", 0),
    "mistralai__Mistral-7B-v0.1": ("mistral_7b", 0),
    "Qwen__Qwen2.5-7B": ("qwen2_5_7b", 0),
    "Qwen__Qwen3-8B": ("qwen3_8b", 0),
    "google__gemma-2-9b": ("gemma2_9b", 0),
    "google__gemma-3-27b-pt": ("gemma3_27b", 416_866_032 + 6_194_304),
    "mistralai__Mixtral-8x7B-v0.1": ("mixtral_8x7b", 0),
    "Qwen__Qwen3-235B-A22B": ("qwen3_235b_a22b", 0),
    "Qwen__Qwen3-Next-80B-A3B-Instruct": ("qwen3_next_80b_a3b", "mtp"),
    "deepseek-ai__DeepSeek-V2-Lite": ("deepseek_v2_lite", 0),
    "deepseek-ai__DeepSeek-V3": ("deepseek_v3", "checkpoint"),
    "openai__gpt-oss-120b": ("gpt_oss_120b", 0),
}
DEEPSEEK_V3_FP8_SCALES = 41_540_496


def _fixture(name: str) -> tuple[str, dict[str, object]]:
    text = (FIXTURES / f"{name}.json").read_text()
    return text, json.loads(text)


def _calc(kind: str) -> str:
    return "moe_params" if kind == "moe_model" else "model_params"


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_the_release_fills_what_its_preset_fills(name: str) -> None:
    text, _ = _fixture(name)
    model = read_config(text)
    calc = calculators.get(_calc(model.kind))
    imported = apply_config(calc.id, text)["texts"]
    preset = presets.preset_texts(calc, presets.get(RELEASES[name][0]))
    # A config.json has no training sequence length (see hf_families).
    assert imported == {k: v for k, v in preset.items() if k != "seq_len"}


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_the_count_is_the_checkpoints(name: str) -> None:
    text, data = _fixture(name)
    released = data["_released_params"]["total"]  # type: ignore[index]
    answer = apply_config("moe_params" if "moe" in read_config(text).kind else "model_params",
                          text)
    extra = RELEASES[name][1]
    if answer["kind"] == "model":
        count = calculators.compute("model_params", **answer["texts"]).computed.values["params"]
        assert count + extra == released
        return
    model = moe_architecture(calculators.get("moe_params").validate(answer["texts"]))
    if extra == "mtp":
        assert moe.total_params(model) + moe.mtp_params(model) == released
    elif extra == "checkpoint":
        assert moe.checkpoint_params(model) + DEEPSEEK_V3_FP8_SCALES == released
    else:
        assert moe.total_params(model) == released


def test_the_mixed_stacks_are_within_half_a_percent_of_their_stated_totals() -> None:
    # Gemma 3 report, Table 1 (27B): embedding 1,416M (with the vision projector) +
    # non-embedding 25,600M; gpt-oss card: 116.83B; Qwen3-Next card: 80B.
    gemma = calculators.get("model_params").compute(preset_texts("model_params", "gemma3_27b"))
    stated_gemma = 1_416e6 - 6_194_304 + 25_600e6
    assert gemma.computed.values["params"] == pytest.approx(stated_gemma, rel=5e-3)
    for preset, stated in (("gpt_oss_120b", 116.83e9), ("qwen3_next_80b_a3b", 80e9)):
        result = calculators.get("moe_params").compute(preset_texts("moe_params", preset))
        assert result.computed.values["total_params"] == pytest.approx(stated, rel=5e-3)
    gpt = calculators.get("moe_params").compute(preset_texts("moe_params", "gpt_oss_120b"))
    assert gpt.computed.values["active_compute_params"] == pytest.approx(
        moe_models.GPT_OSS_120B.published_active_params, rel=1e-3)


def preset_texts(calc_id: str, preset_id: str) -> dict[str, str]:
    return presets.preset_texts(calculators.get(calc_id), presets.get(preset_id))


def test_the_result_says_which_fields_it_read_and_assumed() -> None:
    text, _ = _fixture("google__gemma-3-27b-pt")
    answer = apply_config("model_params", text)
    assert "text_config.sliding_window" in answer["used"]
    assert "text_config.vocab_size = 262208" in answer["defaults"]
    assert answer["texts"]["layer_pattern"] == "5S1F"
    assert "seq_len" not in answer["texts"]  # max_position_embeddings is not a training length


@pytest.mark.parametrize(("edit", "message"), [
    ({"hidden_size": None}, "hidden_size is missing"),
    ({"num_hidden_layers": "32"}, "num_hidden_layers must be a whole number"),
    ({"model_type": "mamba"}, "model_type 'mamba' is not mapped"),
    ({"num_key_value_heads": 5}, "num_key_value_heads 5 must divide"),
    ({"mlp_bias": True}, "mlp_bias = True is not modelled"),
])
def test_an_unreadable_field_is_named(edit: dict[str, object], message: str) -> None:
    _, data = _fixture("meta-llama__Llama-3.1-8B")
    with pytest.raises(ConfigError, match=message) as err:
        read_config({**data, **edit})
    assert err.value.input_name == "config"


def test_what_cannot_be_read_says_why() -> None:
    text, _ = _fixture("nvidia__Nemotron-H-8B-Base-8K")
    with pytest.raises(ConfigError, match="hybrid_override_pattern"):
        read_config(text)
    with pytest.raises(ConfigError, match="not JSON"):
        read_config("{hidden_size: 4096")
    with pytest.raises(ConfigError, match="a JSON object"):
        read_config("[1, 2]")
    with pytest.raises(ConfigError, match="is a mixture of experts, which model_params"):
        apply_config("model_params", _fixture("openai__gpt-oss-120b")[0])
    with pytest.raises(ConfigError, match="takes no model architecture"):
        apply_config("incast", _fixture("openai__gpt-oss-120b")[0])


def test_every_calculator_that_describes_a_model_takes_a_config() -> None:
    dense, _ = _fixture("google__gemma-3-27b-pt")
    sparse, _ = _fixture("Qwen__Qwen3-Next-80B-A3B-Instruct")
    for calc in calculators.REGISTRY.values():
        if not presets.describes_models(calc):
            continue
        moe_calc = any(p.name == presets.MOE_MARKER for p in calc.params)
        answer = apply_config(calc.id, sparse if moe_calc else dense)
        assert calc.compute(answer["texts"]).computed.values, calc.id
