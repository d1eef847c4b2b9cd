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


def test_attention_scores_count_in_gpu_hours_when_given() -> None:
    # GPT-3 at a 32K context: PaLM App. B's 12 L H Q T per token is 44% of 6N. With the
    # architecture given, the time is counted from C plus that term (count_attention on);
    # off, or without the architecture, from C alone. C itself never changes.
    arch = {"seq_len": 32768, "layers": 96, "hidden": 12288}
    plain = calculators.compute("training_compute", params=175e9, tokens=300e9)
    counted = calculators.compute("training_compute", params=175e9, tokens=300e9, **arch)
    off = calculators.compute("training_compute", params=175e9, tokens=300e9,
                              count_attention=False, **arch)
    attention = 12 * 96 * 32768 * 12288 * 300e9
    assert counted.value("total_flops") == plain.value("total_flops")
    assert counted.value("time_flops") == pytest.approx(6 * 175e9 * 300e9 + attention)
    assert counted.value("gpu_hours") == pytest.approx(
        plain.value("gpu_hours") * (1 + attention / (6 * 175e9 * 300e9)))
    assert counted.value("energy_kwh") > plain.value("energy_kwh")
    for name in ("time_flops", "gpu_hours", "wall_clock_days", "cost_usd", "energy_kwh"):
        assert off.value(name) == plain.value(name), name
    assert plain.value("time_flops") == plain.value("total_flops")


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
