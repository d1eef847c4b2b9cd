"""What a mixture-of-experts transformer is: its attention (grouped-query or DeepSeek's
latent attention) and its layers and experts, each size checked when it is built.

A mixture-of-experts (MoE) layer replaces the one feed-forward network of a dense block by
many ("routed experts"), of which a router picks ``experts_per_token`` (top-k) for each
token, plus optional "shared experts" every token passes through (Shazeer et al. 2017;
Lepikhin et al. 2020, GShard; Fedus et al. 2021, Switch; Dai et al. 2024, DeepSeekMoE).
Field names follow the released configurations (Hugging Face ``config.json``).
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.formulas.model.layer_mix import UNIFORM, LayerMix


def check(condition: bool, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``condition`` holds."""
    if not condition:
        raise ValueError(message)


@dataclass(frozen=True)
class GroupedQueryAttention:
    """Multi-head (kv_heads == heads), grouped-query or multi-query attention.

    ``head_dim`` need not be hidden / heads (Qwen3-235B-A22B: 64 x 128 = 8,192 > 4,096).
    ``qk_norm``: an RMSNorm of width head_dim on queries and on keys (Qwen3 report, Sec. 2).
    ``bias``: biases on Q, K, V and the output projection (gpt-oss: attention_bias).
    ``sinks``: one learned attention-sink logit per head (gpt-oss model card, Sec. 2.1).
    ``output_gate``: the query projection also produces a sigmoid gate of the attention
    output, per head (Qwen3-Next's gated attention: q_proj is 2 x heads x head_dim wide).
    """

    heads: int
    kv_heads: int
    head_dim: int
    qk_norm: bool = False
    bias: bool = False
    sinks: bool = False
    output_gate: bool = False

    def __post_init__(self) -> None:
        check(min(self.heads, self.kv_heads, self.head_dim) >= 1, "attention sizes must be >= 1")
        check(self.heads % self.kv_heads == 0,
               f"{self.kv_heads} key/value heads must divide {self.heads} query heads")


@dataclass(frozen=True)
class LatentAttention:
    """DeepSeek's multi-head latent attention (DeepSeek-V3 report, Sec. 2.1.1, Eqs. 1-11).

    Keys and values come from a ``kv_lora_rank``-wide latent (d_c); queries from a
    ``q_lora_rank``-wide latent (d'_c; 0 = a full-rank query projection, as DeepSeek-V2-Lite);
    ``qk_rope_head_dim`` (d^R_h) carries RoPE in a decoupled query part per head and one key
    shared by all heads. An RMSNorm follows each latent (report, Sec. 4.2).
    """

    heads: int
    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int

    def __post_init__(self) -> None:
        sizes = (self.heads, self.kv_lora_rank, self.qk_nope_head_dim, self.v_head_dim)
        check(min(sizes) >= 1, "latent attention sizes must be >= 1")
        check(min(self.q_lora_rank, self.qk_rope_head_dim) >= 0, "ranks must be >= 0")


Attention = GroupedQueryAttention | LatentAttention


@dataclass(frozen=True)
class MoeArchitecture:
    """A decoder-only MoE transformer; every size is a count, not bytes.

    The first ``dense_layers`` blocks (``first_k_dense_replace``) keep a dense FFN of width
    ``dense_ffn``; the others hold ``routed_experts`` experts of width ``expert_ffn``
    (``moe_intermediate_size``), ``experts_per_token`` of them chosen per token, plus
    ``shared_experts`` of width ``shared_expert_ffn`` (defaults to ``expert_ffn``).
    ``expert_groups`` / ``groups_per_token`` are DeepSeek's ``n_group`` / ``topk_group``:
    experts split in groups (one per node in training) and each token limited to that many.
    ``router_bias``: DeepSeek-V3's per-expert routing bias (Sec. 2.1.2, Eq. 16), stored in
    the checkpoint. ``mtp_modules``: multi-token-prediction depth D (Sec. 2.2), not part of
    the main model. ``learned_positions``: rows of a learned position table (0 for RoPE).
    ``biases``: linear biases and LayerNorm shifts (GPT style; no released MoE here has them).
    ``expert_bias``: biases on every expert's matrices alone (gpt-oss). ``shared_expert_gate``:
    a sigmoid gate (one h-wide vector) on the shared experts' output (Qwen3-Next).
    ``mix``: which token mixer each layer has (formulas.model.layer_mix); ``documents``: the
    token-weighted document length under document masking (None: no masking).
    """

    layers: int
    hidden: int
    vocab: int
    attention: Attention
    routed_experts: int
    experts_per_token: int
    expert_ffn: int
    shared_experts: int = 0
    shared_expert_ffn: int | None = None
    dense_layers: int = 0
    dense_ffn: int = 0
    expert_groups: int = 1
    groups_per_token: int = 1
    gated_mlp: bool = True
    biases: bool = False
    learned_positions: int = 0
    tied_embeddings: bool = False
    router_bias: bool = False
    mtp_modules: int = 0
    mix: LayerMix = UNIFORM
    expert_bias: bool = False
    shared_expert_gate: bool = False
    documents: float | None = None

    def __post_init__(self) -> None:
        check(min(self.layers, self.hidden, self.vocab, self.expert_ffn) >= 1,
               "layers, hidden, vocab and expert_ffn must be >= 1")
        check(0 <= self.dense_layers <= self.layers, "dense_layers must be in [0, layers]")
        check(self.dense_layers == 0 or self.dense_ffn >= 1, "dense layers need dense_ffn >= 1")
        check(1 <= self.experts_per_token <= self.routed_experts,
               "experts_per_token must be in [1, routed_experts]")
        check(min(self.shared_experts, self.learned_positions, self.mtp_modules) >= 0,
               "shared_experts, learned_positions and mtp_modules must be >= 0")
        check(self.routed_experts % self.expert_groups == 0,
               f"{self.expert_groups} expert groups must divide {self.routed_experts} experts")
        check(1 <= self.groups_per_token <= self.expert_groups,
               "groups_per_token must be in [1, expert_groups]")
        per_group = self.routed_experts // self.expert_groups
        check(self.experts_per_token <= self.groups_per_token * per_group,
               "the allowed groups hold fewer experts than experts_per_token")
        check(not (self.biases and isinstance(self.attention, LatentAttention)),
               "latent attention is modelled without biases (DeepSeek's attention_bias=false)")
        check(self.mix.uniform or isinstance(self.attention, GroupedQueryAttention),
               "mixed layer kinds are modelled with grouped-query attention only")

    @property
    def shared_ffn(self) -> int:
        """Width of one shared expert (``expert_ffn`` unless given)."""
        return self.expert_ffn if self.shared_expert_ffn is None else self.shared_expert_ffn

    @property
    def moe_layers(self) -> int:
        """Blocks whose FFN is a mixture of experts."""
        return self.layers - self.dense_layers
