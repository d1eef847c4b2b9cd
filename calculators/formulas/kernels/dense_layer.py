"""One dense transformer layer on one GPU, operation by operation: its four GEMMs by
their shapes after the tensor-parallel split, its attention core by its kernel, its
normalisations, activation, rotary embedding, dropout and residual adds by their bytes;
and the output layer (logits and cross-entropy) and the optimizer step around them.

The layer is Megatron-LM's (Shoeybi et al. 2019, Fig. 3): a column-parallel QKV
projection and first MLP matrix, a row-parallel output projection and second MLP
matrix, each GPU holding 1/t of the heads and of the FFN. With sequence parallelism
(Korthikanti et al. 2022, Sec. 4.2.2) the norms, dropout and residual adds run on 1/t
of the tokens; without it every GPU runs them on all. Communication is not here: the
planner prices it on the links (formulas.collectives.achieved) and decides what hides
behind the windows this module reports (the weight- and input-gradient GEMMs).

Times are for one micro-batch of ``micro_batch`` sequences of which this GPU holds
1/cp of the tokens (context parallelism).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING

from calculators.formulas.kernels.attention import (
    AttentionShape,
    fused_attention_s,
    materialised_attention_s,
)
from calculators.formulas.kernels.gemm import GemmRate, gemm_time_s
from calculators.formulas.kernels.memory_bound import (
    CROSS_ENTROPY_BACKWARD_BYTES,
    CROSS_ENTROPY_FORWARD_BYTES,
    NORM_BACKWARD_RATE,
    memory_time_s,
)

if TYPE_CHECKING:
    from calculators.catalogues.kernel_speeds import KernelSpeed
    from calculators.formulas.model.architecture import Architecture

#: Memory-bound kernels of a layer's forward (two norms, two bias-dropout-adds, the
#: activation, rotary) and backward (the same, one more for the norms' reductions).
FORWARD_KERNELS, BACKWARD_KERNELS = 6, 8


@dataclass(frozen=True)
class Machine:
    """What the kernels run on: the GEMM rates at 16-bit and at the GEMMs' precision,
    the achieved HBM bandwidth, the fixed cost of a memory-bound kernel, the dense BF16
    peak and the accelerator's kernel speeds."""

    gemm: GemmRate  # 16-bit GEMMs (attention's, the output layer's)
    layer_gemm: GemmRate  # the layers' linear GEMMs (FP8 when the run is FP8)
    layer_operand_bytes: float  # 2 for BF16, 1 for FP8
    quantise_bytes: float  # HBM bytes per element cast to FP8 (0 for BF16)
    memory_bandwidth: float
    kernel_overhead_s: float
    peak_bf16: float
    speed: KernelSpeed
    #: Bytes per element of the main gradient the weight-gradient GEMMs accumulate into
    #: (4: FP32, Megatron-LM's --accumulate-allreduce-grads-in-fp32 and its default
    #: under BF16; 2: 16-bit gradients).
    main_grad_bytes: float = 2.0
    #: FP16 with a dynamic loss scale: the optimizer step first unscales the gradients
    #: and checks them for overflow (one more pass over them).
    loss_scaling: bool = False
    #: The share of the layers' GEMMs a recipe leaves at 16 bits (NVFP4's selective
    #: high-precision layers, formulas.model.recipes): they run at ``gemm``'s rate.
    layer_bf16_share: float = 0.0


