"""mfu against published utilisation figures, its invariants, and bad inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.model.flops import (
    CAUSAL_ATTENTION,
    FULL_ATTENTION,
    SIX_N,
    dense_model_flops_per_token,
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
    model = dense_model_flops_per_token(arch, FULL_ATTENTION)
    assert model == pytest.approx(72 * layers * h**2 * (1 + s / (6 * h) + v / (12 * layers * h)))
    full = model + recompute_flops_per_token(arch, "full", FULL_ATTENTION)
    assert full == pytest.approx(96 * layers * h**2 * (1 + s / (6 * h) + v / (16 * layers * h)))
    selective = model + recompute_flops_per_token(arch, "selective", FULL_ATTENTION)
    assert selective == pytest.approx(
        72 * layers * h**2 * (1 + s / (3 * h) + v / (12 * layers * h)))


#: Llama 3 8B (Dubey et al. 2024, Table 3; the released checkpoint: 8,030,261,248).
LLAMA3_8B = {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
             "vocab": 128256, "seq_len": 8192, "gated_mlp": True, "biases": False,
             "position_embedding": "rotary", "tied_embeddings": False}


def test_every_count_takes_the_input_embedding_out_of_n_as_torchtitan_does() -> None:
    # torchtitan, torchtitan/models/utils.py, get_dense_model_nparams_and_flops:
    # 6 x (nparams - nparams_embedding) + 6 x n_layers x n_heads x head_dims x seq_len,
    # head_dims = d_qk + d_v (Llama 3: 2 x 128): 57.9 GFLOP per token for Llama 3 8B.
    # Before, "6N+attention" counted 6 x all 8.03B parameters: 5.4% more.
    embedding = 128256 * 4096
    torchtitan = 6 * (8_030_261_248 - embedding) + 6 * 32 * 32 * (2 * 128) * 8192
    for count in ("6N+attention", "megatron"):
        result = calculators.compute("mfu", **LLAMA3_8B, flop_count=count)
        # Norm scales (266K of 7.5B weights) are all that separates the two counts.
        assert result.value("model_flops_per_token") == pytest.approx(torchtitan, rel=5e-5)
    six = calculators.compute("mfu", **LLAMA3_8B, flop_count="6N")
    assert six.value("model_flops_per_token") == pytest.approx(
        6 * (8_030_261_248 - embedding), rel=5e-5)
    assert six.value("flop_params") == pytest.approx(8_030_261_248 - embedding, rel=5e-5)


def test_the_causal_count_halves_the_scores_and_names_itself() -> None:
    full = calculators.compute("mfu", **LLAMA3_8B, flop_count="6N+attention")
    causal = calculators.compute("mfu", **LLAMA3_8B, flop_count="6N+causal_attention")
    six = calculators.compute("mfu", **LLAMA3_8B, flop_count="6N")
    scores = 6 * 32 * 32 * 256 * 8192
    assert full.value("model_flops_per_token") - six.value("model_flops_per_token") == (
        pytest.approx(scores))
    assert causal.value("model_flops_per_token") - six.value("model_flops_per_token") == (
        pytest.approx(scores / 2))
    for result, label in ((full, FULL_ATTENTION.label), (causal, CAUSAL_ATTENTION.label),
                          (six, SIX_N.label)):
        assert any(label in note for note in result.computed.notes)


def test_the_former_megatron_count_is_the_full_attention_count() -> None:
    # Renamed in 2025 (issue 32): "megatron" named code that now halves causal attention.
    # The old value still loads, from a link or the command line, as the count it was.
    calc = calculators.REGISTRY["mfu"]
    assert calc.param("flop_count").parse("megatron") == "6N+attention"
    old = calculators.compute("mfu", flop_count="megatron")
    new = calculators.compute("mfu", flop_count="6N+attention")
    assert old.to_dict()["outputs"] == new.to_dict()["outputs"]


def test_sc21_gpt3_140_tflops_is_the_default_hfu() -> None:
    # Narayanan et al. 2021, Sec. 5.1: 140 TFLOP/s per A100 counted with Eq. 3 (full
    # recomputation). The default step time (31.5 s at batch 1,536 on 1,024 GPUs) is
    # that rate: HFU = 140 / 312 (within the rounding of 31.5 s).
    # (published_checks.dense: sc21-gpt3-hfu). Model FLOPs leave the recomputation out.
    result = calculators.compute("mfu")
    assert result.value("mfu") < result.value("hfu")


@given(step=st.floats(0.01, 1e4), gpus=st.integers(1, 100_000),
       recompute=st.sampled_from(["none", "selective", "full"]),
       count=st.sampled_from(["6N", "6N+attention", "6N+causal_attention", "megatron"]))
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


def test_an_old_link_with_the_megatron_count_loads() -> None:
    # A share link made before the rename carries flop_count:megatron; it must load, as
    # the value the form now holds (the form's <select> has no "megatron" option).
    from calculators.core import share

    inputs, notices = share.decode_state(calculators.REGISTRY["mfu"], "flop_count:megatron")
    assert inputs == {"flop_count": "6N+attention"}
    assert not notices
