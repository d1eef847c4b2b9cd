"""The roofline model: is an operation limited by arithmetic or by memory bandwidth?

Williams, Waterman and Patterson 2009 ("Roofline: An Insightful Visual Performance Model
for Multicore Architectures", CACM 52(4)): attainable FLOP/s = min(peak FLOP/s,
arithmetic intensity x memory bandwidth); the ridge point, peak / bandwidth, is the
intensity at which the two roofs meet. The jax-ml scaling-book, Part 1 ("All About
Rooflines"), applies it to accelerator matmuls: a bf16 (B x D) @ (D x F) matmul has
intensity about B when B << D, F, and TPU v5e's critical intensity is
1.97e14 / 8.2e11 = 240 FLOP/byte.

Bytes moved are the minimum HBM traffic (stated assumption): each operand read once,
the output written once, no re-reads from caches that are too small and no fusion with
neighbours. Real kernels move more, so this is an upper bound on attainable FLOP/s.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.core.i18n import _

#: Bytes per element of each tensor-core input format (FP4 ignores its block scales,
#: one 8-bit scale per 16 or 32 values in NVFP4 / MXFP4: under 7%).
OPERAND_BYTES: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5}
#: FP8 and FP4 GEMMs in training write BF16 outputs (Transformer Engine's default; the
#: scaling-book notes matmul outputs are cast to bf16 before going back to HBM).
OUTPUT_BYTES = 2.0


@dataclass(frozen=True)
class Roofline:
    """One operation on one chip."""

    flops: float
    bytes_moved: float
    peak_flops: float
    bandwidth: float

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOP per byte of memory traffic."""
        return self.flops / self.bytes_moved

    @property
    def ridge(self) -> float:
        """Ridge point (critical intensity), FLOP/byte: peak / bandwidth."""
        return self.peak_flops / self.bandwidth

    @property
    def attainable_flops(self) -> float:
        """min(peak, intensity x bandwidth), FLOP/s: Williams et al. 2009's roofline (they
        call the intensity "operational intensity")."""
        return min(self.peak_flops, self.intensity * self.bandwidth)

    @property
    def compute_bound(self) -> bool:
        return self.intensity >= self.ridge

    @property
    def time_s(self) -> float:
        """Lower bound on the time: max(FLOPs / peak, bytes / bandwidth)."""
        return max(self.flops / self.peak_flops, self.bytes_moved / self.bandwidth)


def _check_chip(peak_flops: float, bandwidth: float) -> None:
    if peak_flops <= 0 or bandwidth <= 0:
        raise ValueError("peak FLOP/s and memory bandwidth must be > 0")


def ridge_point(peak_flops: float, bandwidth: float) -> float:
    """FLOP per byte above which an operation can run at peak."""
    _check_chip(peak_flops, bandwidth)
    return peak_flops / bandwidth


def gemm_flops(m: int, k: int, n: int) -> float:
    """(m x k) @ (k x n): m n k multiply-adds, 2mkn FLOPs."""
    return 2.0 * m * k * n


def gemm_bytes(m: int, k: int, n: int, bytes_per_element: float,
               output_bytes_per_element: float | None = None) -> float:
    """Minimum traffic: read A (mk) and B (kn) once, write C (mn) once (C at
    ``output_bytes_per_element``, by default the inputs' width)."""
    out = bytes_per_element if output_bytes_per_element is None else output_bytes_per_element
    return (m * k + k * n) * bytes_per_element + m * n * out


def gemm(m: int, k: int, n: int, *, peak_flops: float, bandwidth: float,
         bytes_per_element: float = 2.0,
         output_bytes_per_element: float | None = None) -> Roofline:
    """The roofline of one GEMM. Bounds: dimensions >= 1, bytes per element > 0
    (2 for BF16, 1 for FP8, 0.5 for FP4); the output as wide as the inputs unless
    ``output_bytes_per_element`` says otherwise."""
    if min(m, k, n) < 1:
        raise ValueError(f"GEMM dimensions must be >= 1, got {m} x {k} x {n}")
    if bytes_per_element <= 0 or (output_bytes_per_element or 1.0) <= 0:
        raise ValueError("bytes per element must be > 0")
    _check_chip(peak_flops, bandwidth)
    return Roofline(gemm_flops(m, k, n),
                    gemm_bytes(m, k, n, bytes_per_element, output_bytes_per_element),
                    peak_flops, bandwidth)


@dataclass(frozen=True)
class NamedGemm:
    name: str
    m: int
    k: int
    n: int


def layer_gemms(tokens: int, hidden: int, heads: int, kv_heads: int, ffn_hidden: int, *,
                tp: int = 1, gated_mlp: bool = False) -> list[NamedGemm]:
    """A transformer layer's forward GEMMs on one TP rank, m = tokens (micro-batch x
    sequence).

    Megatron-LM's split (Shoeybi et al. 2019, Sec. 3): the QKV and first MLP matrices are
    column-parallel (n / t), the attention output and second MLP matrices row-parallel
    (k / t). QKV width (heads + 2 kv_heads) x head size; a gated MLP's first matrix is
    2f wide. The attention-score products (QK^T, AV) are left to the attention kernel.
    With fewer KV heads than ranks (grouped-query attention, t > kv_heads) each rank
    keeps one copy of a KV head, as Megatron-LM replicates them.
    """
    if min(tokens, hidden, heads, kv_heads, ffn_hidden, tp) < 1:
        raise ValueError("all sizes must be >= 1")
    if heads % tp or ffn_hidden % tp or (kv_heads % tp and tp % kv_heads):
        raise ValueError(f"tp ({tp}) must divide heads and the MLP width, and divide or "
                         "be a multiple of the KV heads")
    head_dim = hidden // heads
    kv_per_rank = max(1, kv_heads // tp)
    qkv_per_rank = (heads // tp + 2 * kv_per_rank) * head_dim
    up = (2 if gated_mlp else 1) * ffn_hidden
    return [NamedGemm("qkv", tokens, hidden, qkv_per_rank),
            NamedGemm(_("attention out"), tokens, heads * head_dim // tp, hidden),
            NamedGemm(_("mlp up"), tokens, hidden, up // tp),
            NamedGemm(_("mlp down"), tokens, ffn_hidden // tp, hidden)]


def embedding_lookup_bytes(dim: int, bytes_per_element: float = 2.0) -> float:
    """One row read and one output vector written: 2 x dim x bytes (derivation; the
    same minimum-traffic assumption as for GEMMs). No FLOPs: bandwidth-bound by nature."""
    if dim < 1 or bytes_per_element <= 0:
        raise ValueError("dim must be >= 1 and bytes per element > 0")
    return 2.0 * dim * bytes_per_element


def embedding_lookups_per_s(dim: int, bandwidth: float, bytes_per_element: float = 2.0) -> float:
    """Upper bound on row lookups per second from HBM: bandwidth / bytes per lookup.

    Real lookups fetch rows scattered in memory, so the sustained bandwidth is a fraction
    of the peak (pass an effective bandwidth)."""
    if bandwidth <= 0:
        raise ValueError("bandwidth must be > 0")
    return bandwidth / embedding_lookup_bytes(dim, bytes_per_element)
