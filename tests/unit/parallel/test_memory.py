"""model_memory against ZeRO and Korthikanti et al., its invariants, and bad inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators
import published_checks
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.parallel.memory import (
    Strategy,
    activation_bytes_per_layer,
    memory_per_gpu,
    model_state_bytes,
    state_bytes,
)

GB = 1e9


def gpt(layers: int, hidden: int, heads: int, seq_len: int = 2048) -> Architecture:
    return Architecture(layers=layers, hidden=hidden, heads=heads, kv_heads=heads,
                        head_dim=hidden // heads, ffn_hidden=4 * hidden, vocab=51200,
                        seq_len=seq_len)


GPT3 = gpt(96, 12288, 96)
MT_NLG = gpt(105, 20480, 128)


def states(result: calculators.core.calculator.Result) -> float:
    return sum(result.value(n) for n in ("weights_bytes", "gradients_bytes", "optimizer_bytes"))


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_zero_fig_1_7_5b_on_64_gpus(stage: int) -> None:
    # Rajbhandari et al. 2020 (ZeRO), Fig. 1: Psi = 7.5B, K = 12, Nd = 64. The formula
    # against the figure is a published check (published_checks.dense: zero-fig-1-stage-*);
    # the calculator gives the same bytes.
    per_param = state_bytes("bf16_mixed", "adamw")
    result = calculators.compute("model_memory", params=7.5e9, dp=64, zero_stage=stage)
    assert states(result) == pytest.approx(sum(model_state_bytes(7.5e9, per_param, stage, 64)),
                                           rel=1e-12)


def test_zero_sec_3_1_gpt2_needs_24_gb_of_states() -> None:
    # ZeRO Sec. 3.1: a 1.5B-parameter GPT-2 with mixed-precision Adam needs at least
    # 24 GB for its model states (16 bytes per parameter), against 3 GB of FP16 weights:
    # published checks (published_checks.dense: zero-gpt2-*, zero-adam-bytes-per-param).
    # The calculator's states are its bytes per parameter times the parameters.
    result = calculators.compute("model_memory", params=1.5e9)
    assert states(result) == pytest.approx(
        float(result.value("bytes_per_param")) * 1.5e9, rel=1e-12)  # type: ignore[arg-type]


@pytest.mark.parametrize("t", [1, 2, 4, 8])
def test_korthikanti_table_2_formulas(t: int) -> None:
    # Korthikanti et al. 2022, Table 2, activation bytes per layer, GPT-3 shape, b = 2.
    s, b, h, a = 2048, 2, 12288, 96
    sbh = s * b * h
    cases = {
        (False, "none"): sbh * (10 + 24 / t + 5 * a * s / (h * t)),
        (True, "none"): sbh * (34 / t + 5 * a * s / (h * t)),
        (False, "selective"): sbh * (10 + 24 / t),
        (True, "selective"): sbh * (34 / t),
        (False, "full"): 2 * sbh,
    }
    for (sp, recompute), expected in cases.items():
        assert activation_bytes_per_layer(GPT3, b, t, sp, recompute) == pytest.approx(expected)
    if t == 1:  # no parallelism at all: sbh(34 + 5as/h)
        assert activation_bytes_per_layer(GPT3, b, 1, False, "none") == pytest.approx(
            sbh * (34 + 5 * a * s / h))


@pytest.mark.parametrize(("arch", "check_id"), [
    (GPT3, "korthikanti-selective-saving-gpt3"), (MT_NLG, "korthikanti-selective-saving-mt-nlg")])
def test_selective_recompute_saving_korthikanti_sec_4_3(arch: Architecture,
                                                        check_id: str) -> None:
    # Korthikanti et al. Sec. 4.3: 5as/h is 80 for GPT-3 and 64 for MT-NLG, so dropping
    # the attention-score activations saves about 70% and 65% of activation memory (the
    # published checks of Sec. 5, under TP 8 + SP); without any parallelism too.
    full = activation_bytes_per_layer(arch, 1, 1, False, "none")
    kept = activation_bytes_per_layer(arch, 1, 1, False, "selective")
    saving = published_checks.get(check_id).published
    assert 1 - kept / full == pytest.approx(saving, abs=0.01)


def test_first_pipeline_stage_holds_the_whole_models_layers_korthikanti_sec_4_2_3() -> None:
    # Korthikanti Sec. 4.2.3: under 1F1B the first stage keeps p micro-batches of its
    # L/p layers in flight, so its activation memory is the per-layer figure x L.
    per_layer = activation_bytes_per_layer(GPT3, 1, 8, True, "selective")
    for pp in (1, 2, 4, 8, 16):
        # The paper's materialised attention with dropout (the calculators' default is
        # now a fused kernel without dropout).
        mem = memory_per_gpu(GPT3, Strategy(tp=8, pp=pp, sequence_parallel=True,
                                            recompute="selective", attention="materialised",
                                            dropout=True), state_bytes(
            "bf16_mixed", "adamw"))
        assert mem.activations == pytest.approx(per_layer * 96)


def test_175b_does_not_fit_one_a100_and_says_by_how_much() -> None:
    result = calculators.compute("model_memory", gpu="a100_80gb_sxm")
    assert result.value("fits") is False
    # 16 bytes of model state for each of GPT-3's 174.6B parameters (ZeRO Sec. 3.1).
    assert result.value("bytes_per_param") == 16
    assert states(result) == pytest.approx(16 * 174.6e9, rel=1e-3)
    assert any("short by" in w for w in result.computed.warnings)
    assert result.computed.chart is not None
    assert result.computed.chart.startswith("<svg")


@given(
    tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2, 4, 8, 16]),
    dp=st.integers(1, 4096), micro_batch=st.integers(1, 8),
    recompute=st.sampled_from(["none", "selective", "full"]), sp=st.booleans(),
)
def test_zero_stages_never_add_memory(*, tp: int, pp: int, dp: int, micro_batch: int,
                                      recompute: str, sp: bool) -> None:
    totals = [
        calculators.compute("model_memory", tp=tp, pp=pp, dp=dp, micro_batch=micro_batch,
                            recompute=recompute, sequence_parallel=sp,
                            zero_stage=stage).value("total_bytes")
        for stage in range(4)
    ]
    assert totals[3] <= totals[2] <= totals[1] <= totals[0]


@given(small=st.sampled_from([1, 2, 4, 8, 16]), factor=st.sampled_from([1, 2, 3, 6]),
       pp=st.sampled_from([1, 2, 4, 8]), zero=st.integers(0, 3))
def test_more_tensor_parallelism_never_raises_weights_per_gpu(small: int, factor: int,
                                                               pp: int, zero: int) -> None:
    # 96 heads: every tp here divides them.
    one = calculators.compute("model_memory", tp=small, pp=pp, zero_stage=zero, dp=4)
    more = calculators.compute("model_memory", tp=small * factor, pp=pp, zero_stage=zero,
                               dp=4)
    assert more.value("weights_bytes") <= one.value("weights_bytes")
    assert more.value("activations_bytes") <= one.value("activations_bytes")


@given(zero=st.integers(1, 3), tp=st.sampled_from([1, 8]), pp=st.sampled_from([1, 8]))
def test_min_gpus_is_the_smallest_that_fits(zero: int, tp: int, pp: int) -> None:
    inputs = {"zero_stage": zero, "tp": tp, "pp": pp, "recompute": "full",
              "sequence_parallel": True}
    result = calculators.compute("model_memory", **inputs)
    needed = result.value("min_gpus")
    if needed is None:
        return
    dp = int(needed) // (tp * pp)
    assert calculators.compute("model_memory", dp=dp, **inputs).value("fits") is True
    if dp > 1:
        assert calculators.compute("model_memory", dp=dp - 1, **inputs).value("fits") is False


def test_fp32_and_8bit_adam_bytes() -> None:
    # fp32 Adam: 4 + 4 + 8 = 16 B/param (no master copy); 8-bit Adam (Dettmers et al.
    # 2022): 2 + 2 + 4 + 2 = 10 B/param in mixed precision.
    assert state_bytes("fp32", "adamw").total == 16
    assert state_bytes("bf16_mixed", "adamw_8bit").total == 10
    assert state_bytes("bf16_mixed", "sgd_momentum").total == 12


@pytest.mark.parametrize(
    ("inputs", "name"),
    [
        ({"tp": 5}, "tp"), ({"tp": 7}, "tp"), ({"pp": 97}, "pp"), ({"zero_stage": 4}, "zero_stage"),
        ({"micro_batch": 0}, "micro_batch"), ({"precision": "int4"}, "precision"),
        ({"optimizer": "lion"}, "optimizer"), ({"gpu_memory": 0}, "gpu_memory"),
        ({"gpu": "v100"}, "gpu"), ({"dp": 0}, "dp"), ({"recompute": "some"}, "recompute"),
        ({"kv_heads": 8, "tp": 16}, "tp"), ({"params": "-5B"}, "params"),
    ],
)
def test_bad_inputs_name_the_input(inputs: dict[str, object], name: str) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("model_memory", **inputs)
    assert caught.value.input_name == name
