"""The ``roofline`` calculator: one GEMM, or one transformer layer's GEMMs on one tensor-
parallel rank, against a GPU's two roofs (peak FLOP/s and HBM bandwidth), after Williams,
Waterman and Patterson 2009 and the jax-ml scaling-book, Part 1. It shows how tensor
parallelism shrinks the GEMMs, why a precision with a faster peak needs bigger GEMMs,
and why embedding lookups are bound by bandwidth whatever the FLOP/s.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.core import charts
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Choice, Output, Param, ValidationError, When
from calculators.formulas.kernels import roofline as rl
from calculators.formulas.sparse.embeddings import DTYPE_BYTES
from calculators.inputs.hardware import (
    PEAK_FLOPS_PARAM,
    PEAK_PRECISION_PARAM,
    accelerator_choices,
    peak_flops,
    peak_note,
    peak_precision,
)

if TYPE_CHECKING:
    from calculators.catalogues.hardware import Precision


def _layer(inputs: Inputs, tp: int) -> list[rl.NamedGemm]:
    """The layer's forward GEMMs on one rank, or the single GEMM of ``operation: gemm``."""
    if inputs.text("operation") == "gemm":
        return [rl.NamedGemm("gemm", inputs.whole("m"), inputs.whole("k"), inputs.whole("n"))]
    hidden, heads = inputs.whole("hidden"), inputs.whole("heads")
    kv_heads, ffn = inputs.whole("kv_heads"), inputs.whole("ffn_hidden")
    if hidden % heads:
        raise ValidationError("heads", _("{heads} is not allowed: it must divide the hidden "
                                         "size ({hidden})").format(heads=heads, hidden=hidden))
    if kv_heads > heads or heads % kv_heads:
        raise ValidationError("kv_heads", _("{kv_heads} is not allowed: it must divide the "
                                            "heads ({heads})").format(kv_heads=kv_heads,
                                                                      heads=heads))
    if heads % tp or ffn % tp or (kv_heads % tp and tp % kv_heads):
        raise ValidationError("tp", _("{tp} is not allowed: it must divide the heads ({heads}) "
                                      "and the MLP width ({ffn}), and divide or be a multiple "
                                      "of the KV heads ({kv_heads})").format(
            tp=tp, heads=heads, ffn=ffn, kv_heads=kv_heads))
    return rl.layer_gemms(inputs.whole("micro_batch_tokens"), hidden, heads, kv_heads, ffn,
                          tp=tp, gated_mlp=inputs.flag("gated_mlp"))


def _rooflines(gemms: list[rl.NamedGemm], precision: Precision, peak: float,
               bandwidth: float) -> list[rl.Roofline]:
    out = None if precision == "bf16" else rl.OUTPUT_BYTES
    return [rl.gemm(g.m, g.k, g.n, peak_flops=peak, bandwidth=bandwidth,
                    bytes_per_element=rl.OPERAND_BYTES[precision],
                    output_bytes_per_element=out) for g in gemms]


def _fraction(roofs: list[rl.Roofline], peak: float) -> float:
    """Attainable share of peak over a set of operations run one after another."""
    flops = math.fsum(r.flops for r in roofs)
    return flops / math.fsum(r.time_s for r in roofs) / peak


def _bound(roofs: list[rl.Roofline]) -> str:
    kinds = {r.compute_bound for r in roofs}
    return _("mixed") if len(kinds) == 2 else _("compute") if kinds == {True} else _("memory")


def _chart(title: str, names: list[str], roofs: list[rl.Roofline], *, peak: float,
           bandwidth: float, bf16_peak: float | None) -> str:
    ridge = peak / bandwidth
    low = min(1.0, *(r.intensity / 4 for r in roofs))
    high = max(ridge * 8, *(r.intensity * 4 for r in roofs))

    def roof(top: float) -> tuple[tuple[float, float], ...]:
        knee = top / bandwidth
        return ((low, min(top, low * bandwidth) / 1e12), (knee, top / 1e12),
                (high, top / 1e12))

    series = [charts.Series(_("roof: min(peak, intensity x HBM bandwidth)"), roof(peak))]
    if bf16_peak is not None and bf16_peak != peak:
        series.append(charts.Series(_("BF16 roof, for comparison"), roof(bf16_peak)))
    markers = [charts.Marker(ridge, _("ridge {ridge:,.0f}").format(ridge=ridge))]
    markers += [charts.Marker(r.intensity, f"{name} {r.intensity:,.0f}")
                for name, r in zip(names, roofs, strict=True)]
    return charts.line_chart(title, series, _("arithmetic intensity (FLOP per byte of HBM "
                                              "traffic)"), _("attainable TFLOP/s"),
                             log_x=True, log_y=True, markers=tuple(markers))


