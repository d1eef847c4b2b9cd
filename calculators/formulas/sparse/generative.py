"""Generative recommenders: a stack of sequence layers over each user's history of events,
counted as the dense chapter counts a transformer (parameters, FLOPs, activation bytes).

Two blocks:

- **HSTU** (Zhai et al., "Actions Speak Louder than Words", ICML 2024, arXiv:2402.17152,
  Sec. 3, Eq. 1-3): one linear layer f1 from d to the heads' U, V, Q, K (widths
  h d_v, h d_v, h d_qk, h d_qk) with SiLU, pointwise attention SiLU(Q K^T + rab) V
  normalised by the sequence length instead of a softmax, a normalisation of the
  attention output gated by U, and one linear layer f2 back to d. Two linear layers
  where a transformer has six; no feed-forward block. The parameter count follows
  facebookresearch/generative-recommenders: the research layer
  (research/modeling/sequential/hstu.py: f1 without bias, f2 = Linear(h d_v, d)) and
  the production STU layer of its DLRM-v3 reference (modules/stu.py: f1 with bias,
  f2 = Linear(3 h d_v, d) without bias over three h d_v-wide inputs, an input
  LayerNorm and a group norm of the attention output). ``block`` "hstu" or "stu".
- **Transformer** (SASRec-style, Kang and McAuley 2018): Q, K, V and output projections
  and a feed-forward block of width ``ffn``, as formulas.model counts them.

**Tokens.** A sample is one user's history of ``n`` events (tokens; a formulation that
interleaves items and actions has two per event) followed by ``candidates`` items to
score (a ranking model; DLRM-v3 appends up to 10), which attend to the history and to
themselves but not to each other. A retrieval model trains on every position of the
history instead (``candidates`` = 0) with a sampled softmax over ``negatives`` items.
Histories are jagged: HSTU's kernels compute each sequence at its own length, so the
GEMMs cost the mean length and the attention the mean *square* length; a padded batch
costs the maximum for both.

**FLOPs** are counted as the dense chapter counts them: 2 per multiply-add forward,
backward twice the forward for GEMMs; attention 2 q kv (d_qk + d_v) per head forward
(FlashAttention's count) over the causal triangle, its backward 2.5 x forward (Dao 2023,
Sec. 4.1). Norms, SiLU and the gating are memory-bound and counted in bytes, not FLOPs.

**Activation bytes** per token per layer, 16-bit, what the backward needs: HSTU keeps
the layer input, f1's output (before SiLU), the attention output and the gated input
of f2: d + h(2 d_v + 2 d_qk) + 2 h d_v values, which is 7d (14d bytes) when h d_v =
h d_qk = d, the figure the HSTU paper gives (Sec. 3) against about 33d for a
transformer; the transformer here is Korthikanti et al. 2022's 34 d bytes with a fused
attention kernel (formulas.model.activations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BLOCKS = ("hstu", "stu", "transformer")
ACTIVATION_BYTES = 2.0  # 16-bit activations
#: Korthikanti et al. 2022, Sec. 4.1: 34 sbh bytes per layer with fused attention.
TRANSFORMER_ACTIVATION_PER_HIDDEN = 34.0
#: FlashAttention's backward over its forward (Dao 2023, Sec. 4.1).
ATTENTION_BACKWARD = 2.5


@dataclass(frozen=True)
class SequenceModel:
    """The sequence layers of a generative recommender."""

    block: str
    layers: int
    d_model: int
    heads: int
    qk_dim: int  # per head
    v_dim: int  # per head
    ffn: int  # transformer only

    def __post_init__(self) -> None:
        if self.block not in BLOCKS:
            raise ValueError(f"unknown block {self.block!r}")

    @property
    def uvqk_width(self) -> int:
        """f1's output width (HSTU) or Q, K, V's (transformer)."""
        h = self.heads
        if self.block != "transformer":
            return h * (2 * self.v_dim + 2 * self.qk_dim)
        return h * (2 * self.qk_dim + self.v_dim)

    def linear_weights(self) -> tuple[tuple[int, int], ...]:
        """(inputs, outputs) of each linear layer of one block."""
        d, h = self.d_model, self.heads
        if self.block != "transformer":
            output_inputs = 3 if self.block == "stu" else 1
            return ((d, self.uvqk_width), (output_inputs * h * self.v_dim, d))
        return ((d, self.uvqk_width), (h * self.v_dim, d), (d, self.ffn), (self.ffn, d))

    def layer_params(self) -> int:
        """Weights, biases and norm parameters of one block, as the reference code
        declares them (the relative attention bias, a few hundred values per layer, is
        left out): research HSTU, a bias on f2 only and parameter-free norms; STU, a bias
        on f1, none on f2, an input LayerNorm (2d) and a group norm per head (2h);
        transformer, biases everywhere and two LayerNorms (4d)."""
        linears = self.linear_weights()
        weights = sum(a * b for a, b in linears)
        d = self.d_model
        if self.block == "hstu":
            return weights + d
        if self.block == "stu":
            return weights + self.uvqk_width + 2 * d + 2 * self.heads
        return weights + sum(b for _, b in linears) + 4 * d

    @property
    def params(self) -> int:
        return self.layers * self.layer_params()

    def gemm_flops_per_token(self) -> float:
        """Forward FLOPs of the linear layers for one token, all layers."""
        return 2.0 * self.layers * sum(a * b for a, b in self.linear_weights())

    def attention_flops_per_pair(self) -> float:
        """Forward FLOPs of one (query, key) pair of one layer, all heads."""
        return 2.0 * self.heads * (self.qk_dim + self.v_dim)

    def activation_bytes_per_token(self) -> float:
        """Bytes one token keeps for the backward, all layers (see the module docstring)."""
        if self.block != "transformer":
            kept = self.d_model + self.uvqk_width + 2 * self.heads * self.v_dim
            return self.layers * ACTIVATION_BYTES * kept
        return self.layers * TRANSFORMER_ACTIVATION_PER_HIDDEN * self.d_model

    def elementwise_bytes_per_token(self) -> float:
        """HBM bytes of the memory-bound passes of one token's forward, all layers: each
        pass reads its input and writes its output once (norms, SiLU, gating, residual;
        the transformer's norms, activation and residuals), our count."""
        d, w, hv = self.d_model, self.uvqk_width, self.heads * self.v_dim
        if self.block != "transformer":
            values = 2 * d + 2 * w + 2 * hv + 3 * hv + 3 * d  # norm, SiLU, norm, gate, add
        else:
            values = 4 * d + 2 * self.ffn + 6 * d  # two norms, activation, two adds
        return self.layers * ACTIVATION_BYTES * values


@dataclass(frozen=True)
class Lengths:
    """A batch's history lengths: the cap, the mean and the mean square (jagged), or
    everything at the cap (padded)."""

    max_tokens: int
    mean_tokens: float
    mean_square: float
    candidates: int

    @classmethod
    def from_spread(cls, max_tokens: int, mean_tokens: float, spread: float,
                    candidates: int, *, padded: bool) -> Lengths:
        """Lengths with mean ``mean_tokens`` and coefficient of variation ``spread``;
        E[n^2] = mean^2 (1 + spread^2), at most mean x max (since n <= max). Padded
        batches compute every sequence at the cap."""
        if padded:
            return cls(max_tokens, float(max_tokens), float(max_tokens) ** 2, candidates)
        mean = min(float(mean_tokens), float(max_tokens))
        square = min(mean * mean * (1.0 + spread * spread), mean * max_tokens)
        return cls(max_tokens, mean, max(square, mean * mean), candidates)

    @property
    def tokens(self) -> float:
        """Tokens a sample computes: its history and its candidates."""
        return self.mean_tokens + self.candidates

    @property
    def attention_pairs(self) -> float:
        """(query, key) pairs per sample: the causal triangle n(n+1)/2 over the history,
        and each candidate against the history and itself."""
        return 0.5 * (self.mean_square + self.mean_tokens) + self.candidates * (
            self.mean_tokens + 1.0)


@dataclass(frozen=True)
class SampleCounts:
    """What one training sample costs the sequence layers and the loss."""

    gemm_flops: float  # forward
    attention_flops: float  # forward
    loss_flops: float  # forward
    tokens: float  # history and candidates

    def lookups(self, per_token: int) -> float:
        """Embedding rows a sample reads: ``per_token`` per token. Sampled negatives are
        shared by a micro-batch (in-batch or one draw per batch, our assumption), so
        their rows are read once per micro-batch, not per sample: left out."""
        return self.tokens * per_token

    @property
    def training_flops(self) -> float:
        """Forward and backward: 3x the GEMMs and the loss, 3.5x the attention."""
        return (3.0 * (self.gemm_flops + self.loss_flops)
                + (1.0 + ATTENTION_BACKWARD) * self.attention_flops)


def sample_counts(model: SequenceModel, lengths: Lengths, *, negatives: int) -> SampleCounts:
    """FLOPs and tokens of one sample. The loss: a retrieval model scores each history
    position against its next item and ``negatives`` sampled items (a dot product of
    width d each); a ranking model's candidates go through a small head, not counted."""
    tokens = lengths.tokens
    gemm = model.gemm_flops_per_token() * tokens
    attention = model.attention_flops_per_pair() * model.layers * lengths.attention_pairs
    targets = lengths.mean_tokens if lengths.candidates == 0 else 0.0
    loss = 2.0 * model.d_model * (negatives + 1) * targets
    return SampleCounts(gemm, attention, loss, tokens)


def dlrm_flops_per_sample(dense_params: float) -> float:
    """A DLRM's training FLOPs per sample: 6 per dense parameter (the guide's sparse
    chapter: forward 2, backward 4; pooling and interactions are small next to them)."""
    return 6.0 * dense_params


def attention_share(counts: SampleCounts) -> float:
    """The share of a sample's training FLOPs spent in attention."""
    total = counts.training_flops
    return (1.0 + ATTENTION_BACKWARD) * counts.attention_flops / total if total else 0.0


def ceil_div(a: float, b: float) -> int:
    return math.ceil(a / b)
