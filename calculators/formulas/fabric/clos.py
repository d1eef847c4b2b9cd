"""Clos tier arithmetic: how many hosts and switches a folded Clos of identical switches
holds at one, two or three tiers, how a switch splits its ports, and the tiers of one
plane for a given number of leaves.

Switches have ``radix`` ports, counted at the port speed (a 32-cage NVIDIA QM9700 is 64
NDR ports, "each OSFP port consists of 2 logical InfiniBand ports", QM97XX user manual,
Interfaces).

Provisioning rules (derivation, stated once): a leaf splits its ports into ``down`` and
``up`` by the oversubscription ratio and is built whole, uplinks included, even when
its down ports are not all used (NVIDIA: "the fabric should be designed to support the
full SU, including leaf switches and leaf-spine cables", DGX SuperPOD H100 RA, Network
Fabrics). Each leaf reaches every switch of the tier above through the same number of
links, so the count of switches above must divide a leaf's uplinks; we take the
smallest such count with enough ports. A three-tier pod is ``spine down ports`` leaves
and ``leaf up ports`` spines, and core switches come in one group per spine position.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators.core.i18n import N_, _

#: The tiers' names (a fabric table shows them: translated where shown).
TIER_NAMES = (N_("leaf"), N_("spine"), N_("core"))
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


def check_radix(radix: int) -> None:
    """Refuse a radix that is odd or outside [MIN_RADIX, MAX_RADIX]."""
    if not MIN_RADIX <= radix <= MAX_RADIX or radix % 2:
        raise ValueError(f"switch radix must be even and in [{MIN_RADIX}, {MAX_RADIX}], "
                         f"got {radix}")


def max_hosts_fat_tree(radix: int) -> int:
    """k^3/4 hosts on a three-tier k-ary fat tree (Al-Fares et al. 2008, Sec. 3)."""
    check_radix(radix)
    return radix**3 // 4


def switches_fat_tree(radix: int) -> int:
    """5k^2/4 switches: k pods of k/2 edge + k/2 aggregation, and (k/2)^2 core
    (Al-Fares et al. 2008, Sec. 3)."""
    check_radix(radix)
    return 5 * radix**2 // 4


def max_hosts_leaf_spine(radix: int) -> int:
    """k^2/2 hosts on a non-blocking two-tier leaf-spine: k leaves of k/2 hosts, each
    leaf one link to each of k/2 spines (the two-tier case of the same Clos)."""
    check_radix(radix)
    return radix**2 // 2


def switches_leaf_spine(radix: int) -> int:
    """3k/2 switches at that size: k leaves and k/2 spines."""
    check_radix(radix)
    return 3 * radix // 2


def split_ports(radix: int, oversubscription: float) -> tuple[int, int]:
    """(down, up) ports of a switch for a down:up ratio r: down = floor(k r/(1+r)).

    r = 1 halves the radix (non-blocking); r = 3 gives 48:16 on 64 ports. Bounds:
    1 <= r <= radix - 1 (at least one uplink); below 1 would buy uplinks nobody uses.
    """
    check_radix(radix)
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
    raise ValueError(_("{endpoints} endpoints exceed a three-tier fabric of radix {radix} "
                       "({most}); use a larger radix, more planes, or oversubscription").format(
        endpoints=endpoints, radix=radix,
        most=max_endpoints(radix, 3, leaf_oversubscription, spine_oversubscription)))


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
    raise ValueError(_("{links} links do not fit switches of radix {radix}").format(
        links=links, radix=radix))


def clos_tiers(endpoints: int, leaves: int, radix: int, *, tiers: int, r1: float,
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
