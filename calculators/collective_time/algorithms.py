"""How ``collective_time`` picks and costs an algorithm: which algorithms each collective
has, the bandwidth a flat algorithm gets from the node layout, NCCL's choice ("auto"),
and the cost of one collective from the calculator's inputs.

The costs come from ``formulas.collectives`` (alpha-beta, Thakur et al. 2005; NCCL
2.20.3's tree and NVLS; busbw as nccl-tests defines it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from calculators.core.i18n import _
from calculators.formulas.collectives import costs as comm
from calculators.formulas.collectives import nodes

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

#: Which algorithms each collective has here, in the table's order. alltoall has no
#: ring ("direct", pairwise exchange, is alltoall's alone); in-network reduction is an
#: allreduce; "tree" is NCCL's double binary tree for allreduce and Thakur et al.'s
#: log-latency algorithms for the others. "auto" is not listed: it resolves to one.
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "allreduce": ("ring", "tree", "hierarchical", "in_network"),
    "reduce_scatter": ("ring", "tree", "hierarchical"),
    "allgather": ("ring", "tree", "hierarchical"),
    "alltoall": ("direct", "tree", "hierarchical"),
    "broadcast": ("ring", "tree", "hierarchical"),
}


def flat_bandwidth(inputs: Inputs, collective: str, algorithm: str) -> float:
    """Per-rank bandwidth of a flat algorithm, before efficiency.

    Given: ``bandwidth``. Blank: inside one node the NVLink bandwidth. Across nodes, a
    ring or NCCL's allreduce tree runs one channel per NIC, so a rank's bytes leave at
    the node's aggregate NIC bandwidth, capped by NVLink (nccl-tests issue #119 expects
    4 x HDR (4 x 25 GB/s) for 8 A100s per node and measures 85-96 GB/s); the other flat
    algorithms exchange with distant ranks directly: each GPU's own NIC, for all its
    bytes (``nodes.pools_nics``).
    """
    given = inputs.opt("bandwidth")
    if given is not None:
        return given
    intra = inputs.num("intra_node_bandwidth")
    per_node = inputs.whole("ranks_per_node")
    if inputs.whole("ranks") <= per_node:
        return intra
    coll, algo = cast("comm.Collective", collective), cast("comm.Algorithm", algorithm)
    if not nodes.pools_nics(coll, algo):
        return inputs.num("inter_node_bandwidth")
    return min(intra, per_node * inputs.num("inter_node_bandwidth"))


def resolve(inputs: Inputs, collective: str, message_bytes: float) -> tuple[str, str]:
    """The algorithm to cost and why: the chosen one if the collective has it; else
    (and for "auto") the fastest of the algorithms NCCL 2.20.3's tuning model chooses
    among for that collective (``comm.NCCL_ALGORITHMS``), as NCCL picks the lowest
    predicted latency + size / bandwidth (tuning.cc, ``ncclTopoGetAlgoTime``)."""
    chosen = inputs.text("algorithm")
    if chosen in ALGORITHMS[collective]:
        return chosen, ""
    candidates = comm.NCCL_ALGORITHMS[collective]
    best = fastest(inputs, collective, message_bytes)[0]
    if chosen == "auto":
        why = (_("auto: {best}, NCCL sends an alltoall to every peer at once, untuned.")
               if collective == "alltoall" else
               _("auto: {best}, the only point-to-point algorithm NCCL 2.20.3 tunes for it.")
               if len(candidates) == 1 else
               _("auto: {best}, the faster of {others} and {last} at this size, as NCCL "
                 "2.20.3's tuning model chooses (here with this calculator's latencies "
                 "and bandwidths)."))
        return best, why.format(best=best, others=", ".join(candidates[:-1]),
                                last=candidates[-1])
    return best, _("{chosen} does not apply to {collective} (it has {algorithms}): showing "
                   "auto's choice, {best}.").format(
        chosen=repr(chosen), collective=collective,
        algorithms=", ".join(ALGORITHMS[collective]), best=best)


def fastest(inputs: Inputs, collective: str, message_bytes: float) -> tuple[str, comm.Cost]:
    """The algorithm NCCL's tuning model picks for ``collective`` at this size (the
    lowest predicted time; the earlier in ``comm.NCCL_ALGORITHMS`` on a tie), with its
    cost: the chart needs both at every size, so the cost is not computed twice."""
    best: tuple[str, comm.Cost] | None = None
    for algorithm in comm.NCCL_ALGORITHMS[collective]:
        cost = collective_cost(inputs, collective, algorithm, message_bytes)
        if best is None or cost.time_s < best[1].time_s:
            best = (algorithm, cost)
    assert best is not None  # every collective has at least one algorithm
    return best


def collective_cost(inputs: Inputs, collective: str, algorithm: str,
                    message_bytes: float) -> comm.Cost:
    """The cost of one collective from the calculator's inputs (efficiency applied)."""
    efficiency = inputs.num("efficiency")
    ranks = inputs.whole("ranks")
    coll = cast("comm.Collective", collective)
    per_node, latency = inputs.whole("ranks_per_node"), inputs.num("latency")
    intra = inputs.num("intra_node_bandwidth") * efficiency
    inter = inputs.num("inter_node_bandwidth") * efficiency
    across = inputs.num("inter_node_latency")
    if algorithm == "tree" and collective == "allreduce":
        # NCCL's double binary tree has its own per-step latencies (tuning.cc 2.20.3,
        # hwLat), not the ring's; the other collectives' trees are not NCCL's.
        latency, across = inputs.num("tree_latency"), inputs.num("tree_inter_node_latency")
    if algorithm == "hierarchical":
        return comm.hierarchical_cost(coll, message_bytes, ranks, per_node, intra, inter,
                                      latency, inter_node_latency=across)
    if algorithm == "in_network":  # NVLS's own step latencies (NCCL 2.20.3), not alpha
        return nodes.in_network_cost(message_bytes, ranks, per_node, intra, inter)
    return nodes.flat_cost_across_nodes(
        coll, cast("comm.Algorithm", algorithm), message_bytes, ranks,
        flat_bandwidth(inputs, collective, algorithm) * efficiency, latency,
        ranks_per_node=per_node, inter_node_latency=across)