def _roofline(inputs: Inputs) -> Computed:
    gpu = hardware.get(inputs.text("gpu"))
    precision = peak_precision(inputs)
    peak = peak_flops(inputs, gpu)
    bandwidth = inputs.opt("memory_bandwidth") or gpu.memory_bandwidth
    layer = inputs.text("operation") == "layer"
    tp = inputs.whole("tp") if layer else 1
    gemms = _layer(inputs, tp)
    roofs = _rooflines(gemms, precision, peak, bandwidth)
    whole = _rooflines(_layer(inputs, 1), precision, peak, bandwidth) if layer else roofs
    flops = math.fsum(r.flops for r in roofs)
    moved = math.fsum(r.bytes_moved for r in roofs)
    time_s = math.fsum(r.time_s for r in roofs)
    dim = inputs.whole("embedding_dim")
    row_bytes = rl.embedding_lookup_bytes(dim, DTYPE_BYTES[inputs.text("embedding_dtype")])
    lookups = bandwidth / row_bytes
    notes = [note] if (note := peak_note(inputs, gpu)) else []
    ridge = peak / bandwidth
    notes.append(_(
        "Ridge point: {peak:,.0f} TFLOP/s over {bandwidth:.3g} TB/s = {ridge:,.0f} FLOP per "
        "byte. An operation doing fewer FLOPs per byte it moves cannot reach the peak, "
        "however well written. Bytes are the minimum HBM traffic (each operand read once, "
        "the output written once): real kernels move more, so these are upper bounds.").format(
        peak=peak / 1e12, bandwidth=bandwidth / 1e12, ridge=ridge))
    if layer:
        smallest = min(roofs, key=lambda r: r.intensity)
        notes.append(_(
            "Tensor parallelism over {tp} GPUs divides each GEMM's n or k by {tp}; m, the "
            "{tokens:,} tokens of a micro-batch, stays. The least intense GEMM falls to "
            "{least:,.0f} FLOP/B; at TP 1 the layer could reach {alone:.0%} of peak, here "
            "{here:.0%}.").format(
            tp=tp, tokens=inputs.whole("micro_batch_tokens"), least=smallest.intensity,
            alone=_fraction(whole, peak), here=_fraction(roofs, peak)))
    notes.append(_(
        "An embedding lookup reads one row of {dim} x {width} B and writes it out, with no "
        "multiply-add: {row:,.0f} B per lookup, so HBM bounds this GPU at {lookups:.3g} "
        "lookups per second whatever its FLOP/s (scattered rows reach less).").format(
        dim=dim, width=DTYPE_BYTES[inputs.text("embedding_dtype")], row=row_bytes,
        lookups=lookups))
    rows = tuple(
        (g.name, f"{g.m:,} x {g.k:,} x {g.n:,}", f"{r.intensity:,.0f}",
         _("compute") if r.compute_bound else _("memory"),
         f"{r.attainable_flops / peak:.0%}",
         f"{w.intensity:,.0f} FLOP/B, {w.attainable_flops / peak:.0%}" if layer else _("n/a"))
        for g, r, w in zip(gemms, roofs, whole, strict=True))
    title = (_("{gpu}, {precision}: roofline and this layer") if layer
             else _("{gpu}, {precision}: roofline and this GEMM")).format(
        gpu=gpu.name, precision=gpu.precision_used(precision).upper())
    bf16 = None if inputs.opt("peak_flops") is not None else gpu.peak_bf16_flops
    return Computed(
        values={
            "fraction_of_peak": _fraction(roofs, peak),
            "bound": _bound(roofs),
            "intensity": flops / moved,
            "ridge": ridge,
            "attainable_flops": flops / time_s,
            "flops": flops,
            "bytes_moved": moved,
            "time_s": time_s,
            "fraction_at_tp1": _fraction(whole, peak) if layer else None,
            "peak_flops_used": peak,
            "embedding_bytes_per_lookup": row_bytes,
            "embedding_lookups_per_s": lookups,
        },
        notes=notes,
        table=Table(("GEMM", _("m x k x n (this rank)"), _("FLOP per byte"), _("bound by"),
                     _("attainable, share of peak"), _("at TP 1")), rows,
                    caption=_("Each GEMM of the forward pass on one rank (the backward "
                              "pass has two of the same shape per GEMM)")),
        chart=_chart(title, [g.name for g in gemms], roofs, peak=peak, bandwidth=bandwidth,
                     bf16_peak=bf16),
    )


LAYER, GEMM = When("operation", ("layer",)), When("operation", ("gemm",))


def _int(name: str, label: str, default: int, maximum: int, help_text: str, *,
         when: When) -> Param:
    return Param(name, label, "int", default, minimum=1, maximum=maximum, help=help_text,
                 when=when)


