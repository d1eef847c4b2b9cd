"""The ``embedding_memory`` calculator: embedding tables' bytes with their optimizer
state, and the GPUs or PS hosts to hold them (formulas.sparse.embeddings)."""

from __future__ import annotations

from calculators.core import units
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output
from calculators.formulas.sparse.embeddings import table_memory
from calculators.inputs.embeddings import (
    gpu_params,
    host_params,
    host_usable_bytes,
    table_params,
    tables_from_inputs,
    usable_gpu_bytes,
)


def _embedding_memory(inputs: Inputs) -> Computed:
    tables = tables_from_inputs(inputs)
    gpu_usable = usable_gpu_bytes(inputs)
    memory = table_memory(tables, inputs.text("dtype"), inputs.text("optimizer"),
                          gpu_usable=gpu_usable, host_usable=host_usable_bytes(inputs))
    weights, states = memory.weights, memory.states
    total, largest = memory.total_bytes, memory.largest_bytes
    warnings: list[str] = []
    if largest > gpu_usable:
        warnings.append(_(
            "The largest table ({largest} with its optimizer state) exceeds one GPU's usable "
            "{usable}: it must be split by rows or columns (see embedding_sharding).").format(
            largest=units.format_value(largest, "B", "si"),
            usable=units.format_value(gpu_usable, "B", "si")))
    order = sorted(range(len(tables)), key=lambda i: -(weights[i] + states[i]))
    shown = order[:15]
    rows = tuple(
        (tables[i].name, f"{tables[i].rows:,}", str(tables[i].dim),
         units.format_value(weights[i], "B", "si"), units.format_value(states[i], "B", "si"),
         f"{(weights[i] + states[i]) / total:.1%}")
        for i in shown)
    caption = (_("Tables, largest first (the 15 largest of {n})").format(n=len(tables))
               if len(tables) > 15 else _("Tables, largest first"))
    return Computed(
        values={
            "num_tables": len(tables),
            "total_rows": memory.total_rows,
            "embedding_params": memory.embedding_params,
            "table_bytes": memory.table_bytes,
            "optimizer_bytes": memory.optimizer_bytes,
            "total_bytes": total,
            "largest_table_bytes": largest,
            "min_gpus": memory.min_gpus,
            "min_ps_hosts": memory.min_ps_hosts,
        },
        warnings=warnings,
        notes=[_("{si} is {iec}: GB = 1e9 bytes, GiB = 2^30.").format(
            si=units.format_value(total, "B", "si"), iec=units.format_value(total, "B", "iec"))],
        table=Table((_("table"), _("rows"), _("dim"), _("weights"), _("optimizer"), _("share")),
                    rows, caption),
    )


EMBEDDING_MEMORY = Calculator(
    id="embedding_memory",
    headline=("total_bytes", "min_gpus", "min_ps_hosts"),
    title="Embedding table memory",
    summary="Bytes of embedding tables and their optimizer state; GPUs or PS hosts to hold them.",
    chapter="sparse.md",
    params=(
        *table_params(),
        *gpu_params(),
        *host_params(),
    ),
    outputs=(
        Output("num_tables", "Tables", "", "count"),
        Output("total_rows", "Rows (all tables)", "row", "count"),
        Output("embedding_params", "Embedding parameters", "param", "count"),
        Output("table_bytes", "Table weights", "B", "si"),
        Output("optimizer_bytes", "Optimizer state", "B", "si"),
        Output("total_bytes", "Weights + optimizer state", "B", "si"),
        Output("largest_table_bytes", "Largest table with its state", "B", "si"),
        Output("min_gpus", "GPUs needed to hold them", "GPU", "count"),
        Output("min_ps_hosts", "PS hosts needed to hold them", "host", "count"),
    ),
    function=_embedding_memory,
    sources=(
        "Naumov et al. 2019, DLRM (arXiv:1906.00091), Sec. 2-3",
        "facebookresearch/dlrm: bench/dlrm_s_criteo_kaggle.sh; torchrec_dlrm/README.MD",
        "mlcommons/inference: recommendation/dlrm/pytorch (python/main.py, README.md)",
        "FBGEMM TBE: kINT8QparamsBytes = 8; optimizer state in fp32 (at::acc_type)",
        "TorchRec planner: shard_estimators._get_optimizer_multipler; "
        "HeuristicalStorageReservation(percentage=0.15)",
    ),
)
