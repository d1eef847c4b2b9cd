"""training_compute against published figures, its invariants, and its bad inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators
from calculators.formulas.flops import co2_tonnes, energy_kwh, training_flops


def test_gpt3_total_compute_brown_2020_table_d1() -> None:
    # Brown et al. 2020, App. D, Table D.1: GPT-3 175B (N = 174.6e9 non-embedding
    # parameters, D = 300e9 tokens) used 3.14e23 training FLOP.
    result = calculators.compute("training_compute", params=174.6e9, tokens=300e9)
    assert result.value("total_flops") == pytest.approx(3.14e23, rel=0.005)


def test_gpt3_on_1024_a100_narayanan_2021_sec_5_1() -> None:
    # Narayanan et al. 2021 (SC21), Sec. 5.1: GPT-3 (175B, 300B tokens) on 1,024 A100
    # at 140 TFLOP/s per GPU, with 8TP/(nX) (full recomputation): about 34 days.
    result = calculators.compute(
        "training_compute",
        params="175B",
        tokens="300B",
        flops_per_param_token=8,
        gpu="a100_80gb_sxm",
        peak_flops="140 TFLOP/s",
        utilization=1.0,
        num_gpus=1024,
    )
    assert result.value("wall_clock_days") == pytest.approx(34, rel=0.01)


def test_chinchilla_ratio_hoffmann_2022_table_3() -> None:
    # Hoffmann et al. 2022: Chinchilla, 70B parameters, was trained compute-optimally
    # on 1.4T tokens (20 per parameter); Table 3 gives 3.7T tokens for 175B (~21).
    result = calculators.compute("training_compute", params=70e9, tokens=1.4e12)
    assert result.value("chinchilla_tokens") == pytest.approx(1.4e12)
    assert not any("compute-optimal" in n for n in result.computed.notes)
    gpt3 = calculators.compute("training_compute", params=175e9, tokens=300e9)
    assert gpt3.value("chinchilla_tokens") == pytest.approx(3.7e12, rel=0.06)
    assert any("compute-optimal" in n for n in gpt3.computed.notes)


def test_energy_and_carbon_touvron_2023_table_15() -> None:
    # LLaMA (Touvron et al. 2023), Table 15: LLaMA-65B, 1,022,362 A100-80GB GPU-hours at
    # 400 W, PUE 1.1 and 0.385 kgCO2e/kWh: 449 MWh and 173 tCO2eq.
    energy = energy_kwh(1_022_362, 400, 1.1)
    assert energy / 1000 == pytest.approx(449, rel=0.005)
    assert co2_tonnes(energy, 0.385) == pytest.approx(173, rel=0.005)


def test_energy_through_the_calculator_uses_catalogue_power() -> None:
    # Same LLaMA-65B figures through the calculator: 65.2B params, 1.4T tokens; pick the
    # MFU that reproduces 1,022,362 GPU-hours and check energy follows from A100 400 W.
    flops = training_flops(65.2e9, 1.4e12)
    utilization = flops / (1_022_362 * 3600 * 312e12)
    result = calculators.compute(
        "training_compute",
        params=65.2e9,
        tokens=1.4e12,
        gpu="a100_80gb_sxm",
        utilization=utilization,
    )
    assert result.value("gpu_hours") == pytest.approx(1_022_362)
    assert result.value("energy_kwh") == pytest.approx(449_000, rel=0.005)
    assert result.value("co2_tonnes") == pytest.approx(173, rel=0.005)


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
    assert result.value("attention_flops") / result.value("total_flops") == pytest.approx(
        0.0276, rel=0.01
    )


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
