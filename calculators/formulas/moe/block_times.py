"""One block of a mixture of experts on one GPU, operation by operation, as the dense
layer is priced (formulas.kernels.dense_layer): its attention (grouped-query, or
DeepSeek's multi-head latent attention with its down- and up-projections), its FFN
(a dense one, or the router, the shared experts and the routed experts), its
normalisations, activations and the copies that dispatch and combine tokens.

Routed experts are whole on each GPU (expert tensor parallelism 1, as DeepSeek-V3 and
formulas.moe.layers assume), and with balanced routing every GPU's experts process
``experts_per_token`` x its tokens; the experts' GEMMs are priced as one grouped GEMM of
all of them (grouped kernels run the groups in one launch: DeepGEMM's grouped FP8 GEMM
on H800, 4 groups of 8,192 rows, 1,346 TFLOP/s, as fast as one dense GEMM of the same
rows). Under tensor parallelism the MoE block's tokens are split over the TP ranks
before dispatch (sequence parallelism, which Megatron-Core requires with TP for MoE).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from calculators.formulas.kernels.attention import AttentionShape
from calculators.formulas.kernels.dense_layer import (
    BlockWork,
    Gemm,
    LayerTimes,
    assemble,
    output_times,
)
from calculators.formulas.moe import layers as ml
from calculators.formulas.moe.shape import LatentAttention
from calculators.formulas.planner.layer_costs import DenseStack

if TYPE_CHECKING:
    from calculators.formulas.kernels.dense_layer import Machine
    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.moe.shape import MoeArchitecture
    from calculators.formulas.planner.layout import Options

def _attention(model: MoeArchitecture, tokens: int, tp: int,
               ) -> tuple[list[Gemm], tuple[int, ...], AttentionShape, float, float]:
    """The attention's GEMMs (the first the QKV-like projection) and which of them are
    MLA's up-projections; its core's shape (sequences and lengths filled in by the
    caller); the Q and K elements RoPE rotates; the bytes of its extra norms."""
    h = model.hidden
    a = model.attention
    if isinstance(a, LatentAttention):
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        heads = max(1, a.heads // tp)
        gemms: list[Gemm] = []
        light: list[int] = []
        if a.q_lora_rank:
            gemms += [(tokens, heads * qk, a.q_lora_rank, True),
                      (tokens, a.q_lora_rank, h, True)]
            light.append(0)
        else:
            gemms.append((tokens, heads * qk, h, True))
        gemms.append((tokens, a.kv_lora_rank + a.qk_rope_head_dim, h, True))
        light.append(len(gemms))
        gemms += [(tokens, heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, True),
                  (tokens, h, heads * a.v_head_dim, True)]
        rotary = float(tokens * (heads + 1) * a.qk_rope_head_dim)
        norms = 4.0 * tokens * (a.q_lora_rank + a.kv_lora_rank)
        shape = AttentionShape(1, heads, 1, 1, qk, a.v_head_dim, 1.0)
        return gemms, tuple(light), shape, rotary, norms
    heads, kv = max(1, a.heads // tp), max(1, a.kv_heads // tp)
    gate = heads if a.output_gate else 0  # Qwen3-Next's gate comes out of q_proj
    gemms = [(tokens, (heads + gate + 2 * kv) * a.head_dim, h, True),
             (tokens, h, heads * a.head_dim, True)]
    beyond = ml.mean_mixer_matmul(model) - ml.attention_matmul(model)
    if beyond > 0:
        # Linear-attention layers project more than attention does: the mean layer's
        # extra, as one more GEMM of the input (formulas.model.layer_mix).
        gemms.append((tokens, max(1, beyond // (h * tp)), h, True))
    norms = 4.0 * tokens * (heads + kv) * a.head_dim if a.qk_norm else 0.0
    shape = AttentionShape(1, heads, 1, 1, a.head_dim, a.head_dim, 1.0)
    return gemms, (), shape, float(tokens * (heads + kv) * a.head_dim), norms


def _ffn(model: MoeArchitecture, kind: int, tokens: int,
         tp: int) -> tuple[list[Gemm], float, float]:
    """The FFN's GEMMs (the first the up-projection), the elements its activations run
    over, and the bytes its routing copies move. One expert of one is a dense FFN split
    by TP, as formulas.moe.layers counts it."""
    h, gate = model.hidden, 2 if model.gated_mlp else 1
    if kind == ml.DENSE or model.routed_experts == 1:
        f = (model.dense_ffn if kind == ml.DENSE else model.expert_ffn) // tp
        return [(tokens, gate * f, h, True), (tokens, h, f, True)], float(tokens * f), 0.0
    routed = tokens * model.experts_per_token // tp
    f_e = model.expert_ffn
    gemms = [(routed, gate * f_e, h, True), (routed, h, f_e, True),
             (tokens, model.routed_experts, h, False)]  # the router, at 16 bits
    elements = float(routed * f_e)
    if model.shared_experts:
        f_s = model.shared_experts * model.shared_ffn // tp
        gemms = [(tokens, gate * f_s, h, True), *gemms, (tokens, h, f_s, True)]
        elements += tokens * f_s
    # Dispatch and combine: each routed copy of a token's hidden vector written and read
    # once each way (permute, unpermute).
    return gemms, elements, 2.0 * 4.0 * routed * h


def block_times(model: MoeArchitecture, kind: int, machine: Machine, *, tp: int, cp: int,
                micro_batch: int, seq_len: int, sequence_parallel: bool, attention: str,
                dropout: bool = False, act_bytes: float = 2.0) -> LayerTimes:
    """The compute of one block of ``kind`` (formulas.moe.layers.KINDS) for one
    micro-batch on one GPU: its work (formulas.kernels.dense_layer.BlockWork) priced as
    a dense layer's is, so that one expert of one is exactly the dense layer."""
    tokens = micro_batch * seq_len // cp
    h = model.hidden
    att, light, core, rotary, extra_norms = _attention(model, tokens, tp)
    ffn, ffn_elements, copies = _ffn(model, kind, tokens, tp)
    if kind == ml.MTP:  # the 2h -> h projection of the MTP module (Eq. 21)
        ffn.append((tokens, h, 2 * h, True))
    # The mean layer of a mixed stack (formulas.model.layer_mix).
    share = model.mix.mean_share(model.layers, seq_len, model.documents,
                                 causal_share=0.5 if attention == "fused" else 1.0,
                                 flops_per_key=2.0 * model.attention.heads
                                 * (core.qk_dim + core.v_dim))
    shape = replace(core, sequences=micro_batch, q_len=seq_len // cp, kv_len=seq_len,
                    causal_share=share)
    work = BlockWork(
        gemms=(*att, *ffn), up=len(att), attention=shape, tokens=tokens, hidden=h,
        ffn_elements=ffn_elements, gated=model.gated_mlp, rotary_elements=rotary,
        extra_norm_bytes=extra_norms, copy_bytes=copies, light=light)
    return assemble(work, machine, tp=tp, sequence_parallel=sequence_parallel,
                    attention=attention, dropout=dropout, act_bytes=act_bytes)


