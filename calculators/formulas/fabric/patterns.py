"""What a ring allreduce, an alltoall and a parameter-server incast see of a sized
fabric, and how long the two collectives take on it.

Bandwidths come from :mod:`calculators.formulas.fabric.traffic` (first-order, fluid,
perfect load balance); times come from :mod:`calculators.formulas.collectives.costs`, the one
implementation of each collective's cost, fed with those bandwidths. Nothing here
restates a bus factor or an alpha-beta cost: a change there changes the times here.

Placement (an assumption, said once): ranks are numbered node by node and nodes fill
leaves in order, so a job's neighbours in a ring share a leaf wherever they can; in a
rail-optimised or multi-plane fabric NCCL's PXN moves data over NVLink to the GPU on
the destination's rail first (NVIDIA blog "Doubling all2all Performance with NCCL
2.12", 2022), so every GPU of the nodes under one rail leaf is one leaf hop away.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.collectives import costs as comm
from calculators.formulas.fabric import traffic

if TYPE_CHECKING:
    from calculators.formulas.fabric.clos import Tier
    from calculators.formulas.fabric.sizing import FabricPlan

#: Topologies whose leaves each hold one NIC of many nodes (one rail or plane).
RAIL_ALIGNED = ("rail_optimized", "multi_plane")


@dataclass(frozen=True)
class PatternBandwidths:
    """Per-GPU bytes/s per direction, as collective_time's inter-node bandwidth."""

    nic: float  # the GPU's share of its node's NICs, line rate
    allreduce: float  # what a rail-aligned ring gets across nodes
    alltoall: float  # what a uniform alltoall over every GPU gets
    incast: float  # what each sender of a parameter-server push gets
    leaf_gpus: int  # GPUs an alltoall reaches without leaving a leaf
    pod_gpus: int | None  # GPUs under one spine pod (three tiers), else None


def _tier(plan: FabricPlan, name: str) -> Tier | None:
    return next((t for t in plan.tiers if t.name == name), None)


def nic_bytes_per_s_per_gpu(nics_per_node: int, nic_bytes_per_s: float,
                            gpus_per_node: int) -> float:
    """The node's NICs shared by its GPUs: nics x rate / GPUs (DGX H100: 8 x 400 Gb/s
    for 8 GPUs, 50 GB/s each; the scaling-book's GPU chapter uses the same figure)."""
    return nics_per_node * nic_bytes_per_s / gpus_per_node


