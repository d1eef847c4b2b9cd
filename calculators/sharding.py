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
Costs come from ``calculators.comm`` (the one implementation of each collective).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators import charts, comm, embeddings, hardware, units
from calculators.spec import Calculator, Choice, Computed, Output, Param, Table, ValidationError

if TYPE_CHECKING:
    from calculators.spec import Inputs
    from calculators.tables import TableSpec

SCHEMES: tuple[tuple[str, str], ...] = (
    ("table_wise", "table-wise"), ("row_wise", "row-wise"), ("column_wise", "column-wise"),
    ("table_row_wise", "table-row-wise"),
)
#: Bytes of one embedding ID on the wire (TorchRec KeyedJaggedTensor, int64 values).
INDEX_BYTES = 8
COMM_BYTES: dict[str, int] = {"fp32": 4, "fp16": 2, "bf16": 2}
MAX_CHART_BARS = 64
#: Column-wise: at most this many slices over all tables, so that a hostile input cannot
#: make the browser place hundreds of millions of shards.
MAX_SHARDS = 100_000


def network_params() -> tuple[Param, ...]:
    """Per-GPU network inputs shared with ``sparse_training``."""
    return (
        Param("nic_bandwidth", "NIC bandwidth per GPU", "float",
              hardware.LINKS["ib_ndr"].bandwidth, unit="B/s", minimum=1e6,
              maximum=1e13,
              help="Scale-out bandwidth per GPU, per direction: 400 Gb/s (InfiniBand NDR) "
                   "line rate by default; measured NCCL bus bandwidth is about 80% of it."),
        Param("scale_up_bandwidth", "NVLink bandwidth per GPU", "float",
              hardware.LINKS["nvlink4"].bandwidth, unit="B/s", minimum=1e6,
              maximum=1e14,
              help="Inside a node, per direction: NVLink 4 is 450 GB/s (900 GB/s "
                   "bidirectional, H100 datasheet).", advanced=True),
        Param("gpus_per_node", "GPUs per node", "int", 8, minimum=1, maximum=1024,
              help="GPUs joined by NVLink in one server: 8 in an HGX/DGX node.",
              advanced=True),
        Param("latency", "Latency per message step", "float", 5e-6, unit="s", minimum=0,
              maximum=1, help="Alpha of the alpha-beta model; 5 us is an assumption.",
              advanced=True),
    )


def _row_split(tables: list[TableSpec], ranks: int, dtype: str, optimizer: str) -> list[float]:
    """Each table's rows spread over ``ranks``; the first ``rows % ranks`` get one more.

    A difference array keeps this O(tables + ranks), not O(tables x ranks)."""
    common = 0.0
    extra = [0.0] * (ranks + 1)
    for t in tables:
        base, rem = divmod(t.rows, ranks)
        per_row = embeddings.shard_bytes(1, t.dim, dtype, optimizer)
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
                items.append((embeddings.shard_bytes(t.rows, width, dtype, optimizer), len(dims)))
                dims.append(width)
        return _placed_with_dims(items, dims, ranks)
    if scheme == "row_wise":
        return _row_split(list(tables), ranks, dtype, optimizer), [
            float(sum(t.dim for t in tables))] * ranks
    nodes = ranks // per_node
    node_items = [(embeddings.shard_bytes(t.rows, t.dim, dtype, optimizer), i)
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

    @classmethod
    def from_inputs(cls, inputs: Inputs) -> Network:
        return cls(inputs.num("nic_bandwidth"), inputs.num("scale_up_bandwidth"),
                   inputs.whole("gpus_per_node"), inputs.num("latency"))

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


def _scheme_row(label: str, loads: list[float], cost: comm.Cost, *,
                usable: float) -> tuple[str, ...]:
    """One line of the comparison table: fullest GPU, imbalance, fit, traffic, time."""
    fullest, mean = max(loads), math.fsum(loads) / len(loads)
    return (label, units.format_value(fullest, "B", "si"), f"{fullest / mean:.2f}",
            "yes" if fullest <= usable else "no",
            units.format_value(cost.bytes_sent_per_rank, "B", "si"),
            units.format_value(cost.time_s, "s", "si"))


def _embedding_sharding(inputs: Inputs) -> Computed:
    tables = embeddings.tables_from_inputs(inputs)
    ranks, per_node = inputs.whole("num_gpus"), inputs.whole("gpus_per_node")
    if ranks > per_node and ranks % per_node:
        raise ValidationError("num_gpus", f"{ranks} is not allowed: must be a multiple of "
                              f"gpus_per_node ({per_node}) when it spans nodes")
    per_node = min(per_node, ranks)
    dtype, optimizer = inputs.text("dtype"), inputs.text("optimizer")
    batch, pooling = inputs.whole("batch_size"), inputs.num("pooling_factor")
    value_bytes = COMM_BYTES[inputs.text("comm_dtype")]
    usable = embeddings.usable_gpu_bytes(inputs)
    shard_dim = inputs.whole("column_shard_dim")
    net = Network.from_inputs(inputs)
    results: dict[str, tuple[list[float], comm.Cost]] = {}
    for scheme, _ in SCHEMES:
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
        warnings.append(f"The fullest GPU needs {units.format_value(max(loads), 'B', 'si')}, "
                        f"more than the usable {units.format_value(usable, 'B', 'si')}.")
    order = sorted(range(ranks), key=lambda g: -loads[g])
    step = max(1, math.ceil(ranks / MAX_CHART_BARS))
    picked = order[::step]
    bars = [(f"{g}", [("weights + optimizer state", loads[g] / 1e9)]) for g in picked]
    chart = charts.stacked_bar_chart(
        f"GB per GPU, {chosen.replace('_', '-')}, fullest first" + (
            f" (every {step}th GPU)" if step > 1 else ""),
        bars, "GB per GPU (1 GB = 1e9 B)", limit=usable / 1e9, limit_label="usable memory")
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
        notes=["Communication per step: ID distribution plus forward and backward of the "
               "pooled embeddings, for the busiest GPU, no overlap with compute."],
        table=Table(("scheme", "fullest GPU", "max/mean", "fits", "sent per GPU per step",
                     "comm time per step"), rows, "All four schemes for these tables"),
        chart=chart,
    )


EMBEDDING_SHARDING = Calculator(
    id="embedding_sharding",
    title="Sharding embedding tables across GPUs",
    summary="Per-GPU bytes, imbalance and per-step communication of TorchRec's sharding types.",
    chapter="sparse.md",
    params=(
        *(p if p.name != "tables" else Param(
            "tables", p.label, "text", "criteo_1tb_torchrec", optional=True,
            placeholder=p.placeholder, help=p.help) for p in embeddings.table_params()),
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
        *embeddings.gpu_params(),
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
        "Thakur, Rabenseifner, Gropp 2005 (collective costs), via calculators.comm",
    ),
)
