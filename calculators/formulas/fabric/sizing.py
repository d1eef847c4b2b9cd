"""Sizing a scale-out fabric: tiers, switches, links, optics, bisection bandwidth.

Every topology here is a folded Clos built from identical switches of ``radix`` ports
(their tier arithmetic, and the provisioning rules it follows, are in ``clos``):

- ``leaf_spine``: two tiers at most; a node's NICs land on any leaf.
- ``fat_tree``: up to three tiers (leaf, spine, core), the k-ary fat tree of Al-Fares,
  Loukissas, Vahdat (SIGCOMM 2008, Sec. 3) when every tier is 1:1.
- ``rail_optimized``: NIC i of every node goes to the leaves of rail i, and one shared
  spine (and core) joins the rails (NVIDIA DGX SuperPOD reference architectures).
- ``multi_plane``: NIC port i of every node sits on plane i, an independent fabric with
  its own leaves and spines; nothing joins the planes (DeepSeek's multi-plane two-layer
  fat tree, Zhao et al., ISCA 2025, Sec. 5, large-scale network driven design).

``planes`` divides a node's NIC ports among that many independent copies of the chosen
topology (default: one per port for ``multi_plane``, one otherwise). Alibaba's HPN is
``rail_optimized`` on two planes: each 400G NIC is two 200G ports, port 1 on plane 1 and
port 2 on plane 2, each plane rail-optimised over 8 rails (Qian et al., SIGCOMM 2024,
Sec. 6). A plane then carries half of each NIC at half the port speed, so a switch of
the same capacity offers twice the ports to it, and two tiers reach further.

This module counts the leaves each topology needs, picks the cheapest two-tier split,
and sizes the whole fabric: its tiers over all planes, links, optics, power and
bisection bandwidth. With the rules of ``clos`` the DGX SuperPOD tables are reproduced
exactly (tests).

Left out: more than three tiers, switches of mixed radix, spare or management ports
(e.g. the UFM links in the SuperPOD tables), and anything about routing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators.core.i18n import _
from calculators.formulas.fabric.clos import (
    Tier,
    check_radix,
    clos_tiers,
    split_ports,
    switches_above,
    tiers_needed,
)

TOPOLOGIES = ("leaf_spine", "fat_tree", "rail_optimized", "multi_plane")


class InputError(ValueError):
    """A fabric the inputs cannot build, with the input to change (``input_name``): its
    message is in the reader's language, so a caller should not read it for the input."""

    def __init__(self, input_name: str, message: str) -> None:
        super().__init__(message)
        self.input_name = input_name


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
        if best is not None and leaves + 1 >= best[0]:
            break  # fewer down ports: at least as many leaves and a worse tie-break
        for up in range(math.ceil(down / oversubscription - 1e-9), radix - down + 1):
            # Spines are at least leaves x up / radix, which grows with up: once even
            # that many (with the most uplinks) cannot beat the best, no larger up can.
            if best is not None and (leaves + max(1, math.ceil(leaves * up / radix)), -down,
                                     down - radix) > best[:3]:
                break
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
                watts_per_switch: float | None = None,
                planes: int | None = None) -> FabricPlan:
    """Size the fabric for a cluster. Bounds: 1 <= GPUs <= 10^6, 1-16 GPUs and NICs
    per node, NIC and port speeds > 0 (B/s per direction), radix even in [4, 512],
    ``planes`` a divisor of the node's NIC ports.

    Nodes = ceil(GPUs / GPUs per node), each with all its NICs; a NIC faster than a
    port takes ceil(nic/port) ports, spread evenly over the planes (one plane each
    under ``multi_plane`` unless ``planes`` says otherwise).
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
    check_radix(radix)
    nodes = math.ceil(num_gpus / gpus_per_node)
    ports_per_nic = math.ceil(nic_bytes_per_s / port_bytes_per_s - 1e-9)
    rails = nics_per_node * ports_per_nic
    endpoint_bytes_per_s = min(nic_bytes_per_s / ports_per_nic, port_bytes_per_s)
    planes = plane_count(topology, rails, planes)
    rails_per_plane = rails // planes
    plane_endpoints = nodes * rails_per_plane
    tiers = tiers_needed(plane_endpoints, radix, leaf_oversubscription,
                         spine_oversubscription)
    if topology == "leaf_spine" and tiers > 2:
        raise InputError("topology", _("{endpoints} endpoints need three tiers at radix "
                                       "{radix}: choose fat_tree or rail_optimized").format(
            endpoints=plane_endpoints, radix=radix))
    if topology == "rail_optimized":
        tiers = max(tiers, 2)  # the rails must meet somewhere
    d1 = split_ports(radix, leaf_oversubscription)[0]
    leaves = _leaves(topology, nodes, rails_per_plane, d1) if tiers > 1 else 1
    if tiers == 2 and leaves > radix:
        tiers = 3  # rail-by-rail filling can overflow the spine's ports
    plane = two_tier(topology, nodes, rails_per_plane, radix, leaf_oversubscription) \
        if tiers == 2 else None
    if plane is None:
        tiers = max(tiers, 3) if tiers == 2 else tiers
        plane = clos_tiers(plane_endpoints, leaves, radix, tiers=tiers, r1=leaf_oversubscription,
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


def plane_count(topology: str, rails: int, planes: int | None) -> int:
    """The planes a node's ``rails`` NIC ports are divided among: ``planes`` if given
    (it must divide them), else one per port for ``multi_plane`` and one otherwise."""
    if planes is None:
        return rails if topology == "multi_plane" else 1
    if not 1 <= planes <= rails or rails % planes:
        raise InputError("planes", _("planes must divide the {rails} NIC port(s) of a node, "
                                     "got {planes}").format(rails=rails, planes=planes))
    return planes


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
