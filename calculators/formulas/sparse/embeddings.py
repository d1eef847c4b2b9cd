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
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from calculators.catalogues.embedding_tables import TableSpec

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


@dataclass(frozen=True)
class TableMemory:
    """The bytes of a set of tables with their optimizer state, per table and in all,
    and the GPUs or hosts (at the usable bytes of one) that hold them."""

    weights: tuple[float, ...]
    states: tuple[float, ...]
    total_rows: int
    embedding_params: int
    min_gpus: int
    min_ps_hosts: int

    @property
    def table_bytes(self) -> float:
        return math.fsum(self.weights)

    @property
    def optimizer_bytes(self) -> float:
        return math.fsum(self.states)

    @property
    def total_bytes(self) -> float:
        return math.fsum(self.weights) + math.fsum(self.states)

    @property
    def largest_bytes(self) -> float:
        return max(w + s for w, s in zip(self.weights, self.states, strict=True))


def table_memory(tables: tuple[TableSpec, ...], dtype: str, optimizer: str, *,
                 gpu_usable: float, host_usable: float) -> TableMemory:
    """Weights and optimizer state of every table (FBGEMM's layout), and how many GPUs
    or PS hosts of the given usable bytes hold them all (a lower bound: whole tables
    need not pack that tightly)."""
    weights = tuple(weight_bytes(t.rows, t.dim, dtype) for t in tables)
    states = tuple(optimizer_bytes(t.rows, t.dim, optimizer) for t in tables)
    total = math.fsum(weights) + math.fsum(states)
    return TableMemory(weights, states, sum(t.rows for t in tables),
                       sum(t.rows * t.dim for t in tables),
                       math.ceil(total / gpu_usable), math.ceil(total / host_usable))
