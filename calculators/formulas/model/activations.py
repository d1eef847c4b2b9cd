"""Activation bytes per transformer layer, materialised or fused (FlashAttention) attention.

The accounting is Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
Transformer Models"), Sec. 4.1, term by term, for 16-bit activations and 1-byte
dropout masks, s = sequence, b = micro-batch, h = hidden, a = heads:

attention block, 11 sbh + 5 a s^2 b:
  QKV-projection input 2sbh; Q and K for QK^T 4sbh; softmax output 2as^2b; its
  dropout mask as^2b; the dropout output and V for the product with V 2as^2b + 2sbh;
  output-projection input 2sbh; output dropout mask sbh.
MLP block, 19 sbh: first linear input 2sbh; GeLU input 8sbh; second linear input
  8sbh; dropout mask sbh.
two LayerNorms: 4sbh.
Total sbh(34 + 5as/h) (their Eq. 1). Of the 34, the dropout masks are 2 (one sbh after
attention, one after the MLP); the attention dropout adds as^2b (mask) and 2as^2b (its
output) to the score terms.

Derivations added here (each stated where it is used): no dropout, grouped-query
attention, a general (and gated) MLP width, and FlashAttention (Dao et al. 2022, Sec.
3.1; Dao 2023, FlashAttention-2 Sec. 3.1.1), which never stores the s x s tensors and
keeps the output plus one FP32 logsumexp per head and query row.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The recomputation modes, least first. "light" recomputes only the cheap operations,
#: the normalisations and the MLP's activation function (Megatron-Core's
#: --recompute-modules layernorm and mlp/moe_act; DeepSeek-V3, Sec. 3.3.? "Recomputation
#: of RMSNorm and MLA Up-Projection" also recomputes MLA's up-projections,
#: formulas.moe.layers): their outputs, inputs of the next GEMM, are not kept.
RECOMPUTE_MODES = ("none", "selective", "light", "full")
#: FlashAttention-2 returns O and one softmax statistic per query row, the logsumexp L
#: (Dao 2023, Sec. 3.1.1 and Alg. 1). 4 bytes (FP32) each is our assumption: softmax
#: statistics are kept in FP32 even when Q, K, V are 16-bit.
LOGSUMEXP_BYTES = 4.0


@dataclass(frozen=True)
class LayerShape:
    """One layer and its micro-batch. ``head_dim`` defaults to hidden / heads (GPT-3,
    Llama); PaLM's 48 heads of 256 on h = 18,432 set it. ``ffn_hidden`` defaults to 4h."""

    seq_len: int
    micro_batch: int
    hidden: int
    heads: int
    kv_heads: int | None = None
    ffn_hidden: int | None = None
    gated_mlp: bool = False
    head_dim: int | None = None

    def __post_init__(self) -> None:
        for name in ("seq_len", "micro_batch", "hidden", "heads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        kv = self.kv_heads_or_heads
        if kv < 1 or self.heads % kv:
            raise ValueError(f"kv_heads ({kv}) must divide heads ({self.heads})")
        if self.ffn_hidden is not None and self.ffn_hidden < 1:
            raise ValueError(f"ffn_hidden must be >= 1, got {self.ffn_hidden}")
        if self.head_dim is not None and self.head_dim < 1:
            raise ValueError(f"head_dim must be >= 1, got {self.head_dim}")

    @property
    def kv_heads_or_heads(self) -> int:
        return self.heads if self.kv_heads is None else self.kv_heads

    @property
    def attention_width(self) -> float:
        """heads x head size: the width of Q and of the attention output."""
        return float(self.hidden if self.head_dim is None else self.heads * self.head_dim)

    @property
    def sbh(self) -> float:
        return float(self.seq_len * self.micro_batch * self.hidden)


@dataclass(frozen=True)
class LayerActivations:
    """Bytes by how tensor parallelism treats them (before any division by t).

    ``replicated``: kept whole on every TP rank unless sequence parallelism splits it
    (Korthikanti's 10 sbh); ``split``: divided by t (24 sbh); ``scores``: the s x s
    tensors, divided by t (heads are split); ``statistics``: FlashAttention's logsumexp,
    divided by t.
    """

    replicated: float
    split: float
    scores: float
    statistics: float
    #: Of ``replicated``: the norms' outputs, the QKV projection's and first MLP matrix's
    #: inputs (4 sbh). Of ``split``: the activation function's output, the second MLP
    #: matrix's input (2 sbf), and the attention output, the projection's input (2 sbq).
    norm_outputs: float = 0.0
    activation_output: float = 0.0
    attention_output: float = 0.0


def layer_activations(shape: LayerShape, *, dropout: bool = True,
                      flash: bool = False) -> LayerActivations:
    """Korthikanti Sec. 4.1 terms, generalised.

    GQA (derivation): K and V are 2sbh x g each with g = kv_heads / heads, so the
    split part is 2 (Q) + 2g (K) + 2g (V) + 2 (projection input) + MLP; at g = 1 this is
    Korthikanti's 8 + 16. A head size other than h / heads scales Q, K, V and the
    attention output by heads x head size / h. MLP of width f (derivation): the
    activation input and the second linear's input are 2sbf each (8 + 8 at f = 4h); a
    gated MLP (SwiGLU) stores both up and gate outputs (4sbf) and their product (2sbf).
    No dropout (derivation): the two sbh masks go, and so do the attention-dropout mask
    and output; the product with V then reads the softmax output, already stored, so
    the scores fall from 5as^2b to 2as^2b.
    Flash attention (Dao et al. 2022, Sec. 3.1): none of the score tensors is stored
    (the dropout mask is regenerated from the RNG state); the output (our projection
    input) and the logsumexp, a x s FP32 values per sequence, are.
    """
    s, b, h, a = shape.seq_len, shape.micro_batch, shape.hidden, shape.heads
    sbh = shape.sbh
    q = shape.attention_width / h  # 1 when heads x head size = h
    g = q * shape.kv_heads_or_heads / a
    f = (4 * h if shape.ffn_hidden is None else shape.ffn_hidden) / h
    masks = 2.0 if dropout else 0.0
    # LayerNorm inputs (4), QKV input (2), first MLP input (2), dropout masks.
    replicated = sbh * (4.0 + 2.0 + 2.0 + masks)
    mlp = (4.0 * f + 2.0 * f) if shape.gated_mlp else (2.0 * f + 2.0 * f)
    # Q (2q), K and V (2g each), the attention output = projection input (2q).
    split = sbh * (2.0 * q + 2.0 * g + 2.0 * g + 2.0 * q + mlp)
    parts = (4.0 * sbh, 2.0 * f * sbh, 2.0 * q * sbh)
    if flash:
        return LayerActivations(replicated, split, 0.0, LOGSUMEXP_BYTES * a * s * b, *parts)
    score_units = 5.0 if dropout else 2.0
    return LayerActivations(replicated, split, score_units * a * s * s * b, 0.0, *parts)


def activation_bytes_per_layer(shape: LayerShape, *, tp: int = 1,
                               sequence_parallel: bool = False, recompute: str = "none",
                               dropout: bool = True, flash: bool = False,
                               input_bytes: float = 2.0, lean_norms: bool = False) -> float:
    """Bytes one layer keeps for one micro-batch on one TP rank (16-bit activations).

    Korthikanti et al. 2022, Table 2 (materialised attention, with dropout, MHA, f = 4h):
    none sbh(34 + 5as/h); TP sbh(10 + 24/t + 5as/(ht)); TP + SP sbh(34/t + 5as/(ht));
    selective recompute drops the 5as/h term; full recompute keeps the layer input,
    2sbh (divided by t under SP, Sec. 4.2.2). Selective recompute of a fused attention
    recomputes the kernel from Q, K, V, so the logsumexp is not kept either. Light
    recompute drops the norms' outputs and the activation function's output.
    ``input_bytes``: bytes per element of the GEMMs' saved inputs, 2 at 16 bits; a
    low-precision recipe keeps them narrow (formulas.model.recipes: 1 B in FP8, as
    Transformer Engine saves the FP8 copy it casts and DeepSeek-V3 caches them, Sec.
    3.3.3; 1.03 B with MXFP8's scales): the four GEMM inputs (the norms' outputs, the
    attention output, the activation's output) take input_bytes / 2 of their bytes.
    ``lean_norms``: each norm keeps its output (which the
    next GEMM keeps anyway) and not its input, computing its backward from the output
    (Apex's memory-efficient LayerNorm, Megatron-LM's --memory-efficient-layer-norm;
    Llama 3 frees each pipeline stage's input tensors, Sec. 3.3.2): the norms' inputs,
    4 sbh, go, unless light recomputation needs them to rebuild the outputs.
    Bounds: tp >= 1 and dividing the heads; recompute one of ``RECOMPUTE_MODES``.
    """
    if tp < 1 or shape.heads % tp:
        raise ValueError(f"tensor parallel size {tp} must be >= 1 and divide heads "
                         f"({shape.heads})")
    if recompute not in RECOMPUTE_MODES:
        raise ValueError(f"recompute must be one of {', '.join(RECOMPUTE_MODES)}, "
                         f"got {recompute!r}")
    if recompute == "full":
        return 2.0 * shape.sbh / (tp if sequence_parallel else 1)
    parts = layer_activations(shape, dropout=dropout, flash=flash)
    replicated, split = parts.replicated, parts.split
    inputs_share = input_bytes / 2.0
    norms, act_out = parts.norm_outputs * inputs_share, parts.activation_output * inputs_share
    replicated -= parts.norm_outputs - norms
    split -= (parts.activation_output - act_out) + (1.0 - inputs_share) * parts.attention_output
    if recompute == "light":
        replicated, split = replicated - norms, split - act_out
    elif lean_norms:
        replicated -= 4.0 * shape.sbh
    linear = ((replicated + split) / tp if sequence_parallel else replicated + split / tp)
    if recompute == "selective":
        return linear
    return linear + (parts.scores + parts.statistics) / tp


def selective_saving(shape: LayerShape, *, tp: int = 1, sequence_parallel: bool = True,
                     dropout: bool = True, flash: bool = False) -> float:
    """Fraction of per-layer activation memory that selective recomputation removes.

    Korthikanti et al. 2022, Sec. 5: for GPT-3 under TP + SP the saving is 70%, for
    MT-NLG 65% (materialised attention); with flash attention only the logsumexp is
    left to save, a small fraction.
    """
    before = activation_bytes_per_layer(shape, tp=tp, sequence_parallel=sequence_parallel,
                                        dropout=dropout, flash=flash)
    after = activation_bytes_per_layer(shape, tp=tp, sequence_parallel=sequence_parallel,
                                       recompute="selective", dropout=dropout, flash=flash)
    return 1.0 - after / before
