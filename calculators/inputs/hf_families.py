"""How each model family's ``config.json`` maps onto the calculators' model inputs,
field by field. Field names and defaults are those of the family's configuration class
in Hugging Face transformers (``models/<family>/configuration_<family>.py``); where the
modelling code fixes a shape that the config does not state, the mapping says so.

Dense families fill the dense architecture inputs (calculators.inputs.architecture);
mixture-of-experts families fill the MoE ones (calculators.inputs.moe). Neither fills
``seq_len``: ``max_position_embeddings`` is the context a model supports, not the
sequence it was trained on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues.preset_base import PLAIN_DENSE, PLAIN_STACK, PresetValue
from calculators.core.i18n import N_, _
from calculators.formulas.model.layer_mix import compact_pattern
from calculators.inputs.hf_fields import ConfigError, Fields

if TYPE_CHECKING:
    from collections.abc import Callable

Values = dict[str, PresetValue]

_LAYER_TYPES = {"full_attention": "F", "sliding_attention": "S", "linear_attention": "L"}


def _attention(f: Fields, vocab: int | None = None) -> Values:
    heads = f.whole("num_attention_heads")
    hidden = f.whole("hidden_size")
    kv = f.whole("num_key_value_heads", heads)
    head_dim = f.whole("head_dim", hidden // heads if hidden % heads == 0 else None)
    if heads % kv:
        raise ConfigError(_("num_key_value_heads {kv} must divide num_attention_heads "
                            "{heads}").format(kv=kv, heads=heads))
    return {"layers": f.whole("num_hidden_layers"), "hidden": hidden,
            "vocab": f.whole("vocab_size", vocab), "heads": heads, "kv_heads": kv,
            "head_dim": head_dim}


def _layer_types(f: Fields, layers: int) -> str | None:
    """``layer_types`` as a pattern (its smallest repeating unit), or None if absent."""
    kinds = f.strings("layer_types")
    if kinds is None:
        return None
    if len(kinds) != layers:
        raise ConfigError(_("layer_types has {entries} entries for {layers} layers").format(
            entries=len(kinds), layers=layers))
    unknown = sorted(set(kinds) - set(_LAYER_TYPES))
    if unknown:
        raise ConfigError(_("layer_types: {kind} is not a layer kind the guide models "
                            "({known})").format(kind=repr(unknown[0]),
                                                known=", ".join(_LAYER_TYPES)))
    unit = "".join(_LAYER_TYPES[k] for k in kinds)
    return compact_pattern(unit)


def _stack(pattern: str | None, window: int | None) -> Values:
    if not pattern or pattern == "F":
        return dict(PLAIN_STACK)
    return {**PLAIN_STACK, "layer_pattern": pattern,
            "attention_window": window if "S" in pattern and window else ""}


def _every(period: int, last: str = "F", other: str = "S") -> str:
    """Every ``period``-th layer of kind ``last``, the others ``other`` (Gemma 3's
    sliding_window_pattern, Qwen3-Next's full_attention_interval)."""
    return compact_pattern(other * (period - 1) + last)


def _dense(f: Fields, vocab: int | None = None, *, tied: bool = False,
           **extra: float | int | str | bool) -> Values:
    values: Values = {"model_kind": "dense", **_attention(f, vocab),
                      "ffn_hidden": f.whole("intermediate_size"), "gated_mlp": True,
                      "biases": False, "position_embedding": "rotary", **PLAIN_DENSE}
    values["tied_embeddings"] = f.flag("tie_word_embeddings", tied)
    return {**values, **extra}


def _no_biases(f: Fields) -> None:
    why = N_("biases on every projection are not among the dense inputs")
    f.require_absent_or("attention_bias", (False,), why)
    f.require_absent_or("mlp_bias", (False,), why)


def llama(f: Fields) -> Values:
    """Llama 2/3 (LlamaConfig): SwiGLU, RMSNorm, RoPE, no biases."""
    _no_biases(f)
    return _dense(f)


def mistral(f: Fields) -> Values:
    """Mistral (MistralConfig): Llama's block; a sliding window on every layer when
    ``sliding_window`` is set (Mistral 7B v0.1: 4,096), none when it is null."""
    values = _dense(f)
    window = f.optional_whole("sliding_window")
    return {**values, **_stack("S" if window else None, window)}


def qwen2(f: Fields) -> Values:
    """Qwen2 / Qwen2.5 (Qwen2Config): biases on Q, K and V only (fixed in the modelling
    code); ``use_sliding_window`` false in the released models."""
    f.require_absent_or("use_sliding_window", (False,),
                        N_("Qwen2's sliding window is off in every released model"))
    return _dense(f, qkv_bias=True)


def qwen3(f: Fields) -> Values:
    """Qwen3 (Qwen3Config): Llama's block with QK-Norm and no biases."""
    _no_biases(f)
    f.require_absent_or("use_sliding_window", (False,),
                        N_("Qwen3's sliding window is off in every released model"))
    return _dense(f, qk_norm=True)


def gemma2(f: Fields) -> Values:
    """Gemma 2 (Gemma2Config): GeGLU, four RMSNorms per layer, tied embeddings, sliding
    window (4,096) on every other layer starting with the first."""
    f.require_absent_or("attention_bias", (False,), N_("Gemma has no biases"))
    values = _dense(f, tied=True, norms_per_layer=4)
    window = f.whole("sliding_window", 4096)
    return {**values, **_stack(_layer_types(f, int(values["layers"])) or "SF", window)}


def gemma3(f: Fields) -> Values:
    """Gemma 3 (Gemma3TextConfig; a multimodal config's ``text_config``): Gemma 2's block
    with QK-Norm; five sliding-window layers (1,024 tokens) to one global layer
    (``sliding_window_pattern`` 6). The vision encoder is not part of the language model
    counted here."""
    if isinstance(f.data.get("text_config"), dict):
        inner = f.data["text_config"]
        assert isinstance(inner, dict)
        text = Fields(inner, f.family, "text_config.")
        values = gemma3(text)
        f.used += text.used
        f.defaults += text.defaults
        return values
    f.require_absent_or("attention_bias", (False,), N_("Gemma has no biases"))
    # Gemma3TextConfig's vocabulary, which the 27B release leaves out.
    values = _dense(f, 262_208, tied=True, norms_per_layer=4, qk_norm=True)
    window = f.whole("sliding_window", 4096)
    pattern = _layer_types(f, int(values["layers"]))
    if pattern is None:
        pattern = _every(f.whole("sliding_window_pattern", 6))
    return {**values, **_stack(pattern, window)}


# --- mixtures of experts ----------------------------------------------------------------

_MOE_CLEAR: Values = {"q_lora_rank": "", "kv_lora_rank": "", "qk_nope_head_dim": "",
                      "qk_rope_head_dim": "", "v_head_dim": ""}


def _moe(f: Fields, *, experts: str, expert_ffn: str, **extra: float | int | str | bool
         ) -> Values:
    values: Values = {
        "model_kind": "moe", **_attention(f), "attention": "gqa", "qk_norm": False,
        **_MOE_CLEAR, "routed_experts": f.whole(experts),
        "experts_per_token": f.whole("num_experts_per_tok"),
        "expert_ffn": f.whole(expert_ffn), "shared_experts": 0, "shared_expert_ffn": "",
        "dense_layers": 0, "ffn_hidden": f.whole("intermediate_size"), "gated_mlp": True,
        "router_bias": False, "mtp_modules": 0, "expert_groups": 1, "groups_per_token": 1,
        "attention_bias": False, "attention_sinks": False, "output_gate": False,
        "expert_bias": False, "shared_expert_gate": False, **PLAIN_STACK}
    values["tied_embeddings"] = f.flag("tie_word_embeddings", False)
    return {**values, **extra}


def mixtral(f: Fields) -> Values:
    """Mixtral (MixtralConfig): 8 experts of width ``intermediate_size``, top-2."""
    values = _moe(f, experts="num_local_experts", expert_ffn="intermediate_size")
    window = f.optional_whole("sliding_window")
    return {**values, **_stack("S" if window else None, window)}


def _every_layer_moe(f: Fields) -> None:
    why = N_("MoE on every layer is what the MoE inputs model (first layers dense at most)")
    f.require_absent_or("decoder_sparse_step", (1,), why)
    f.require_absent_or("mlp_only_layers", ([],), why)


def qwen3_moe(f: Fields) -> Values:
    """Qwen3-MoE (Qwen3MoeConfig): QK-Norm, no shared experts, MoE in every layer."""
    _every_layer_moe(f)
    f.require_absent_or("attention_bias", (False,), N_("Qwen3 has no attention biases"))
    return _moe(f, experts="num_experts", expert_ffn="moe_intermediate_size", qk_norm=True)


def qwen3_next(f: Fields) -> Values:
    """Qwen3-Next (Qwen3NextConfig): three Gated DeltaNet layers to one gated-attention
    layer (``full_attention_interval`` 4), QK-Norm, one gated shared expert. The release
    also holds one multi-token-prediction block (mtp.*, trained with the model); the
    config does not name it, so one module is assumed, as vLLM's qwen3_next_mtp reads
    ``num_nextn_predict_layers`` (default 1)."""
    _every_layer_moe(f)
    layers = f.whole("num_hidden_layers")
    pattern = _layer_types(f, layers) or _every(f.whole("full_attention_interval", 4),
                                                other="L")
    key_dim, value_dim = f.whole("linear_key_head_dim"), f.whole("linear_value_head_dim")
    if key_dim != value_dim:
        raise ConfigError(_("linear_key_head_dim {keys} and linear_value_head_dim {values} "
                            "differ: the guide models one linear head size").format(
            keys=key_dim, values=value_dim))
    f.require_absent_or("linear_conv_kernel_dim", (4,),
                        N_("the convolution is modelled 4 wide"))
    shared = f.whole("shared_expert_intermediate_size", minimum=0)
    return {**_moe(f, experts="num_experts", expert_ffn="moe_intermediate_size",
                   qk_norm=True, output_gate=True, shared_experts=1 if shared else 0,
                   shared_expert_ffn=shared or "", shared_expert_gate=bool(shared),
                   mtp_modules=f.whole("num_nextn_predict_layers", 1, minimum=0)),
            **_stack(pattern, None),
            "linear_key_heads": f.whole("linear_num_key_heads"),
            "linear_value_heads": f.whole("linear_num_value_heads"),
            "linear_head_dim": key_dim}


def deepseek(f: Fields) -> Values:
    """DeepSeek-V2 / V3 (DeepseekV2Config, DeepseekV3Config): multi-head latent attention,
    shared experts, the first ``first_k_dense_replace`` layers dense, group-limited
    routing; V3's ``noaux_tc`` routing keeps a bias per expert; MTP modules
    (``num_nextn_predict_layers``)."""
    f.require_absent_or("moe_layer_freq", (1,), N_("MoE on every layer after the first k"))
    f.require_absent_or("attention_bias", (False,), N_("MLA is modelled without biases"))
    layers = f.whole("num_hidden_layers")
    values: Values = {
        "model_kind": "moe", "layers": layers, "hidden": f.whole("hidden_size"),
        "vocab": f.whole("vocab_size"), "attention": "mla",
        "heads": f.whole("num_attention_heads"), "kv_heads": "", "head_dim": "",
        "qk_norm": False, "q_lora_rank": f.optional_whole("q_lora_rank") or "",
        "kv_lora_rank": f.whole("kv_lora_rank"),
        "qk_nope_head_dim": f.whole("qk_nope_head_dim"),
        "qk_rope_head_dim": f.whole("qk_rope_head_dim", minimum=0),
        "v_head_dim": f.whole("v_head_dim"),
        "routed_experts": f.whole("n_routed_experts"),
        "experts_per_token": f.whole("num_experts_per_tok"),
        "expert_ffn": f.whole("moe_intermediate_size"),
        "shared_experts": f.whole("n_shared_experts", 0, minimum=0), "shared_expert_ffn": "",
        "dense_layers": f.whole("first_k_dense_replace", 0, minimum=0),
        "ffn_hidden": f.whole("intermediate_size"), "gated_mlp": True,
        "router_bias": f.text("topk_method", "greedy") == "noaux_tc",
        "mtp_modules": f.whole("num_nextn_predict_layers", 0, minimum=0),
        "expert_groups": f.whole("n_group", 1), "groups_per_token": f.whole("topk_group", 1),
        "attention_bias": False, "attention_sinks": False, "output_gate": False,
        "expert_bias": False, "shared_expert_gate": False, **PLAIN_STACK}
    values["tied_embeddings"] = f.flag("tie_word_embeddings", False)
    return values


def gpt_oss(f: Fields) -> Values:
    """gpt-oss (GptOssConfig): alternating 128-token sliding-window and full attention
    layers, biases on attention, experts and router, a learned sink per head, experts
    of width ``intermediate_size``."""
    layers = f.whole("num_hidden_layers")
    pattern = _layer_types(f, layers) or "SF"
    values = _moe(f, experts="num_local_experts", expert_ffn="intermediate_size",
                  attention_bias=f.flag("attention_bias", True), attention_sinks=True,
                  expert_bias=True, router_bias=True)
    return {**values, **_stack(pattern, f.whole("sliding_window", 128))}


def not_modelled(why: str) -> Callable[[Fields], Values]:
    def refuse(f: Fields) -> Values:
        raise ConfigError(_("model_type {family} is not modelled: {why}").format(
            family=repr(f.family), why=_(why)))
    return refuse


#: model_type -> its mapping. Dense families first.
FAMILIES: dict[str, Callable[[Fields], Values]] = {
    "llama": llama, "mistral": mistral, "qwen2": qwen2, "qwen3": qwen3,
    "gemma2": gemma2, "gemma3": gemma3, "gemma3_text": gemma3,
    "mixtral": mixtral, "qwen3_moe": qwen3_moe, "qwen3_next": qwen3_next,
    "deepseek_v2": deepseek, "deepseek_v3": deepseek, "gpt_oss": gpt_oss,
    "nemotron_h": not_modelled(N_(
        "its layers hold a Mamba-2 mixer, an MLP or an attention alone "
        "(hybrid_override_pattern), where the guide's layers pair a mixer with an MLP")),
}
