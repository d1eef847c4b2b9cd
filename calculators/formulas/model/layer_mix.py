"""Layer stacks of mixed kinds: which token mixer each layer has, and what it costs.

Models of 2025-2026 no longer repeat one block. A layer's token mixer is one of:

- ``F`` full (global) causal attention over the whole sequence;
- ``S`` sliding-window attention: each query sees the last ``window`` keys (Beltagy et
  al. 2020, Longformer; Gemma 2 and 3, gpt-oss, Mistral 7B);
- ``L`` linear attention with a fixed-size state per head: Gated DeltaNet (Yang, Kautz
  and Hatamizadeh, ICLR 2025), as in Qwen3-Next.

The stack is declared by its repeating unit, as the released configurations do: layer
``i`` has kind ``pattern[i % len(pattern)]`` (Hugging Face ``layer_types``; Gemma 3's
``sliding_window_pattern`` 6 is ``SSSSSF``, Qwen3-Next's ``full_attention_interval`` 4 is
``LLLF``, gpt-oss alternates ``SF``). Only ``F`` and ``S`` layers carry the attention's
matrices; an ``L`` layer carries the linear mixer's (``LinearMixer``). The MLP (dense or
experts) is the same in every layer kind.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from calculators.core.i18n import _

FULL, WINDOW, LINEAR = "F", "S", "L"
KINDS = (FULL, WINDOW, LINEAR)
#: Longest expanded repeating unit accepted (a released config's whole layer list fits).
MAX_UNIT = 512
_RUN = re.compile(r"(\d*)([FSL])")

#: Gated DeltaNet's chunk length: the chunked (parallel) form computes exact attention
#: inside chunks of 64 tokens and carries the state between them (Yang et al. 2025,
#: Sec. 3; flash-linear-attention's chunk_gated_delta_rule uses 64).
LINEAR_CHUNK = 64


class PatternError(ValueError):
    """A layer pattern that cannot be read; the message says why."""


def parse_pattern(text: str) -> str:
    """The expanded repeating unit of a pattern written as letters with optional run
    lengths: ``5S1F`` = ``SSSSSF``; blank = ``F`` (every layer full attention)."""
    compact = "".join(text.split()).upper().replace(",", "").replace("+", "")
    if not compact:
        return FULL
    runs = _RUN.findall(compact)
    if "".join(n + k for n, k in runs) != compact:
        raise PatternError(_("use the letters F (full attention), S (sliding window) and "
                             "L (linear attention), each with an optional count: e.g. 5S1F"))
    unit = ""
    for count, kind in runs:
        repeat = int(count) if count else 1
        if repeat < 1 or len(unit) + repeat > MAX_UNIT:
            raise PatternError(_("a repeating unit has 1 to {most} layers").format(
                most=MAX_UNIT))
        unit += kind * repeat
    return unit


def compact_pattern(unit: str) -> str:
    """The shortest text for a unit: its smallest period, run-length written
    (``SSSSSF`` -> ``5S1F``; ``SFSF`` -> ``SF``)."""
    period = next(p for p in range(1, len(unit) + 1)
                  if len(unit) % p == 0 and unit[:p] * (len(unit) // p) == unit)
    runs = re.findall(r"((\w)\2*)", unit[:period])
    if len(runs) == 1 or all(len(run) == 1 for run, _ in runs):
        return unit[:period]
    return "".join(f"{len(run)}{kind}" for run, kind in runs)


@dataclass(frozen=True)
class LinearMixer:
    """Gated DeltaNet as Qwen3-Next implements it (transformers' modeling_qwen3_next,
    ``Qwen3NextGatedDeltaNet``): a fused projection of the input to queries and keys
    (``key_heads`` x ``key_head_dim`` each), values and an output gate (``value_heads`` x
    ``value_head_dim`` each); a projection to one decay and one step size per value head;
    a depthwise causal convolution of width ``conv_kernel`` over queries, keys and
    values; a per-head decay rate and step bias; a gated RMSNorm of width
    ``value_head_dim``; the output projection back to the model width."""

    key_heads: int
    value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int = 4

    def __post_init__(self) -> None:
        sizes = (self.key_heads, self.value_heads, self.key_head_dim, self.value_head_dim,
                 self.conv_kernel)
        if min(sizes) < 1:
            raise ValueError("linear attention sizes must be >= 1")
        if self.value_heads % self.key_heads:
            raise ValueError(_("{keys} linear key heads must divide {values} value "
                               "heads").format(keys=self.key_heads, values=self.value_heads))

    @property
    def key_width(self) -> int:
        return self.key_heads * self.key_head_dim

    @property
    def value_width(self) -> int:
        return self.value_heads * self.value_head_dim

    def matmul_params(self, hidden: int) -> int:
        """The weights a token multiplies: in_proj_qkvz, in_proj_ba and out_proj."""
        qkvz = hidden * (2 * self.key_width + 2 * self.value_width)
        decay_and_step = hidden * 2 * self.value_heads
        return qkvz + decay_and_step + self.value_width * hidden

    def params(self, hidden: int) -> int:
        """Every parameter of one layer's mixer: the projections, the convolution
        (no bias), the decay rate and step bias per value head, the gated norm."""
        conv = (2 * self.key_width + self.value_width) * self.conv_kernel
        return (self.matmul_params(hidden) + conv + 2 * self.value_heads
                + self.value_head_dim)

    def mixing_flops_per_token(self) -> float:
        """Training FLOPs per token of the recurrence itself (the projections are in N),
        a derivation from the chunked delta rule: per value head and token, the state
        (key_head_dim x value_head_dim) is read once for the delta-rule prediction,
        updated once and read once for the output, 3 x 2 d_k d_v forward, and inside a
        chunk of C = 64 tokens each query attends to the chunk's earlier keys, on average
        C/2 of them, 2 (C/2)(d_k + d_v) forward; backward twice the forward."""
        dk, dv = self.key_head_dim, self.value_head_dim
        forward = 6.0 * dk * dv + LINEAR_CHUNK * (dk + dv)
        return 3.0 * self.value_heads * forward


@dataclass(frozen=True)
class LayerMix:
    """Which mixer each layer has (``pattern``, the repeating unit), the sliding window
    in tokens for ``S`` layers and the linear mixer for ``L`` layers."""

    pattern: str = FULL
    window: int = 0
    linear: LinearMixer | None = None

    def __post_init__(self) -> None:
        if not self.pattern or set(self.pattern) - set(KINDS):
            raise ValueError(f"layer pattern {self.pattern!r} must use F, S and L only")
        if WINDOW in self.pattern and self.window < 1:
            raise ValueError("sliding-window layers need a window of at least 1 token")
        if LINEAR in self.pattern and self.linear is None:
            raise ValueError("linear-attention layers need the linear mixer's shape")

    @property
    def uniform(self) -> bool:
        """Every layer full attention: the stack the formulas assumed before mixes."""
        return set(self.pattern) == {FULL}

    def kinds(self, layers: int) -> str:
        """One letter per layer, first layer first."""
        reps = -(-layers // len(self.pattern))
        return (self.pattern * reps)[:layers]

    def count(self, layers: int, kind: str) -> int:
        """How many of ``layers`` layers are of ``kind``: whole repeats of the pattern,
        then the part of one (without spelling out a stack of 10,000 layers)."""
        whole, part = divmod(layers, len(self.pattern))
        return whole * self.pattern.count(kind) + self.pattern[:part].count(kind)

    def attention_layers(self, layers: int) -> int:
        """Layers with softmax attention (full or windowed): they hold Q, K, V and O."""
        return layers - self.count(layers, LINEAR)

    def key_length(self, kind: str, seq_len: int, document: float | None = None) -> float:
        """The keys each query is charged for in ``kind``, in the full-attention
        convention (``flops.FULL_ATTENTION`` counts s keys per query; a causal mask
        halves it). A window of w < s in a causal band: the mean keys per query is
        w - w^2/(2s) (derivation: query i sees min(i, w)), so the full-convention length
        is 2w - w^2/s, which is s at w = s. Document masking (attention only within each
        packed document) caps the context at the documents' token-weighted mean length
        (``document``); a linear layer has no score matrix (0)."""
        if kind == LINEAR:
            return 0.0
        span = float(seq_len) if document is None else min(float(seq_len), document)
        if kind == WINDOW and self.window < span:
            w = float(self.window)
            return 2.0 * w - w * w / span
        return span

    def key_length_sum(self, layers: int, seq_len: int, document: float | None = None) -> float:
        """The sum of ``key_length`` over every layer: what replaces layers x s in the
        attention-score FLOPs (``flops.attention_score_flops``)."""
        return math.fsum(self.count(layers, kind) * self.key_length(kind, seq_len, document)
                   for kind in (FULL, WINDOW))

    def linear_flops_per_token(self, layers: int) -> float:
        """The linear layers' recurrence FLOPs per token, all layers, training."""
        if self.linear is None:
            return 0.0
        return self.count(layers, LINEAR) * self.linear.mixing_flops_per_token()


    def kind_forward_scores(self, kind: str, seq_len: int, documents: float | None, *,
                            causal_share: float, flops_per_key: float) -> float:
        """Forward sequence-mixing FLOPs per token of one layer of ``kind``, as a kernel
        runs them: ``flops_per_key`` (2 n_h (d_qk + d_v)) per key it computes (a fused
        causal kernel, ``causal_share`` 1/2, skips what the window and the document mask
        leave out; a materialised one, share 1, computes the whole s x s matrix whatever
        the mask); a linear layer, a third of its training recurrence."""
        if kind == LINEAR:
            return 0.0 if self.linear is None else self.linear.mixing_flops_per_token() / 3.0
        if causal_share < 1.0:
            return causal_share * flops_per_key * self.key_length(kind, seq_len, documents)
        return flops_per_key * float(seq_len)

    def mean_forward_scores(self, layers: int, seq_len: int, documents: float | None, *,
                            causal_share: float, flops_per_key: float) -> float:
        """``kind_forward_scores`` of the stack's mean layer: what the planners price every
        layer at (their stage splits weigh the kinds, formulas.planner.kind_weights)."""
        return math.fsum(self.count(layers, kind) * self.kind_forward_scores(
            kind, seq_len, documents, causal_share=causal_share, flops_per_key=flops_per_key)
            for kind in KINDS) / layers


    def mean_share(self, layers: int, seq_len: int, documents: float | None, *,
                   causal_share: float, flops_per_key: float) -> float:
        """The mean layer as the share of the s x s score matrix an attention kernel
        computes (what ``AttentionShape.causal_share`` holds): ``causal_share`` itself
        for a uniform stack without document masking."""
        if self.uniform and documents is None:
            return causal_share
        return self.mean_forward_scores(layers, seq_len, documents, causal_share=causal_share,
                                        flops_per_key=flops_per_key) / (flops_per_key * seq_len)


UNIFORM = LayerMix()


def document_length(mean_tokens: float, seq_len: int, spread: float = 0.0) -> float:
    """The token-weighted mean document length a packed sequence's attention sees:
    E[d^2]/E[d] = mean (1 + cv^2) for documents of mean length ``mean_tokens`` and
    coefficient of variation ``spread`` (a derivation: a token sits in a document of
    length d with probability proportional to d), capped at the sequence length, since a
    document longer than a sequence is cut into sequences."""
    if mean_tokens <= 0:
        raise ValueError("the mean document length must be positive")
    return min(float(seq_len), mean_tokens * (1.0 + spread * spread))