@dataclass(frozen=True)
class LayerTimes:
    """Seconds of compute of one layer for one micro-batch on one GPU (no communication).
    The windows are what tensor-parallel traffic can hide behind in the backward: the
    weight-gradient GEMM of the QKV projection and of the first MLP matrix (behind which
    Megatron-LM reduces the input gradient) and their input-gradient GEMMs (behind which
    it gathers the layer input again under sequence parallelism); and the forward's GEMMs
    (behind which Transformer Engine's userbuffers overlap hide the forward's traffic)."""

    forward_s: float
    backward_s: float
    attention_forward_s: float
    attention_backward_s: float
    forward_gemm_s: float
    wgrad_windows_s: tuple[float, float]
    dgrad_windows_s: tuple[float, float]
    activation_bytes: float  # one TP collective's message: the layer's activation
    light_recompute_s: float = 0.0  # the norms and the activation function, forward
    #: Where the forward + backward goes: the GEMMs (and their FLOPs), the memory-bound
    #: passes (norms, activation, residuals, rotary, casts, gradient accumulation).
    gemm_s: float = 0.0
    gemm_flops: float = 0.0
    memory_bound_s: float = 0.0

    def recompute_s(self, mode: str) -> float:
        """What recomputation adds to the backward: full, the whole forward again;
        selective, the attention core's forward (Korthikanti et al. 2022, Sec. 5);
        light, the norms and the activation function (formulas.model.activations)."""
        if mode == "full":
            return self.forward_s
        if mode == "light":
            return self.light_recompute_s
        return self.attention_forward_s if mode == "selective" else 0.0


#: One linear layer's (forward, input-gradient, weight-gradient) seconds.
Linear = tuple[float, float, float]


def linear_times(tokens: int, out: int, inner: int, rate: GemmRate,
                 operand: float) -> Linear:
    """(forward, input gradient, weight gradient) seconds of one linear layer."""
    fwd = gemm_time_s(tokens, out, inner, rate, operand_bytes=operand)
    dgrad = gemm_time_s(tokens, inner, out, rate, operand_bytes=operand)
    wgrad = gemm_time_s(inner, out, tokens, rate, operand_bytes=operand)
    return fwd, dgrad, wgrad


#: One GEMM of a block, (m, n, k) with m the tokens (forward), and whether it runs at the
#: layers' precision (FP8 when the run is FP8) or at 16 bits (a router, say).
Gemm = tuple[int, int, int, bool]


@dataclass(frozen=True)
class BlockWork:
    """What one block (a dense layer, or a block of a mixture of experts) runs on one GPU
    for one micro-batch, besides how fast: its linear layers' forward shapes, the first
    the QKV-like projection and ``up`` the index of the first MLP matrix; its attention
    core; and the sizes its memory-bound kernels run over: ``tokens`` x ``hidden`` for
    the residual stream, ``ffn_elements`` for the activation function,
    ``rotary_elements`` of Q and K rotated, and the bytes of extra norms (QK-norm, MLA's
    latents) and of the copies that dispatch and combine tokens."""

    gemms: tuple[Gemm, ...]
    up: int
    attention: AttentionShape
    tokens: int
    hidden: int
    ffn_elements: float
    gated: bool
    rotary_elements: float
    extra_norm_bytes: float = 0.0
    copy_bytes: float = 0.0
    #: Indices of the GEMMs that light recomputation redoes (MLA's up-projections).
    light: tuple[int, ...] = ()


def _layer_linear(m: int, n: int, k: int, machine: Machine) -> Linear:
    """A layer GEMM at the run's precision; where a recipe leaves a share of the layers
    at 16 bits, that share's time at the 16-bit rate (a weighted mean over the layers)."""
    low = linear_times(m, n, k, machine.layer_gemm, machine.layer_operand_bytes)
    share = machine.layer_bf16_share
    if share <= 0.0:
        return low
    wide = linear_times(m, n, k, machine.gemm, 2.0)
    return (share * wide[0] + (1.0 - share) * low[0],
            share * wide[1] + (1.0 - share) * low[1],
            share * wide[2] + (1.0 - share) * low[2])


