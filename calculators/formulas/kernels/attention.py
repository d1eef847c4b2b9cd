"""How long the attention core (softmax(Q K^T) V) takes on one GPU: a fused kernel at its
measured rate, or the materialised way, two batched GEMMs around memory-bound passes
over the s x s scores.

**Fused** (FlashAttention-2 on Ampere, cuDNN's fused attention on Hopper and later): the
scores never reach HBM (Dao et al. 2022, FlashAttention). FLOPs are counted as the
FlashAttention papers count them, 4 s_q s_kv d per head forward (2 s_q s_kv (d_qk + d_v)
in general), the causal half when the mask is causal, the backward 2.5 x the forward
(Dao 2023, FlashAttention-2, Sec. 4.1); the rate is a plateau reached as the sequence
grows, ``plateau x s / (s + s_half)`` (catalogues.kernel_speeds: fitted to the
papers' sweeps, s_half larger when causal).

**Materialised** (Megatron-LM before FlashAttention: Narayanan et al. 2021, Sec. 4.2):
Q K^T and P V are batched GEMMs (formulas.kernels.gemm, which charges the scores'
write and read as memory traffic), and the scores pass through memory-bound kernels,
counted in bytes per score element of 16-bit data: a fused scale-mask-softmax (read 2,
write 2) and dropout (read 2, write 2, a 1-byte mask) forward; dropout backward (read 2
and the mask, write 2) and softmax backward (read the probabilities and their
gradient, write 2 each) backward, with four batched GEMMs. On the 22B layer of
Korthikanti et al. 2022 (A100, 8 heads of 96 per GPU, micro-batch 4, s = 2,048) this
gives 1.3 ms for the forward, the 1.3 ms their Table 4 measures selective recomputation
to add (published_checks.kernels).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.kernels.gemm import gemm_time_s

if TYPE_CHECKING:
    from calculators.catalogues.kernel_speeds import FusedAttention
    from calculators.formulas.kernels.gemm import GemmRate

#: Bytes per score element of the memory-bound passes (16-bit scores).
SOFTMAX_FORWARD_BYTES = 4.0
SOFTMAX_BACKWARD_BYTES = 6.0
DROPOUT_BYTES = 5.0  # read 2, write 2, the 1-byte mask (forward and backward alike)
#: Kernels per pass (softmax, dropout): each pays the fixed per-kernel cost.
PASS_KERNELS = 2


@dataclass(frozen=True)
class AttentionShape:
    """One GPU's attention for one micro-batch: ``sequences`` x ``heads`` independent
    problems of ``q_len`` queries against ``kv_len`` keys; ``causal_share`` the share of
    the q x kv scores that are computed (1/2 for a causal square, 1 otherwise)."""

    sequences: int
    heads: int
    q_len: int
    kv_len: int
    qk_dim: int
    v_dim: int
    causal_share: float

    @property
    def forward_flops(self) -> float:
        """FlashAttention's count: 2 q kv (d_qk + d_v) per head, x the causal share."""
        return (2.0 * self.sequences * self.heads * self.q_len * self.kv_len
                * (self.qk_dim + self.v_dim) * self.causal_share)


def _head_factor(head_dim: int, at_64: float) -> float:
    """The plateau at this head size over that at 128: ``at_64`` at 64 and below, 1 at
    128 and above, linear between (the papers measure 64, 128 and 256)."""
    if head_dim >= 128:
        return 1.0
    if head_dim <= 64:
        return at_64
    return at_64 + (1.0 - at_64) * (head_dim - 64) / 64


def fused_attention_s(shape: AttentionShape, kernel: FusedAttention,
                      peak_flops: float) -> tuple[float, float]:
    """(forward, backward) seconds of a fused attention kernel."""
    flops = shape.forward_flops
    if flops <= 0:
        return 0.0, 0.0
    causal = shape.causal_share < 1.0
    half = kernel.half_seq_causal if causal else kernel.half_seq
    seq = min(shape.q_len, shape.kv_len)
    ramp = seq / (seq + half) * (kernel.causal_plateau if causal else 1.0)
    head = min(shape.qk_dim, shape.v_dim)
    forward_rate = peak_flops * kernel.forward * _head_factor(head, kernel.head_64[0]) * ramp
    backward_rate = peak_flops * kernel.backward * _head_factor(head, kernel.head_64[1]) * ramp
    return flops / forward_rate, 2.5 * flops / backward_rate


def materialised_attention_s(shape: AttentionShape, rate: GemmRate, memory_bandwidth: float,
                             kernel_overhead_s: float, *, dropout: bool) -> tuple[float, float]:
    """(forward, backward) seconds of attention with the scores in HBM."""
    batch = shape.sequences * shape.heads
    q, kv, dqk, dv = shape.q_len, shape.kv_len, shape.qk_dim, shape.v_dim
    scores = float(batch * q * kv)
    drop = DROPOUT_BYTES if dropout else 0.0
    kernels = PASS_KERNELS if dropout else 1
    passes_forward = scores * (SOFTMAX_FORWARD_BYTES + drop) / memory_bandwidth
    passes_backward = scores * (SOFTMAX_BACKWARD_BYTES + drop) / memory_bandwidth
    overhead = kernels * kernel_overhead_s
    forward = (gemm_time_s(q, kv, dqk, rate, batch=batch)  # Q K^T
               + gemm_time_s(q, dv, kv, rate, batch=batch)  # P V
               + passes_forward + overhead)
    backward = (gemm_time_s(kv, dv, q, rate, batch=batch)  # dV = P^T dO
                + gemm_time_s(q, kv, dv, rate, batch=batch)  # dP = dO V^T
                + gemm_time_s(q, dqk, kv, rate, batch=batch)  # dQ = dS K
                + gemm_time_s(kv, dqk, q, rate, batch=batch)  # dK = dS^T Q
                + passes_backward + overhead)
    return forward, backward
