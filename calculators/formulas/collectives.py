"""Collective communication costs: the one implementation every calculator calls.

The alpha-beta model (Thakur, Rabenseifner and Gropp 2005, "Optimization of Collective
Communication Operations in MPICH", Sec. 2-4): a step costs ``alpha`` (latency) and a
byte costs ``1/bandwidth``. ``message_bytes`` is the buffer size S as nccl-tests reports
it (the whole vector for allreduce, the whole gathered output for allgather, the whole
send buffer for alltoall). Reduction arithmetic (gamma) is ignored: on GPUs it hides
behind the transfers.

Bus bandwidth follows NVIDIA nccl-tests, doc/PERFORMANCE.md: busbw = algbw x factor,
with factor 2(n-1)/n for allreduce, (n-1)/n for reduce-scatter, allgather and alltoall,
and 1 for broadcast, so that busbw is comparable with a link's bandwidth.

Every cost here is linear in the message size: a latency term that does not depend on
it plus a bandwidth term proportional to it. ``crossover_bytes`` uses that to find the
size at which the two terms are equal. NCCL's own tuning model has the same shape
(NVIDIA/nccl, src/graph/tuning.cc: time = latency + bytes / bandwidth, with 2(n-1)
ring steps for allreduce and n-1 for reduce-scatter and allgather).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Collective = Literal["allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast"]
Algorithm = Literal["ring", "tree", "direct", "hierarchical"]

COLLECTIVES: tuple[Collective, ...] = (
    "allreduce",
    "reduce_scatter",
    "allgather",
    "alltoall",
    "broadcast",
)


@dataclass(frozen=True)
class Cost:
    """Time of one collective split into its latency and bandwidth terms, plus bytes."""

    latency_s: float
    bandwidth_s: float
    bytes_sent_per_rank: float
    bytes_received_per_rank: float

    @property
    def time_s(self) -> float:
        return self.latency_s + self.bandwidth_s


def bus_factor(collective: Collective, ranks: int) -> float:
    """nccl-tests' busbw / algbw factor (doc/PERFORMANCE.md)."""
    if collective == "allreduce":
        return 2.0 * (ranks - 1) / ranks
    if collective == "broadcast":
        return 1.0
    return (ranks - 1) / ranks


def wire_bytes_per_rank(collective: Collective, message_bytes: float, ranks: int) -> float:
    """Bytes each rank sends (and receives) in a bandwidth-optimal algorithm."""
    if collective == "broadcast":
        return message_bytes
    return bus_factor(collective, ranks) * message_bytes


def flat_cost(  # noqa: PLR0917 - positional signature is relied on by other calculators
    collective: Collective,
    algorithm: Algorithm,
    message_bytes: float,
    ranks: int,
    bandwidth: float,
    latency: float,
) -> Cost:
    """One collective over ``ranks`` ranks each with ``bandwidth`` B/s per direction.

    ring: allreduce 2(p-1)a + 2(p-1)/p n/B; reduce-scatter, allgather (p-1)a +
    (p-1)/p n/B; broadcast as a pipelined chain (p-1)a + n/B.
    tree: the log-latency variants Thakur et al. describe: Rabenseifner's allreduce
    (recursive halving + doubling) 2 log2(p) a + 2(p-1)/p n/B; recursive halving /
    doubling for reduce-scatter / allgather log2(p) a + (p-1)/p n/B; Bruck's alltoall
    log2(p) a + (n/2) log2(p)/B; binomial broadcast log2(p) (a + n/B).
    direct (alltoall, pairwise exchange): (p-1) a + (p-1)/p n/B.

    log2(p) is rounded up for ranks that are not a power of two (first order; the
    exact algorithms add a step or two). For alltoall "ring" is read as "direct", and
    for the other collectives "direct" and "hierarchical" are read as "ring"; the
    hierarchical algorithm is ``hierarchical_cost``. Bytes are those of the busiest
    rank (the root, for a binomial broadcast).
    """
    if ranks < 2:
        return Cost(0.0, 0.0, 0.0, 0.0)
    p = ranks
    steps_log = (p - 1).bit_length()  # ceil(log2 p), exactly
    wire = wire_bytes_per_rank(collective, message_bytes, p)
    if collective == "alltoall":
        if algorithm == "tree":
            moved = message_bytes / 2.0 * steps_log
            return Cost(steps_log * latency, moved / bandwidth, moved, moved)
        return Cost((p - 1) * latency, wire / bandwidth, wire, wire)
    if collective == "broadcast":
        if algorithm == "tree":
            # The root sends the whole message once per level of the binomial tree.
            return Cost(
                steps_log * latency,
                steps_log * message_bytes / bandwidth,
                steps_log * message_bytes,
                message_bytes,
            )
        return Cost((p - 1) * latency, message_bytes / bandwidth, message_bytes, message_bytes)
    rounds = 2 if collective == "allreduce" else 1
    if algorithm == "tree":
        return Cost(rounds * steps_log * latency, wire / bandwidth, wire, wire)
    return Cost(rounds * (p - 1) * latency, wire / bandwidth, wire, wire)