def assemble(work: BlockWork, machine: Machine, *, tp: int, sequence_parallel: bool,
             attention: str, dropout: bool, act_bytes: float = 2.0) -> LayerTimes:
    """Seconds of one block's compute from its work: GEMMs at their shapes' rates, the
    attention core by its kernel, the memory-bound kernels by their bytes (norms and
    residual adds on all tokens, or 1/t of them with sequence parallelism; the
    activation on the FFN's 1/t), and with FP8 the casts of the GEMMs' inputs forward
    and of their output gradients backward."""
    linears = [_layer_linear(m, n, k, machine) if layer
               else linear_times(m, n, k, machine.gemm, 2.0)
               for m, n, k, layer in work.gemms]
    forward_gemm = math.fsum(g[0] for g in linears)
    backward_gemm = math.fsum(g[1] + g[2] for g in linears)
    if attention == "fused":
        attn_f, attn_b = fused_attention_s(work.attention, machine.speed.attention,
                                           machine.peak_bf16)
    else:
        attn_f, attn_b = materialised_attention_s(
            work.attention, machine.gemm, machine.memory_bandwidth,
            machine.kernel_overhead_s, dropout=dropout)
    scale = act_bytes / 2.0
    e = float(work.tokens * work.hidden) * scale
    share = 1.0 / tp if sequence_parallel else 1.0
    norms = (2 * 4.0 * e + work.extra_norm_bytes * scale) * share  # read 2, write 2
    adds = 2 * (7.0 if dropout else 6.0) * e * share  # read 2 + 2, write 2, mask 1
    act = (6.0 if work.gated else 4.0) * work.ffn_elements * scale
    rotary = 4.0 * work.rotary_elements * scale
    bw, k0 = machine.memory_bandwidth, machine.kernel_overhead_s
    ew_f = memory_time_s(norms + adds + act + rotary + work.copy_bytes, bw,
                         FORWARD_KERNELS, k0)
    ew_b = (memory_time_s(1.5 * norms, bw * NORM_BACKWARD_RATE, 2, k0)
            + memory_time_s(adds * 5.0 / 7.0 + act * 1.5 + rotary + work.copy_bytes, bw,
                            BACKWARD_KERNELS - 2, k0))
    # Each weight-gradient GEMM adds into the main gradient (C += A B): its epilogue reads
    # and writes C, after the main loop (Megatron-LM's gradient-accumulation fusion),
    # once per micro-batch: a memory-bound pass over the layer's local weights.
    weights = math.fsum(float(n * k) for _, n, k, _ in work.gemms)
    ew_b += memory_time_s(2.0 * machine.main_grad_bytes * weights, bw, 0, k0)
    cast = machine.quantise_bytes * (1.0 - machine.layer_bf16_share) / bw
    cast_f = cast * math.fsum(float(m * k) for m, _, k, layer in work.gemms if layer)
    cast_b = cast * math.fsum(float(m * n) for m, n, _, layer in work.gemms if layer)
    first, up = linears[0], linears[work.up]
    return LayerTimes(
        forward_s=forward_gemm + attn_f + ew_f + cast_f,
        backward_s=backward_gemm + attn_b + ew_b + cast_b,
        attention_forward_s=attn_f, attention_backward_s=attn_b,
        forward_gemm_s=forward_gemm,
        wgrad_windows_s=(first[2], up[2]), dgrad_windows_s=(first[1], up[1]),
        activation_bytes=float(work.tokens * work.hidden) * act_bytes,
        light_recompute_s=memory_time_s(norms + act, bw, 3, k0)
        + math.fsum(linears[i][0] for i in work.light),
        gemm_s=forward_gemm + backward_gemm,
        gemm_flops=math.fsum(6.0 * m * n * k for m, n, k, _ in work.gemms),
        memory_bound_s=ew_f + ew_b + cast_f + cast_b)


