"""A mixture of experts as the planner sees it: a stack of blocks of three kinds, each
with its parameters split by the parallelism that cuts them, its FLOPs per token and its
activations, and a dense ``Architecture`` that stands in for its attention.

The planner (formulas.planner) lays out a dense transformer of identical layers. An MoE
(formulas.moe.architecture) differs in four ways, each handled here and nowhere else:

- **Blocks of three kinds.** DeepSeek-V3's first ``dense_layers`` blocks have a dense
  FFN; the rest are MoE blocks; its multi-token-prediction (MTP) module is one more MoE
  block after the last (DeepSeek-V3 report, Sec. 2.2), which trains with the model and
  is therefore laid out with it, on the last pipeline stage (its output head and input
  embedding are shared with the main model, Sec. 2.2). 61 + 1 = 62 blocks on 16 stages
  split as Llama 3 splits its layers (formulas.parallel.stages): 3 on the first and last
  stage, 4 elsewhere; or, where the last stage's two output heads make it the slowest,
  4 on the first and 2 on the last (``balanced_split``, by the blocks' own times).
- **Two kinds of parameters.** Routed experts are split over expert parallelism (EP),
  whole experts per GPU (expert tensor parallelism 1, as DeepSeek-V3 trains with no TP
  at all); everything else (attention, shared experts, router, norms, dense FFNs,
  embeddings) over TP as in a dense model. A single expert (one of one) is a dense FFN
  and goes with the TP part, so a one-of-one MoE is exactly the dense planner's model.
- **FLOPs from the active parameters.** 6 x the active matrix weights of a block per
  token (formulas.moe.architecture: top-k routed and the shared experts, the router), plus the
  attention scores as the dense planner charges them.
- **Activations.** The dense accounting (formulas.model.activations, via the stand-in
  architecture) with the FFN width a token passes through, k f_e + s f_s
  (expert_parallel.active_ffn_width), plus what only an MoE keeps: the k dispatched
  copies of each token's hidden vector (each expert's input), the k expert outputs the
  combine needs for its gradient, and the router's FP32 probabilities (the same terms
  as formulas.moe.step_costs.moe_ffn_activation_bytes); and MLA's two latents.

The stand-in architecture for multi-head latent attention has heads = kv_heads = n_h
(MLA up-projects a key and a value per head for training) and head_dim (d_qk + d_v)/2,
so that Q, K, V and the attention output add up to MLA's 2 d_qk + 2 d_v per head and
the attention-score FLOPs to 2 s n_h (d_qk + d_v) (formulas.moe.architecture).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from calculators.formulas.model.architecture import Architecture
from calculators.formulas.moe import architecture as moe
from calculators.formulas.moe.expert_parallel import active_ffn_width

if TYPE_CHECKING:
    from calculators.formulas.parallel.stages import StageSplit

#: Block kinds, in the order they come in the model.
DENSE, MOE, MTP = 0, 1, 2
KINDS = (DENSE, MOE, MTP)
#: 16-bit activations; router probabilities in FP32 (formulas.moe.step_costs's assumption).
ACTIVATION_BYTES = 2.0
STATISTIC_BYTES = 4.0


@dataclass(frozen=True)
class Block:
    """One kind of block. Parameters: ``tp_params`` split by tensor parallelism,
    ``ep_params`` the routed experts split by expert parallelism. FLOPs per token:
    ``matmul`` the forward matrix multiplies (2 per active weight), ``attention`` the
    forward attention-score FLOPs (as run: halved for a fused causal kernel).
    ``extra_bytes`` per token: activations only an MoE block (or MLA) keeps, on top of
    the stand-in's dense accounting, kept unless the block is fully recomputed."""

    tp_params: int
    ep_params: int
    matmul: float
    attention: float
    extra_bytes: float
    moe: bool
    #: Per token: Q, K and V as MLA's up-projections make them, which light recomputation
    #: rebuilds from the latents (DeepSeek-V3, Sec. 3.3.3); 0 for grouped-query attention.
    up_projection_bytes: float = 0.0

    @property
    def flops(self) -> float:
        """Forward + backward FLOPs per token as run: 3 x forward (Kaplan et al. 2020)."""
        return 3.0 * (self.matmul + self.attention)

    def recompute(self, mode: str) -> float:
        """FLOPs recomputation adds per token: full, one more forward; selective, the
        attention-score term again, forward and backward (formulas.model.flops.
        recompute_flops_per_token)."""
        if mode == "full":
            return self.matmul + self.attention
        return 3.0 * self.attention if mode == "selective" else 0.0


def attention_matmul(model: moe.MoeArchitecture) -> int:
    """Attention's matrix weights, without the norm scales (QK-norm, MLA's latent norms);
    with the output gate's share of the query projection where the model has one."""
    a = model.attention
    if isinstance(a, moe.LatentAttention):
        return moe.mla_attention_params(model.hidden, a) - a.q_lora_rank - a.kv_lora_rank
    q = a.heads * a.head_dim
    return (2 * model.hidden * q + 2 * model.hidden * a.kv_heads * a.head_dim
            + (model.hidden * q if a.output_gate else 0))


