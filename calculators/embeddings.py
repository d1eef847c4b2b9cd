"""Embedding tables: their bytes, their optimizer state, and the GPUs or hosts to hold them.

Byte counts follow FBGEMM's table-batched embedding (TBE) kernels, which TorchRec uses:
weights in fp32, fp16/bf16, or int8 rows with two fp32 quantisation parameters (scale,
bias: 8 bytes) stored at the end of each row; optimizer state in fp32 (FBGEMM keeps
momentum in the accumulation type, ``at::acc_type``, which is fp32 for fp16 weights).
TorchRec's sharding planner (``shard_estimators._get_optimizer_multipler``) estimates the
same state as a multiple of the table's own bytes: SGD 0, Adam 2, row-wise Adagrad
1/dim, others 1; for fp32 tables the two agree exactly.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators import hardware, units
from calculators.spec import Calculator, Choice, Computed, Output, Param, Table
from calculators.tables import MAX_DIM, MAX_ROWS, MAX_TABLES, PRESETS, TableSpec, parse_tables

if TYPE_CHECKING:
    from calculators.spec import Inputs

#: Bytes per weight element (FBGEMM ``SparseType``).
DTYPE_BYTES: dict[str, int] = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1}
#: FBGEMM row-wise int8 keeps two fp32 quantisation parameters (scale and bias) after
#: each row's values: 8 bytes a row (kINT8QparamsBytes).
INT8_QPARAM_BYTES = 8
FP32_BYTES = 4
#: Optimizer state per row, in fp32 words, as a function of the row's width (FBGEMM TBE:
#: EXACT_ADAGRAD keeps one momentum per element, EXACT_ROWWISE_ADAGRAD one per row,
#: ADAM two moments per element).
OPTIMIZER_WORDS_PER_ROW: dict[str, tuple[int, int]] = {
    # name: (words per element, words per row)
    "sgd": (0, 0),
    "adagrad": (1, 0),
    "rowwise_adagrad": (0, 1),
    "adam": (2, 0),
}
#: TorchRec's default planner keeps 15% of each GPU's memory back for everything that is
#: not an embedding shard (``HeuristicalStorageReservation(percentage=0.15)``).
TORCHREC_RESERVE = 0.15


def tables_from_inputs(inputs: Inputs) -> tuple[TableSpec, ...]:
    """The pasted list or preset when given, otherwise ``num_tables`` equal tables."""
    dim = inputs.whole("embedding_dim")
    if inputs["tables"] is not None:
        return parse_tables(inputs.text("tables"), dim)
    rows = inputs.whole("rows_per_table")
    return tuple(TableSpec(f"T{i + 1}", rows, dim) for i in range(inputs.whole("num_tables")))


def weight_bytes(rows: float, dim: int, dtype: str) -> float:
    """rows x (dim x element bytes + int8 qparams): FBGEMM's row layout."""
    extra = INT8_QPARAM_BYTES if dtype == "int8" else 0
    return float(rows * (dim * DTYPE_BYTES[dtype] + extra))


def optimizer_bytes(rows: float, dim: int, optimizer: str) -> float:
    """fp32 optimizer state: Adagrad dim words per row, row-wise Adagrad one, Adam 2 dim."""
    per_element, per_row = OPTIMIZER_WORDS_PER_ROW[optimizer]
    return float(rows * (per_element * dim + per_row) * FP32_BYTES)


def shard_bytes(rows: float, dim: int, dtype: str, optimizer: str) -> float:
    """Weights plus optimizer state of a (rows x dim) shard; per-row extras repeat in
    every column shard, as they do in TorchRec's column-wise sharding."""
    return weight_bytes(rows, dim, dtype) + optimizer_bytes(rows, dim, optimizer)


def table_params() -> tuple[Param, ...]:
    """The inputs every sparse calculator shares: the tables, their precision, optimizer."""
    presets = ", ".join(p.id for p in PRESETS)
    return (
        Param("tables", "Table list (or preset)", "text", None, optional=True,
              placeholder="blank: the counts below",
              help=f"One table per line, 'rows dim' and an optional name (e.g. 'C3 10131227 "
                   f"16'; rows alone take the embedding dim below), or a preset: {presets}. "
                   "Presets use the published row counts and dims."),
        Param("num_tables", "Number of tables", "int", 26, minimum=1, maximum=MAX_TABLES,
              help="Used when no list is given: this many equal tables (Criteo has 26)."),
        Param("rows_per_table", "Rows per table", "int", 10_000_000, unit="row", minimum=1,
              maximum=MAX_ROWS, help="Distinct IDs (hash buckets) per table, e.g. 10M."),
        Param("embedding_dim", "Embedding dimension", "int", 128, minimum=1, maximum=MAX_DIM,
              help="Width of each embedding vector; DLRM uses 16 (Kaggle) and 128 (1TB)."),
        Param("dtype", "Weight precision", "choice", "fp32",
              choices=(Choice("fp32", "fp32 (4 B)"), Choice("fp16", "fp16 (2 B)"),
                       Choice("bf16", "bf16 (2 B)"),
                       Choice("int8", "int8 + fp32 scale/bias per row"))),
        Param("optimizer", "Optimizer", "choice", "rowwise_adagrad",
              choices=(Choice("sgd", "SGD (no state)"),
                       Choice("adagrad", "Adagrad (one fp32 per element)"),
                       Choice("rowwise_adagrad", "Row-wise Adagrad (one fp32 per row)"),
                       Choice("adam", "Adam (two fp32 per element)")),
              help="State as FBGEMM's TBE stores it (fp32); TorchRec's planner: Adam 2x the "
                   "table, row-wise Adagrad 1/dim, SGD 0."),
    )


