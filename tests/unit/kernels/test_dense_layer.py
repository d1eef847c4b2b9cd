"""formulas.kernels.dense_layer: one transformer layer's compute on one GPU, term by term.

Korthikanti et al.'s layer times (Table 4) are checked in published_checks.kernels; here
how the layer's time responds to each choice: sequence parallelism, FP8 and its casts,
the main gradients' precision, recomputation, micro-batch, context parallelism, and the
output layer's vocabulary. Each expected difference is derived from the terms the
module's docstrings list, so the tests hold however the kernel fits are refitted.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from calculators.catalogues.kernel_speeds import KERNEL_SPEEDS
from calculators.formulas.kernels.attention import AttentionShape, fused_attention_s
from calculators.formulas.kernels.dense_layer import (
    LayerTimes,
    Machine,
    layer_times,
    linear_times,
    output_times,
)
from calculators.formulas.kernels.memory_bound import NORM_BACKWARD_RATE
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.model.recipes import FP8_RECIPES
from calculators.inputs.machine import machine_for

#: GPT-3 6.7B's shape (Brown et al. 2020, Table 2.1): MHA, 4h GeLU MLP, learned positions.
GPT = Architecture(layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128,
                   ffn_hidden=16384, vocab=51200, seq_len=2048)
#: A Llama-3-70B-like layer: GQA with 8 KV heads, SwiGLU, rotary embeddings.
LLAMA = Architecture(layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
                     ffn_hidden=28672, vocab=128256, seq_len=8192, gated_mlp=True,
                     biases=False, learned_positions=False, tied_embeddings=False)
FP8_GPUS = sorted(g for g, s in KERNEL_SPEEDS.items() if s.gemm_fp8 is not None)


def _times(arch: Architecture = GPT, machine: Machine | None = None, *, tp: int = 1,
           cp: int = 1, micro_batch: int = 1, sp: bool = True, attention: str = "fused",
           dropout: bool = False) -> LayerTimes:
    return layer_times(arch, machine or machine_for("h100_sxm"), tp=tp, cp=cp,
                       micro_batch=micro_batch, sequence_parallel=sp, attention=attention,
                       dropout=dropout)


def _gemms(arch: Architecture, tp: int, tokens: int) -> list[tuple[int, int, int]]:
    """The layer's four linear layers, (tokens, out, inner) per GPU after the TP split
    (Shoeybi et al. 2019: QKV and the first MLP matrix split by columns, the output
    projection and the second MLP matrix by rows)."""
    h, q, kv, f = arch.hidden, arch.attention_width, arch.kv_width, arch.ffn_hidden
    gate = 2 if arch.gated_mlp else 1
    return [(tokens, (q + 2 * kv) // tp, h), (tokens, h, q // tp),
            (tokens, gate * f // tp, h), (tokens, h, f // tp)]


# --- sequence parallelism ---------------------------------------------------------------

@pytest.mark.parametrize("tp", [2, 4, 8])
@pytest.mark.parametrize("dropout", [False, True])
def test_sequence_parallel_shrinks_the_norms_and_residual_passes_by_t(
        tp: int, dropout: bool) -> None:
    # Korthikanti et al. 2022, Sec. 4.2.2: with sequence parallelism each GPU runs the
    # norms and the bias-dropout-adds on 1/t of the tokens. Per element of the residual
    # stream (2 B): two norms read 2 and write 2; two residual adds read 2 + 2 and write
    # 2, with dropout also its 1-byte mask. Nothing else changes, so the forward saves
    # (2 x 4 + 2 x (6 or 7)) x elements x (1 - 1/t) bytes of traffic; the backward moves
    # 1.5 x the norms' bytes at the norms' backward rate and 5/7 of the adds' bytes.
    machine = machine_for("h100_sxm")
    bw, elements = machine.memory_bandwidth, GPT.seq_len * GPT.hidden
    norms, adds = 2 * 4 * elements, 2 * (7 if dropout else 6) * elements
    saved = 1 - 1 / tp
    without = _times(machine=machine, tp=tp, sp=False, dropout=dropout)
    with_sp = _times(machine=machine, tp=tp, sp=True, dropout=dropout)
    assert without.forward_s - with_sp.forward_s == pytest.approx(
        (norms + adds) * saved / bw)
    assert without.backward_s - with_sp.backward_s == pytest.approx(
        (1.5 * norms / (bw * NORM_BACKWARD_RATE) + adds * 5 / 7 / bw) * saved)
    # Light recomputation redoes the norms (and the activation): it shrinks too.
    assert without.light_recompute_s - with_sp.light_recompute_s == pytest.approx(
        norms * saved / bw)
    # The GEMMs and the attention are the same either way.
    assert without.forward_gemm_s == with_sp.forward_gemm_s
    assert without.attention_forward_s == with_sp.attention_forward_s


def test_sequence_parallel_changes_nothing_at_t_1() -> None:
    assert _times(tp=1, sp=True) == _times(tp=1, sp=False)


# --- GEMMs ------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", [GPT, LLAMA])
@pytest.mark.parametrize("tp", [1, 8])
def test_forward_gemms_are_the_four_linear_layers(arch: Architecture, tp: int) -> None:
    # QKV (h -> (q + 2 kv)/t), the output projection (q/t -> h), the MLP's first matrix
    # (h -> f/t, 2f/t gated) and second (f/t -> h), on the micro-batch's tokens.
    machine = machine_for("h100_sxm")
    times = _times(arch, machine, tp=tp)
    gemms = [linear_times(m, n, k, machine.layer_gemm, 2.0)
             for m, n, k in _gemms(arch, tp, arch.seq_len)]
    assert times.forward_gemm_s == pytest.approx(sum(g[0] for g in gemms))
    # The windows the planner hides TP traffic behind: QKV's and the first MLP matrix's
    # weight-gradient and input-gradient GEMMs.
    assert times.wgrad_windows_s == (gemms[0][2], gemms[2][2])
    assert times.dgrad_windows_s == (gemms[0][1], gemms[2][1])


@pytest.mark.parametrize("gpu", sorted(KERNEL_SPEEDS))
@pytest.mark.parametrize("arch", [GPT, LLAMA])
def test_backward_gemms_take_about_twice_the_forward(gpu: str, arch: Architecture) -> None:
    # Each linear layer's backward is two GEMMs (input and weight gradients) with the
    # forward's FLOPs (formulas.kernels.gemm; Transformer Engine's benchmark: "Dgrad within
    # 2% of Fprop"). With the memory-bound kernels made free, what is left of the backward
    # beyond the attention is its GEMMs: about twice the forward's.
    machine = replace(machine_for(gpu), memory_bandwidth=1e30, kernel_overhead_s=0.0)
    times = _times(arch, machine, tp=2)
    assert times.forward_s - times.attention_forward_s == pytest.approx(
        times.forward_gemm_s, rel=1e-6)
    backward_gemms = times.backward_s - times.attention_backward_s
    assert backward_gemms / times.forward_gemm_s == pytest.approx(2.0, rel=0.1)


# --- FP8 --------------------------------------------------------------------------------

@pytest.mark.parametrize("gpu", FP8_GPUS)
@pytest.mark.parametrize("tp", [1, 8])
def test_fp8_gemms_are_faster_but_not_twice(gpu: str, tp: int) -> None:
    # FP8 tensor cores have twice the dense BF16 peak on the datasheet, but the measured
    # FP8 ceilings are below twice the BF16 ones (Bekman's H100 SXM: 1,402.6 against
    # 794.5 TFLOP/s): the layer's GEMMs are faster, by less than 2x.
    bf16 = _times(LLAMA, machine_for(gpu), tp=tp)
    fp8 = _times(LLAMA, machine_for(gpu, precision="fp8_mixed"), tp=tp)
    assert 1.0 < bf16.forward_gemm_s / fp8.forward_gemm_s < 2.0
    # Attention stays at 16 bits (the catalogue's fused kernels are BF16's).
    assert fp8.attention_forward_s == bf16.attention_forward_s
    assert fp8.attention_backward_s == bf16.attention_backward_s
    # The whole layer, with its casts and its 16-bit attention, gains less than the GEMMs.
    assert bf16.forward_s / fp8.forward_s < bf16.forward_gemm_s / fp8.forward_gemm_s


@pytest.mark.parametrize("gpu", sorted(g for g in KERNEL_SPEEDS if g not in FP8_GPUS))
def test_fp8_without_fp8_tensor_cores_runs_as_bf16(gpu: str) -> None:
    # An A100 (or a TPU v5p) has no FP8 tensor cores: an FP8 recipe changes nothing,
    # no faster GEMMs and no casts to pay for.
    fp8 = machine_for(gpu, precision="fp8_mixed")
    assert fp8.quantise_bytes == 0.0
    assert fp8.layer_gemm == machine_for(gpu).layer_gemm
    assert _times(LLAMA, fp8, tp=8) == _times(LLAMA, machine_for(gpu), tp=8)


@pytest.mark.parametrize("recipe", ["tensorwise", "blockwise"])
@pytest.mark.parametrize("tp", [1, 4])
def test_quantise_casts_add_their_bytes(recipe: str, tp: int) -> None:
    # With FP8 GEMMs each GEMM's activation input (tokens x inner) is cast forward and
    # each output gradient (tokens x out) backward, at the recipe's bytes per element
    # over the achieved bandwidth.
    machine = machine_for("h100_sxm", precision="fp8_mixed", fp8_recipe=recipe)
    no_casts = replace(machine, quantise_bytes=0.0)
    cast = FP8_RECIPES[recipe].cast_bytes / machine.memory_bandwidth
    gemms = _gemms(LLAMA, tp, LLAMA.seq_len)
    with_casts, without = _times(LLAMA, machine, tp=tp), _times(LLAMA, no_casts, tp=tp)
    assert with_casts.forward_s - without.forward_s == pytest.approx(
        cast * sum(m * k for m, _, k in gemms))
    assert with_casts.backward_s - without.backward_s == pytest.approx(
        cast * sum(m * n for m, n, _ in gemms))


def test_blockwise_casts_cost_less_than_tensorwise() -> None:
    # DeepSeek-V3's blockwise scaling fuses the cast (read 2, write 1); Transformer
    # Engine's per-tensor recipe measures more: the blockwise run is faster.
    tensorwise = _times(LLAMA, machine_for("h100_sxm", precision="fp8_mixed"), tp=8)
    blockwise = _times(LLAMA, machine_for("h100_sxm", precision="fp8_mixed",
                                          fp8_recipe="blockwise"), tp=8)
    assert blockwise.forward_s < tensorwise.forward_s
    assert blockwise.backward_s < tensorwise.backward_s
    assert blockwise.forward_gemm_s == tensorwise.forward_gemm_s


# --- the weight-gradient accumulation pass ----------------------------------------------

@pytest.mark.parametrize("arch", [GPT, LLAMA])
@pytest.mark.parametrize("tp", [1, 2, 8])
def test_weight_gradient_accumulation_scales_with_local_weights(
        arch: Architecture, tp: int) -> None:
    # Each weight-gradient GEMM adds into the main gradient (C += A B): its epilogue
    # reads and writes C once per micro-batch, 2 x main-gradient bytes per local weight.
    # FP32 main gradients (4 B) against 16-bit ones (2 B) add 2 x (4 - 2) B per weight;
    # the local weights are the four matrices' 1/t share. The forward is untouched.
    fp32 = machine_for("h100_sxm", gradient_bytes=4.0)
    bf16 = machine_for("h100_sxm", gradient_bytes=2.0)
    weights = sum(n * k for _, n, k in _gemms(arch, tp, arch.seq_len))
    h, q, kv, f = arch.hidden, arch.attention_width, arch.kv_width, arch.ffn_hidden
    per_layer = h * (q + 2 * kv) + q * h + (3 if arch.gated_mlp else 2) * h * f
    assert weights == per_layer // tp
    a, b = _times(arch, fp32, tp=tp), _times(arch, bf16, tp=tp)
    assert a.backward_s - b.backward_s == pytest.approx(
        2 * (4 - 2) * weights / fp32.memory_bandwidth)
    assert a.forward_s == b.forward_s


def test_accumulation_pass_does_not_grow_with_the_micro_batch() -> None:
    # The pass is over the weights, not the tokens: the same at any micro-batch.
    fp32 = machine_for("h100_sxm", gradient_bytes=4.0)
    bf16 = machine_for("h100_sxm", gradient_bytes=2.0)
    extra = [_times(machine=fp32, micro_batch=mb).backward_s
             - _times(machine=bf16, micro_batch=mb).backward_s for mb in (1, 4)]
    assert extra[0] == pytest.approx(extra[1])


# --- recomputation ----------------------------------------------------------------------

@pytest.mark.parametrize("attention", ["fused", "materialised"])
def test_recompute_modes(attention: str) -> None:
    # Full recomputation runs the whole forward again; selective only the attention
    # core's (Korthikanti et al. 2022, Sec. 5); none adds nothing; light the norms and
    # the activation function, a memory-bound share of the forward.
    times = _times(tp=8, attention=attention, dropout=True)
    assert times.recompute_s("full") == times.forward_s
    assert times.recompute_s("selective") == times.attention_forward_s
    assert times.recompute_s("none") == 0.0
    assert times.recompute_s("light") == times.light_recompute_s
    assert 0.0 < times.recompute_s("light") < times.forward_s - times.forward_gemm_s
    assert 0.0 < times.recompute_s("selective") < times.recompute_s("full")


# --- attention inside the layer ---------------------------------------------------------

@pytest.mark.parametrize(("tp", "cp"), [(1, 1), (8, 1), (2, 4)])
def test_fused_attention_is_causal_over_the_local_heads_and_queries(tp: int, cp: int) -> None:
    # A decoder's attention is causal, and a fused kernel skips the masked blocks: half
    # the s x s scores. Each GPU holds heads/t of the heads and s/cp of the queries
    # against all s keys.
    machine = machine_for("h100_sxm")
    times = _times(LLAMA, machine, tp=tp, cp=cp, micro_batch=2)
    shape = AttentionShape(2, LLAMA.heads // tp, LLAMA.seq_len // cp, LLAMA.seq_len,
                           LLAMA.head_dim, LLAMA.head_dim, 0.5)
    assert (times.attention_forward_s, times.attention_backward_s) == fused_attention_s(
        shape, machine.speed.attention, machine.peak_bf16)


def test_materialised_attention_is_slower_than_fused() -> None:
    # Megatron-LM before FlashAttention computes all s^2 scores (masked afterwards) and
    # sends them through HBM: slower, forward and backward.
    fused = _times(GPT, tp=8, attention="fused", dropout=True)
    materialised = _times(GPT, tp=8, attention="materialised", dropout=True)
    assert materialised.attention_forward_s > fused.attention_forward_s
    assert materialised.attention_backward_s > fused.attention_backward_s


def test_dropout_adds_the_residual_masks() -> None:
    # With a fused attention kernel dropout only touches the two bias-dropout-adds: one
    # more byte (the mask) per residual element each, forward; 5/7 of that backward.
    machine = machine_for("h100_sxm")
    on, off = _times(machine=machine, tp=1, dropout=True), _times(machine=machine, tp=1)
    mask_bytes = 2 * 1 * GPT.seq_len * GPT.hidden
    assert on.forward_s - off.forward_s == pytest.approx(mask_bytes / machine.memory_bandwidth)
    assert on.backward_s - off.backward_s == pytest.approx(
        mask_bytes * 5 / 7 / machine.memory_bandwidth)


# --- scaling with the work --------------------------------------------------------------

@pytest.mark.parametrize("gpu", ["a100_80gb_sxm", "h100_sxm", "b200", "mi300x"])
@pytest.mark.parametrize("tp", [1, 8])
def test_layer_time_is_about_linear_in_the_micro_batch(gpu: str, tp: int) -> None:
    # At 8,192 tokens per sequence every GEMM is compute-bound, with full waves and a
    # long inner dimension, and the memory-bound passes are over the tokens, so 4
    # sequences take about 4 x one; the exceptions are the fixed per-kernel costs and
    # the backward's pass over the weights' main gradients, which is once per
    # micro-batch and does not grow. (At 2,048 tokens the weight gradients' inner
    # dimension, the tokens, is short enough for their ramp to show: sublinear.)
    arch, machine = LLAMA, machine_for(gpu)
    one, four = _times(arch, machine, tp=tp), _times(arch, machine, tp=tp, micro_batch=4)
    assert four.forward_s / one.forward_s == pytest.approx(4.0, rel=0.05)
    weights = sum(n * k for _, n, k in _gemms(arch, tp, arch.seq_len))
    accumulate = 2 * machine.main_grad_bytes * weights / machine.memory_bandwidth
    assert (four.backward_s - accumulate) / (one.backward_s - accumulate) == pytest.approx(
        4.0, rel=0.05)
    assert four.activation_bytes == 4 * one.activation_bytes


def test_activation_message_is_the_layer_output() -> None:
    # One TP collective moves the layer's activation, tokens x h at 2 bytes.
    times = _times(LLAMA, tp=8, micro_batch=2)
    assert times.activation_bytes == 2 * LLAMA.seq_len * LLAMA.hidden * 2


def test_context_parallel_halves_the_gemms() -> None:
    # cp = 2: each GPU holds half the tokens, so its GEMMs have half the rows.
    machine = machine_for("h100_sxm")
    one, two = _times(LLAMA, machine, tp=8), _times(LLAMA, machine, tp=8, cp=2)
    assert one.forward_gemm_s / two.forward_gemm_s == pytest.approx(2.0, rel=0.05)


# --- the output layer -------------------------------------------------------------------

def test_output_layer_grows_with_the_vocabulary() -> None:
    # The logits GEMM is tokens x V/t x h and the cross-entropy reads V/t logits per
    # token: a larger vocabulary takes longer, about in proportion at large V.
    machine = machine_for("h100_sxm")

    def total(vocab: int, tp: int = 1) -> float:
        return output_times(replace(GPT, vocab=vocab), machine, tp=tp, cp=1,
                            micro_batch=1).total_s

    times = [total(v) for v in (32000, 51200, 128256, 256000)]
    assert times == sorted(times)
    assert len(set(times)) == len(times)
    assert total(256000) / total(128000) == pytest.approx(2.0, rel=0.05)
    # The vocabulary is split over the tensor-parallel GPUs.
    assert total(128000, tp=8) == pytest.approx(total(128000) / 8, rel=0.1)


def test_output_layer_grows_with_the_tokens() -> None:
    machine = machine_for("h100_sxm")
    one = output_times(GPT, machine, tp=1, cp=1, micro_batch=1).total_s
    four = output_times(GPT, machine, tp=1, cp=1, micro_batch=4).total_s
    assert four / one == pytest.approx(4.0, rel=0.05)
