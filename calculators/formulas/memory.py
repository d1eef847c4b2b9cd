"""Training memory per GPU: model states (ZeRO) and activations (Korthikanti et al.).

The one implementation of these formulas: the ``model_memory`` calculator and the
planner (formulas.planner) both call ``memory_per_gpu``. Bytes are decimal SI bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.architecture import (
    embedding_params,
    layer_params,
    norm_params,
    total_params,
)

if TYPE_CHECKING:
    from calculators.formulas.architecture import Architecture

#: Bytes per parameter of (weights, gradients) by precision. Mixed precision keeps
#: 16-bit weights and gradients (Rajbhandari et al. 2020, ZeRO, Sec. 3.1); FP8 training
#: as in NVIDIA Transformer Engine keeps the 16-bit weights and adds a 1-byte FP8 copy
#: for the matrix multiplies (our stated assumption; activations stay 16-bit).
PRECISION_BYTES: dict[str, tuple[float, float]] = {
    "bf16_mixed": (2.0, 2.0), "fp16_mixed": (2.0, 2.0), "fp8_mixed": (3.0, 2.0),
    "fp32": (4.0, 4.0),
}
#: Optimizer state bytes per parameter, not counting an FP32 master copy (4 B, added
#: for every mixed-precision mode): Adam(W) momentum + variance 8 B (ZeRO Sec. 3.1:
#: K = 4 + 8 = 12); SGD momentum 4 B; Adafactor without momentum keeps factored row and
#: column statistics, O(n + m) per n x m matrix, taken here as 0 B per parameter
#: (Shazeer and Stern 2018, Sec. 3-4); 8-bit Adam keeps both moments in 1 B each
#: (Dettmers et al. 2022, 8-bit Optimizers via Block-wise Quantization).
OPTIMIZER_STATE_BYTES: dict[str, float] = {
    "adamw": 8.0, "sgd_momentum": 4.0, "adafactor": 0.0, "adamw_8bit": 2.0,
}
MASTER_WEIGHT_BYTES = 4.0


@dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter of each model state, before any partitioning."""

    weights: float
    gradients: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer


def state_bytes(precision: str, optimizer: str) -> StateBytes:
    """2 + 2 + 12 = 16 B/param for BF16/FP16 mixed precision with AdamW (ZeRO Sec. 3.1)."""
    weights, gradients = PRECISION_BYTES[precision]
    master = 0.0 if precision == "fp32" else MASTER_WEIGHT_BYTES
    return StateBytes(weights, gradients, master + OPTIMIZER_STATE_BYTES[optimizer])


