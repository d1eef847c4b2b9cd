"""The inputs that describe a stack of mixed layer kinds and document masking, declared
once for the dense and the mixture-of-experts calculators, and their reading into a
``LayerMix`` (formulas.model.layer_mix)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.core.spec import Param, ValidationError
from calculators.formulas.model.layer_mix import (
    LINEAR,
    UNIFORM,
    WINDOW,
    LayerMix,
    LinearMixer,
    PatternError,
    document_length,
    parse_pattern,
)

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

LAYER_MIX_PARAMS: tuple[Param, ...] = (
    Param("layer_pattern", "Layer pattern", "text", None, optional=True, lines=1,
          placeholder="F: every layer full attention",
          help="The repeating unit of layer kinds, first layer first: F full attention, S "
          "sliding window, L linear attention (Gated DeltaNet), each with an optional "
          "count. Gemma 3: 5S1F (five local layers, then one global); gpt-oss: SF; "
          "Qwen3-Next: 3L1F (config.json: layer_types, sliding_window_pattern, "
          "full_attention_interval)."),
    Param("attention_window", "Sliding window", "int", None, unit="token", minimum=1,
          maximum=10_000_000, optional=True, placeholder="needed for S layers",
          help="Keys each query of an S layer sees. Gemma 3: 1,024 (Gemma 3 report, "
          "Sec. 2.1); gpt-oss: 128 (gpt-oss model card, Sec. 2.1); Gemma 2 and Mistral "
          "7B: 4,096."),
    Param("linear_key_heads", "Linear attention: key heads", "int", None, minimum=1,
          maximum=100_000, optional=True, placeholder="needed for L layers",
          help="Query and key heads of a Gated DeltaNet layer (linear_num_key_heads). "
          "Qwen3-Next-80B-A3B: 16."),
    Param("linear_value_heads", "Linear attention: value heads", "int", None, minimum=1,
          maximum=100_000, optional=True, placeholder="= key heads",
          help="Value heads, each with its own state (linear_num_value_heads). "
          "Qwen3-Next-80B-A3B: 32."),
    Param("linear_head_dim", "Linear attention: head size", "int", None, minimum=1,
          maximum=100_000, optional=True, placeholder="128",
          help="Key and value head size; the state is head size x head size per value "
          "head (linear_key_head_dim = linear_value_head_dim = 128 in Qwen3-Next)."),
)

#: Document masking, for the calculators that know the sequence length.
DOCUMENT_PARAMS: tuple[Param, ...] = (
    Param("mean_document", "Mean document length (masking)", "int", None, unit="token",
          minimum=1, maximum=100_000_000, optional=True, placeholder="no masking",
          help="Document masking: packed documents attend only within themselves (Llama "
          "3 report, Sec. 3.2), so attention FLOPs follow document lengths, not the "
          "sequence. Blank: every token attends over the whole sequence."),
    Param("document_spread", "Document length spread (CV)", "float", 1.0, minimum=0.0,
          maximum=100.0,
          help="Coefficient of variation of document lengths. Attention sees the "
          "token-weighted mean, mean x (1 + CV^2): a token is likelier to sit in a long "
          "document. 1 (an exponential spread) is an assumption; 0: all of one length. "
          "Applies only with a mean document length given."),
)

#: The mix inputs most readers leave blank: folded in every form.
LAYER_MIX_DETAIL = tuple(p.name for p in LAYER_MIX_PARAMS)
DOCUMENT_DETAIL = tuple(p.name for p in DOCUMENT_PARAMS)

DEFAULT_LINEAR_HEAD_DIM = 128  # Qwen3-Next's linear_key_head_dim (config.json)


def layer_mix(inputs: Inputs) -> LayerMix:
    """The stack's mix from the inputs; an S without a window or an L without the linear
    heads is an error naming the missing input."""
    text = inputs["layer_pattern"]
    try:
        pattern = parse_pattern(str(text or ""))
    except PatternError as err:
        raise ValidationError("layer_pattern", str(err)) from None
    window = inputs.opt("attention_window")
    if WINDOW in pattern and window is None:
        raise ValidationError("attention_window", _("S layers need the sliding window size"))
    linear = None
    if LINEAR in pattern and "linear_key_heads" not in inputs:
        raise ValidationError("layer_pattern", _(
            "linear-attention layers (L) are priced by the calculators that take their "
            "heads (the planners, moe_step); here use F and S"))
    if LINEAR in pattern:
        keys = inputs.opt("linear_key_heads")
        if keys is None:
            raise ValidationError("linear_key_heads", _("L layers need their key heads"))
        values = inputs.opt("linear_value_heads") or keys
        dim = inputs.opt("linear_head_dim") or DEFAULT_LINEAR_HEAD_DIM
        try:
            linear = LinearMixer(int(keys), int(values), int(dim), int(dim))
        except ValueError as err:
            raise ValidationError("linear_value_heads", str(err)) from None
    if pattern == "F":
        return UNIFORM
    return LayerMix(pattern, int(window or 0), linear)


def documents(inputs: Inputs, length: int | None = None) -> float | None:
    """The token-weighted document length attention sees in sequences of ``length``
    (default: the ``seq_len`` input), or None without masking (or in a calculator
    without the document inputs, or without a sequence length)."""
    if "mean_document" not in inputs:
        return None
    mean, seq_len = inputs.opt("mean_document"), length or inputs.opt("seq_len")
    if mean is None or seq_len is None:
        return None
    return document_length(mean, int(seq_len), inputs.num("document_spread"))