def hierarchical_cost(  # noqa: PLR0917 - positional signature is relied on by callers
    collective: Collective,
    message_bytes: float,
    ranks: int,
    ranks_per_node: int,
    intra_node_bandwidth: float,
    inter_node_bandwidth: float,
    latency: float,
    *,
    inter_node_latency: float | None = None,
) -> Cost:
    """Two levels: inside a node over NVLink, across nodes over each GPU's own NIC.

    allreduce = intra-node reduce-scatter + inter-node ring allreduce of 1/g of the
    data (all g NICs in parallel) + intra-node allgather. reduce-scatter and allgather
    are the corresponding halves. alltoall: the intra-node share (g-1)/p and the
    off-node share (p-g)/p of each rank's buffer move at the same time, so the slower
    of the two sets the time. broadcast: a chain across nodes, then inside each node,
    one after the other (not pipelined across the two levels: an upper bound).

    ``latency`` is the per-step alpha inside a node; ``inter_node_latency`` (default:
    the same) is the alpha of a step across nodes. NCCL's tuning model charges a
    network step several times an NVLink step (src/graph/tuning.cc, ``hwLat``).
    ``ranks`` should be a multiple of ``ranks_per_node``; otherwise the node count is
    rounded up (first order).
    """
    across_latency = latency if inter_node_latency is None else inter_node_latency
    g = min(ranks_per_node, ranks)
    nodes = math.ceil(ranks / g)
    if nodes <= 1:
        return flat_cost(collective, "ring", message_bytes, ranks, intra_node_bandwidth, latency)
    if collective == "alltoall":
        intra = (g - 1) / ranks * message_bytes
        inter = (ranks - g) / ranks * message_bytes
        time_bw = max(intra / intra_node_bandwidth, inter / inter_node_bandwidth)
        # Pairwise exchange: g-1 steps to peers in the node, p-g to peers outside it.
        steps = (g - 1) * latency + (ranks - g) * across_latency
        return Cost(steps, time_bw, intra + inter, intra + inter)
    if collective == "broadcast":
        across = flat_cost(
            "broadcast", "ring", message_bytes, nodes, inter_node_bandwidth, across_latency
        )
        inside = flat_cost("broadcast", "ring", message_bytes, g, intra_node_bandwidth, latency)
        return Cost(
            across.latency_s + inside.latency_s,
            across.bandwidth_s + inside.bandwidth_s,
            message_bytes,
            message_bytes,
        )
    parts: list[Cost] = []
    if collective in ("allreduce", "reduce_scatter"):
        parts.append(
            flat_cost("reduce_scatter", "ring", message_bytes, g, intra_node_bandwidth, latency)
        )
    across_collective: Collective = collective
    parts.append(
        flat_cost(
            across_collective,
            "ring",
            message_bytes / g,
            nodes,
            inter_node_bandwidth,
            across_latency,
        )
    )
    if collective in ("allreduce", "allgather"):
        parts.append(
            flat_cost("allgather", "ring", message_bytes, g, intra_node_bandwidth, latency)
        )
    return Cost(
        # fsum: correctly rounded, so native Python and Pyodide agree to the last bit
        # (built-in sum() of floats changed its rounding in Python 3.12).
        math.fsum(c.latency_s for c in parts),
        math.fsum(c.bandwidth_s for c in parts),
        math.fsum(c.bytes_sent_per_rank for c in parts),
        math.fsum(c.bytes_received_per_rank for c in parts),
    )


def algbw(message_bytes: float, time_s: float) -> float:
    """nccl-tests' algorithm bandwidth: S / t."""
    return message_bytes / time_s if time_s > 0 else math.inf


def busbw(collective: Collective, message_bytes: float, time_s: float, ranks: int) -> float:
    """nccl-tests' bus bandwidth: algbw x the collective's factor."""
    return algbw(message_bytes, time_s) * bus_factor(collective, ranks)


def crossover_bytes(cost: Cost, message_bytes: float) -> float:
    """The message size at which the latency and bandwidth terms of ``cost`` are equal.

    Both terms are linear in the size (latency constant, bandwidth proportional), so
    the crossover is S x latency / bandwidth-time; for a ring allreduce it is
    2(p-1) a = 2(p-1)/p S/B, i.e. S = p a B. Infinite when nothing crosses the wire.
    """
    if cost.bandwidth_s <= 0:
        return math.inf
    return message_bytes * cost.latency_s / cost.bandwidth_s


def inter_node_steps(
    collective: Collective, algorithm: Algorithm, ranks: int, ranks_per_node: int
) -> int:
    """How many of a flat algorithm's steps cross a node boundary, ranks packed by node.

    NCCL's tuning model charges those steps the network latency and the rest the
    NVLink latency (src/graph/tuning.cc: 2(nNodes-1) inter-node steps of a ring
    allreduce, nNodes-1 of a reduce-scatter or allgather). Trees and Bruck cross
    nodes in their top log2(nodes) levels; a pairwise alltoall in p - g of its steps.
    """
    nodes = math.ceil(ranks / max(1, ranks_per_node))
    if nodes <= 1:
        return 0
    rounds = 2 if collective == "allreduce" else 1
    if algorithm == "tree":
        return rounds * (nodes - 1).bit_length()
    if collective == "alltoall":
        return ranks - min(ranks_per_node, ranks)
    return rounds * (nodes - 1)


def flat_cost_across_nodes(  # noqa: PLR0917 - mirrors flat_cost's positional order
    collective: Collective,
    algorithm: Algorithm,
    message_bytes: float,
    ranks: int,
    bandwidth: float,
    latency: float,
    *,
    ranks_per_node: int,
    inter_node_latency: float,
) -> Cost:
    """``flat_cost`` with the steps that cross nodes charged ``inter_node_latency``."""
    cost = flat_cost(collective, algorithm, message_bytes, ranks, bandwidth, latency)
    crossing = inter_node_steps(collective, algorithm, ranks, ranks_per_node)
    extra = crossing * (inter_node_latency - latency)
    return Cost(
        cost.latency_s + extra,
        cost.bandwidth_s,
        cost.bytes_sent_per_rank,
        cost.bytes_received_per_rank,
    )