def model_state_bytes(params: float, per_param: StateBytes, zero_stage: int,
                      dp: int) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes on one GPU under ZeRO stage 0-3.

    Rajbhandari et al. 2020, Sec. 5 and Fig. 1: stage 1 partitions optimizer states
    over the Nd data-parallel ranks, stage 2 also gradients, stage 3 also weights.
    """
    weights = params * per_param.weights / (dp if zero_stage >= 3 else 1)
    gradients = params * per_param.gradients / (dp if zero_stage >= 2 else 1)
    optimizer = params * per_param.optimizer / (dp if zero_stage >= 1 else 1)
    return weights, gradients, optimizer


def params_on_gpu(arch: Architecture, tp: int, pp: int) -> float:
    """Parameters held by one GPU of the fullest pipeline stage, split over ``tp``.

    The first stage holds the token (and position) embedding, the last the output
    layer (a copy of the embedding when tied) and the final norm; each stage holds
    ceil(l / pp) layers. Norms and biases are counted as split too (they are tiny).
    """
    if pp == 1:
        return total_params(arch) / tp
    layers = math.ceil(arch.layers / pp) * layer_params(arch)
    output = arch.vocab * arch.hidden
    first = layers + embedding_params(arch) - (0 if arch.tied_embeddings else output)
    last = layers + output + norm_params(arch)
    return max(first, last) / tp


def activation_bytes_per_layer(arch: Architecture, micro_batch: int, tp: int,
                               sequence_parallel: bool, recompute: str) -> float:
    """Activation bytes one layer stores for one micro-batch (16-bit activations).

    Korthikanti et al. 2022, Sec. 4 and Table 2: sbh(34 + 5as/h) without parallelism;
    sbh(10 + 24/t + 5as/(ht)) with tensor parallelism; sbh(34/t + 5as/(ht)) with
    sequence parallelism too; selective recomputation drops the 5as/h attention-score
    term; full recomputation keeps only the layer input, 2sbh (split by t under
    sequence parallelism). The 10 sbh that TP leaves replicated are the two norms' inputs
    (4), the inputs of the QKV and first MLP matrices (2 + 2) and two dropout masks
    (1 + 1); the 24 sbh that TP splits are Q, K, V and the projection input (8) and the
    MLP's 4h-wide tensors (16). Here the split part is scaled to the actual widths
    (GQA's narrower K and V, f != 4h, three gated-MLP tensors) so that it reduces to 24
    for the standard GPT shape.
    """
    s, b, h = arch.seq_len, micro_batch, arch.hidden
    sbh = s * b * h
    if recompute == "full":
        return 2.0 * sbh / (tp if sequence_parallel else 1)
    q, kv, f = arch.attention_width / h, arch.kv_width / h, arch.ffn_hidden / h
    split = 2 * q + 4 * kv + 2 * q + (6 if arch.gated_mlp else 4) * f
    replicated = 10.0
    linear = sbh * ((replicated + split) / tp if sequence_parallel else replicated + split / tp)
    scores = 0.0 if recompute == "selective" else 5.0 * arch.heads * s * s * b / tp
    return linear + scores


def activation_bytes(arch: Architecture, *, micro_batch: int, tp: int, pp: int,
                     sequence_parallel: bool, recompute: str, in_flight: int,
                     scale: float = 1.0) -> float:
    """Activations on the first pipeline stage: ceil(l/pp) layers x ``in_flight``
    micro-batches (1F1B keeps up to pp in flight: Korthikanti et al. Sec. 4.2.3;
    Narayanan et al. 2021 Sec. 2.2.1). Under full recomputation, add one layer's full
    activations being rebuilt during its backward pass. ``scale`` = 2 for FP32."""
    per_layer = activation_bytes_per_layer(arch, micro_batch, tp, sequence_parallel,
                                           recompute)
    stored = per_layer * math.ceil(arch.layers / pp) * in_flight
    if recompute == "full":
        stored += activation_bytes_per_layer(arch, micro_batch, tp, sequence_parallel, "none")
    return stored * scale


@dataclass(frozen=True)
class Breakdown:
    """Bytes on one GPU, by kind."""

    weights: float
    gradients: float
    optimizer: float
    activations: float

    @property
    def states(self) -> float:
        return self.weights + self.gradients + self.optimizer

    @property
    def total(self) -> float:
        return self.states + self.activations


@dataclass(frozen=True)
class Strategy:
    """How the model is cut up and what is traded for memory."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    zero_stage: int = 0
    micro_batch: int = 1
    sequence_parallel: bool = False
    recompute: str = "none"
    in_flight: int | None = None  # micro-batches alive on stage 1; None = pp (1F1B)


def memory_per_gpu(arch: Architecture, strategy: Strategy, per_param: StateBytes,
                   params: float | None = None, activation_scale: float = 1.0) -> Breakdown:
    """Model states and activations on the fullest GPU. ``params`` overrides the count
    from ``arch`` (then spread evenly over tp x pp)."""
    st = strategy
    on_gpu = params_on_gpu(arch, st.tp, st.pp) if params is None else params / (st.tp * st.pp)
    weights, gradients, optimizer = model_state_bytes(on_gpu, per_param, st.zero_stage, st.dp)
    in_flight = st.pp if st.in_flight is None else st.in_flight
    activations = activation_bytes(
        arch, micro_batch=st.micro_batch, tp=st.tp, pp=st.pp,
        sequence_parallel=st.sequence_parallel, recompute=st.recompute, in_flight=in_flight,
        scale=activation_scale)
    return Breakdown(weights, gradients, optimizer, activations)


def min_dp_to_fit(breakdown: Breakdown, zero_stage: int, dp: int, capacity: float) -> int | None:
    """Smallest data-parallel size at which ``breakdown`` (computed at ``dp``) fits in
    ``capacity``: only what ZeRO partitions shrinks with dp. None if no dp suffices."""
    shared = (breakdown.optimizer * (zero_stage >= 1) + breakdown.gradients * (zero_stage >= 2)
              + breakdown.weights * (zero_stage >= 3)) * dp
    fixed = breakdown.total - shared / dp
    if fixed > capacity:
        return None
    if shared == 0:
        return 1
    room = capacity - fixed
    return max(1, math.ceil(shared / room)) if room > 0 else None
