"""Sizing a scale-out fabric: tiers, switches, links, optics, bisection bandwidth.

Every topology here is a folded Clos built from identical switches of ``radix`` ports
(counted at the port speed: a 32-cage NVIDIA QM9700 is 64 NDR ports, "each OSFP port
consists of 2 logical InfiniBand ports", QM97XX user manual, Interfaces):

- ``leaf_spine``: two tiers at most; a node's NICs land on any leaf.
- ``fat_tree``: up to three tiers (leaf, spine, core), the k-ary fat tree of Al-Fares,
  Loukissas, Vahdat (SIGCOMM 2008, Sec. 3) when every tier is 1:1.
- ``rail_optimized``: NIC i of every node goes to the leaves of rail i, and one shared
  spine (and core) joins the rails (NVIDIA DGX SuperPOD reference architectures).
- ``multi_plane``: NIC port i of every node sits on plane i, an independent fabric with
  its own leaves and spines; nothing joins the planes (DeepSeek's multi-plane two-layer
  fat tree, Zhao et al., ISCA 2025, Sec. 5, large-scale network driven design).

Provisioning rules (derivation, stated once): a leaf splits its ports into ``down`` and
``up`` by the oversubscription ratio and is built whole, uplinks included, even when
its down ports are not all used (NVIDIA: "the fabric should be designed to support the
full SU, including leaf switches and leaf-spine cables", DGX SuperPOD H100 RA, Network
Fabrics). Each leaf reaches every switch of the tier above through the same number of
links, so the count of switches above must divide a leaf's uplinks; we take the
smallest such count with enough ports. A three-tier pod is ``spine down ports`` leaves
and ``leaf up ports`` spines, and core switches come in one group per spine position.
With these rules the DGX SuperPOD tables are reproduced exactly (tests).

Left out: more than three tiers, switches of mixed radix, spare or management ports
(e.g. the UFM links in the SuperPOD tables), and anything about routing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

TOPOLOGIES = ("leaf_spine", "fat_tree", "rail_optimized", "multi_plane")
TIER_NAMES = ("leaf", "spine", "core")
#: Radix bounds for a calculator input: 4-port toys up to the 512-port radix of
#: 102.4 Tb/s chips run at 200 Gb/s per port (an upper bound, not a product).
MIN_RADIX, MAX_RADIX = 4, 512


@dataclass(frozen=True)
class Tier:
    """One switch tier, totals over all planes."""

    name: str
    switches: int
    down_ports: int  # per switch, towards hosts
    up_ports: int  # per switch, towards the next tier (0 at the top)
    links_up: int  # cables from this tier to the next, all switches together

    @property
    def oversubscription(self) -> float | None:
        """Down:up port ratio of one switch; ``None`` at the top tier (no uplinks)."""
        return self.down_ports / self.up_ports if self.up_ports else None


@dataclass(frozen=True)
class FabricPlan:
    """The bill of materials and headline capacities of one sized fabric."""

    topology: str
    planes: int
    endpoints: int  # NIC ports attached, all planes
    tiers: tuple[Tier, ...]
    host_links: int
    transceivers: int
    bisection_bytes_per_s: float  # one direction, across the worst even cut
    power_watts: float | None

    @property
    def switches(self) -> int:
        return sum(t.switches for t in self.tiers)

    @property
    def switch_links(self) -> int:
        return sum(t.links_up for t in self.tiers)

    @property
    def links(self) -> int:
        return self.host_links + self.switch_links


def _check_radix(radix: int) -> None:
    if not MIN_RADIX <= radix <= MAX_RADIX or radix % 2:
        raise ValueError(f"switch radix must be even and in [{MIN_RADIX}, {MAX_RADIX}], "
                         f"got {radix}")


def max_hosts_fat_tree(radix: int) -> int:
    """k^3/4 hosts on a three-tier k-ary fat tree (Al-Fares et al. 2008, Sec. 3)."""
    _check_radix(radix)
    return radix**3 // 4


def switches_fat_tree(radix: int) -> int:
    """5k^2/4 switches: k pods of k/2 edge + k/2 aggregation, and (k/2)^2 core
    (Al-Fares et al. 2008, Sec. 3)."""
    _check_radix(radix)
    return 5 * radix**2 // 4


def max_hosts_leaf_spine(radix: int) -> int:
    """k^2/2 hosts on a non-blocking two-tier leaf-spine: k leaves of k/2 hosts, each
    leaf one link to each of k/2 spines (the two-tier case of the same Clos)."""
    _check_radix(radix)
    return radix**2 // 2


def switches_leaf_spine(radix: int) -> int:
    """3k/2 switches at that size: k leaves and k/2 spines."""
    _check_radix(radix)
    return 3 * radix // 2


def split_ports(radix: int, oversubscription: float) -> tuple[int, int]:
    """(down, up) ports of a switch for a down:up ratio r: down = floor(k r/(1+r)).

    r = 1 halves the radix (non-blocking); r = 3 gives 48:16 on 64 ports. Bounds:
    1 <= r <= radix - 1 (at least one uplink); below 1 would buy uplinks nobody uses.
    """
    _check_radix(radix)
    if not 1.0 <= oversubscription <= radix - 1:
        raise ValueError(f"oversubscription (down:up) must be in [1, {radix - 1}], "
                         f"got {oversubscription}")
    down = math.floor(radix * oversubscription / (1.0 + oversubscription) + 1e-9)
    return down, radix - down


def max_endpoints(radix: int, tiers: int, leaf_oversubscription: float = 1.0,
                  spine_oversubscription: float = 1.0) -> int:
    """Largest fabric for the radix at 1, 2 or 3 tiers: k; k d1; k d2 d1.

    Derivation: a top switch needs one port per switch (or pod) below it, so at most k
    leaves (two tiers) or k pods of d2 leaves (three tiers), each leaf with d1 hosts.
    With 1:1 tiers this is k^2/2 and k^3/4 (Al-Fares et al. 2008, Sec. 3).
    """
    d1, _ = split_ports(radix, leaf_oversubscription)
    d2, _ = split_ports(radix, spine_oversubscription)
    if tiers == 1:
        return radix
    if tiers == 2:
        return radix * d1
    if tiers == 3:
        return radix * d2 * d1
    raise ValueError(f"tiers must be 1, 2 or 3, got {tiers}")


def max_nodes(radix: int, tiers: int, *, rails_per_plane: int, rail_aligned: bool,
              leaf_oversubscription: float = 1.0,
              spine_oversubscription: float = 1.0) -> int:
    """Most nodes (each with ``rails_per_plane`` NIC ports on a plane) that 1, 2 or 3
    tiers of this radix hold: the :func:`max_endpoints` limit in whole nodes.

    At most k leaves meet a spine (two tiers) and k pods of d2 leaves the core (three).
    Rail-aligned leaves each take one rail of d1 nodes, filled rail by rail, so the
    leaves come in groups of ``rails``: floor(leaves / rails) x d1 nodes. Otherwise a
    leaf's d1 ports take whole nodes' NICs in turn: floor(leaves x d1 / rails). With
    k = 64 and 8 rails both give 2,048 GPUs in two tiers and 65,536 in three; one NIC
    per plane gives k^2/2 nodes (DeepSeek's 16,384 GPUs on 8 two-tier planes).
    """
    if rails_per_plane < 1:
        raise ValueError(f"rails_per_plane must be >= 1, got {rails_per_plane}")
    d1, _ = split_ports(radix, leaf_oversubscription)
    d2, _ = split_ports(radix, spine_oversubscription)
    if tiers == 1:
        return radix // rails_per_plane
    if tiers not in (2, 3):
        raise ValueError(f"tiers must be 1, 2 or 3, got {tiers}")
    leaves = radix if tiers == 2 else radix * d2
    if rail_aligned:
        return leaves // rails_per_plane * d1
    return leaves * d1 // rails_per_plane


def tiers_needed(endpoints: int, radix: int, leaf_oversubscription: float = 1.0,
                 spine_oversubscription: float = 1.0) -> int:
    """Fewest tiers (1-3) whose :func:`max_endpoints` holds ``endpoints``."""
    if endpoints < 1:
        raise ValueError(f"endpoints must be >= 1, got {endpoints}")
    for tiers in (1, 2, 3):
        if endpoints <= max_endpoints(radix, tiers, leaf_oversubscription,
                                      spine_oversubscription):
            return tiers
    raise ValueError(f"{endpoints} endpoints exceed a three-tier fabric of radix {radix} "
                     f"({max_endpoints(radix, 3, leaf_oversubscription, spine_oversubscription)});"
                     " use a larger radix, more planes, or oversubscription")


def switches_above(links: int, radix: int, links_per_source: int) -> int:
    """Switches to terminate ``links`` when each source spreads ``links_per_source``
    links evenly over them: the smallest n >= links/radix that divides links_per_source.

    Derivation: even spreading keeps every path equal for ECMP/adaptive routing. It is
    why three SuperPOD H100 SUs (24 leaves x 32 uplinks = 768 links) take 16 spines,
    not 12: 12 does not divide 32 (DGX SuperPOD H100 RA, Table 4).
    """
    need = max(1, math.ceil(links / radix))
    for n in range(need, links_per_source + 1):
        if links_per_source % n == 0:
            return n
    raise ValueError(f"{links} links do not fit switches of radix {radix}")


def _clos(endpoints: int, leaves: int, radix: int, *, tiers: int, r1: float,
          r2: float) -> list[Tier]:
    """Tiers of one plane with ``leaves`` leaves (already counted by the caller)."""
    if tiers == 1:
        return [Tier("leaf", 1, endpoints, 0, 0)]
    d1, u1 = split_ports(radix, r1)
    if tiers == 2:
        spines = switches_above(leaves * u1, radix, u1)
        return [Tier("leaf", leaves, d1, u1, leaves * u1), Tier("spine", spines, radix, 0, 0)]
    d2, u2 = split_ports(radix, r2)
    pods = math.ceil(leaves / d2)
    spines = pods * u1
    # One core group per spine position; a group takes pods x u2 links.
    cores = u1 * switches_above(pods * u2, radix, u2)
    return [Tier("leaf", leaves, d1, u1, leaves * u1),
            Tier("spine", spines, d2, u2, spines * u2),
            Tier("core", cores, radix, 0, 0)]


def _leaves(topology: str, nodes: int, rails: int, d1: int) -> int:
    if topology == "rail_optimized":
        # Leaves are filled rail by rail: a leaf holds one rail of d1 nodes.
        return rails * math.ceil(nodes / d1)
    return math.ceil(nodes * rails / d1)


def two_tier(topology: str, nodes: int, rails_per_plane: int, radix: int,
             oversubscription: float) -> list[Tier] | None:
    """The two tiers of one plane with the fewest switches, over every way a leaf can
    use its ports with down/up at most the ``oversubscription`` asked for; a tie goes to
    the plain split (more down ports, then more uplinks). ``None`` when no way keeps
    the leaves within one spine's ports.

    Derivation: spines must divide each leaf's uplinks (switches_above), so the plain
    port split can be a poor count: 1.1:1 on 64 ports splits 33:31, and 31 uplinks
    need 31 spines, more than the 16 of the non-blocking 32:32. Leaving ports unused
    is what a designer does (here 33 down and 30 up: 15 spines).
    """
    best: tuple[int, int, int, int] | None = None  # (switches, -down, -up, leaves)
    top, _ = split_ports(radix, oversubscription)
    for down in range(top, 0, -1):
        leaves = _leaves(topology, nodes, rails_per_plane, down)
        if leaves > radix:
            break  # fewer down ports only add leaves
        for up in range(math.ceil(down / oversubscription - 1e-9), radix - down + 1):
            try:
                spines = switches_above(leaves * up, radix, up)
            except ValueError:
                continue
            key = (leaves + spines, -down, -up, leaves)
            if best is None or key < best:
                best = key
    if best is None:
        return None
    _, minus_down, minus_up, leaves = best
    down, up = -minus_down, -minus_up
    return [Tier("leaf", leaves, down, up, leaves * up),
            Tier("spine", switches_above(leaves * up, radix, up), radix, 0, 0)]


def size_fabric(*, num_gpus: int, gpus_per_node: int, nics_per_node: int,
                nic_bytes_per_s: float, radix: int, port_bytes_per_s: float,
                topology: str, leaf_oversubscription: float = 1.0,
                spine_oversubscription: float = 1.0, host_links_optical: bool = True,
                watts_per_transceiver: float | None = None,
                watts_per_switch: float | None = None) -> FabricPlan:
    """Size the fabric for a cluster. Bounds: 1 <= GPUs <= 10^6, 1-16 GPUs and NICs
    per node, NIC and port speeds > 0 (B/s per direction), radix even in [4, 512].

    Nodes = ceil(GPUs / GPUs per node), each with all its NICs; a NIC faster than a
    port takes ceil(nic/port) ports (one plane each under ``multi_plane``).
    Transceivers (assumption): optics at both ends of every switch-to-switch link, and
    of every host link when ``host_links_optical`` (copper DACs otherwise, no optics);
    a twin-port module holds two of these ends. Power is transceivers x W + switches
    x W for whichever figure is given, ``None`` with neither.
    """
    if topology not in TOPOLOGIES:
        raise ValueError(f"topology must be one of {TOPOLOGIES}, got {topology!r}")
    if not 1 <= num_gpus <= 1_000_000:
        raise ValueError(f"num_gpus must be in [1, 1e6], got {num_gpus}")
    if not 1 <= gpus_per_node <= 16 or not 1 <= nics_per_node <= 16:
        raise ValueError("gpus_per_node and nics_per_node must be in [1, 16]")
    if nic_bytes_per_s <= 0 or port_bytes_per_s <= 0:
        raise ValueError("NIC and port speeds must be > 0 B/s")
    for name, watts in (("watts_per_transceiver", watts_per_transceiver),
                        ("watts_per_switch", watts_per_switch)):
        if watts is not None and watts < 0:
            raise ValueError(f"{name} must be >= 0, got {watts}")
    _check_radix(radix)
    nodes = math.ceil(num_gpus / gpus_per_node)
    ports_per_nic = math.ceil(nic_bytes_per_s / port_bytes_per_s - 1e-9)
    rails = nics_per_node * ports_per_nic
    endpoint_bytes_per_s = min(nic_bytes_per_s / ports_per_nic, port_bytes_per_s)
    planes = rails if topology == "multi_plane" else 1
    rails_per_plane = rails // planes
    plane_endpoints = nodes * rails_per_plane
    tiers = tiers_needed(plane_endpoints, radix, leaf_oversubscription,
                         spine_oversubscription)
    if topology == "leaf_spine" and tiers > 2:
        raise ValueError(f"{plane_endpoints} endpoints need three tiers at radix {radix}: "
                         "choose fat_tree or rail_optimized")
    if topology == "rail_optimized":
        tiers = max(tiers, 2)  # the rails must meet somewhere
    d1, _ = split_ports(radix, leaf_oversubscription)
    leaves = _leaves(topology, nodes, rails_per_plane, d1) if tiers > 1 else 1
    if tiers == 2 and leaves > radix:
        tiers = 3  # rail-by-rail filling can overflow the spine's ports
    plane = two_tier(topology, nodes, rails_per_plane, radix, leaf_oversubscription) \
        if tiers == 2 else None
    if plane is None:
        tiers = max(tiers, 3) if tiers == 2 else tiers
        plane = _clos(plane_endpoints, leaves, radix, tiers=tiers, r1=leaf_oversubscription,
                      r2=spine_oversubscription)
    layers = tuple(Tier(t.name, t.switches * planes, t.down_ports, t.up_ports,
                        t.links_up * planes) for t in plane)
    endpoints = plane_endpoints * planes
    optics_per_link = 2
    transceivers = optics_per_link * sum(t.links_up for t in layers)
    if host_links_optical:
        transceivers += optics_per_link * endpoints
    power: float | None = None
    if watts_per_transceiver is not None or watts_per_switch is not None:
        power = (transceivers * (watts_per_transceiver or 0.0)
                 + sum(t.switches for t in layers) * (watts_per_switch or 0.0))
    return FabricPlan(topology=topology, planes=planes, endpoints=endpoints, tiers=layers,
                      host_links=endpoints, transceivers=transceivers,
                      bisection_bytes_per_s=bisection_bytes_per_s(
                          layers, endpoints, endpoint_bytes_per_s, port_bytes_per_s),
                      power_watts=power)


def bisection_bytes_per_s(tiers: tuple[Tier, ...], endpoints: int,
                          endpoint_bytes_per_s: float, port_bytes_per_s: float) -> float:
    """One-direction capacity across the worst cut into two equal halves.

    Derivation: half the hosts can offer E/2 x B; what leaves their half climbs through
    half of each tier's uplinks, so the cut is min(E/2 x B, min over tiers of
    links_up/2 x port). Cutting between pods (or leaves) is the worst cut of a Clos.
    """
    host_side = endpoints / 2 * endpoint_bytes_per_s
    uplink_sides = [t.links_up / 2 * port_bytes_per_s for t in tiers if t.links_up]
    return min([host_side, *uplink_sides])