def gpu_params() -> tuple[Param, ...]:
    """Accelerator memory and the share kept back for everything but the tables."""
    return (
        Param("gpu", "Accelerator", "choice", hardware.DEFAULT_ACCELERATOR,
              choices=hardware.accelerator_choices(),
              help="Memory as the datasheet states it (decimal GB)."),
        Param("gpu_memory", "GPU memory override", "float", None, unit="B", minimum=1e6,
              maximum=1e14, optional=True,
              placeholder="from the accelerator", help="e.g. 40GB for an A100 40GB.",
              advanced=True),
        Param("gpu_reserve", "GPU memory reserved", "float", TORCHREC_RESERVE, unit="1",
              minimum=0, maximum=0.95,
              help="Kept for the dense model, activations and buffers; 15% is TorchRec's "
                   "planner default (HeuristicalStorageReservation).", advanced=True),
    )


def usable_gpu_bytes(inputs: Inputs) -> float:
    memory = inputs.opt("gpu_memory") or hardware.get(inputs.text("gpu")).memory_bytes
    return memory * (1.0 - inputs.num("gpu_reserve"))


def _embedding_memory(inputs: Inputs) -> Computed:
    tables = tables_from_inputs(inputs)
    dtype, optimizer = inputs.text("dtype"), inputs.text("optimizer")
    weights = [weight_bytes(t.rows, t.dim, dtype) for t in tables]
    states = [optimizer_bytes(t.rows, t.dim, optimizer) for t in tables]
    total = math.fsum(weights) + math.fsum(states)
    gpu_usable = usable_gpu_bytes(inputs)
    host_usable = inputs.num("host_memory") * (1.0 - inputs.num("host_reserve"))
    largest = max(w + s for w, s in zip(weights, states, strict=True))
    warnings: list[str] = []
    if largest > gpu_usable:
        warnings.append(
            f"The largest table ({units.format_value(largest, 'B', 'si')} with its optimizer "
            f"state) exceeds one GPU's usable {units.format_value(gpu_usable, 'B', 'si')}: "
            "it must be split by rows or columns (see embedding_sharding).")
    order = sorted(range(len(tables)), key=lambda i: -(weights[i] + states[i]))
    shown = order[:15]
    rows = tuple(
        (tables[i].name, f"{tables[i].rows:,}", str(tables[i].dim),
         units.format_value(weights[i], "B", "si"), units.format_value(states[i], "B", "si"),
         f"{(weights[i] + states[i]) / total:.1%}")
        for i in shown)
    caption = "Tables, largest first" + (
        f" (the 15 largest of {len(tables)})" if len(tables) > 15 else "")
    return Computed(
        values={
            "num_tables": len(tables),
            "total_rows": sum(t.rows for t in tables),
            "embedding_params": sum(t.rows * t.dim for t in tables),
            "table_bytes": math.fsum(weights),
            "optimizer_bytes": math.fsum(states),
            "total_bytes": total,
            "largest_table_bytes": largest,
            "min_gpus": math.ceil(total / gpu_usable),
            "min_ps_hosts": math.ceil(total / host_usable),
        },
        warnings=warnings,
        notes=[f"{units.format_value(total, 'B', 'si')} is "
               f"{units.format_value(total, 'B', 'iec')}: GB = 1e9 bytes, GiB = 2^30."],
        table=Table(("table", "rows", "dim", "weights", "optimizer", "share"), rows, caption),
    )


EMBEDDING_MEMORY = Calculator(
    id="embedding_memory",
    title="Embedding table memory",
    summary="Bytes of embedding tables and their optimizer state; GPUs or PS hosts to hold them.",
    chapter="sparse.md",
    params=(
        *table_params(),
        *gpu_params(),
        Param("host_memory", "Memory per PS host", "float", 1e12, unit="B", minimum=1e6,
              maximum=1e15,
              help="DRAM of one parameter-server host; 1 TB is an assumption (a two-socket "
                   "CPU server). AWS p4d.24xlarge has 1,152 GB (TorchRec DLRM README)."),
        Param("host_reserve", "Host memory reserved", "float", 0.3, unit="1", minimum=0,
              maximum=0.95,
              help="Kept for the OS, network buffers and the hash map's keys and pointers; "
                   "30% is an assumption.", advanced=True),
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
