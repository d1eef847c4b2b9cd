"""What a collective really takes on real links: the bus bandwidth NCCL reaches at a
given message size, as nccl-tests measures it, rather than the alpha-beta ideal of
formulas.collectives.costs.

nccl-tests (doc/PERFORMANCE.md) reports bus bandwidth busbw = (S / t) x factor, with
factor 2(n-1)/n for allreduce and (n-1)/n for reduce-scatter, allgather and alltoall, so
that busbw compares with a link's speed. Measured curves have two regimes: small
messages are bound by a latency floor and by protocol and channel start-up, large ones
reach a plateau below the line rate. We describe a curve by its plateau (a fraction of
the line rate), the size at which it reaches half of it and a steepness k:

    busbw(S) = plateau x S^k / (S^k + S_half^k),   t = max(floor, factor x S / busbw(S))

(a Hill curve; fitted to the published nccl-tests curves, catalogues.link_speeds cites
them). Where a collective spans scale-up domains, NCCL runs its rings through the
scale-up links and the NICs at once, one ring per NIC, so the slower of the two sets the
plateau: the domain's links, or the NICs of the group's members in one domain (8 x 400
Gb/s NDR per node gives 370-380 GB/s busbw across nodes, 0.95 of the node's 400 GB/s;
NVIDIA GTC 2024 S62129 and GTC 2025 S72583, slide 12; A100 with 8 x HDR: 192 of 200).
The time is not the sum of a level inside and a level across, as a two-level
alpha-beta model would have it: the two run at the same time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.collectives.costs import bus_factor

if TYPE_CHECKING:
    from calculators.formulas.collectives.costs import Collective


#: NVLink SHARP reduces in the switch only for 5 or more GPUs (NVIDIA/nccl issue 1455:
#: NVLS busbw 370, 420, 440, 460, 480 GB/s for 4 to 8 H100s, the ring's below 5).
IN_NETWORK_MIN_RANKS = 5


@dataclass(frozen=True)
class LinkCurve:
    """How a kind of link behaves under NCCL, measured: every field is a fraction of the
    line rate or a size, from nccl-tests (catalogues.link_speeds cites each)."""

    ring_efficiency: float  # busbw plateau of ring collectives / line rate per direction
    alltoall_efficiency: float  # busbw plateau of alltoall / line rate
    half_bytes: float  # message size at which busbw is half its plateau
    steepness: float  # k of the Hill curve
    floor_s: float  # time of the smallest collective (the latency floor)
    #: allreduce busbw / ring busbw when the switches reduce in the network (NVLink
    #: SHARP on NVSwitch 3 and later, 5 or more GPUs): 1 where there is none.
    in_network_allreduce: float = 1.0
    #: Across nodes the half size grows with the GPUs: x (ranks / half_ranks)^half_growth.
    half_ranks: int = 1
    half_growth: float = 0.0
    #: A point-to-point send's half size and floor.
    send_half_bytes: float = 1.0
    send_floor_s: float = 0.0

    def half_at(self, ranks: int) -> float:
        """The half size of a collective over ``ranks`` GPUs."""
        if self.half_growth <= 0 or ranks <= self.half_ranks:
            return self.half_bytes
        return self.half_bytes * math.pow(ranks / self.half_ranks, self.half_growth)


@dataclass(frozen=True)
class Fabric:
    """The links one collective may use: a scale-up domain and a NIC per GPU, each with
    its line rate per direction (B/s) and its curve."""

    domain: int
    intra_bandwidth: float
    inter_bandwidth: float
    intra: LinkCurve
    inter: LinkCurve


def size_factor(message_bytes: float, half_bytes: float, steepness: float) -> float:
    """busbw(S) / plateau: the Hill curve's share of the plateau at size S."""
    if message_bytes <= 0:
        return 0.0
    return 1.0 / (1.0 + math.pow(half_bytes / message_bytes, steepness))


def plateau_bus_bandwidth(kind: Collective, ranks: int, per_domain: int,
                          fabric: Fabric) -> tuple[float, LinkCurve]:
    """The busbw a large message reaches (B/s) and the curve that sets it."""
    inside = ranks <= per_domain
    curve = fabric.intra if inside else fabric.inter
    if kind == "alltoall":
        if inside:
            return fabric.intra_bandwidth * fabric.intra.alltoall_efficiency, curve
        # Across domains every GPU sends (n - g)/n of its buffer through its own NIC;
        # busbw counts (n - 1)/n of it (nccl-tests' factor), hence (n - 1)/(n - g).
        return fabric.inter_bandwidth * fabric.inter.alltoall_efficiency * (ranks - 1) / max(
            1, ranks - per_domain), curve
    intra = fabric.intra_bandwidth * fabric.intra.ring_efficiency
    if kind == "allreduce" and inside and ranks >= IN_NETWORK_MIN_RANKS:
        intra *= fabric.intra.in_network_allreduce
    if inside:
        return intra, curve
    nics = per_domain * fabric.inter_bandwidth * fabric.inter.ring_efficiency
    return min(intra, nics), curve


def collective_time_s(kind: Collective, message_bytes: float, ranks: int, per_domain: int,
                      fabric: Fabric) -> float:
    """Seconds for one collective of ``message_bytes`` (nccl-tests' size S) over
    ``ranks`` GPUs, ``per_domain`` of them in each scale-up domain."""
    if ranks < 2 or message_bytes <= 0:
        return 0.0
    plateau, curve = plateau_bus_bandwidth(kind, ranks, max(1, per_domain), fabric)
    bus = plateau * size_factor(message_bytes, curve.half_at(ranks), curve.steepness)
    factor = 1.0 if kind == "broadcast" else bus_factor(kind, ranks)
    return max(curve.floor_s, factor * message_bytes / bus)


def send_time_s(message_bytes: float, crosses: bool, fabric: Fabric) -> float:
    """One point-to-point send between neighbouring pipeline stages (NCCL send/recv,
    busbw = algbw), inside a domain or across."""
    if message_bytes <= 0:
        return 0.0
    bandwidth = fabric.inter_bandwidth if crosses else fabric.intra_bandwidth
    curve = fabric.inter if crosses else fabric.intra
    share = size_factor(message_bytes, curve.send_half_bytes, curve.steepness)
    return max(curve.send_floor_s, message_bytes / (bandwidth * curve.ring_efficiency * share))
