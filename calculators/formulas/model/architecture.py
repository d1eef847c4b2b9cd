"""Transformer architecture and its parameter count (Megatron's Eq. 2 and its general form).

``Architecture`` is the one description of a decoder-only transformer that the memory,
utilisation and planner formulas share; each count below is one block of matrices.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.formulas.model.layer_mix import FULL, UNIFORM, WINDOW, LayerMix


@dataclass(frozen=True)
class Architecture:
    """A decoder-only transformer; sizes are counts, not bytes."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_hidden: int
    vocab: int
    seq_len: int
    gated_mlp: bool = False
    biases: bool = True
    learned_positions: bool = True
    tied_embeddings: bool = True
    #: Which mixer each layer has (formulas.model.layer_mix); every layer full attention
    #: unless a mix is given.
    mix: LayerMix = UNIFORM
    #: Biases on the Q, K and V projections only (Qwen2), with no other linear bias.
    qkv_bias: bool = False
    #: An RMSNorm of width head_dim on queries and one on keys (Qwen3, Gemma 3).
    qk_norm: bool = False
    #: Normalisations per layer: 2 (before attention and before the MLP), 4 in Gemma 2
    #: and 3 (also after each; Gemma Team 2024, Gemma 2 report, Sec. 2).
    norms_per_layer: int = 2
    #: LayerNorm (scale and shift) although the linear layers have no biases
    #: (Nemotron-4's LayerNorm1p).
    layernorm: bool = False
    #: Document masking: the token-weighted mean length of the documents packed in a
    #: sequence (formulas.model.layer_mix.document_length); attention sees only its own
    #: document. None: every token attends over the whole sequence (or window).
    documents: float | None = None

    @property
    def attention_width(self) -> int:
        """heads x head_dim: the width of Q (equal to ``hidden`` in GPT and Llama)."""
        return self.heads * self.head_dim

    @property
    def kv_width(self) -> int:
        """kv_heads x head_dim: the width of K and of V (smaller under GQA / MQA)."""
        return self.kv_heads * self.head_dim

    @property
    def is_standard_gpt(self) -> bool:
        """The shape Megatron's Eq. 2 assumes: MHA, 4h MLP with GELU, biases, tied,
        learned positions, head_dim = h / heads. QKV-only biases and bias-free LayerNorm
        describe a model without biases, so with biases on they change nothing."""
        return (
            self.kv_heads == self.heads
            and self.attention_width == self.hidden
            and self.ffn_hidden == 4 * self.hidden
            and not self.gated_mlp
            and self.biases
            and self.learned_positions
            and self.tied_embeddings
            and self.mix.uniform
            and not self.qk_norm
            and self.norms_per_layer == 2
        )

    @property
    def attention_layers(self) -> int:
        """Layers with softmax attention (full or windowed): all unless the mix has
        linear-attention layers."""
        return self.mix.attention_layers(self.layers)


def attention_params(arch: Architecture) -> int:
    """Q, K, V and output projections (+ biases): 4h^2 + 4h for standard multi-head
    attention (Narayanan et al. 2021, Sec. 3.2 derivation of Eq. 2)."""
    h, q, kv = arch.hidden, arch.attention_width, arch.kv_width
    weights = h * q + 2 * h * kv + q * h
    if arch.biases:
        weights += q + 2 * kv + h
    elif arch.qkv_bias:
        weights += q + 2 * kv
    return weights + (2 * arch.head_dim if arch.qk_norm else 0)


def mlp_params(arch: Architecture) -> int:
    """Two matrices h x f (8h^2 + 5h at f = 4h); SwiGLU has three (Shazeer 2020)."""
    h, f = arch.hidden, arch.ffn_hidden
    matrices = 3 if arch.gated_mlp else 2
    biases = ((matrices - 1) * f + h) if arch.biases else 0
    return matrices * h * f + biases