def layer_times(arch: Architecture, machine: Machine, *, tp: int, cp: int, micro_batch: int,
                sequence_parallel: bool, attention: str, dropout: bool,
                act_bytes: float = 2.0) -> LayerTimes:
    """The compute of one layer of ``arch`` for one micro-batch on one GPU."""
    tokens = micro_batch * arch.seq_len // cp
    h, q, kv, f = arch.hidden, arch.attention_width, arch.kv_width, arch.ffn_hidden
    gate = 2 if arch.gated_mlp else 1
    mlp: tuple[Gemm, ...] = ((tokens, gate * f // tp, h, True), (tokens, h, f // tp, True))
    gemms = ((tokens, (q + 2 * kv) // tp, h, True), (tokens, h, q // tp, True), *mlp)
    # The mean layer of a mixed stack (formulas.model.layer_mix).
    share = arch.mix.mean_share(arch.layers, arch.seq_len, arch.documents,
                                causal_share=0.5 if attention == "fused" else 1.0,
                                flops_per_key=4.0 * arch.heads * arch.head_dim)
    shape = AttentionShape(micro_batch, arch.heads // tp, arch.seq_len // cp, arch.seq_len,
                           arch.head_dim, arch.head_dim, share)
    work = BlockWork(
        gemms=gemms, up=2, attention=shape, tokens=tokens, hidden=h,
        ffn_elements=float(tokens * f // tp), gated=arch.gated_mlp,
        rotary_elements=0.0 if arch.learned_positions else float(tokens * (q + kv) // tp))
    times = assemble(work, machine, tp=tp, sequence_parallel=sequence_parallel,
                     attention=attention, dropout=dropout, act_bytes=act_bytes)
    linear, others = arch.mix.linear, arch.layers - arch.attention_layers
    if linear is None or others == 0:
        return times
    # A linear-attention layer multiplies by its own projections in place of Q, K, V
    # and O (formulas.model.layer_mix.LinearMixer: in_proj_qkvz, in_proj_ba, out_proj);
    # its recurrence is in the mean layer's core already (``share``). Without this a
    # stack of very wide linear layers ran at 206% MFU (issue 36).
    mixer: tuple[Gemm, ...] = (
        (tokens, 2 * (linear.key_width + linear.value_width) // tp, h, True),
        (tokens, 2 * linear.value_heads // tp, h, True),
        (tokens, h, linear.value_width // tp, True))
    other = assemble(replace(work, gemms=(*mixer, *mlp), up=len(mixer)), machine, tp=tp,
                     sequence_parallel=sequence_parallel, attention=attention,
                     dropout=dropout, act_bytes=act_bytes)
    return mean_times(times, other, others / arch.layers)


def mean_times(first: LayerTimes, second: LayerTimes, share: float) -> LayerTimes:
    """The mean layer of a stack with ``share`` of its layers like ``second``: each
    time (and each window) weighted by the layers it stands for."""
    def mean(a: float, b: float) -> float:
        return (1.0 - share) * a + share * b

    values: dict[str, object] = {}
    for field in fields(LayerTimes):
        a, b = getattr(first, field.name), getattr(second, field.name)
        values[field.name] = (tuple(mean(x, y) for x, y in zip(a, b, strict=True))
                              if isinstance(a, tuple) else mean(a, b))
    return LayerTimes(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class OutputTimes:
    """The output layer's compute for one micro-batch on the last pipeline rank: the
    logits GEMM (forward, input and weight gradients) and the vocabulary-parallel
    cross-entropy, forward + backward."""

    total_s: float


def output_times(arch: Architecture, machine: Machine, *, tp: int, cp: int,
                 micro_batch: int) -> OutputTimes:
    """Logits (tokens x V/t x h) and Megatron's vocabulary-parallel cross-entropy."""
    tokens = micro_batch * arch.seq_len // cp
    vocab = max(1, arch.vocab // tp)
    logits = math.fsum(linear_times(tokens, vocab, arch.hidden, machine.gemm, 2.0))
    ce_bytes = float(tokens * vocab) * (CROSS_ENTROPY_FORWARD_BYTES
                                        + CROSS_ENTROPY_BACKWARD_BYTES)
    ce = memory_time_s(ce_bytes, machine.memory_bandwidth, 6, machine.kernel_overhead_s)
    return OutputTimes(logits + ce)
