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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Collective = Literal["allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast"]
Algorithm = Literal["ring", "tree", "direct", "hierarchical"]

COLLECTIVES: tuple[Collective, ...] = (
    "allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast",
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


def flat_cost(
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
    """
    if ranks < 2:
        return Cost(0.0, 0.0, 0.0, 0.0)
    p = ranks
    steps_log = math.ceil(math.log2(p))
    wire = wire_bytes_per_rank(collective, message_bytes, p)
    if collective == "alltoall":
        if algorithm == "tree":
            moved = message_bytes / 2.0 * steps_log
            return Cost(steps_log * latency, moved / bandwidth, moved, moved)
        return Cost((p - 1) * latency, wire / bandwidth, wire, wire)
    if collective == "broadcast":
        if algorithm == "tree":
            return Cost(steps_log * latency, steps_log * message_bytes / bandwidth,
                        message_bytes, message_bytes)
        return Cost((p - 1) * latency, message_bytes / bandwidth, message_bytes, message_bytes)
    rounds = 2 if collective == "allreduce" else 1
    if algorithm == "tree":
        return Cost(rounds * steps_log * latency, wire / bandwidth, wire, wire)
    return Cost(rounds * (p - 1) * latency, wire / bandwidth, wire, wire)


def hierarchical_cost(
    collective: Collective,
    message_bytes: float,
    ranks: int,
    ranks_per_node: int,
    intra_node_bandwidth: float,
    inter_node_bandwidth: float,
    latency: float,
) -> Cost:
    """Two levels: inside a node over NVLink, across nodes over each GPU's own NIC.

    allreduce = intra-node reduce-scatter + inter-node ring allreduce of 1/g of the
    data (all g NICs in parallel) + intra-node allgather. reduce-scatter and allgather
    are the corresponding halves. alltoall: the intra-node share (g-1)/p and the
    off-node share (p-g)/p of each rank's buffer move at the same time, so the slower
    of the two sets the time. broadcast: a chain across nodes, then inside each node.
    """
    g = min(ranks_per_node, ranks)
    nodes = math.ceil(ranks / g)
    if nodes <= 1:
        return flat_cost(collective, "ring", message_bytes, ranks, intra_node_bandwidth, latency)
    if collective == "alltoall":
        intra = (g - 1) / ranks * message_bytes
        inter = (ranks - g) / ranks * message_bytes
        time_bw = max(intra / intra_node_bandwidth, inter / inter_node_bandwidth)
        return Cost((ranks - 1) * latency, time_bw, intra + inter, intra + inter)
    if collective == "broadcast":
        across = flat_cost("broadcast", "ring", message_bytes, nodes, inter_node_bandwidth,
                           latency)
        inside = flat_cost("broadcast", "ring", message_bytes, g, intra_node_bandwidth, latency)
        return Cost(across.latency_s + inside.latency_s, across.bandwidth_s + inside.bandwidth_s,
                    message_bytes, message_bytes)
    parts: list[Cost] = []
    if collective in ("allreduce", "reduce_scatter"):
        parts.append(flat_cost("reduce_scatter", "ring", message_bytes, g, intra_node_bandwidth,
                               latency))
    across_collective: Collective = collective
    parts.append(flat_cost(across_collective, "ring", message_bytes / g, nodes,
                           inter_node_bandwidth, latency))
    if collective in ("allreduce", "allgather"):
        parts.append(flat_cost("allgather", "ring", message_bytes, g, intra_node_bandwidth,
                               latency))
    return Cost(
        sum(c.latency_s for c in parts),
        sum(c.bandwidth_s for c in parts),
        sum(c.bytes_sent_per_rank for c in parts),
        sum(c.bytes_received_per_rank for c in parts),
    )


def algbw(message_bytes: float, time_s: float) -> float:
    """nccl-tests' algorithm bandwidth: S / t."""
    return message_bytes / time_s if time_s > 0 else math.inf


def busbw(collective: Collective, message_bytes: float, time_s: float, ranks: int) -> float:
    """nccl-tests' bus bandwidth: algbw x the collective's factor."""
    return algbw(message_bytes, time_s) * bus_factor(collective, ranks)
