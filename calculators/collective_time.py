"""collective_time: how long one collective takes, its algbw and busbw, and which term rules.

The costs come from ``comm`` (alpha-beta, Thakur et al. 2005; busbw as nccl-tests
defines it); this module only declares the calculator, checks the combinations that
make no sense, and draws time and busbw against message size.
"""

from __future__ import annotations

import math
from typing import cast

from calculators.core import charts
from calculators.core.spec import (
    Calculator,
    Choice,
    Computed,
    Inputs,
    Output,
    Param,
    Table,
    ValidationError,
)
from calculators.formulas import collectives as comm

#: Which algorithms each collective offers here. alltoall has no ring; "direct"
#: (pairwise exchange) is alltoall's alone; "tree" is Thakur et al.'s log-latency family.
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "allreduce": ("ring", "tree", "hierarchical"),
    "reduce_scatter": ("ring", "tree", "hierarchical"),
    "allgather": ("ring", "tree", "hierarchical"),
    "alltoall": ("direct", "tree", "hierarchical"),
    "broadcast": ("ring", "tree", "hierarchical"),
}
ALGORITHM_LABELS = {
    "ring": "ring (pipelined chain for broadcast)",
    "tree": "tree / recursive halving-doubling (Bruck for alltoall)",
    "direct": "direct / pairwise exchange (alltoall)",
    "hierarchical": "hierarchical: NVLink inside the node, NIC across nodes",
}


def flat_bandwidth(inputs: Inputs, collective: str) -> float:
    """Per-rank bandwidth of a flat algorithm, before efficiency.

    Given: ``bandwidth``. Blank: inside one node the NVLink bandwidth; across nodes
    the node's aggregate NIC bandwidth, capped by NVLink. NCCL runs one ring per NIC
    (channel), so a ring through g GPUs leaves each node g NICs wide: nccl-tests issue
    #119 expects 4 x HDR (4 x 25 GB/s) for 8 A100s per node and measures 85-96 GB/s.
    An alltoall cannot pool NICs (every GPU sends off-node at once): its own NIC.
    """
    given = inputs.opt("bandwidth")
    if given is not None:
        return given
    intra = inputs.num("intra_node_bandwidth")
    per_node = inputs.whole("ranks_per_node")
    if inputs.whole("ranks") <= per_node:
        return intra
    if collective == "alltoall":
        return inputs.num("inter_node_bandwidth")
    return min(intra, per_node * inputs.num("inter_node_bandwidth"))


def collective_cost(inputs: Inputs, collective: str, algorithm: str,
                    message_bytes: float) -> comm.Cost:
    """The cost of one collective from the calculator's inputs (efficiency applied)."""
    efficiency = inputs.num("efficiency")
    ranks = inputs.whole("ranks")
    coll = cast("comm.Collective", collective)
    if algorithm == "hierarchical":
        return comm.hierarchical_cost(
            coll, message_bytes, ranks, inputs.whole("ranks_per_node"),
            inputs.num("intra_node_bandwidth") * efficiency,
            inputs.num("inter_node_bandwidth") * efficiency,
            inputs.num("latency"), inter_node_latency=inputs.num("inter_node_latency"),
        )
    return comm.flat_cost_across_nodes(
        coll, cast("comm.Algorithm", algorithm), message_bytes, ranks,
        flat_bandwidth(inputs, collective) * efficiency, inputs.num("latency"),
        ranks_per_node=inputs.whole("ranks_per_node"),
        inter_node_latency=inputs.num("inter_node_latency"),
    )


def _check(inputs: Inputs) -> None:
    collective, algorithm = inputs.text("collective"), inputs.text("algorithm")
    allowed = ALGORITHMS[collective]
    if algorithm not in allowed:
        raise ValidationError(
            "algorithm",
            f"{algorithm!r} is not allowed for {collective}: choose one of "
            + ", ".join(allowed),
        )
    ranks, per_node = inputs.whole("ranks"), inputs.whole("ranks_per_node")
    if algorithm == "hierarchical" and ranks % per_node:
        raise ValidationError(
            "ranks",
            f"{ranks} is not allowed with the hierarchical algorithm: it must be a "
            f"multiple of ranks_per_node ({per_node})",
        )


