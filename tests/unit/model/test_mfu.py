"""mfu against published utilisation figures, its invariants, and bad inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.model.flops import (
    megatron_model_flops_per_token,
    recompute_flops_per_token,
)

# PaLM's 46.2% MFU (Table 3, App. B), Megatron-LM SC21's 140 TFLOP/s and Korthikanti et
# al.'s Table 3 HFU are published checks (published_checks.dense), computed by mfu.


def test_flops_per_token_match_the_papers_closed_forms() -> None:
    # Korthikanti Sec. 6: model FLOPs 72 B s l h^2 (1 + s/(6h) + V/(12lh)); Narayanan et
    # al. 2021 Eq. 3 (full recomputation): 96 B s l h^2 (1 + s/(6h) + V/(16lh)).
    s, layers, h, v = 2048, 96, 12288, 51200
    arch = Architecture(layers=layers, hidden=h, heads=96, kv_heads=96, head_dim=128,
                        ffn_hidden=4 * h, vocab=v, seq_len=s)
    model = megatron_model_flops_per_token(arch)
    assert model == pytest.approx(72 * layers * h**2 * (1 + s / (6 * h) + v / (12 * layers * h)))
    full = model + recompute_flops_per_token(arch, "full")
    assert full == pytest.approx(96 * layers * h**2 * (1 + s / (6 * h) + v / (16 * layers * h)))
    selective = model + recompute_flops_per_token(arch, "selective")
    assert selective == pytest.approx(
        72 * layers * h**2 * (1 + s / (3 * h) + v / (12 * layers * h)))


def test_sc21_gpt3_140_tflops_is_the_default_hfu() -> None:
    # Narayanan et al. 2021, Sec. 5.1: 140 TFLOP/s per A100 counted with Eq. 3 (full
    # recomputation). The default step time (31.5 s at batch 1,536 on 1,024 GPUs) is
    # that rate: HFU = 140 / 312 (within the rounding of 31.5 s).
    # (published_checks.dense: sc21-gpt3-hfu). Model FLOPs leave the recomputation out.
    result = calculators.compute("mfu")
    assert result.value("mfu") < result.value("hfu")


@given(step=st.floats(0.01, 1e4), gpus=st.integers(1, 100_000),
       recompute=st.sampled_from(["none", "selective", "full"]),
       count=st.sampled_from(["6N", "6N+attention", "megatron"]))
def test_hfu_at_least_mfu_and_inverse_in_time(step: float, gpus: int, recompute: str,
                                              count: str) -> None:
    one = calculators.compute("mfu", step_time=step, num_gpus=gpus, recompute=recompute,
                              flop_count=count)
    two = calculators.compute("mfu", step_time=2 * step, num_gpus=gpus, recompute=recompute,
                              flop_count=count)
    assert one.value("hfu") >= one.value("mfu")
    assert two.value("mfu") == pytest.approx(one.value("mfu") / 2)
    assert one.value("tokens_per_second") * step == pytest.approx(1536 * 2048)


def test_throughput_wins_over_step_time() -> None:
    result = calculators.compute("mfu", step_time=10, tokens_per_second=1e5)
    assert result.value("tokens_per_second") == 1e5
    assert result.computed.notes


@pytest.mark.parametrize(
    ("inputs", "name"),
    [
        ({"step_time": ""}, "step_time"), ({"step_time": 0}, "step_time"),
        ({"num_gpus": 0}, "num_gpus"), ({"flop_count": "7n"}, "flop_count"),
        ({"peak_flops": -1}, "peak_flops"), ({"tokens_per_second": "fast"}, "tokens_per_second"),
        ({"global_batch": 0}, "global_batch"), ({"heads": 7}, "heads"),
    ],
)
def test_bad_inputs_name_the_input(inputs: dict[str, object], name: str) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("mfu", **inputs)
    assert caught.value.input_name == name


def test_a_peak_override_says_when_it_makes_the_precision_moot() -> None:
    # Seen on screen: PaLM's widget (275 TFLOP/s override) switched BF16 -> FP8 changed
    # nothing and said nothing.
    moot = calculators.compute("mfu", peak_flops="275T", peak_precision="fp8")
    same = calculators.compute("mfu", peak_flops="275T")
    assert moot.value("mfu") == same.value("mfu")
    assert any("override" in note and "FP8" in note for note in moot.computed.notes)
    assert not any("override" in note for note in same.computed.notes)
