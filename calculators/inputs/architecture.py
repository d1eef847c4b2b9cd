"""The architecture inputs, declared once for every calculator that describes a
transformer (same fields, same defaults: GPT-3 175B in Megatron's padded-vocabulary
form, as in Narayanan et al. 2021, Table 1), and their reading into an ``Architecture``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.core.spec import Choice, Param, ValidationError, When
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.parallel.stages import SplitError, split_layers
from calculators.inputs.layer_mix import LAYER_MIX_DETAIL, LAYER_MIX_PARAMS, documents, layer_mix

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

#: Inputs that only matter without GPT-style biases (with them every projection has a
#: bias and every norm a shift already).
_NO_BIASES = When("biases", ("false",))

ARCHITECTURE_PARAMS: tuple[Param, ...] = (
    Param(
        "layers",
        "Layers l",
        "int",
        96,
        minimum=1,
        maximum=10_000,
        help="Transformer blocks. GPT-3 175B: 96 (Brown et al. 2020, Table 2.1).",
    ),
    Param(
        "hidden",
        "Hidden size h",
        "int",
        12288,
        minimum=1,
        maximum=1_000_000,
        help="Model width d_model. GPT-3 175B: 12,288.",
    ),
    Param(
        "heads",
        "Attention heads a",
        "int",
        96,
        minimum=1,
        maximum=10_000,
        help="Query heads. GPT-3 175B: 96. Tensor parallelism must divide it. With the "
        "key/value heads and head dimension blank, parameters and FLOPs do not depend on "
        "it (heads x head size = h).",
    ),
    Param(
        "kv_heads",
        "Key/value heads",
        "int",
        None,
        minimum=1,
        maximum=10_000,
        optional=True,
        placeholder="= heads",
        help="Blank: multi-head attention (= heads). Fewer for grouped-query attention "
        "(Llama 3 70B: 8, Dubey et al. 2024, Table 3); 1 for multi-query (PaLM).",
    ),
    Param(
        "head_dim",
        "Head dimension",
        "int",
        None,
        minimum=1,
        maximum=100_000,
        optional=True,
        placeholder="= hidden / heads",
        help="Blank: hidden / heads. PaLM uses 256 with 48 heads and h = 18,432.",
    ),
    Param(
        "ffn_hidden",
        "MLP hidden size f",
        "int",
        None,
        minimum=1,
        maximum=10_000_000,
        optional=True,
        placeholder="= 4 x hidden",
        help="Blank: 4h (GPT). Llama 3 70B: 28,672 with a gated MLP.",
    ),
    Param(
        "vocab",
        "Vocabulary V",
        "int",
        51200,
        minimum=1,
        maximum=100_000_000,
        help="51,200: GPT-2's 50,257 padded as in Megatron (Narayanan et al. 2021, "
        "Sec. 5.1). Llama 3: 128,256.",
    ),
    Param(
        "seq_len",
        "Sequence length s",
        "int",
        2048,
        unit="token",
        minimum=1,
        maximum=10_000_000,
        help="Tokens per training sequence. GPT-3: 2,048.",
    ),
    Param(
        "gated_mlp",
        "Gated MLP (SwiGLU)",
        "bool",
        False,
        help="Three MLP matrices instead of two (Shazeer 2020; Llama, PaLM).",
    ),
    Param(
        "biases",
        "Biases and LayerNorm shifts",
        "bool",
        True,
        help="On: GPT-style linear biases and LayerNorm. Off: no biases, RMSNorm (Llama).",
    ),
    Param(
        "position_embedding",
        "Position embedding",
        "choice",
        "learned",
        choices=(Choice("learned", "learned (GPT)"), Choice("rotary", "rotary (RoPE)")),
        help="Learned absolute positions add s x h parameters; rotary adds none.",
    ),
    Param(
        "tied_embeddings",
        "Tied input/output embedding",
        "bool",
        True,
        help="On: the output layer reuses the token embedding (GPT-3, Megatron). "
        "Off: a separate V x h output matrix (Llama).",
    ),
    Param("qkv_bias", "Biases on Q, K, V only", "bool", False, when=_NO_BIASES,
          help="Qwen2's attention: biases on the query, key and value projections and "
          "none elsewhere (config.json: attention_bias / Qwen2's fixed q, k, v biases)."),
    Param("qk_norm", "QK-Norm", "bool", False,
          help="An RMSNorm of width head_dim on queries and one on keys (Qwen3 report, "
          "Sec. 2; Gemma 3 report, Sec. 2)."),
    Param("norms_per_layer", "Norms per layer", "int", 2, minimum=1, maximum=8,
          help="2: before attention and before the MLP. Gemma 2 and 3: 4, a norm also "
          "after each (Gemma 2 report, Sec. 2)."),
    Param("layernorm", "LayerNorm without biases", "bool", False, when=_NO_BIASES,
          help="LayerNorm (scale and shift) although no linear layer has a bias, as "
          "Nemotron-4 (LayerNorm1p). With biases on, norms have shifts anyway."),
    *LAYER_MIX_PARAMS,
)


def architecture(inputs: Inputs) -> Architecture:
    """Build and cross-check the architecture from validated inputs."""
    hidden, heads = inputs.whole("hidden"), inputs.whole("heads")
    kv_heads = heads if inputs["kv_heads"] is None else inputs.whole("kv_heads")
    if inputs["head_dim"] is None:
        if hidden % heads:
            raise ValidationError("heads", _(
                "{heads} heads do not divide hidden size {hidden}; set head_dim").format(
                heads=heads, hidden=hidden))
        head_dim = hidden // heads
    else:
        head_dim = inputs.whole("head_dim")
    if kv_heads > heads or heads % kv_heads:
        raise ValidationError("kv_heads", _(
            "{kv_heads} key/value heads must divide the {heads} query heads").format(
            kv_heads=kv_heads, heads=heads))
    ffn = 4 * hidden if inputs["ffn_hidden"] is None else inputs.whole("ffn_hidden")
    return Architecture(
        layers=inputs.whole("layers"),
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        ffn_hidden=ffn,
        vocab=inputs.whole("vocab"),
        seq_len=inputs.whole("seq_len"),
        gated_mlp=inputs.flag("gated_mlp"),
        biases=inputs.flag("biases"),
        learned_positions=inputs.text("position_embedding") == "learned",
        tied_embeddings=inputs.flag("tied_embeddings"),
        mix=layer_mix(inputs),
        qkv_bias=inputs.flag("qkv_bias"),
        qk_norm=inputs.flag("qk_norm"),
        norms_per_layer=inputs.whole("norms_per_layer"),
        layernorm=inputs.flag("layernorm"),
        documents=documents(inputs),
    )


#: Architecture inputs most readers leave at their defaults: folded in every form.
ARCHITECTURE_DETAIL = (
    "kv_heads",
    "head_dim",
    "ffn_hidden",
    "gated_mlp",
    "biases",
    "position_embedding",
    "tied_embeddings",
    "qkv_bias",
    "qk_norm",
    "norms_per_layer",
    "layernorm",
    *LAYER_MIX_DETAIL,
)


def check_layout(arch: Architecture, tp: int, pp: int, chunks: int = 1,
                 placement: str = "loop") -> None:
    """Cross-field rules: TP splits whole heads, and under GQA whole KV heads (each rank
    computes attention for its own heads, so it needs the K and V they read: Megatron
    requires the query groups to divide by TP); PP splits the layers evenly, or with one
    layer fewer on the first and last chunk (formulas.parallel.stages)."""
    if arch.heads % tp:
        raise ValidationError("tp", _(
            "tensor parallel size {tp} must divide the {heads} attention heads (Megatron "
            "splits whole heads)").format(tp=tp, heads=arch.heads))
    if arch.kv_heads % tp:
        raise ValidationError("tp", _(
            "tensor parallel size {tp} must divide the {kv_heads} key/value heads").format(
            tp=tp, kv_heads=arch.kv_heads))
    if arch.mix.linear is not None and arch.mix.linear.key_heads % tp:
        raise ValidationError("tp", _(
            "tensor parallel size {tp} must divide the {heads} linear-attention key "
            "heads").format(tp=tp, heads=arch.mix.linear.key_heads))
    if pp > arch.layers:
        raise ValidationError("pp", _(
            "pipeline size {pp} is more than the {layers} layers: every stage needs at "
            "least one layer").format(pp=pp, layers=arch.layers))
    try:
        split_layers(arch.layers, pp, chunks, placement if pp > 1 else "loop")
    except SplitError as err:
        raise ValidationError("pp", str(err)) from None