def norm_params(arch: Architecture) -> int:
    """One normalisation: scale (and shift with biases, as LayerNorm; RMSNorm has none)."""
    return (2 if arch.biases or arch.layernorm else 1) * arch.hidden


def mixer_params(arch: Architecture, kind: str = FULL) -> int:
    """One layer's token mixer: the attention for full and windowed layers (same
    matrices), the linear mixer for linear-attention ones."""
    if kind in (FULL, WINDOW) or arch.mix.linear is None:
        return attention_params(arch)
    return arch.mix.linear.params(arch.hidden)


def mixers_params(arch: Architecture) -> int:
    """Every layer's token mixer, each by its kind."""
    mix = arch.mix
    return sum(mix.count(arch.layers, kind) * mixer_params(arch, kind)
               for kind in sorted(set(mix.kinds(min(arch.layers, len(mix.pattern))))))


def stack_params(arch: Architecture) -> int:
    """Every layer: its mixer by its kind, the MLP and the norms."""
    per_layer = mlp_params(arch) + arch.norms_per_layer * norm_params(arch)
    return mixers_params(arch) + arch.layers * per_layer


def layer_params(arch: Architecture) -> int:
    """One transformer block: attention + MLP + two norms (12h^2 + 13h in Eq. 2). In a
    stack of mixed kinds, the mean block (rounded), which is what a pipeline stage of n
    layers holds on average; ``stack_params`` is exact."""
    return round(stack_params(arch) / arch.layers)


def embedding_params(arch: Architecture) -> int:
    """Token embedding V h, learned positions s h, and an untied output matrix V h."""
    tokens = arch.vocab * arch.hidden
    positions = arch.seq_len * arch.hidden if arch.learned_positions else 0
    output = 0 if arch.tied_embeddings else arch.vocab * arch.hidden
    return tokens + positions + output


def total_params(arch: Architecture) -> int:
    """Every trainable parameter, including the final norm that Eq. 2 leaves out."""
    return stack_params(arch) + embedding_params(arch) + norm_params(arch)


def megatron_params(layers: int, hidden: int, vocab: int, seq_len: int) -> float:
    """Narayanan et al. 2021 (SC21), Eq. 2: P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12lh))."""
    n, h = layers, hidden
    return 12 * n * h**2 * (1 + 13 / (12 * h) + (vocab + seq_len) / (12 * n * h))


def matmul_params_per_layer(arch: Architecture) -> int:
    """The weights that take part in matrix multiplies (no biases, no norms): each costs
    2 FLOP per token forward (Kaplan et al. 2020, Sec. 2.1)."""
    h, q, kv, f = arch.hidden, arch.attention_width, arch.kv_width, arch.ffn_hidden
    return 2 * h * q + 2 * h * kv + (3 if arch.gated_mlp else 2) * h * f


def stack_matmul_params(arch: Architecture) -> int:
    """``matmul_params_per_layer`` summed over the stack, a linear-attention layer with
    its own projections in place of Q, K, V and O."""
    attention = arch.attention_layers
    total = arch.layers * matmul_params_per_layer(arch)
    if arch.mix.linear is None or attention == arch.layers:
        return total
    h, q, kv = arch.hidden, arch.attention_width, arch.kv_width
    linear = arch.layers - attention
    return total - linear * (2 * h * q + 2 * h * kv) + linear * arch.mix.linear.matmul_params(h)


def matmul_params(arch: Architecture) -> int:
    """N for 6N: the weights a token multiplies. Every layer's matrices, and the output
    layer once, tied or not; not the input embedding or learned positions (a token reads
    one row: a lookup, not a multiply; Kaplan et al. 2020, Sec. 2.1, count non-embedding
    N), nor biases and norm scales (no matrix multiply). torchtitan's count for Llama,
    parameters less the embedding table, differs only by the norm scales."""
    return stack_matmul_params(arch) + arch.vocab * arch.hidden