class MoeStack(DenseStack):
    """The per-width costs of an MoE's blocks: the dense planner's machinery sees its
    routed block (``compute``) as its uniform layer; the MoE base reads every kind
    (``kinds``). The output layer runs once more per MTP module (its shared head)."""

    def __init__(self, model: MoeArchitecture, arch: Architecture, machine: Machine,
                 options: Options) -> None:
        super().__init__(arch, machine, options)
        self.model = model
        self._kinds: dict[tuple[int, int, int], tuple[LayerTimes, ...]] = {}

    def kinds(self, tp: int, cp: int, micro_batch: int) -> tuple[LayerTimes, ...]:
        """One block of each kind (formulas.moe.layers.KINDS), one micro-batch."""
        key = (tp, cp, micro_batch)
        hit = self._kinds.get(key)
        if hit is None:
            opts = self.options
            hit = self._kinds[key] = tuple(
                block_times(self.model, kind, self.machine, tp=tp, cp=cp,
                            micro_batch=micro_batch, seq_len=self.arch.seq_len,
                            sequence_parallel=opts.sp(tp), attention=opts.attention,
                            dropout=opts.dropout, act_bytes=opts.act_bytes)
                for kind in ml.KINDS)
        return hit

    def compute(self, tp: int, cp: int, micro_batch: int) -> tuple[LayerTimes, float]:
        key = (tp, cp, micro_batch)
        hit = self._compute.get(key)
        if hit is None:
            out = output_times(self.arch, self.machine, tp=tp, cp=cp, micro_batch=micro_batch)
            hit = self._compute[key] = (self.kinds(tp, cp, micro_batch)[ml.MOE],
                                        out.total_s * (1 + self.model.mtp_modules))
        return hit
