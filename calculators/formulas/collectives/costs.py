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
size at which the two terms are equal. NCCL's own tuning model has the same shape, and
the allreduce tree and the in-network variant follow it. Pinned: NVIDIA/nccl v2.20.3
(commit b6475625), src/graph/tuning.cc, ``ncclTopoTuneModel``: time = latency + bytes /
algorithm bandwidth, with 2(n-1) ring steps for allreduce and n-1 for reduce-scatter and
allgather; the tree's bus bandwidth x 0.92 and algorithm bandwidth = bus bandwidth x 1/2
(against the ring's x n / (2(n-1))); NVLS one NVLink step (+ one network step across
nodes). ``formulas.collectives.nccl_model`` is that model in full, protocols included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Collective = Literal["allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast"]
Algorithm = Literal["ring", "tree", "direct", "hierarchical", "in_network"]

#: NCCL 2.20.3 tuning.cc: the tree's bus bandwidth is the graph's x 0.92 ("busBw*.92"),
#: against the ring's x 1 for the Simple protocol.
TREE_EFFICIENCY = 0.92

#: The point-to-point algorithms NCCL 2.20.3's tuning model chooses among for each
#: collective (tuning.cc skips every other algorithm for broadcast, reduce-scatter and
#: allgather; alltoall is grouped send/receive to every peer, with no tuning at all).
#: NVLS and CollNet (in-network reduction) need switch support and are left out.
NCCL_ALGORITHMS: dict[str, tuple[Algorithm, ...]] = {
    "allreduce": ("ring", "tree"),
    "reduce_scatter": ("ring",),
    "allgather": ("ring",),
    "alltoall": ("direct",),
    "broadcast": ("ring",),
}

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
    tree, allreduce: NCCL's double binary tree (reduce up, broadcast down, half the data
    in each of two trees): 2 log2(p) a + 2n/(0.92 B). Each rank sends and receives 2n
    (interior in one tree: 3n/2 each way; leaf in the other: n/2), hence NCCL's
    algorithm bandwidth = bus bandwidth / 2, and the tree runs at 0.92 of the link
    (tuning.cc 2.20.3). It moves n/(n-1) times the ring's bytes, at 92%: never faster
    than the ring for large messages, much faster for small ones on many ranks.
    tree, other collectives: the log-latency variants Thakur et al. describe (NCCL 2.20
    has none): recursive halving / doubling for reduce-scatter / allgather log2(p) a +
    (p-1)/p n/B; Bruck's alltoall log2(p) a + (n/2) log2(p)/B; binomial broadcast
    log2(p) (a + n/B).
    direct (alltoall, pairwise exchange): (p-1) a + (p-1)/p n/B.

    log2(p) is rounded up for ranks that are not a power of two (first order; the
    exact algorithms add a step or two). For alltoall "ring" is read as "direct", and
    for the other collectives "direct", "hierarchical" and "in_network" are read as
    "ring"; the hierarchical algorithm is ``hierarchical_cost`` and the in-network one
    ``collectives_nodes.in_network_cost``. Bytes are those of the busiest rank (the
    root, for a binomial broadcast).
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
    if algorithm == "tree" and collective == "allreduce":
        moved = 2.0 * message_bytes
        return Cost(2 * steps_log * latency, moved / (TREE_EFFICIENCY * bandwidth), moved, moved)
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
