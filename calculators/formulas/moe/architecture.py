"""Mixture-of-experts transformers: parameters (total and active) and FLOPs per token.

The model is a ``shape.MoeArchitecture``. Total parameters set memory; active
parameters (those one token touches) set FLOPs.

Counts are built matrix by matrix, as in Hugging Face checkpoints, so that a model with one
expert chosen from one is exactly the dense count (Llama 2 7B: 6,738,415,616).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# ``formulas.moe.layers`` and ``cluster_sizing.moe`` import this module as ``moe`` and
# read the model's classes through it (``moe.MoeArchitecture``, ``moe.LatentAttention``):
# exported here as well as in ``shape``, where they are defined.
from calculators.formulas.model.flops import (
    DEFAULT_FLOP_COUNT,
    FlopCount,
    model_flops_per_token,
)
from calculators.formulas.moe.shape import LatentAttention as LatentAttention  # noqa: PLC0414
from calculators.formulas.moe.shape import MoeArchitecture as MoeArchitecture  # noqa: PLC0414
from calculators.formulas.moe.shape import check

if TYPE_CHECKING:
    from calculators.formulas.moe.shape import GroupedQueryAttention


# --- parameters, one function per part ------------------------------------------------


def norm_params(model: MoeArchitecture) -> int:
    """One normalisation over ``hidden``: RMSNorm scale (h), or LayerNorm scale + shift (2h)."""
    return (2 if model.biases else 1) * model.hidden


def mlp_params(hidden: int, ffn: int, *, gated: bool, biases: bool = False) -> int:
    """One FFN (a dense MLP or one expert): 2 h f, or 3 h f gated (SwiGLU, Shazeer 2020),
    plus biases on each matrix output when ``biases``."""
    matrices = 3 if gated else 2
    return matrices * hidden * ffn + (((matrices - 1) * ffn + hidden) if biases else 0)


def gqa_attention_params(hidden: int, attention: GroupedQueryAttention, *, biases: bool) -> int:
    """Q (h x a d), K and V (h x g d each), output (a d x h), with a query heads and g
    key/value heads of width d; 4h^2 + 4h for GPT-style MHA (Narayanan et al. 2021, Eq. 2)."""
    q = attention.heads * attention.head_dim
    kv = attention.kv_heads * attention.head_dim
    weights = 2 * hidden * q + 2 * hidden * kv + (hidden * q if attention.output_gate else 0)
    qk_norms = 2 * attention.head_dim if attention.qk_norm else 0
    sinks = attention.heads if attention.sinks else 0
    bias = (q + 2 * kv + hidden) if biases or attention.bias else 0
    return weights + bias + qk_norms + sinks


def mla_attention_params(hidden: int, attention: LatentAttention) -> int:
    """Multi-head latent attention (DeepSeek-V3 report, Sec. 2.1.1): W^DQ (d'_c x h) and an
    RMSNorm, W^UQ + W^QR (n_h (d_h + d^R_h) x d'_c); W^DKV + W^KR ((d_c + d^R_h) x h) and an
    RMSNorm, W^UK + W^UV (n_h (d_h + d_v) x d_c); W^O (h x n_h d_v)."""
    a = attention
    qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim
    if a.q_lora_rank:
        query = hidden * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * a.heads * qk_head
    else:
        query = hidden * a.heads * qk_head
    key_value = (
        hidden * (a.kv_lora_rank + a.qk_rope_head_dim)
        + a.kv_lora_rank
        + a.kv_lora_rank * a.heads * (a.qk_nope_head_dim + a.v_head_dim)
    )
    return query + key_value + a.heads * a.v_head_dim * hidden


def attention_params(model: MoeArchitecture) -> int:
    """One block's attention, either variant."""
    if isinstance(model.attention, LatentAttention):
        return mla_attention_params(model.hidden, model.attention)
    return gqa_attention_params(model.hidden, model.attention, biases=model.biases)


def mixers_params(model: MoeArchitecture) -> int:
    """Every layer's token mixer: attention in full and windowed layers, the linear
    mixer (formulas.model.layer_mix.LinearMixer) in linear-attention ones."""
    attention = model.mix.attention_layers(model.layers)
    linear = model.mix.linear
    others = 0 if linear is None else (model.layers - attention) * linear.params(model.hidden)
    return attention * attention_params(model) + others


def _mixers_beyond_attention(model: MoeArchitecture) -> int:
    """What the stack's mixers hold beyond one attention per layer (0 when uniform):
    the per-block counts below are of attention blocks, and totals correct by this."""
    return mixers_params(model) - model.layers * attention_params(model)


def expert_params(model: MoeArchitecture) -> int:
    """One routed expert: a (gated) FFN of width ``expert_ffn``."""
    return mlp_params(model.hidden, model.expert_ffn, gated=model.gated_mlp,
                      biases=model.biases or model.expert_bias)


def shared_expert_params(model: MoeArchitecture) -> int:
    """All shared experts of one MoE layer (each token passes through every one), and
    their output gate when the model has one."""
    one = mlp_params(model.hidden, model.shared_ffn, gated=model.gated_mlp, biases=model.biases)
    gate = model.hidden if model.shared_experts and model.shared_expert_gate else 0
    return model.shared_experts * one + gate


def router_params(model: MoeArchitecture) -> int:
    """The gate: one h-wide centroid per routed expert (DeepSeek-V3 Eq. 15: e_i; Switch
    Sec. 2.1: W_r), plus DeepSeek-V3's routing bias. With one expert there is nothing to
    route and no gate, which is what makes a one-of-one MoE the dense model."""
    if model.routed_experts == 1:
        return 0
    return model.routed_experts * (model.hidden + (1 if model.router_bias else 0))


def dense_layer_params(model: MoeArchitecture) -> int:
    """A leading dense block: attention + FFN of width ``dense_ffn`` + two norms."""
    ffn = mlp_params(model.hidden, model.dense_ffn, gated=model.gated_mlp, biases=model.biases)
    return attention_params(model) + ffn + 2 * norm_params(model)


def _moe_layer(model: MoeArchitecture, experts: int) -> int:
    return (
        attention_params(model)
        + experts * expert_params(model)
        + shared_expert_params(model)
        + router_params(model)
        + 2 * norm_params(model)
    )


def moe_layer_params(model: MoeArchitecture) -> int:
    """An MoE block, all routed experts counted (what memory holds)."""
    return _moe_layer(model, model.routed_experts)


def moe_layer_active_params(model: MoeArchitecture) -> int:
    """An MoE block as one token sees it: top-k routed + shared experts, router, attention."""
    return _moe_layer(model, model.experts_per_token)


def routed_expert_params_total(model: MoeArchitecture) -> int:
    """Every routed expert of every MoE layer: the part expert parallelism shards."""
    return model.moe_layers * model.routed_experts * expert_params(model)


def embedding_params(model: MoeArchitecture) -> int:
    """Input token table V h (+ a learned position table s h): looked up, not multiplied."""
    return (model.vocab + model.learned_positions) * model.hidden


def output_head_params(model: MoeArchitecture) -> int:
    """Untied output matrix V h; 0 when tied to the token table."""
    return 0 if model.tied_embeddings else model.vocab * model.hidden


def total_params(model: MoeArchitecture) -> int:
    """The main model: all layers + embedding + output head + final norm (MTP excluded,
    as DeepSeek counts its 671B; README_WEIGHTS.md of deepseek-ai/DeepSeek-V3)."""
    layers = model.dense_layers * dense_layer_params(model) + _mixers_beyond_attention(model)
    layers += model.moe_layers * moe_layer_params(model)
    return layers + embedding_params(model) + output_head_params(model) + norm_params(model)


def active_params(model: MoeArchitecture) -> int:
    """Parameters one token touches, the whole input embedding table and output head
    included: the convention of Mistral's 12.9B for Mixtral 8x7B (12.88B here; 12.75B
    without the table). DeepSeek's published active counts fit ``active_matmul_params``
    instead (see there), although its README_WEIGHTS.md says its 36.7B includes "0.9B
    for Embedding and 0.9B for the output Head"."""
    layers = model.dense_layers * dense_layer_params(model) + _mixers_beyond_attention(model)
    layers += model.moe_layers * moe_layer_active_params(model)
    return layers + embedding_params(model) + output_head_params(model) + norm_params(model)


# --- multi-token prediction (DeepSeek-V3 Sec. 2.2) --------------------------------------


def _mtp_module(model: MoeArchitecture, block: int) -> int:
    # Eq. 21: two RMSNorms and M_k (d x 2d); Eq. 22: one transformer block (an MoE block in
    # the release: model.layers.61.mlp.experts); the head's own norm (shared_head.norm).
    return 2 * norm_params(model) + 2 * model.hidden**2 + block + norm_params(model)


def mtp_params(model: MoeArchitecture) -> int:
    """Unique parameters of all MTP modules; embedding and output head are shared with the
    main model (Sec. 2.2) and not counted here."""
    return model.mtp_modules * _mtp_module(model, moe_layer_params(model))


def mtp_active_params(model: MoeArchitecture) -> int:
    """Unique parameters of the MTP modules one token touches (shared table/head excluded)."""
    return model.mtp_modules * _mtp_module(model, moe_layer_active_params(model))


def checkpoint_params(model: MoeArchitecture) -> int:
    """Parameters stored in a DeepSeek-style release: main model + MTP modules, each module
    holding its own copy of the token table and output head (model.layers.61.embed_tokens
    and shared_head.head in DeepSeek-V3's safetensors), hence 671B + 14B = "685B"."""
    copies = embedding_params(model) + model.vocab * model.hidden
    return total_params(model) + mtp_params(model) + model.mtp_modules * copies


# --- FLOPs per token -------------------------------------------------------------------


def active_matmul_params(model: MoeArchitecture) -> int:
    """Active weights that enter a matrix multiply, the N of 6N: active parameters minus
    the input table (a token reads one row of it, as it reads k of E experts), plus the
    output matmul when it reuses a tied table. (Norm scales and biases, millionths of the
    total, stay in.) The router is included: every token multiplies it.

    DeepSeek's active counts fit this convention: DeepSeek-V3 36.63B (paper, abstract:
    37B; README_WEIGHTS.md: 36.7B) against 37.55B with the table; DeepSeek-V2-Lite 2.45B
    (DeepSeek-V2 paper, App. B: 2.4B) against 2.66B with it."""
    tied_head = model.vocab * model.hidden if model.tied_embeddings else 0
    return active_params(model) - embedding_params(model) + tied_head


def flop_params(model: MoeArchitecture, *, include_mtp: bool = True) -> int:
    """N for 6N: the active matmul weights, and, with ``include_mtp``, each MTP module's
    active weights and its second pass through the shared output head (V x h): the
    modules train with the model (DeepSeek-V3 report, Sec. 2.2), so their FLOPs are in C
    (about 4.4% of DeepSeek-V3's 6N)."""
    params = active_matmul_params(model)
    if include_mtp:
        params += mtp_active_params(model) + model.mtp_modules * model.vocab * model.hidden
    return params


def training_flops_per_token(model: MoeArchitecture, *, include_mtp: bool = False) -> float:
    """6 N_active per token (Kaplan et al. 2020, Sec. 2.1, with N the active matmul
    weights), router included; ``include_mtp`` adds the MTP modules and their second pass
    through the shared output head. C = 6 N_active D for D tokens."""
    return 6.0 * flop_params(model, include_mtp=include_mtp)


def full_attention_flops(model: MoeArchitecture, seq_len: int, *,
                         include_mtp: bool = True) -> float:
    """Training FLOPs per token of the attention scores over the whole s x s matrix
    (formulas.model.flops.attention_score_flops): every layer's, and each MTP module's
    block with ``include_mtp``. MLA's queries and keys are d_nope + d_rope wide and its
    values d_v: DeepSeek-V3 at 4,096 tokens, 6 x 61 x 4,096 x 128 x (192 + 128) = 61.4
    GFLOP per token."""
    check(seq_len >= 1, "seq_len must be >= 1")
    a = model.attention
    if isinstance(a, LatentAttention):
        qk, v = a.qk_nope_head_dim + a.qk_rope_head_dim, a.v_head_dim
    else:
        qk = v = a.head_dim
    # Each layer at the keys its kind is charged for (formulas.model.layer_mix): s for
    # full attention, less for a window or under document masking; an MTP module's
    # block is full attention.
    mix = model.mix
    keys = mix.key_length_sum(model.layers, seq_len, model.documents)
    if include_mtp:
        keys += model.mtp_modules * mix.key_length("F", seq_len, model.documents)
    return 6.0 * keys * a.heads * (qk + v)


def linear_mixing_flops(model: MoeArchitecture) -> float:
    """Training FLOPs per token of the linear-attention layers' recurrence (0 without
    any): counted with the attention by every convention that counts attention."""
    return model.mix.linear_flops_per_token(model.layers)


def moe_model_flops_per_token(model: MoeArchitecture, seq_len: int,
                              count: FlopCount = DEFAULT_FLOP_COUNT,
                              flops_per_param_token: float = 6.0) -> float:
    """Model FLOPs per token of a mixture of experts, the one count
    (formulas.model.flops.model_flops_per_token) with the MTP modules in: k N_active
    plus ``count``'s share of the attention scores."""
    linear = linear_mixing_flops(model) if count.attention_share else 0.0
    return (model_flops_per_token(float(flop_params(model)),
                                  full_attention_flops(model, seq_len), count,
                                  flops_per_param_token)
            + flops_per_param_token / 6.0 * linear)


def router_flops_per_token(model: MoeArchitecture) -> float:
    """Forward router FLOPs: 2 h E per MoE layer (one h x E matmul), included in
    ``training_flops_per_token``; E/(3 f_e (k + s)) of the FFN work, under 0.5% for
    DeepSeek-V3 (256 / (3 x 2048 x 9)), because E is small next to an expert's 3 h f_e."""
    if model.routed_experts == 1:
        return 0.0
    return 2.0 * model.hidden * model.routed_experts * model.moe_layers


def attention_score_flops_per_token(
    model: MoeArchitecture, seq_len: int, *, causal: bool = False
) -> float:
    """The main model's attention scores, which 6N leaves out: ``full_attention_flops``
    without the MTP modules, halved under a causal mask (``causal``)."""
    full = full_attention_flops(model, seq_len, include_mtp=False)
    return full / 2 if causal else full
