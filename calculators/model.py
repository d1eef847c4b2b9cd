"""Transformer architecture and its parameter count (Megatron's Eq. 2 and its general form).

``Architecture`` is the one description of a decoder-only transformer that the memory,
utilisation and planner calculators share; ``ARCHITECTURE_PARAMS`` declares it once as
inputs so that every calculator takes the same fields with the same defaults (GPT-3
175B in Megatron's padded-vocabulary form, as in Narayanan et al. 2021, Table 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.spec import (
    Calculator,
    Choice,
    Computed,
    Inputs,
    Output,
    Param,
    Table,
    ValidationError,
)


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
        learned positions, head_dim = h / heads."""
        return (
            self.kv_heads == self.heads
            and self.attention_width == self.hidden
            and self.ffn_hidden == 4 * self.hidden
            and not self.gated_mlp
            and self.biases
            and self.learned_positions
            and self.tied_embeddings
        )


def attention_params(arch: Architecture) -> int:
    """Q, K, V and output projections (+ biases): 4h^2 + 4h for standard multi-head
    attention (Narayanan et al. 2021, Sec. 3.2 derivation of Eq. 2)."""
    h, q, kv = arch.hidden, arch.attention_width, arch.kv_width
    weights = h * q + 2 * h * kv + q * h
    return weights + ((q + 2 * kv + h) if arch.biases else 0)


def mlp_params(arch: Architecture) -> int:
    """Two matrices h x f (8h^2 + 5h at f = 4h); SwiGLU has three (Shazeer 2020)."""
    h, f = arch.hidden, arch.ffn_hidden
    matrices = 3 if arch.gated_mlp else 2
    biases = ((matrices - 1) * f + h) if arch.biases else 0
    return matrices * h * f + biases


def norm_params(arch: Architecture) -> int:
    """One normalisation: scale (and shift with biases, as LayerNorm; RMSNorm has none)."""
    return (2 if arch.biases else 1) * arch.hidden


def layer_params(arch: Architecture) -> int:
    """One transformer block: attention + MLP + two norms (12h^2 + 13h in Eq. 2)."""
    return attention_params(arch) + mlp_params(arch) + 2 * norm_params(arch)


def embedding_params(arch: Architecture) -> int:
    """Token embedding V h, learned positions s h, and an untied output matrix V h."""
    tokens = arch.vocab * arch.hidden
    positions = arch.seq_len * arch.hidden if arch.learned_positions else 0
    output = 0 if arch.tied_embeddings else arch.vocab * arch.hidden
    return tokens + positions + output


def total_params(arch: Architecture) -> int:
    """Every trainable parameter, including the final norm that Eq. 2 leaves out."""
    return arch.layers * layer_params(arch) + embedding_params(arch) + norm_params(arch)


def megatron_params(layers: int, hidden: int, vocab: int, seq_len: int) -> float:
    """Narayanan et al. 2021 (SC21), Eq. 2: P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12lh))."""
    n, h = layers, hidden
    return 12 * n * h**2 * (1 + 13 / (12 * h) + (vocab + seq_len) / (12 * n * h))


def matmul_params_per_layer(arch: Architecture) -> int:
    """The weights that take part in matrix multiplies (no biases, no norms): each costs
    2 FLOP per token forward (Kaplan et al. 2020, Sec. 2.1)."""
    h, q, kv, f = arch.hidden, arch.attention_width, arch.kv_width, arch.ffn_hidden
    return 2 * h * q + 2 * h * kv + (3 if arch.gated_mlp else 2) * h * f


# --- the shared inputs --------------------------------------------------------------

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
        help="Query heads. GPT-3 175B: 96. Tensor parallelism must divide it.",
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
)


def architecture(inputs: Inputs) -> Architecture:
    """Build and cross-check the architecture from validated inputs."""
    hidden, heads = inputs.whole("hidden"), inputs.whole("heads")
    kv_heads = heads if inputs["kv_heads"] is None else inputs.whole("kv_heads")
    if inputs["head_dim"] is None:
        if hidden % heads:
            raise ValidationError(
                "heads", f"{heads} heads do not divide hidden size {hidden}; set head_dim"
            )
        head_dim = hidden // heads
    else:
        head_dim = inputs.whole("head_dim")
    if kv_heads > heads or heads % kv_heads:
        raise ValidationError(
            "kv_heads", f"{kv_heads} key/value heads must divide the {heads} query heads"
        )
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
    )


def _model_params(inputs: Inputs) -> Computed:
    arch = architecture(inputs)
    total, embedding = total_params(arch), embedding_params(arch)
    eq2 = megatron_params(arch.layers, arch.hidden, arch.vocab, arch.seq_len)
    n = arch.layers
    rows = [
        ("Attention (all layers)", n * attention_params(arch)),
        ("MLP (all layers)", n * mlp_params(arch)),
        ("Norms (all layers + final)", (2 * n + 1) * norm_params(arch)),
        ("Token embedding", arch.vocab * arch.hidden),
        ("Position embedding", arch.seq_len * arch.hidden if arch.learned_positions else 0),
        ("Output layer (untied)", 0 if arch.tied_embeddings else arch.vocab * arch.hidden),
    ]
    table = Table(
        ("Component", "Parameters", "Share"),
        tuple((name, f"{n:,}", f"{n / total:.2%}") for name, n in rows),
        caption="Where the parameters are",
    )
    notes = []
    if arch.is_standard_gpt:
        notes.append(
            f"Standard GPT shape: Megatron's Eq. 2 gives {eq2:,.0f}; the count "
            f"here adds the final LayerNorm ({norm_params(arch):,}) that Eq. 2 omits."
        )
    else:
        notes.append(
            f"Not the standard GPT shape, so Megatron's Eq. 2 ({eq2:.4g}) does not "
            "apply; the count here is built up matrix by matrix."
        )
    return Computed(
        values={
            "params": float(total),
            "embedding_params": float(embedding),
            "non_embedding_params": float(total - embedding),
            "params_per_layer": float(layer_params(arch)),
            "megatron_formula_params": eq2 if arch.is_standard_gpt else None,
        },
        notes=notes,
        table=table,
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
)

MODEL_PARAMS = Calculator(
    id="model_params",
    advanced=ARCHITECTURE_DETAIL,
    title="Parameters from the architecture",
    summary="Count a transformer's parameters matrix by matrix; Megatron's Eq. 2 for GPT.",
    chapter="dense.md",
    params=ARCHITECTURE_PARAMS,
    outputs=(
        Output("params", "Parameters", "param", "count"),
        Output("embedding_params", "Embedding parameters", "param", "count"),
        Output("non_embedding_params", "Non-embedding parameters", "param", "count"),
        Output("params_per_layer", "Parameters per layer", "param", "count"),
        Output("megatron_formula_params", "Megatron Eq. 2 (standard GPT shape)", "param", "count"),
    ),
    function=_model_params,
    sources=(
        "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU "
        "Clusters Using Megatron-LM (SC21), Eq. 2 and Table 1",
        "Brown et al. 2020, GPT-3, Table 2.1",
        "Shazeer 2020, GLU Variants Improve Transformer",
        "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3",
    ),
)