def _chart(inputs: Inputs, message_bytes: float, crossover: float) -> str:
    collective, algorithm = inputs.text("collective"), inputs.text("algorithm")
    ranks = inputs.whole("ranks")
    anchor = crossover if math.isfinite(crossover) and crossover > 0 else message_bytes
    low = max(1.0, min(message_bytes, anchor) / 1e3)
    high = max(message_bytes, anchor) * 1e2
    times: list[tuple[float, float]] = []
    buses: list[tuple[float, float]] = []
    # Sizes 2^k and 1.5 x 2^k: exact floats, so every platform draws the same chart.
    for power in range(math.frexp(low)[1] - 1, math.frexp(high)[1] + 1):
        for mantissa in (1.0, 1.5):
            size = math.ldexp(mantissa, power)
            cost = collective_cost(inputs, collective, algorithm, size)
            times.append((size, cost.time_s * 1e6))
            buses.append((size, comm.busbw(cast("comm.Collective", collective), size,
                                           cost.time_s, ranks) / 1e9))
    markers = [charts.Marker(message_bytes, "this message")]
    if math.isfinite(crossover) and low <= crossover <= high:
        markers.insert(0, charts.Marker(crossover, "latency = bandwidth term"))
    return charts.line_chart(
        f"{collective} ({algorithm}) on {ranks} ranks: time and bus bandwidth",
        [charts.Series("time (µs)", tuple(times)), charts.Series("busbw (GB/s)", tuple(buses))],
        "message size S (bytes)", "time in µs; busbw in GB/s",
        log_x=True, log_y=True, markers=tuple(markers),
    )


def _collective_time(inputs: Inputs) -> Computed:
    _check(inputs)
    collective, algorithm = inputs.text("collective"), inputs.text("algorithm")
    message_bytes, ranks = inputs.num("message_bytes"), inputs.whole("ranks")
    coll = cast("comm.Collective", collective)
    cost = collective_cost(inputs, collective, algorithm, message_bytes)
    crossover = comm.crossover_bytes(cost, message_bytes)
    notes: list[str] = []
    warnings: list[str] = []
    regime = "latency" if cost.latency_s > cost.bandwidth_s else "bandwidth"
    share = cost.latency_s / cost.time_s if cost.time_s > 0 else 0.0
    notes.append(
        f"The latency term is {share:.0%} of the time; the two terms are equal at "
        f"S = {crossover:.3g} B. Below that size the collective is latency-bound and "
        "algorithms with fewer steps (tree, hierarchical) win; above it, bytes decide."
    )
    if collective == "allreduce" and ranks <= inputs.whole("ranks_per_node"):
        notes.append(
            "NCCL on 8 H100 uses NVLink SHARP (in-switch reduction) for allreduce by "
            "default: a measured busbw of about 480 GB/s, above what any ring can reach "
            "(NVIDIA, nccl-tests issue #212). This model covers point-to-point algorithms."
        )
    if algorithm == "hierarchical" and inputs.whole("ranks_per_node") >= ranks:
        warnings.append("All ranks are in one node: the hierarchical algorithm is a ring "
                        "over the intra-node bandwidth.")
    rows = []
    for algo in ALGORITHMS[collective]:
        if algo == "hierarchical" and ranks % inputs.whole("ranks_per_node"):
            continue
        other = collective_cost(inputs, collective, algo, message_bytes)
        rows.append((
            algo,
            f"{other.time_s * 1e6:.4g} µs",
            f"{comm.busbw(coll, message_bytes, other.time_s, ranks) / 1e9:.4g} GB/s",
            "latency" if other.latency_s > other.bandwidth_s else "bandwidth",
        ))
    return Computed(
        values={
            "time_s": cost.time_s,
            "algbw": comm.algbw(message_bytes, cost.time_s),
            "busbw": comm.busbw(coll, message_bytes, cost.time_s, ranks),
            "bytes_sent_per_rank": cost.bytes_sent_per_rank,
            "bytes_received_per_rank": cost.bytes_received_per_rank,
            "regime": regime,
            "latency_time_s": cost.latency_s,
            "bandwidth_time_s": cost.bandwidth_s,
            "crossover_bytes": crossover,
            "bus_factor": comm.bus_factor(coll, ranks),
        },
        warnings=warnings,
        notes=notes,
        table=Table(("algorithm", "time", "busbw", "bound by"), tuple(rows),
                    caption=f"Every algorithm for this {collective}, same inputs"),
        chart=_chart(inputs, message_bytes, crossover),
    )


