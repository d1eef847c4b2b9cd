"""The ``embedding_sharding`` calculator: place embedding tables on GPUs by each of
TorchRec's sharding types and compare memory per GPU, imbalance and the communication
of a step (formulas.sparse.sharding)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from calculators.core import charts, units
from calculators.core.calculator import Calculator, Computed, Table
from calculators.core.i18n import _
from calculators.core.spec import Choice, Output, Param, ValidationError
from calculators.formulas.sparse.sharding import COMM_BYTES, SCHEMES, place, step_comm
from calculators.inputs.embeddings import (
    gpu_params,
    network_from_inputs,
    network_params,
    table_params,
    tables_from_inputs,
    usable_gpu_bytes,
)

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs
    from calculators.formulas.collectives import costs as comm

MAX_CHART_BARS = 64
#: Said beside the GPU's memory inputs: here they decide only whether the shards fit.
FIT_ONLY = "Here it decides only whether the shards fit (and the chart's usable line)."


def _scheme_row(label: str, loads: list[float], cost: comm.Cost, *,
                usable: float) -> tuple[str, ...]:
    """One line of the comparison table: fullest GPU, imbalance, fit, traffic, time."""
    fullest, mean = max(loads), math.fsum(loads) / len(loads)
    return (_(label), units.format_value(fullest, "B", "si"), f"{fullest / mean:.2f}",
            _("yes") if fullest <= usable else _("no"),
            units.format_value(cost.bytes_sent_per_rank, "B", "si"),
            units.format_value(cost.time_s, "s", "si"))


def _embedding_sharding(inputs: Inputs) -> Computed:
    tables = tables_from_inputs(inputs)
    ranks, per_node = inputs.whole("num_gpus"), inputs.whole("gpus_per_node")
    if ranks > per_node and ranks % per_node:
        raise ValidationError("num_gpus", _(
            "{ranks} is not allowed: must be a multiple of gpus_per_node ({per_node}) when it "
            "spans nodes").format(ranks=ranks, per_node=per_node))
    per_node = min(per_node, ranks)
    dtype, optimizer = inputs.text("dtype"), inputs.text("optimizer")
    batch, pooling = inputs.whole("batch_size"), inputs.num("pooling_factor")
    value_bytes = COMM_BYTES[inputs.text("comm_dtype")]
    usable = usable_gpu_bytes(inputs)
    shard_dim = inputs.whole("column_shard_dim")
    net = network_from_inputs(inputs)
    results: dict[str, tuple[list[float], comm.Cost]] = {}
    for scheme, _label in SCHEMES:
        loads, widths = place(tables, scheme, ranks, dtype=dtype, optimizer=optimizer,
                              per_node=per_node, shard_dim=shard_dim)
        cost = step_comm(scheme, widths, ranks, batch=batch, features=len(tables),
                         pooling=pooling, value_bytes=value_bytes, net=net)
        results[scheme] = (loads, cost)
    chosen = inputs.text("scheme")
    loads, cost = results[chosen]
    mean = math.fsum(loads) / ranks
    rows = tuple(_scheme_row(label, *results[scheme], usable=usable)
                 for scheme, label in SCHEMES)
    warnings: list[str] = []
    if max(loads) > usable:
        warnings.append(_("The fullest GPU needs {need}, more than the usable {usable}.").format(
            need=units.format_value(max(loads), "B", "si"),
            usable=units.format_value(usable, "B", "si")))
    order = sorted(range(ranks), key=lambda g: -loads[g])
    step = max(1, math.ceil(ranks / MAX_CHART_BARS))
    picked = order[::step]
    bars = [(f"{g}", [(_("weights + optimizer state"), loads[g] / 1e9)]) for g in picked]
    title = (_("GB per GPU, {scheme}, fullest first (every {step}th GPU)") if step > 1 else
             _("GB per GPU, {scheme}, fullest first"))
    chart = charts.stacked_bar_chart(
        title.format(scheme=_(dict(SCHEMES)[chosen]), step=step), bars,
        _("GB per GPU (1 GB = 1e9 B)"), limit=usable / 1e9, limit_label=_("usable memory"))
    return Computed(
        values={
            "total_bytes": math.fsum(loads),
            "max_gpu_bytes": max(loads),
            "mean_gpu_bytes": mean,
            "imbalance": max(loads) / mean,
            "fits": max(loads) <= usable,
            "comm_bytes_per_gpu": cost.bytes_sent_per_rank,
            "comm_time_s": cost.time_s,
        },
        warnings=warnings,
        notes=[_("Communication per step: ID distribution plus forward and backward of the "
                 "pooled embeddings, for the busiest GPU, no overlap with compute.")],
        table=Table((_("scheme"), _("fullest GPU"), _("max/mean"), _("fits"),
                     _("sent per GPU per step"), _("comm time per step")), rows,
                    _("All four schemes for these tables")),
        chart=chart,
    )


EMBEDDING_SHARDING = Calculator(
    id="embedding_sharding",
    headline=("max_gpu_bytes", "fits", "comm_time_s"),
    title="Sharding embedding tables across GPUs",
    summary="Per-GPU bytes, imbalance and per-step communication of TorchRec's sharding types.",
    chapter="sparse.md",
    params=(
        *(p if p.name != "tables" else Param(
            "tables", p.label, "text", "criteo_1tb_torchrec", optional=True,
            placeholder=p.placeholder, help=p.help) for p in table_params()),
        Param("num_gpus", "GPUs", "int", 8, unit="GPU", minimum=1, maximum=65_536),
        Param("scheme", "Sharding scheme", "choice", "table_wise",
              choices=tuple(Choice(v, label) for v, label in SCHEMES),
              help="TorchRec's sharding types; the table compares all four."),
        Param("batch_size", "Global batch", "int", 16_384, unit="sample", minimum=1,
              maximum=1e9, help="Samples per step over all GPUs; TorchRec's Criteo 1TB runs "
                                "used 16,384 (8 x 2,048)."),
        Param("pooling_factor", "IDs per feature per sample", "float", 1.0, minimum=0,
              maximum=1e5, help="1 for Criteo (one ID per categorical feature)."),
        Param("comm_dtype", "Pooled embeddings on the wire", "choice", "fp32",
              choices=tuple(Choice(k, k) for k in COMM_BYTES),
              help="TorchRec can send them in fp16/bf16 (QCommsConfig).", advanced=True),
        Param("column_shard_dim", "Column shard width", "int", 32, minimum=1, maximum=65_536,
              help="Column-wise: slices at least this wide, at most one per GPU "
                   "(an assumption; TorchRec's planner picks its own).", advanced=True),
        *(replace(p, help=f"{p.help} {FIT_ONLY}") for p in gpu_params()),
        *network_params(),
    ),
    outputs=(
        Output("total_bytes", "All shards", "B", "si"),
        Output("max_gpu_bytes", "Fullest GPU", "B", "si"),
        Output("mean_gpu_bytes", "Mean per GPU", "B", "si"),
        Output("imbalance", "Imbalance (max/mean)", "", "fixed"),
        Output("fits", "Fits in usable GPU memory", "", "bool"),
        Output("comm_bytes_per_gpu", "Sent per GPU per step", "B", "si"),
        Output("comm_time_s", "Communication time per step", "s", "si"),
    ),
    function=_embedding_sharding,
    sources=(
        "Naumov et al. 2019, DLRM (arXiv:1906.00091), Sec. 3 (butterfly shuffle)",
        "TorchRec sharding types and planner perf model (shard_estimators.py)",
        "Thakur, Rabenseifner, Gropp 2005 (collective costs), via "
        "calculators.formulas.collectives.costs",
    ),
)
