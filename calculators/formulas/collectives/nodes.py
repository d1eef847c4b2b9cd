"""Collectives across nodes: which steps cross the network, whether a rank can use all of
its node's NICs, and the in-network (switch-reduced) allreduce.

The single-level costs are ``formulas.collectives.costs``; this module charges each of their
steps the latency of the link it runs on, as NCCL's tuning model does (NVIDIA/nccl
v2.20.3, commit b6475625, src/graph/tuning.cc, ``ncclTopoTuneModel``), and adds the
in-network variant whose bytes per rank do not grow with the number of nodes.
"""

from __future__ import annotations

import math

from calculators.formulas.collectives.costs import Algorithm, Collective, Cost, flat_cost

#: NCCL 2.20.3 tuning.cc ``hwLat``, NVLS (Simple, the only protocol NVLS has): 23 us for
#: the NVLink step, 18 us for the network step. Far above a ring step (0.6-3.4 us): NCCL
#: saves NVLS for large messages.
NVLS_NVLINK_LATENCY_S = 23e-6
NVLS_NETWORK_LATENCY_S = 18e-6

#: NCCL 2.20.3 tuning.cc ``hwLat``, tree, LL128 (the protocol of the ring's default
#: latencies, 1.9 and 4.0 us): 1.25 us per NVLink step of a node's chain, 8.5 us per
#: network step of the double binary tree. NCCL's allreduce tree has its own per-step
#: latencies; charging it the ring's under-prices its network steps by half.
TREE_NVLINK_LATENCY_S = 1.25e-6
TREE_NETWORK_LATENCY_S = 8.5e-6


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


def intra_node_steps(
    collective: Collective, algorithm: Algorithm, ranks: int, ranks_per_node: int
) -> int:
    """The steps that stay inside a node. NCCL's allreduce tree is a chain through the
    g GPUs of each node, twice (reduce, broadcast): 2(g-1) NVLink steps, then 2 log2
    (nodes) network steps (tuning.cc 2.20.3: 2((nRanks/nNodes - 1) intraLat +
    log2i(nNodes) interLat)). Every other flat algorithm: its steps not counted by
    ``inter_node_steps``."""
    if ranks < 2:
        return 0
    if collective == "allreduce" and algorithm == "tree":
        return 2 * (min(ranks_per_node, ranks) - 1)
    p = ranks
    if algorithm == "tree":
        total = (p - 1).bit_length() * (2 if collective == "allreduce" else 1)
    else:
        total = (2 if collective == "allreduce" else 1) * (p - 1)
    return total - inter_node_steps(collective, algorithm, ranks, ranks_per_node)


def pools_nics(collective: Collective, algorithm: Algorithm) -> bool:
    """Whether a flat algorithm across nodes can use all of a node's NICs for each rank.

    NCCL runs its rings and its allreduce trees as channels, each crossing the node
    through a different NIC, so a rank's bytes leave at the node's pooled NIC rate
    (nccl-tests issue #119: 8 A100 with 4 HDR NICs reach ~4 x 25 GB/s of busbw). In
    recursive halving/doubling, Bruck, a binomial tree or a pairwise alltoall each rank
    exchanges directly with distant ranks, through its own NIC.
    """
    return algorithm == "ring" or (algorithm == "tree" and collective == "allreduce")


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
    """``flat_cost`` with each step charged where it runs: ``latency`` inside a node,
    ``inter_node_latency`` across (``intra_node_steps``, ``inter_node_steps``)."""
    cost = flat_cost(collective, algorithm, message_bytes, ranks, bandwidth, latency)
    if ranks < 2:
        return cost
    intra = intra_node_steps(collective, algorithm, ranks, ranks_per_node)
    crossing = inter_node_steps(collective, algorithm, ranks, ranks_per_node)
    return Cost(
        intra * latency + crossing * inter_node_latency,
        cost.bandwidth_s,
        cost.bytes_sent_per_rank,
        cost.bytes_received_per_rank,
    )


def in_network_factor(ranks: int) -> float:
    """Bytes each rank moves each way, over S, in an in-network allreduce (NVLS).

    Derivation (the NCCL maintainer's, nccl-tests PR #239, 2024-09-02: "algobw = busbw
    x n/(n+1)"): with NVLink SHARP each GPU loads its 1/n slice reduced by the switch
    (sending S: its part of every slice; receiving S/n), then stores the result once to
    a multicast address (sending S/n; receiving S: every slice). Out and in: (n+1)/n S.
    nccl-tests reports busbw = algbw x 2(n-1)/n for every algorithm (src/all_reduce.cu,
    ``AllReduceGetBw``, up to v2.19.6); the (n-1)/(n+1) factor for NCCL_ALGO=NVLS was
    proposed in nccl-tests PR #239, never merged, and does not match this count.
    """
    if ranks < 1:
        raise ValueError(f"ranks must be >= 1, got {ranks}")
    return (ranks + 1) / ranks


def in_network_cost(
    message_bytes: float,
    ranks: int,
    ranks_per_node: int,
    intra_node_bandwidth: float,
    inter_node_bandwidth: float,
    *,
    latency: float = NVLS_NVLINK_LATENCY_S,
    inter_node_latency: float = NVLS_NETWORK_LATENCY_S,
) -> Cost:
    """An allreduce reduced by the switches: NVLink SHARP (NVLS) in a node or NVL72 rack,
    plus in-network reduction in the fabric (InfiniBand SHARP, NCCL's CollNet) across.

    Inside: each GPU moves (g+1)/g S each way over NVLink (``in_network_factor``).
    Across: the node's reduced slices, S/g per GPU on its own NIC, go up the switch
    tree and come back reduced: S/g each way, whatever the number of nodes (a ring
    would move 2(N-1)/N S/g). NCCL pipelines the two (NVLS with CollNet), so the slower
    link sets the time. Latency as NCCL 2.20.3 counts NVLS: one NVLink step, plus one
    network step across nodes (tuning.cc), at NVLS's own per-step latencies by default.
    """
    if ranks < 2:
        return Cost(0.0, 0.0, 0.0, 0.0)
    g = min(ranks_per_node, ranks)
    nodes = math.ceil(ranks / g)
    nvlink = in_network_factor(g) * message_bytes if g > 1 else 0.0
    if nodes <= 1:
        return Cost(latency, nvlink / intra_node_bandwidth, nvlink, nvlink)
    nic = message_bytes / g
    time_bw = max(nvlink / intra_node_bandwidth, nic / inter_node_bandwidth)
    return Cost(latency + inter_node_latency, time_bw, nvlink + nic, nvlink + nic)
