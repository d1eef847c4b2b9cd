"""The mixture-of-experts architecture inputs, declared once for every calculator that
describes an MoE transformer (defaults: DeepSeek-V3, from its config.json), and their
reading into a ``MoeArchitecture`` with every cross-field rule named by its input.

Names shared with the dense architecture inputs (``layers``, ``hidden``, ``heads``,
``kv_heads``, ``head_dim``, ``ffn_hidden``, ``vocab``, ``gated_mlp``, ``tied_embeddings``)
mean the same thing; ``ffn_hidden`` is the width of the dense layers before the first MoE
layer. A dense model is one expert chosen from one (``routed_experts`` = 1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.core.spec import Choice, Param, ValidationError, When
from calculators.formulas.moe.expert_parallel import AlltoallPrecision
from calculators.formulas.moe.shape import GroupedQueryAttention, LatentAttention, MoeArchitecture
from calculators.inputs.layer_mix import LAYER_MIX_DETAIL, LAYER_MIX_PARAMS, documents, layer_mix

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

_V3 = "DeepSeek-V3 config.json"


#: Inputs that apply to one kind of attention only (the page hides the others).
GQA_ONLY = When("attention", ("gqa",))
MLA_ONLY = When("attention", ("mla",))


def _int(name: str, label: str, default: int | None, bounds: tuple[int, int], help_text: str,
         *, optional: bool = False, placeholder: str = "", when: When | None = None) -> Param:
    return Param(name, label, "int", default, minimum=bounds[0], maximum=bounds[1],
                 help=help_text, optional=optional, placeholder=placeholder, when=when)


MOE_ARCHITECTURE_PARAMS: tuple[Param, ...] = (
    _int("layers", "Layers l", 61, (1, 10_000),
         f"Transformer blocks, dense and MoE. {_V3}: num_hidden_layers 61."),
    _int("hidden", "Hidden size h", 7168, (1, 1_000_000), f"Model width. {_V3}: 7,168."),
    _int("vocab", "Vocabulary V", 129280, (1, 100_000_000), f"{_V3}: vocab_size 129,280."),
    Param("attention", "Attention", "choice", "mla",
          choices=(Choice("mla", "multi-head latent attention (DeepSeek)"),
                   Choice("gqa", "multi-head / grouped-query attention")),
          help="MLA: keys and values from a low-rank latent (DeepSeek-V3 report, Sec. "
               "2.1.1). GQA: Mixtral, Qwen3; kv_heads = heads is plain multi-head."),
    _int("heads", "Attention heads", 128, (1, 10_000),
         f"Query heads. {_V3}: num_attention_heads 128."),
    _int("kv_heads", "Key/value heads (GQA)", None, (1, 10_000),
         "GQA only. Blank: = heads. Mixtral 8x7B: 8; Qwen3-235B-A22B: 4.",
         optional=True, placeholder="= heads", when=GQA_ONLY),
    _int("head_dim", "Head dimension (GQA)", None, (1, 100_000),
         "GQA only. Blank: hidden / heads. Qwen3-235B-A22B: 128 with 64 heads and "
         "h = 4,096.", optional=True, placeholder="= hidden / heads", when=GQA_ONLY),
    Param("qk_norm", "QK-norm (GQA)", "bool", False, when=GQA_ONLY,
          help="GQA only: an RMSNorm over each query and key head (Qwen3 report, Sec. 2)."),
    _int("q_lora_rank", "Query latent rank d'_c (MLA)", 1536, (1, 1_000_000),
         f"MLA only. Blank: full-rank queries (DeepSeek-V2-Lite). {_V3}: 1,536.",
         optional=True, placeholder="full-rank queries", when=MLA_ONLY),
    _int("kv_lora_rank", "Key-value latent rank d_c (MLA)", 512, (1, 1_000_000),
         f"MLA only: width of the cached latent. {_V3}: 512.", optional=True,
         placeholder="MLA only", when=MLA_ONLY),
    _int("qk_nope_head_dim", "Query/key head dimension d_h (MLA)", 128, (1, 100_000),
         f"MLA only: the part of each head without RoPE. {_V3}: 128.", optional=True,
         placeholder="MLA only", when=MLA_ONLY),
    _int("qk_rope_head_dim", "Decoupled RoPE dimension d_h^R (MLA)", 64, (0, 100_000),
         f"MLA only: the RoPE part, one key shared by all heads. {_V3}: 64.",
         optional=True, placeholder="MLA only", when=MLA_ONLY),
    _int("v_head_dim", "Value head dimension (MLA)", 128, (1, 100_000),
         f"MLA only. {_V3}: 128.", optional=True, placeholder="MLA only", when=MLA_ONLY),
    _int("routed_experts", "Routed experts E per MoE layer", 256, (1, 100_000),
         f"Experts the router chooses among. {_V3}: n_routed_experts 256; Mixtral 8; "
         "1 (with experts_per_token 1) is a dense model."),
    _int("experts_per_token", "Experts per token k (top-k)", 8, (1, 100_000),
         f"Routed experts each token visits. {_V3}: 8; Mixtral: 2 (Jiang et al. 2024)."),
    _int("expert_ffn", "Expert FFN width", 2048, (1, 10_000_000),
         f"Intermediate width of one expert. {_V3}: moe_intermediate_size 2,048; "
         "Mixtral: 14,336."),
    _int("expert_groups", "Expert groups (n_group)", 8, (1, 100_000),
         f"Groups the routed experts are split into for group-limited routing; 1: no "
         f"groups. {_V3}: n_group 8 (one per node of its EP group, Sec. 2.1.2); Mixtral, "
         "Qwen3: 1. Routing only: it changes the alltoall, not the parameter count."),
    _int("groups_per_token", "Groups per token (topk_group)", 4, (1, 100_000),
         f"Groups a token's experts may come from (all of them when this is more than "
         f"there are). {_V3}: topk_group 4. With the EP placement this bounds the nodes "
         "a token reaches (M). Routing only: it changes the alltoall, not the parameter "
         "count."),
    _int("shared_experts", "Shared experts", 1, (0, 1000),
         f"Experts every token passes through (DeepSeekMoE, Dai et al. 2024). {_V3}: 1."),
    _int("shared_expert_ffn", "Shared expert FFN width", None, (1, 10_000_000),
         "Blank: the routed experts' width (DeepSeek-V3).", optional=True,
         placeholder="= expert_ffn"),
    _int("dense_layers", "Dense layers before the first MoE layer", 3, (0, 10_000),
         f"{_V3}: first_k_dense_replace 3. Mixtral, Qwen3: 0."),
    _int("ffn_hidden", "Dense layers' FFN width", 18432, (1, 10_000_000),
         f"MLP width of those dense layers. {_V3}: intermediate_size 18,432."),
    Param("gated_mlp", "Gated MLPs (SwiGLU)", "bool", True,
          help="Three matrices per expert (Shazeer 2020), as in every released MoE here."),
    Param("tied_embeddings", "Tied input/output embedding", "bool", False,
          help="Off in DeepSeek-V3, Mixtral and Qwen3-235B-A22B (tie_word_embeddings)."),
    Param("router_bias", "Per-expert routing bias", "bool", True,
          help="DeepSeek-V3's load-balancing bias, one number per expert (Sec. 2.1.2)."),
    _int("mtp_modules", "Multi-token prediction modules", 1, (0, 100),
         f"Extra blocks predicting further tokens (DeepSeek-V3 Sec. 2.2), not counted in "
         f"the main model. {_V3}: num_nextn_predict_layers 1."),
    Param("attention_bias", "Attention biases (GQA)", "bool", False, when=GQA_ONLY,
          help="GQA only: biases on Q, K, V and the output projection (gpt-oss: "
               "attention_bias true)."),
    Param("attention_sinks", "Attention sinks (GQA)", "bool", False, when=GQA_ONLY,
          help="GQA only: one learned sink logit per head and layer (gpt-oss model card, "
               "Sec. 2.1)."),
    Param("output_gate", "Gated attention output (GQA)", "bool", False, when=GQA_ONLY,
          help="GQA only: the query projection also makes a sigmoid gate on the attention "
               "output, doubling its width (Qwen3-Next)."),
    Param("expert_bias", "Expert biases", "bool", False,
          help="Biases on every expert's matrices (gpt-oss)."),
    Param("shared_expert_gate", "Shared-expert gate", "bool", False,
          help="A sigmoid gate, one h-wide vector, on the shared experts' output "
               "(Qwen3-Next: shared_expert_gate)."),
    *LAYER_MIX_PARAMS,
)

#: Architecture inputs most readers leave to a preset: folded in every form.
MOE_ARCHITECTURE_DETAIL: tuple[str, ...] = (
    "kv_heads", "head_dim", "qk_norm", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
    "qk_rope_head_dim", "v_head_dim", "shared_expert_ffn", "gated_mlp", "tied_embeddings",
    "router_bias", "mtp_modules", "expert_groups", "groups_per_token", "attention_bias",
    "attention_sinks", "output_gate", "expert_bias", "shared_expert_gate", *LAYER_MIX_DETAIL,
)
_MLA_REQUIRED = ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")


def _attention(inputs: Inputs) -> GroupedQueryAttention | LatentAttention:
    heads = inputs.whole("heads")
    if inputs.text("attention") == "mla":
        for name in _MLA_REQUIRED:
            if inputs[name] is None:
                raise ValidationError(name, _("a value is required with latent attention "
                                              "(mla)"))
        q_rank = 0 if inputs["q_lora_rank"] is None else inputs.whole("q_lora_rank")
        return LatentAttention(heads, q_rank, inputs.whole("kv_lora_rank"),
                               inputs.whole("qk_nope_head_dim"),
                               inputs.whole("qk_rope_head_dim"), inputs.whole("v_head_dim"))
    hidden = inputs.whole("hidden")
    kv_heads = heads if inputs["kv_heads"] is None else inputs.whole("kv_heads")
    if kv_heads > heads or heads % kv_heads:
        raise ValidationError("kv_heads", _(
            "{kv_heads} key/value heads must divide the {heads} query heads").format(
            kv_heads=kv_heads, heads=heads))
    if inputs["head_dim"] is None:
        if hidden % heads:
            raise ValidationError("heads", _(
                "{heads} heads do not divide hidden size {hidden}; set head_dim").format(
                heads=heads, hidden=hidden))
        head_dim = hidden // heads
    else:
        head_dim = inputs.whole("head_dim")
    return GroupedQueryAttention(heads, kv_heads, head_dim, qk_norm=inputs.flag("qk_norm"),
                                 bias=inputs.flag("attention_bias"),
                                 sinks=inputs.flag("attention_sinks"),
                                 output_gate=inputs.flag("output_gate"))


def moe_architecture(inputs: Inputs) -> MoeArchitecture:
    """Build the model from validated ``MOE_ARCHITECTURE_PARAMS``; a rule that spans two
    inputs raises the validation error naming the one to change."""
    layers, experts = inputs.whole("layers"), inputs.whole("routed_experts")
    k, dense = inputs.whole("experts_per_token"), inputs.whole("dense_layers")
    if k > experts:
        raise ValidationError("experts_per_token", _(
            "{k} experts per token is more than the {experts} routed experts").format(
            k=k, experts=experts))
    groups = inputs.whole("expert_groups")
    if experts % groups:
        raise ValidationError("expert_groups", _(
            "{groups} expert groups do not divide the {experts} routed experts").format(
            groups=groups, experts=experts))
    # More groups per token than there are groups: every group, no limit.
    per_token = min(inputs.whole("groups_per_token"), groups)
    if k > per_token * (experts // groups):
        raise ValidationError("groups_per_token", _(
            "{groups} groups of {experts} experts cannot hold {k} experts per token").format(
            groups=per_token, experts=experts // groups, k=k))
    if dense > layers:
        raise ValidationError("dense_layers", _(
            "{dense} dense layers is more than the {layers} layers").format(
            dense=dense, layers=layers))
    shared_ffn = inputs["shared_expert_ffn"]
    attention = _attention(inputs)
    mix = layer_mix(inputs)
    if not mix.uniform and isinstance(attention, LatentAttention):
        raise ValidationError("layer_pattern", _(
            "mixed layer kinds are modelled with grouped-query attention (attention: gqa)"))
    return MoeArchitecture(
        layers=layers,
        hidden=inputs.whole("hidden"),
        vocab=inputs.whole("vocab"),
        attention=attention,
        routed_experts=experts,
        experts_per_token=k,
        expert_ffn=inputs.whole("expert_ffn"),
        shared_experts=inputs.whole("shared_experts"),
        shared_expert_ffn=None if shared_ffn is None else inputs.whole("shared_expert_ffn"),
        dense_layers=dense,
        dense_ffn=inputs.whole("ffn_hidden"),
        gated_mlp=inputs.flag("gated_mlp"),
        tied_embeddings=inputs.flag("tied_embeddings"),
        router_bias=inputs.flag("router_bias"),
        mtp_modules=inputs.whole("mtp_modules"),
        expert_groups=groups,
        groups_per_token=per_token,
        mix=mix,
        expert_bias=inputs.flag("expert_bias"),
        shared_expert_gate=inputs.flag("shared_expert_gate"),
        documents=documents(inputs),
    )


# --- how the expert alltoalls run (moe_step, moe_plan, cluster_sizing) -------------------

EXPERT_COMM_PARAMS: tuple[Param, ...] = (
    Param("dispatch", "Dispatch", "choice", "per_node",
          choices=(Choice("per_node", "per node: one network copy per node (DeepSeek)"),
                   Choice("direct", "direct: every copy to its expert's GPU")),
          help="DeepSeek-V3 (Sec. 3.2.2) sends a token once to each remote node, then "
               "forwards it over NVLink; a plain alltoall sends every copy itself."),
    Param("max_nodes_per_token", "Nodes per token at most (M)", "int", None, minimum=1,
          maximum=100_000, optional=True, placeholder="the router's, from its groups",
          when=When("dispatch", ("per_node",)),
          help="Node-limited routing (DeepSeek-V3, Secs. 2.1.2, 4.2). Blank: the model's "
               "own limit, from its expert groups and where the EP group puts them: M = 4 "
               "with DeepSeek-V3's 8 groups on 8 nodes (its EP 64), 8 when the same groups "
               "span 16 nodes (EP 128). A number models a different router. Only the "
               "per-node dispatch gains from it."),
    Param("dispatch_bytes", "Dispatch bytes per element", "float", 1.0, unit="B",
          minimum=0.5, maximum=8, help="FP8 = 1 (DeepSeek-V3, Sec. 3.3.3), BF16 = 2."),
    Param("combine_bytes", "Combine bytes per element", "float", 2.0, unit="B",
          minimum=0.5, maximum=8,
          help="BF16 = 2: DeepSeek-V3 keeps the combines in BF16 (Sec. 3.3.3)."),
)

EP_OVERLAP_PARAM = Param(
    "ep_overlap", "Expert alltoall overlap", "choice", "batch",
    choices=(Choice("batch", "with another micro-batch's compute (DualPipe)"),
             Choice("none", "none: the experts wait for their tokens")),
    help="Batch: one micro-batch's dispatch and combine run while another computes, "
         "hidden at the overlap efficiency (DeepSeek-V3's DualPipe, Sec. 3.2.1; "
         "Megatron-Core's --overlap-moe-expert-parallel-comm). None: every alltoall is on "
         "the critical path, as a plain EP implementation runs it.")


def alltoall_precision(inputs: Inputs) -> AlltoallPrecision:
    """Bytes per element of the four alltoalls: the backward dispatch as the forward
    dispatch, the backward combine as the forward combine (DeepSeek-V3 Sec. 3.3.3)."""
    dispatch, combine = inputs.num("dispatch_bytes"), inputs.num("combine_bytes")
    return AlltoallPrecision(dispatch, combine, dispatch, combine)


def max_nodes(inputs: Inputs) -> int | None:
    """The node limit M the reader set, or None when blank: the model's router's, derived
    per EP group from its expert groups (formulas.moe.step_costs.node_limit)."""
    return None if inputs["max_nodes_per_token"] is None else inputs.whole(
        "max_nodes_per_token")


# --- hot experts and redundant copies (expert_load, moe_step) ---------------------------

REDUNDANT_EXPERTS_PARAM = Param(
    "redundant_experts", "Redundant expert copies per EP group (EPLB)", "int", 0, minimum=0,
    maximum=100_000,
    help="Extra copies of the hottest experts in each MoE layer, spread over the EP group's "
         "GPUs, and every copy placed by its measured load (DeepSeek's EPLB). DeepSeek-V3 "
         "serves prefill with 32 on EP 32, one per GPU (report, Sec. 3.4.1). They flatten "
         "the hot experts (formulas.moe.eplb) and cost each GPU ceil(copies / EP) more "
         "experts per layer. They lower the busiest GPU only when loads are uneven enough: "
         "not at uniform routing's small spread (load_cv blank).")