def mean_mixer_matmul(model: moe.MoeArchitecture) -> int:
    """The matrix weights of the stack's mean token mixer: attention's, or averaged with
    the linear-attention layers' projections (formulas.model.layer_mix)."""
    linear = model.mix.linear
    if linear is None:
        return attention_matmul(model)
    attention = model.mix.attention_layers(model.layers)
    others = (model.layers - attention) * linear.matmul_params(model.hidden)
    return (attention * attention_matmul(model) + others) // model.layers


def _ffn_matmul(hidden: int, ffn: int, gated: bool) -> int:
    return (3 if gated else 2) * hidden * ffn


def attention_width(model: moe.MoeArchitecture) -> tuple[int, int, int]:
    """(heads, kv_heads, head_dim) of the stand-in attention (see the module docstring)."""
    a = model.attention
    if isinstance(a, moe.LatentAttention):
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        return a.heads, a.heads, max(1, (qk + a.v_head_dim) // 2)
    return a.heads, a.kv_heads, a.head_dim


def stand_in(model: moe.MoeArchitecture, seq_len: int, ffn: int | None = None) -> Architecture:
    """The dense architecture whose attention, sequence, vocabulary and block count the
    planner's dense rules read (TP divides the heads, CP splits the sequence, PP splits
    the blocks); ``ffn`` is the FFN width for the activation accounting (default: what a
    token passes through in an MoE block)."""
    heads, kv_heads, head_dim = attention_width(model)
    return Architecture(
        layers=model.layers + model.mtp_modules, hidden=model.hidden, heads=heads,
        kv_heads=kv_heads, head_dim=head_dim,
        ffn_hidden=active_ffn_width(model) if ffn is None else ffn, vocab=model.vocab,
        seq_len=seq_len, gated_mlp=model.gated_mlp, biases=model.biases,
        learned_positions=False, tied_embeddings=model.tied_embeddings)


def _extra_bytes(model: moe.MoeArchitecture, routed: bool, fp8: bool = False) -> float:
    """Per token: MLA's latents (each the input of its norm and of its up-projection),
    QK-norm's inputs, and in an MoE block the k copies in, the k outputs, the router.
    ``fp8``: the copies in, the experts' GEMM inputs, are kept in FP8 (1 byte; DeepSeek-V3
    quantises them before dispatch), and so are the routed experts' SwiGLU inputs, 2 f_e
    per copy (DeepSeek-V3, Sec. 3.3.3, "Low-Precision Storage": "we cache the inputs of
    the SwiGLU operator and recompute its output ... also stored in FP8"); the stand-in
    counts both at 2 bytes."""
    a, b = model.attention, ACTIVATION_BYTES
    if isinstance(a, moe.LatentAttention):
        attention = b * 2 * (a.q_lora_rank + a.kv_lora_rank)
    else:
        attention = b * (a.heads + a.kv_heads) * a.head_dim if a.qk_norm else 0.0
    if not routed or model.routed_experts == 1:
        return attention
    k = model.experts_per_token
    copies = (b + (1.0 if fp8 else b)) * k * model.hidden
    swiglu = -(2.0 if model.gated_mlp else 1.0) * k * model.expert_ffn if fp8 else 0.0
    return attention + copies + swiglu + STATISTIC_BYTES * model.routed_experts


def blocks(model: moe.MoeArchitecture, seq_len: int, causal_share: float,
           fp8: bool = False) -> tuple[Block, ...]:
    """The three kinds of block (dense, MoE, MTP), indexed by ``KINDS``."""
    h, gated = model.hidden, model.gated_mlp
    attn_matmul = mean_mixer_matmul(model)
    heads, _, head_dim = attention_width(model)
    # 2 s n_h (d_qk + d_v) forward = 4 s x (stand-in attention width); in a stack of
    # mixed kinds, the mean layer's (formulas.model.layer_mix).
    scores = model.mix.mean_forward_scores(
        model.layers, seq_len, model.documents, causal_share=causal_share,
        flops_per_key=4.0 * heads * head_dim)
    norms = 2 * moe.norm_params(model)
    dense_ffn = _ffn_matmul(h, model.dense_ffn, gated) if model.dense_layers else 0
    up = 0.0
    if isinstance(model.attention, moe.LatentAttention):
        a = model.attention
        up = ACTIVATION_BYTES * a.heads * (2 * (a.qk_nope_head_dim + a.qk_rope_head_dim)
                                           + a.v_head_dim)
    dense = Block(moe.dense_layer_params(model) if model.dense_layers else 0, 0,
                  2.0 * (attn_matmul + dense_ffn), scores, _extra_bytes(model, False, fp8),
                  False, up)
    expert = moe.expert_params(model)
    one_of_one = model.routed_experts == 1
    tp_part = (moe.attention_params(model) + moe.shared_expert_params(model)
               + moe.router_params(model) + norms + (expert if one_of_one else 0))
    ep_part = 0 if one_of_one else model.routed_experts * expert
    active = (model.experts_per_token * _ffn_matmul(h, model.expert_ffn, gated)
              + model.shared_experts * _ffn_matmul(h, model.shared_ffn, gated)
              + (0 if one_of_one else h * model.routed_experts))
    routed = Block(tp_part, ep_part, 2.0 * (attn_matmul + active), scores,
                   _extra_bytes(model, True, fp8), True, up)
    # An MTP module: its block, two norms and the 2h x h projection of Eq. 21, the
    # norm before the shared head (formulas.moe.architecture._mtp_module).
    mtp_extra = 3 * moe.norm_params(model) + 2 * h * h
    mtp = Block(tp_part + mtp_extra, ep_part, routed.matmul + 2.0 * 2 * h * h, scores,
                routed.extra_bytes, True, up)
    return dense, routed, mtp


@dataclass(frozen=True)
class RankBlocks:
    """What one pipeline rank holds: blocks of each kind, and block-micro-batches of each
    kind in flight at its peak (``units``, as stages.layer_units_in_flight counts them)."""

    rank: int
    counts: tuple[int, int, int]
    units: tuple[int, int, int]

    @property
    def blocks(self) -> int:
        return self.counts[0] + self.counts[1] + self.counts[2]

    @property
    def routed_blocks(self) -> int:
        """Blocks with routed experts, hence with an alltoall (MoE and MTP)."""
        return self.counts[MOE] + self.counts[MTP]


def rank_blocks(model: moe.MoeArchitecture, split: StageSplit, rank: int,
                in_flight: tuple[int, ...]) -> RankBlocks:
    """Blocks by kind on ``rank``: chunk c of the rank is global chunk c p + r (or the
    V's and DualPipe's pairs, StageSplit.rank_chunks), whose blocks start after all
    earlier chunks' (the first chunk one short when light); ``in_flight`` is
    stages.chunks_in_flight for the rank. Under DualPipe the counts hold both copies."""
    counts, units = [0, 0, 0], [0, 0, 0]
    chunks = split.rank_chunks(rank)
    # Kinds come in three runs (the dense layers, the MoE layers, then the MTP modules),
    # so a chunk's blocks of each kind are its overlap with that run: constant work per
    # chunk, whatever the depth.
    runs = ((DENSE, 0, model.dense_layers), (MOE, model.dense_layers, model.layers),
            (MTP, model.layers, model.layers + model.mtp_modules))
    for c, flight in enumerate(in_flight):
        start = split.chunk_start(chunks[c])
        end = start + split.chunk_layers(rank, c)
        for kind, low, high in runs:
            held = max(0, min(end, high) - max(start, low))
            counts[kind] += held
            units[kind] += held * flight
    return RankBlocks(rank, (counts[0], counts[1], counts[2]), (units[0], units[1], units[2]))


@lru_cache(maxsize=512)
def ranks_of_interest(model: moe.MoeArchitecture, split: StageSplit) -> tuple[int, ...]:
    """The split's ranks of interest (first, rank 1, last) and the first middle rank with
    the most routed blocks: where dense layers lead the stack (DeepSeek-V3's first 3),
    rank 1 may hold only dense blocks, and the slowest, fullest rank lies further on."""
    base = split.ranks_of_interest
    if split.stages < 3:
        return base
    zeros = (0,) * split.chunks_per_rank

    def load(rank: int) -> tuple[int, int, int]:
        blocks = rank_blocks(model, split, rank, zeros)
        return blocks.routed_blocks, blocks.blocks, -rank

    return tuple(sorted({*base, max(range(1, split.stages - 1), key=load)}))


def embedding_params_on(model: moe.MoeArchitecture, rank: int, stages: int,
                        split: StageSplit | None = None) -> int:
    """The input table on the first rank; the output head and final norm on the last
    (a tied head shares the first rank's table when there is one stage). With MTP and
    more than one stage the last rank also keeps a copy of the input table, which the
    MTP module shares (DeepSeek-V3 Sec. 2.2; a tied copy, as Megatron-LM keeps one).
    With a ``split``, the ranks that hold the first and the last chunk (both ends on
    rank 0 under DualPipeV, on ranks 0 and p-1 under DualPipe); one table serves both."""
    first = split.holds_first(rank) if split is not None else rank == 0
    last = split.holds_last(rank) if split is not None else rank == stages - 1
    table = moe.embedding_params(model)
    held = table if first else 0
    if last:
        head = model.vocab * model.hidden
        held += head + moe.norm_params(model)
        if stages == 1 and model.tied_embeddings:
            held -= head
        if stages > 1 and model.mtp_modules and not first:
            held += table
    return held