def leaf_and_pod_gpus(plan: FabricPlan, *, gpus_per_node: int,
                      rails_per_plane: int) -> tuple[int, int | None]:
    """GPUs under one leaf, and under one pod of a three-tier fabric.

    Rail-aligned leaves hold one NIC of ``down`` nodes: with PXN all their GPUs are
    local (fabric_traffic.gpus_under_one_leaf). A pod is ``spine down ports`` leaves;
    in a rail-aligned fabric those leaves hold ``rails`` NICs of each node, so the pod
    holds d2 d1 / rails whole nodes (NVIDIA's B200 SuperPOD: 32 leaves of 32 nodes,
    8 rails, a pod of 128 nodes = 1,024 GPUs).
    """
    leaf = plan.tiers[0]
    aligned = plan.topology in RAIL_ALIGNED
    leaf_gpus = traffic.gpus_under_one_leaf(
        leaf_down_ports=leaf.down_ports, gpus_per_node=gpus_per_node,
        nics_per_node=rails_per_plane, rail_optimized=aligned)
    spine = _tier(plan, "spine")
    if spine is None or _tier(plan, "core") is None:
        return leaf_gpus, None
    if aligned:
        pod_nodes = max(1, spine.down_ports * leaf.down_ports // rails_per_plane)
        return leaf_gpus, pod_nodes * gpus_per_node
    return leaf_gpus, spine.down_ports * leaf_gpus


def pattern_bandwidths(plan: FabricPlan, *, num_gpus: int, gpus_per_node: int,
                       nics_per_node: int, nic_bytes_per_s: float,
                       port_bytes_per_s: float, rails_per_plane: int,
                       incast_senders: int, incast_receivers: int,
                       receiver_bytes_per_s: float) -> PatternBandwidths:
    """Per-GPU bandwidth of each pattern on ``plan``.

    allreduce: each rail's ring leaves a leaf once (rail-aligned) or ``rails`` rings
    leave a leaf of whole nodes; fabric_traffic.ring_allreduce_bytes_per_s_per_gpu
    gives the fraction of the NIC they keep, at the leaf and (three tiers) pod edge.
    alltoall: fabric_traffic.alltoall_bytes_per_s_per_gpu with the leaf boundary at
    its down:up ratio and the pod boundary at the product of both ratios.
    incast: min(sender NIC, receivers x receiver port / senders), each sender
    spreading its push evenly over the receivers (a sharded parameter server).
    """
    nic = nic_bytes_per_s_per_gpu(nics_per_node, nic_bytes_per_s, gpus_per_node)
    endpoint = port_rate(nic_bytes_per_s, port_bytes_per_s)
    leaf_gpus, pod_gpus = leaf_and_pod_gpus(plan, gpus_per_node=gpus_per_node,
                                            rails_per_plane=rails_per_plane)
    leaf, spine = plan.tiers[0], _tier(plan, "spine")
    aligned = plan.topology in RAIL_ALIGNED
    leaves = leaf.switches // plan.planes
    keep = 1.0  # the fraction of its NIC a ring keeps after every edge it crosses
    boundaries: list[tuple[int, float]] = []
    if leaf.oversubscription is not None:
        keep = traffic.ring_allreduce_bytes_per_s_per_gpu(
            # Fewer leaves than rails: a rail's ring stays on its one leaf.
            endpoint, leaves_spanned=max(1, leaves // rails_per_plane) if aligned else leaves,
            rings_per_leaf=1 if aligned else min(rails_per_plane, leaf.down_ports),
            leaf_uplink_bytes_per_s=leaf.up_ports * port_bytes_per_s) / endpoint
        boundaries.append((leaf_gpus, leaf.oversubscription))
    if pod_gpus is not None and spine is not None and spine.oversubscription is not None:
        # A pod's uplinks: its leaf.up_ports spines, each with spine.up_ports to the core.
        pods = math.ceil(leaves / spine.down_ports)
        keep = min(keep, traffic.ring_allreduce_bytes_per_s_per_gpu(
            endpoint, leaves_spanned=pods, rings_per_leaf=rails_per_plane,
            leaf_uplink_bytes_per_s=leaf.up_ports * spine.up_ports * port_bytes_per_s)
            / endpoint)
        boundaries.append((pod_gpus, spine.oversubscription * (leaf.oversubscription or 1.0)))
    alltoall = traffic.alltoall_bytes_per_s_per_gpu(nic, num_gpus, boundaries)
    incast = traffic.incast_bytes_per_s_per_sender(
        incast_senders, incast_receivers * receiver_bytes_per_s, nic)
    return PatternBandwidths(nic=nic, allreduce=nic * keep, alltoall=alltoall,
                             incast=incast, leaf_gpus=leaf_gpus, pod_gpus=pod_gpus)


def port_rate(nic_bytes_per_s: float, port_bytes_per_s: float) -> float:
    """The rate of one endpoint (one NIC port on one switch port): a NIC faster than a
    port is split over ceil(nic/port) ports, each at nic/ports (fabric.size_fabric)."""
    ports = math.ceil(nic_bytes_per_s / port_bytes_per_s - 1e-9)
    return min(nic_bytes_per_s / ports, port_bytes_per_s)


def allreduce_time_s(message_bytes: float, ranks: int, *, gpus_per_node: int,
                     scale_up_bytes_per_s: float, bandwidth: PatternBandwidths) -> float:
    """A flat ring allreduce at line rate, no latency terms: collectives.flat_cost with
    the per-rank bandwidth NCCL's rings reach, min(NVLink, GPUs per node x the GPU's
    network share), as collective_time derives it (nccl-tests issue #119: one ring per
    NIC, so a rank moves its bytes at the node's pooled NIC bandwidth)."""
    per_rank = scale_up_bytes_per_s
    if ranks > gpus_per_node:
        per_rank = min(scale_up_bytes_per_s, gpus_per_node * bandwidth.allreduce)
    return comm.flat_cost("allreduce", "ring", message_bytes, ranks, per_rank, 0.0).time_s


def alltoall_time_s(message_bytes: float, ranks: int, *, gpus_per_node: int,
                    scale_up_bytes_per_s: float, bandwidth: PatternBandwidths) -> float:
    """An alltoall at line rate, no latency terms: collectives.hierarchical_cost, the
    node-local share over NVLink and the rest over the network at the alltoall's
    per-GPU bandwidth, whichever is slower."""
    return comm.hierarchical_cost("alltoall", message_bytes, ranks, gpus_per_node,
                                  scale_up_bytes_per_s, bandwidth.alltoall, 0.0).time_s
