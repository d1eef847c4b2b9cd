"""Placing embedding tables on GPUs: memory per GPU, imbalance, and the communication
each sharding scheme implies, following TorchRec's sharding types.

- table-wise: whole tables, greedy by size onto the least-loaded GPU; forward is an
  alltoall of pooled embeddings (DLRM's "butterfly shuffle", Naumov et al. 2019, Sec. 3),
  backward the same alltoall of their gradients.
- row-wise: every table split by rows over all GPUs; each GPU pools partial sums for the
  whole batch, so forward is a reduce-scatter and backward an all-gather (TorchRec's
  perf model for row-wise sharding).
- column-wise: tables split into column slices placed like whole tables; alltoall as
  table-wise, but per-row extras (row-wise Adagrad state, int8 scale/bias) repeat.
- table-row-wise: each table on one node, split by rows over that node's GPUs; an
  intra-node reduce-scatter over NVLink, then an alltoall across nodes.
Costs come from formulas.collectives.costs (the one implementation of each collective).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.collectives import costs as comm
from calculators.formulas.sparse.embeddings import shard_bytes

if TYPE_CHECKING:
    from calculators.catalogues.embedding_tables import TableSpec

SCHEMES: tuple[tuple[str, str], ...] = (
    ("table_wise", "table-wise"), ("row_wise", "row-wise"), ("column_wise", "column-wise"),
    ("table_row_wise", "table-row-wise"),
)
#: Bytes of one embedding ID on the wire (TorchRec KeyedJaggedTensor, int64 values).
INDEX_BYTES = 8
COMM_BYTES: dict[str, int] = {"fp32": 4, "fp16": 2, "bf16": 2}
#: Column-wise: at most this many slices over all tables, so that a hostile input cannot
#: make the browser place hundreds of millions of shards.
MAX_SHARDS = 100_000



def _row_split(tables: list[TableSpec], ranks: int, dtype: str, optimizer: str) -> list[float]:
    """Each table's rows spread over ``ranks``; the first ``rows % ranks`` get one more.

    A difference array keeps this O(tables + ranks), not O(tables x ranks)."""
    common = 0.0
    extra = [0.0] * (ranks + 1)
    for t in tables:
        base, rem = divmod(t.rows, ranks)
        per_row = shard_bytes(1, t.dim, dtype, optimizer)
        common += base * per_row
        extra[0] += per_row
        extra[rem] -= per_row
    loads, running = [], 0.0
    for r in range(ranks):
        running += extra[r]
        loads.append(common + running)
    return loads


def _column_shards(dim: int, ranks: int, shard_dim: int, cap: int) -> list[int]:
    """Equal slices at least ``shard_dim`` wide, at most one per GPU and ``cap`` in all."""
    count = max(1, min(ranks, dim // shard_dim, cap))
    base, rem = divmod(dim, count)
    return [base + (1 if i < rem else 0) for i in range(count)]


def place(tables: tuple[TableSpec, ...], scheme: str, ranks: int, *, dtype: str,
          optimizer: str, per_node: int, shard_dim: int) -> tuple[list[float], list[float]]:
    """Bytes on each GPU, and the pooled width (sum of dims) whose output each GPU (or,
    for table-row-wise, each node) sends per sample."""
    if scheme in ("table_wise", "column_wise"):
        items: list[tuple[float, int]] = []
        dims: list[int] = []
        for t in tables:
            widths = ([t.dim] if scheme == "table_wise"
                      else _column_shards(t.dim, ranks, shard_dim, MAX_SHARDS // len(tables)))
            for width in widths:
                items.append((shard_bytes(t.rows, width, dtype, optimizer), len(dims)))
                dims.append(width)
        return _placed_with_dims(items, dims, ranks)
    if scheme == "row_wise":
        return _row_split(list(tables), ranks, dtype, optimizer), [
            float(sum(t.dim for t in tables))] * ranks
    nodes = ranks // per_node
    node_items = [(shard_bytes(t.rows, t.dim, dtype, optimizer), i)
                  for i, t in enumerate(tables)]
    _, members = _assign(node_items, nodes)
    loads: list[float] = []
    node_widths: list[float] = []
    for node in range(nodes):
        chosen = [tables[i] for i in members[node]]
        loads.extend(_row_split(chosen, per_node, dtype, optimizer))
        node_widths.append(float(sum(t.dim for t in chosen)))
    return loads, node_widths


def _assign(items: list[tuple[float, int]], bins: int) -> tuple[list[float], list[list[int]]]:
    heap = [(0.0, b) for b in range(bins)]
    loads = [0.0] * bins
    members: list[list[int]] = [[] for _ in range(bins)]
    for size, index in sorted(items, key=lambda item: -item[0]):
        load, b = heapq.heappop(heap)
        loads[b] = load + size
        members[b].append(index)
        heapq.heappush(heap, (loads[b], b))
    return loads, members


def _placed_with_dims(items: list[tuple[float, int]], dims: list[int],
                      ranks: int) -> tuple[list[float], list[float]]:
    loads, members = _assign(items, ranks)
    return loads, [float(sum(dims[i] for i in m)) for m in members]


@dataclass(frozen=True)
class Network:
    """Per-GPU bandwidths (B/s, per direction), GPUs per node and per-message latency."""

    nic: float
    nvlink: float
    per_node: int
    latency: float

    def cost(self, kind: comm.Collective, size: float, ranks: int) -> comm.Cost:
        """One collective over ``ranks`` GPUs: NVLink inside a node, NICs across."""
        return comm.hierarchical_cost(kind, size, ranks, min(self.per_node, ranks),
                                      self.nvlink, self.nic, self.latency)


def total(parts: list[comm.Cost]) -> comm.Cost:
    """Collectives run one after another: their times and bytes add. ``math.fsum``, not
    ``sum``: the built-in's float rounding changed in Python 3.12, and native (3.11) and
    Pyodide (3.14) results must agree to the last bit."""
    return comm.Cost(math.fsum(p.latency_s for p in parts),
                     math.fsum(p.bandwidth_s for p in parts),
                     math.fsum(p.bytes_sent_per_rank for p in parts),
                     math.fsum(p.bytes_received_per_rank for p in parts))


def step_comm(scheme: str, widths: list[float], ranks: int, *, batch: float, features: int,
              pooling: float, value_bytes: int, net: Network) -> comm.Cost:
    """Forward + backward communication of one step for the busiest GPU: the ID
    distribution, then the pooled embeddings out and their gradients back."""
    per_node = min(net.per_node, ranks)
    # Input distribution: every GPU sends its share of the batch's IDs to their owners.
    parts = [net.cost("alltoall", batch / ranks * features * pooling * INDEX_BYTES, ranks)]
    partial = batch * max(widths) * value_bytes
    if scheme in ("table_wise", "column_wise"):
        parts += [net.cost("alltoall", partial, ranks)] * 2
    elif scheme == "row_wise":
        parts += [net.cost("reduce_scatter", partial, ranks), net.cost("allgather", partial, ranks)]
    else:
        nodes = ranks // per_node
        inside = comm.flat_cost("reduce_scatter", "ring", partial, per_node, net.nvlink,
                                net.latency)
        across = comm.flat_cost("alltoall", "direct", partial / per_node, nodes, net.nic,
                                net.latency)
        parts += [inside, across, across, inside]
    return total(parts)