ROOFLINE = Calculator(
    id="roofline",
    headline=("fraction_of_peak", "bound", "intensity"),
    advanced=("peak_flops", "memory_bandwidth", "embedding_dim", "embedding_dtype"),
    title="Roofline: compute- or memory-bound?",
    summary="Arithmetic intensity of a GEMM or a transformer layer's GEMMs against a GPU's "
            "ridge point: attainable FLOP/s, the effect of tensor parallelism and precision, "
            "and embedding lookups.",
    chapter="dense.md",
    params=(
        Param("gpu", "GPU", "choice", hardware.DEFAULT_ACCELERATOR,
              choices=accelerator_choices(),
              help="Dense peak and HBM bandwidth from the datasheet."),
        PEAK_PRECISION_PARAM,
        PEAK_FLOPS_PARAM,
        Param("memory_bandwidth", "HBM bandwidth override", "float", None, unit="B/s",
              minimum=1e9, maximum=1e15, optional=True, placeholder="from the GPU",
              help="Blank: the datasheet's HBM bandwidth (H100 SXM 3.35 TB/s)."),
        Param("operation", "Operation", "choice", "layer",
              choices=(Choice("layer", "one transformer layer's GEMMs"),
                       Choice("gemm", "one GEMM (m x k) @ (k x n)")),
              help="layer: the QKV, attention-output and two MLP GEMMs on one tensor-"
                   "parallel rank (Megatron-LM's split). gemm: the shape below."),
        _int("micro_batch_tokens", "Tokens per micro-batch (m)", 2048, 10_000_000,
             "Micro-batch x sequence length on one GPU (divided by context parallelism). "
             "GPT-3 at micro-batch 1: 2,048.", when=LAYER),
        _int("hidden", "Hidden size", 12288, 1_000_000, "GPT-3: 12,288.", when=LAYER),
        _int("heads", "Attention heads", 96, 100_000, "GPT-3: 96.", when=LAYER),
        _int("kv_heads", "KV heads", 96, 100_000, "= heads without grouped-query attention.",
             when=LAYER),
        _int("ffn_hidden", "MLP width", 49152, 10_000_000, "GPT-3: 4 x hidden.", when=LAYER),
        Param("gated_mlp", "Gated MLP (SwiGLU)", "bool", False, when=LAYER,
              help="The first MLP matrix is 2 x the width (Llama)."),
        _int("tp", "Tensor parallelism", 8, 4096,
             "Must divide the heads and the MLP width. 8 in an HGX node; up to 72 in an "
             "NVL72 rack.", when=LAYER),
        _int("m", "m (rows of A)", 2048, 10_000_000, "Tokens, for a weight GEMM.", when=GEMM),
        _int("k", "k (inner dimension)", 12288, 10_000_000, "The contracted dimension.",
             when=GEMM),
        _int("n", "n (columns of B)", 6144, 10_000_000,
             "Output width: GPT-3's MLP up-projection at TP 8 is 49,152 / 8.", when=GEMM),
        Param("embedding_dim", "Embedding row width", "int", 128, minimum=1,
              maximum=1_000_000, help="For the lookup bound: DLRM's Criteo 1TB tables use "
              "128."),
        Param("embedding_dtype", "Embedding precision", "choice", "fp32",
              choices=(Choice("fp32", "fp32 (4 B)"), Choice("bf16", "bf16 (2 B)"),
                       Choice("fp16", "fp16 (2 B)")),
              help="Recommendation tables usually keep fp32 rows (TorchRec's default)."),
    ),
    outputs=(
        Output("fraction_of_peak", "Attainable share of peak", "1", "percent"),
        Output("bound", "Bound by", "", "text"),
        Output("intensity", "Arithmetic intensity", "FLOP/B", "count"),
        Output("ridge", "Ridge point (peak / bandwidth)", "FLOP/B", "count"),
        Output("attainable_flops", "Attainable FLOP/s", "FLOP/s"),
        Output("flops", "FLOPs", "FLOP", "sci"),
        Output("bytes_moved", "Minimum HBM traffic", "B"),
        Output("time_s", "Time, lower bound", "s"),
        Output("fraction_at_tp1", "Share of peak at TP 1", "1", "percent"),
        Output("peak_flops_used", "Peak used", "FLOP/s"),
        Output("embedding_bytes_per_lookup", "Bytes per embedding lookup", "B"),
        Output("embedding_lookups_per_s", "Embedding lookups per second, at most",
               "lookup/s", "sci"),
    ),
    function=_roofline,
    sources=(
        "Williams, Waterman and Patterson 2009, Roofline: An Insightful Visual Performance "
        "Model for Multicore Architectures, CACM 52(4)",
        "jax-ml scaling-book, Part 1 (All About Rooflines): matmul intensity ~ B; H100 "
        "critical batch 9.89e14 / 3.35e12 = 295",
        "Shoeybi et al. 2019, Megatron-LM, Sec. 3 (column- and row-parallel GEMMs)",
        "NVIDIA and AMD datasheets via the hardware catalogue (dense peaks, HBM bandwidth)",
    ),
)
