"""training_compute against published figures, its invariants, and its bad inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators


def test_chinchilla_note_only_away_from_twenty_tokens_per_parameter() -> None:
    # The published figures themselves are published_checks (chinchilla-*); here, the
    # note: silent at 20 tokens per parameter, said at GPT-3's 1.7.
    result = calculators.compute("training_compute", params=70e9, tokens=1.4e12)
    assert not any("compute-optimal" in n for n in result.computed.notes)
    gpt3 = calculators.compute("training_compute", params=175e9, tokens=300e9)
    assert any("compute-optimal" in n for n in gpt3.computed.notes)


def test_attention_correction_palm_appendix_b() -> None:
    # PaLM App. B: 6N + 12 L H Q T per token. GPT-3: L = 96, H*Q = 12288, T = 2048.
    result = calculators.compute(
        "training_compute",
        params=175e9,
        tokens=300e9,
        seq_len=2048,
        layers=96,
        hidden=12288,
    )
    assert result.value("attention_flops") == pytest.approx(12 * 96 * 12288 * 2048 * 300e9)
    # Its share of the total, 2.76%, is a derived check (published_checks.compute:
    # gpt3-attention-share).


def test_c_counts_the_attention_scores_in_the_chosen_count() -> None:
    # GPT-3 at a 32K context: PaLM App. B's 12 L H Q T per token is 44% of 6N. C is the
    # model FLOPs in the chosen count (one count for every calculator, issue 32): the
    # whole term by default (PaLM), half of it as Megatron-LM counts since 2025, none
    # as 6ND; the time follows C. Without the architecture C is 6ND whatever the count.
    arch = {"seq_len": 32768, "layers": 96, "hidden": 12288}
    plain = calculators.compute("training_compute", params=175e9, tokens=300e9)
    six_nd = 6 * 175e9 * 300e9
    attention = 12 * 96 * 32768 * 12288 * 300e9
    expected = {"6N+attention": attention, "6N+causal_attention": attention / 2, "6N": 0.0}
    for count, scores in expected.items():
        result = calculators.compute("training_compute", params=175e9, tokens=300e9,
                                     flop_count=count, **arch)
        assert result.value("total_flops") == pytest.approx(six_nd + scores)
        assert result.value("attention_flops") == pytest.approx(scores)
        assert result.value("gpu_hours") == pytest.approx(
            plain.value("gpu_hours") * (1 + scores / six_nd))
        assert any(count_label in " ".join(result.computed.notes) for count_label in (
            "full attention", "causal attention", "attention left out"))
    assert plain.value("total_flops") == pytest.approx(six_nd)
    assert plain.value("attention_flops") is None


def test_attention_is_heads_times_qk_plus_v_not_the_width() -> None:
    # The general term, 6 L s n_h (d_qk + d_v) per token, by hand (issue 32).
    # DeepSeek-V3 (MLA: 61 layers, 128 heads, d_qk = 128 + 64 = 192, d_v = 128) at its
    # 4K pre-training sequences: 6 x 61 x 4,096 x 128 x 320 = 61.4 GFLOP per token whole,
    # 30.7 causal. 12 L s d_model gave 21.5.
    v3 = {"params": "37B", "total_params": "671B", "tokens": 1, "layers": 61,
          "hidden": 7168, "heads": 128, "head_dim": 192, "v_head_dim": 128, "seq_len": 4096}
    full = calculators.compute("training_compute", **v3).value("attention_flops")
    causal = calculators.compute("training_compute", **v3,
                                 flop_count="6N+causal_attention").value("attention_flops")
    assert full == pytest.approx(6 * 61 * 4096 * 128 * (192 + 128))
    assert causal == pytest.approx(full / 2)
    assert full > 2.8 * 12 * 61 * 4096 * 7168  # what the width gave
    # The rounded 61.4 and 30.7 are the checks deepseek-v3-attention-flops(-causal).
    # Qwen3-235B-A22B (config.json: 94 layers, 64 heads of 128 on a 4,096-wide model):
    # twice what 12 L s d_model gives.
    qwen = calculators.compute("training_compute", params="22B", tokens=1, layers=94,
                               hidden=4096, heads=64, head_dim=128, seq_len=4096)
    assert qwen.value("attention_flops") == pytest.approx(2 * 12 * 94 * 4096 * 4096)
    # heads x head size = width (GPT-3, Llama): the PaLM form, with or without heads.
    gpt3 = {"params": 175e9, "tokens": 1, "layers": 96, "hidden": 12288, "seq_len": 2048}
    assert calculators.compute("training_compute", **gpt3, heads=96).value(
        "attention_flops") == pytest.approx(12 * 96 * 2048 * 12288)


def test_n_leaves_the_input_embedding_out_once_as_torchtitan() -> None:
    # torchtitan (torchtitan/models/utils.py, get_dense_model_nparams_and_flops):
    # 6 x (params - embedding params) + 6 L n_h (d_qk + d_v) s. Llama 3 8B, from its preset
    # (8,030,261,248 parameters, untied, 128,256 x 4,096 input table): 57.9 GFLOP per
    # token; 6 x all parameters + the scores counted the table too, 5.4% more.
    from published_checks import preset_inputs

    inputs = preset_inputs("training_compute", "llama3_8b", tokens=1)
    result = calculators.compute("training_compute", **inputs)
    embedding = 128256 * 4096
    torchtitan = 6 * (8_030_261_248 - embedding) + 6 * 32 * 32 * 256 * 8192
    assert result.value("flop_params") == 8_030_261_248 - embedding
    assert result.value("total_flops") == pytest.approx(torchtitan)
    # A tied table is the output layer's matrix: it stays in N, once.
    tied = calculators.compute("training_compute", **{**inputs, "tied_embeddings": True})
    assert tied.value("flop_params") == 8_030_261_248


def test_no_chinchilla_optimum_for_a_mixture_of_experts() -> None:
    # Chinchilla's 20 tokens per parameter was fitted on dense models; applied to an
    # MoE's active count it has no published basis (issue 32): no optimum, and a note
    # that says why, instead of "20x more tokens than compute-optimal" for DeepSeek-V3.
    moe = calculators.compute("training_compute", params="37B", total_params="671B",
                              tokens="14.8T")
    assert moe.value("chinchilla_tokens") is None
    notes = " ".join(moe.computed.notes)
    assert "fitted on dense models" in notes
    assert "more tokens than compute-optimal" not in notes


def test_an_old_link_with_count_attention_loads_as_the_named_count() -> None:
    from calculators.core import share

    calc = calculators.REGISTRY["training_compute"]
    inputs, notices = share.decode_state(calc, "params:70B,count_attention:false")
    assert inputs == {"params": "70B", "flop_count": "6N"}
    assert notices and "count_attention" in notices[0]
    inputs, _ = share.decode_state(calc, "count_attention:true")
    assert inputs == {"flop_count": "6N+attention"}


def test_tpu_without_published_power_warns_instead_of_guessing() -> None:
    result = calculators.compute("training_compute", gpu="tpu_v5p")
    assert result.value("energy_kwh") is None
    assert any("gpu_power_watts" in w for w in result.computed.warnings)
    powered = calculators.compute("training_compute", gpu="tpu_v5p", gpu_power_watts="500 W")
    assert powered.value("energy_kwh") is not None


@given(
    gpus=st.integers(min_value=1, max_value=100_000),
    params=st.floats(min_value=1e6, max_value=1e13),
    tokens=st.floats(min_value=1e6, max_value=1e14),
)
def test_days_halve_when_gpus_double(gpus: int, params: float, tokens: float) -> None:
    one = calculators.compute("training_compute", params=params, tokens=tokens, num_gpus=gpus)
    two = calculators.compute("training_compute", params=params, tokens=tokens, num_gpus=2 * gpus)
    assert two.value("wall_clock_days") == pytest.approx(one.value("wall_clock_days") / 2)
    assert two.value("gpu_hours") == pytest.approx(one.value("gpu_hours"))


@given(
    base=st.floats(min_value=1e6, max_value=1e13),
    factor=st.floats(min_value=1.001, max_value=1e3),
    which=st.sampled_from(["params", "tokens"]),
)
def test_monotone_in_params_and_tokens(base: float, factor: float, which: str) -> None:
    small = calculators.compute("training_compute", **{which: base})
    large = calculators.compute("training_compute", **{which: base * factor})
    for name in ("total_flops", "gpu_hours", "wall_clock_days", "cost_usd", "energy_kwh"):
        assert large.value(name) > small.value(name)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("params", -1),
        ("params", 0),
        ("params", "nan"),
        ("params", float("nan")),
        ("params", "abc"),
        ("params", "1e99"),
        ("tokens", 0),
        ("tokens", "-3T"),
        ("utilization", 0),
        ("utilization", 1.5),
        ("utilization", "140%"),
        ("num_gpus", 0),
        ("num_gpus", 2.5),
        ("num_gpus", "inf"),
        ("gpu", "a200"),
        ("pue", 0.9),
        ("peak_flops", 0),
        ("price_per_gpu_hour", -1),
        ("flops_per_param_token", 0),
        ("carbon_intensity", "lots"),
    ],
)
def test_bad_inputs_raise_one_error_naming_the_input(name: str, value: object) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("training_compute", **{name: value})
    assert caught.value.input_name == name
    assert name in str(caught.value)


def test_unknown_input_is_refused() -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("training_compute", parameters=1e9)
    assert caught.value.input_name == "parameters"