COLLECTIVE_TIME = Calculator(
    id="collective_time",
    advanced=("efficiency", "intra_node_bandwidth", "inter_node_bandwidth", "inter_node_latency"),
    title="Collective time, algorithm and bus bandwidth",
    summary="Alpha-beta time of allreduce, reduce-scatter, allgather, alltoall or "
            "broadcast; algbw and busbw as nccl-tests reports them.",
    chapter="communication.md",
    params=(
        Param("collective", "Collective", "choice", "allreduce",
              choices=tuple(Choice(c, c.replace("_", "-")) for c in comm.COLLECTIVES),
              help="What every rank contributes and receives; see the traffic matrices "
                   "in the chapter."),
        Param("algorithm", "Algorithm", "choice", "ring",
              choices=tuple(Choice(a, ALGORITHM_LABELS[a]) for a in ALGORITHM_LABELS),
              help="ring, tree (recursive halving/doubling, binomial broadcast, Bruck "
                   "alltoall) and direct (pairwise alltoall) per Thakur et al. 2005; "
                   "hierarchical: reduce-scatter inside the node, ring across nodes on "
                   "every GPU's own NIC, allgather inside the node."),
        Param("message_bytes", "Message size S", "float", float(2**30), unit="B",
              minimum=1, maximum=1e15,
              help="The buffer size as nccl-tests reports it: the whole vector for "
                   "allreduce, the whole gathered output for allgather and "
                   "reduce-scatter's input, each rank's whole send buffer for alltoall."),
        Param("ranks", "Ranks (GPUs)", "int", 8, unit="GPU", minimum=2, maximum=1_000_000,
              help="Ranks taking part in the collective."),
        Param("bandwidth", "Bandwidth per rank, per direction (flat algorithms)", "float",
              None, unit="B/s", minimum=1e6, maximum=1e14, optional=True,
              placeholder="from the node layout",
              help="Line rate each rank can send (and receive) at once. Blank: the "
                   "intra-node bandwidth inside one node; across nodes, the node's NICs "
                   "together (GPUs per node x NIC rate), capped by NVLink, as NCCL runs "
                   "one ring per NIC; for alltoall, each GPU's own NIC for all its bytes "
                   "(the hierarchical option sends the node-local share over NVLink). "
                   "H100 NVLink 4: 900 GB/s bidirectional = 450 GB/s each way "
                   "(datasheet); A100: 300 GB/s; NDR: 400 Gb/s = 50 GB/s."),
        Param("efficiency", "Achieved fraction of line rate", "float", 0.8, unit="1",
              minimum=0.01, maximum=1,
              help="An assumption: 0.8. NCCL reaches about 370 of H100's 450 GB/s NVLink "
                   "(82%, nccl-tests issue #212) and about 230 of A100's 300 GB/s (77%, "
                   "nccl-tests issue #149); about 24 of 25 GB/s on an HDR NIC."),
        Param("latency", "Latency per step (alpha)", "float", 2e-6, unit="s",
              minimum=0, maximum=1,
              help="An assumption: 2 µs per step inside a node. NCCL's own model charges "
                   "0.47-3.4 µs per NVLink ring step depending on protocol (NVIDIA/nccl "
                   "src/graph/tuning.cc, hwLat)."),
        Param("ranks_per_node", "GPUs per node", "int", 8, unit="GPU",
              minimum=1, maximum=1024,
              help="8 in a DGX/HGX H100 node. Ranks are packed node by node; this sets "
                   "which steps cross the network, and the hierarchical split."),
        Param("intra_node_bandwidth", "Intra-node bandwidth per GPU, per direction",
              "float", 450e9, unit="B/s", minimum=1e6, maximum=1e14,
              help="NVLink per GPU, per direction: 450 GB/s on H100, 300 GB/s on A100."),
        Param("inter_node_bandwidth", "Inter-node bandwidth per GPU, per direction",
              "float", 50e9, unit="B/s", minimum=1e6, maximum=1e14,
              help="Each GPU's own NIC: 400 Gb/s NDR InfiniBand or 400G RoCE = 50 GB/s."),
        Param("inter_node_latency", "Latency per step across nodes", "float", 5e-6,
              unit="s", minimum=0, maximum=1,
              help="An assumption: 5 µs. NCCL's model charges 2.7-9.6 µs per network "
                   "ring step (src/graph/tuning.cc, hwLat). Charged to every step that "
                   "crosses a node boundary, flat or hierarchical."),
    ),
    outputs=(
        Output("time_s", "Time", "s"),
        Output("algbw", "Algorithm bandwidth S/t", "B/s"),
        Output("busbw", "Bus bandwidth", "B/s"),
        Output("bytes_sent_per_rank", "Bytes sent per rank", "B"),
        Output("bytes_received_per_rank", "Bytes received per rank", "B"),
        Output("regime", "Dominant term", "", "text"),
        Output("latency_time_s", "Latency term", "s"),
        Output("bandwidth_time_s", "Bandwidth term", "s"),
        Output("crossover_bytes", "Size where the terms are equal", "B"),
        Output("bus_factor", "busbw / algbw factor", "1", "fixed"),
    ),
    function=_collective_time,
    sources=(
        "Thakur, Rabenseifner and Gropp 2005, Optimization of Collective Communication "
        "Operations in MPICH, Sec. 2-4",
        "NVIDIA nccl-tests, doc/PERFORMANCE.md (algbw, busbw and their factors)",
        "NVIDIA nccl-tests issues #149 (A100, ~230 GB/s busbw) and #212 (H100, ~370 GB/s "
        "ring, ~480 GB/s NVLS)",
        "NVIDIA/nccl src/graph/tuning.cc (per-step latencies of NCCL's cost model)",
    ),
)
