"""What each traffic pattern sees of a fabric, to first order (fluid, no congestion
control, perfect load balance on the links each pattern may use).

Bandwidths are per GPU, bytes/s per direction, as the "bus bandwidth" of nccl-tests
(doc/PERFORMANCE.md): the rate a rank's link must carry, which is what the NIC limits.
Time = the bytes a rank moves / that bandwidth: 2(n-1)/n x S for a ring allreduce and
(n-1)/n x S for an alltoall (the same file's busbw factors; Thakur, Rabenseifner, Gropp
2005 for the ring). Left out: latency terms, NVLink's share inside a node, ECMP hash
collisions (see the ecmp calculator) and queueing (see the incast calculator).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


def _positive(**values: float) -> None:
    for name, value in values.items():
        if not value > 0:
            raise ValueError(f"{name} must be > 0, got {value}")


def ring_allreduce_time_s(message_bytes: float, ranks: int, bus_bytes_per_s: float) -> float:
    """2(n-1)/n x S / busbw: each rank sends and receives that much in a ring
    (Thakur et al. 2005; nccl-tests doc/PERFORMANCE.md, AllReduce factor)."""
    _positive(message_bytes=message_bytes, bus_bytes_per_s=bus_bytes_per_s, ranks=ranks)
    return 2.0 * (ranks - 1) / ranks * message_bytes / bus_bytes_per_s


def alltoall_time_s(message_bytes: float, ranks: int, bus_bytes_per_s: float) -> float:
    """(n-1)/n x S / busbw: a rank keeps 1/n of its buffer and sends the rest
    (nccl-tests doc/PERFORMANCE.md, AlltoAll factor)."""
    _positive(message_bytes=message_bytes, bus_bytes_per_s=bus_bytes_per_s, ranks=ranks)
    return (ranks - 1) / ranks * message_bytes / bus_bytes_per_s


def ring_allreduce_bytes_per_s_per_gpu(nic_bytes_per_s: float, *, leaves_spanned: int,
                                       rings_per_leaf: int,
                                       leaf_uplink_bytes_per_s: float) -> float:
    """Bus bandwidth of a ring allreduce: the NIC, unless a leaf's uplinks are thinner
    than the rings that must leave it.

    Derivation: NCCL runs one ring per rail; with rail-optimised placement GPU g of
    every node talks only to GPU g of its neighbours, NIC g to NIC g, on rail g's leaf.
    If the job's nodes sit under one leaf per rail (``leaves_spanned`` = 1) nothing
    climbs to the spine and each GPU gets its NIC: spine oversubscription is invisible.
    If the ring spans several leaves, ranks under one leaf are consecutive, so each
    ring leaves and re-enters a leaf once: ``rings_per_leaf`` flows at NIC rate on the
    leaf's uplinks (1 under rail optimisation; ``nics_per_node`` when a node's NICs all
    share a leaf). Bus bandwidth = NIC x min(1, uplinks / (rings x NIC)). This is the
    scaling-book's GPU chapter picture: beyond the node, collectives run at the NIC
    egress (8 x 400 Gb/s = 400 GB/s per H100 node). Bounds: >= 1 leaf, ring, uplink.
    """
    _positive(nic_bytes_per_s=nic_bytes_per_s, leaves_spanned=leaves_spanned,
              rings_per_leaf=rings_per_leaf, leaf_uplink_bytes_per_s=leaf_uplink_bytes_per_s)
    if leaves_spanned == 1:
        return nic_bytes_per_s
    demand = rings_per_leaf * nic_bytes_per_s
    return nic_bytes_per_s * min(1.0, leaf_uplink_bytes_per_s / demand)


def gpus_under_one_leaf(*, leaf_down_ports: int, gpus_per_node: int, nics_per_node: int,
                        rail_optimized: bool) -> int:
    """GPUs an alltoall reaches without crossing the spine.

    Rail-optimised: a rail leaf holds one NIC of each of ``leaf_down_ports`` nodes, and
    NCCL's PXN first moves data over NVLink to the GPU on the destination's rail (NVIDIA
    blog "Doubling all2all Performance with NCCL 2.12", 2022), so every GPU of those
    nodes is one leaf hop away. Otherwise a leaf holds floor(ports / NICs per node)
    whole nodes.
    """
    _positive(leaf_down_ports=leaf_down_ports, gpus_per_node=gpus_per_node,
              nics_per_node=nics_per_node)
    nodes = leaf_down_ports if rail_optimized else leaf_down_ports // nics_per_node
    return max(1, nodes) * gpus_per_node


def alltoall_cross_fraction(total_gpus: int, local_gpus: int) -> float:
    """(N - n)/N: the share of a uniform alltoall's bytes addressed outside a group of
    n GPUs (each rank sends S/N to every rank, itself included)."""
    if not local_gpus >= 1:
        raise ValueError(f"local_gpus must be >= 1, got {local_gpus}")
    if total_gpus < 1:
        raise ValueError(f"total_gpus must be >= 1, got {total_gpus}")
    return max(0.0, (total_gpus - local_gpus) / total_gpus)


def alltoall_bytes_per_s_per_gpu(nic_bytes_per_s: float, total_gpus: int,
                                 boundaries: Sequence[tuple[int, float]]) -> float:
    """Per-GPU rate of a uniform alltoall: NIC x min over tiers of min(1, 1/(r f)).

    Each boundary is (GPUs inside it, down:up ratio accumulated up to it): e.g.
    [(GPUs under a leaf, r_leaf)] for two tiers, plus (GPUs in a pod, r_leaf x r_spine)
    for three. Derivation: a fraction f = (N - n)/N of what each GPU injects leaves its
    group, and the group's uplinks carry 1/r of its hosts' NIC capacity, so f B <= NIC/r
    and B <= NIC. On a 1:1 fabric the cap never binds; at 3:1 with f near 1 it is a third.
    """
    _positive(nic_bytes_per_s=nic_bytes_per_s)
    share = 1.0
    for local_gpus, ratio in boundaries:
        # Below 1 a tier has more uplink than downlink capacity (a leaf whose NICs
        # each take several ports, say): it never binds, and min(1, ...) says so.
        if ratio <= 0:
            raise ValueError(f"oversubscription must be > 0 (down:up), got {ratio}")
        cross = alltoall_cross_fraction(total_gpus, local_gpus)
        if cross > 0:
            share = min(share, 1.0 / (ratio * cross))
    return nic_bytes_per_s * share


def incast_bytes_per_s_per_sender(n_senders: int, receiver_bytes_per_s: float,
                                  sender_bytes_per_s: float) -> float:
    """Fair share of a many-to-one transfer (a parameter server's pull or push):
    min(sender NIC, receiver port / n). The receiver's port, not the fabric, is the
    bottleneck of incast (Vasudevan et al., SIGCOMM 2009, Sec. 2; Chen et al., WREN
    2009). A server with several NICs: pass their sum as the receiver's rate."""
    _positive(n_senders=n_senders, receiver_bytes_per_s=receiver_bytes_per_s,
              sender_bytes_per_s=sender_bytes_per_s)
    return min(sender_bytes_per_s, receiver_bytes_per_s / n_senders)


def incast_time_s(n_senders: int, bytes_per_sender: float,
                  receiver_bytes_per_s: float) -> float:
    """n S / R: the lossless lower bound of an incast (drops only add timeouts;
    see loss_recovery)."""
    _positive(n_senders=n_senders, bytes_per_sender=bytes_per_sender,
              receiver_bytes_per_s=receiver_bytes_per_s)
    return n_senders * bytes_per_sender / receiver_bytes_per_s
