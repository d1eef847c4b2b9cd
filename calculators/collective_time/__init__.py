"""collective_time: how long one collective takes, its algbw and busbw, and which term rules.

The costs come from ``comm`` and ``nodes`` (alpha-beta, Thakur et al. 2005; NCCL
2.20.3's tree and NVLS; busbw as nccl-tests defines it); this module declares the
calculator and composes its result. ``algorithms`` resolves the algorithm ("auto" is
what NCCL's tuning model picks; an algorithm the collective does not have falls back to
auto, with a note) and costs it; ``chart`` draws time and busbw against message size.
"""

from __future__ import annotations

from typing import cast

from calculators.collective_time.algorithms import ALGORITHMS, collective_cost, resolve
from calculators.collective_time.chart import time_and_busbw_chart
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Choice, Output, Param, ValidationError, When
from calculators.formulas.collectives import costs as comm
from calculators.formulas.collectives import nodes

ALGORITHM_LABELS = {
    "auto": "auto: what NCCL's tuning model would pick",
    "ring": "ring (pipelined chain for broadcast)",
    "tree": "tree (NCCL's double binary tree; halving-doubling, Bruck, binomial)",
    "direct": "direct / pairwise exchange (alltoall)",
    "hierarchical": "hierarchical: NVLink inside the node, NIC across nodes",
    "in_network": "in-network reduction: NVLink SHARP / SHARP (allreduce)",
}


#: For the page: the algorithms only some collectives have, and why (the calculator
#: itself shows auto's choice for any other combination, with a note).
_APPLIES: dict[str, tuple[When, str]] = {
    a: (When("collective", tuple(c for c, algos in ALGORITHMS.items() if a in algos)), why)
    for a, why in (
        ("ring", "an alltoall has no ring: every GPU sends to every other directly"),
        ("direct", "pairwise exchange is the alltoall's; the others run as rings"),
        ("in_network", "switches reduce only an allreduce"),
    )
}


def _check(inputs: Inputs, algorithm: str) -> None:
    ranks, per_node = inputs.whole("ranks"), inputs.whole("ranks_per_node")
    if algorithm == "hierarchical" and ranks % per_node:
        raise ValidationError(
            "ranks",
            _("{ranks} is not allowed with the hierarchical algorithm: it must be a "
              "multiple of ranks_per_node ({per_node})").format(ranks=ranks, per_node=per_node),
        )


def _collective_time(inputs: Inputs) -> Computed:
    collective = inputs.text("collective")
    message_bytes, ranks = inputs.num("message_bytes"), inputs.whole("ranks")
    algorithm, why = resolve(inputs, collective, message_bytes)
    _check(inputs, algorithm)
    coll = cast("comm.Collective", collective)
    cost = collective_cost(inputs, collective, algorithm, message_bytes)
    crossover = comm.crossover_bytes(cost, message_bytes)
    notes: list[str] = [why] if why else []
    warnings: list[str] = []
    regime = _("latency") if cost.latency_s > cost.bandwidth_s else _("bandwidth")
    share = cost.latency_s / cost.time_s if cost.time_s > 0 else 0.0
    notes.append(_(
        "The latency term is {share:.0%} of the time; the two terms are equal at "
        "S = {crossover:.3g} B. Below that size the collective is latency-bound and "
        "algorithms with fewer steps (tree, hierarchical) win; above it, bytes decide."
    ).format(share=share, crossover=crossover))
    if algorithm == "in_network":
        g = min(inputs.whole("ranks_per_node"), ranks)
        used_bw = comm.algbw(message_bytes, cost.time_s) * nodes.in_network_factor(g)
        notes.append(_(
            "nccl-tests reports busbw with 2(n-1)/n whatever the algorithm, NCCL_ALGO=NVLS "
            "included (src/all_reduce.cu, AllReduceGetBw; the (n-1)/(n+1) proposed in "
            "nccl-tests PR #239 was never merged), so with in-network reduction busbw "
            "exceeds any link's rate (NVIDIA measured ~480 GB/s with NVLink SHARP on 8 "
            "H100, nccl-tests issue #212). The NVLink bandwidth each GPU actually uses is "
            "algbw x (g+1)/g = {bandwidth:.4g} GB/s."
        ).format(bandwidth=used_bw / 1e9))
    elif collective == "allreduce":
        notes.append(_(
            "NVSwitch systems from H100 on can add the data up in the switch (NVLink "
            "SHARP, NCCL's NVLS, on by default; across nodes also with SHARP-capable "
            "InfiniBand switches): choose in_network to see it. NVIDIA measured ~480 GB/s "
            "busbw with it on 8 H100 against ~370 GB/s for the ring (nccl-tests #212)."
        ))
    if algorithm == "hierarchical" and inputs.whole("ranks_per_node") >= ranks:
        warnings.append(_("All ranks are in one node: the hierarchical algorithm is a ring "
                          "over the intra-node bandwidth."))
    rows = []
    for algo in ALGORITHMS[collective]:
        if algo == "hierarchical" and ranks % inputs.whole("ranks_per_node"):
            continue
        other = collective_cost(inputs, collective, algo, message_bytes)
        rows.append((
            algo,
            f"{other.time_s * 1e6:.4g} µs",
            f"{comm.busbw(coll, message_bytes, other.time_s, ranks) / 1e9:.4g} GB/s",
            _("latency") if other.latency_s > other.bandwidth_s else _("bandwidth"),
        ))
    return Computed(
        values={
            "time_s": cost.time_s,
            "algbw": comm.algbw(message_bytes, cost.time_s),
            "busbw": comm.busbw(coll, message_bytes, cost.time_s, ranks),
            "bytes_sent_per_rank": cost.bytes_sent_per_rank,
            "bytes_received_per_rank": cost.bytes_received_per_rank,
            "regime": regime,
            "latency_time_s": cost.latency_s,
            "bandwidth_time_s": cost.bandwidth_s,
            "crossover_bytes": crossover,
            "bus_factor": comm.bus_factor(coll, ranks),
            "algorithm_used": algorithm,
        },
        warnings=warnings,
        notes=notes,
        table=Table((_("algorithm"), _("time"), _("busbw"), _("bound by")), tuple(rows),
                    caption=_("Every algorithm for this {collective}, same inputs").format(
                        collective=collective)),
        chart=time_and_busbw_chart(inputs, message_bytes, crossover, algorithm),
    )


COLLECTIVE_TIME = Calculator(
    id="collective_time",
    headline=("time_s", "busbw", "regime", "algorithm_used"),
    advanced=("efficiency", "intra_node_bandwidth", "inter_node_bandwidth", "inter_node_latency",
              "tree_latency", "tree_inter_node_latency"),
    title="Collective time, algorithm and bus bandwidth",
    summary="Alpha-beta time of allreduce, reduce-scatter, allgather, alltoall or "
            "broadcast; algbw and busbw as nccl-tests reports them.",
    chapter="communication.md",
    params=(
        Param("collective", "Collective", "choice", "allreduce",
              choices=tuple(Choice(c, c.replace("_", "-")) for c in comm.COLLECTIVES),
              help="What every rank contributes and receives; see the traffic matrices "
                   "in the chapter."),
        Param("algorithm", "Algorithm", "choice", "auto",
              choices=tuple(Choice(a, ALGORITHM_LABELS[a], *_APPLIES.get(a, (None, "")))
                            for a in ALGORITHM_LABELS),
              help="auto: NCCL 2.20.3's choice (ring or tree for allreduce; ring for "
                   "reduce-scatter, allgather, broadcast; direct for alltoall). tree: "
                   "NCCL's double binary tree for allreduce (92% of link rate, 2S per "
                   "rank); recursive halving/doubling, Bruck and binomial otherwise "
                   "(Thakur et al. 2005). hierarchical: reduce-scatter inside the node, "
                   "ring across nodes, allgather inside. in_network: NVLink SHARP / "
                   "SHARP, allreduce only. One a collective lacks shows auto's choice."),
        Param("message_bytes", "Message size S", "float", float(2**30), unit="B",
              minimum=1, maximum=1e15,
              help="The buffer size as nccl-tests reports it: the whole vector for "
                   "allreduce, the whole gathered output for allgather and "
                   "reduce-scatter's input, each rank's whole send buffer for alltoall."),
        Param("ranks", "Ranks (GPUs)", "int", 8, unit="GPU", minimum=2, maximum=1_000_000,
              help="Ranks taking part in the collective."),
        Param("bandwidth", "Bandwidth per rank, per direction (flat algorithms)", "float",
              None, unit="B/s", minimum=1e6, maximum=1e14, optional=True,
              placeholder="from the node layout",
              help="Line rate each rank can send (and receive) at once. Blank: the "
                   "intra-node bandwidth inside one node; across nodes, for a ring or "
                   "NCCL's allreduce tree the node's NICs together (GPUs per node x NIC "
                   "rate), capped by NVLink, as NCCL runs one channel per NIC; for the "
                   "other flat algorithms each GPU's own NIC for all its bytes (the "
                   "hierarchical option sends the node-local share over NVLink). "
                   "H100 NVLink 4: 900 GB/s bidirectional = 450 GB/s each way "
                   "(datasheet); A100: 300 GB/s; NDR: 400 Gb/s = 50 GB/s."),
        Param("efficiency", "Achieved fraction of line rate", "float", 0.8, unit="1",
              minimum=0.01, maximum=1,
              help="An assumption: 0.8. NCCL reaches about 370 of H100's 450 GB/s NVLink "
                   "(82%, nccl-tests issue #212) and about 230 of A100's 300 GB/s (77%, "
                   "nccl-tests issue #149); about 24 of 25 GB/s on an HDR NIC."),
        Param("latency", "Latency per step (alpha)", "float", 1.9e-6, unit="s",
              minimum=0, maximum=1,
              help="1.9 µs: NCCL 2.20.3's NVLink ring step with the LL128 protocol, which "
                   "it uses on Hopper for mid-sized messages (src/graph/tuning.cc, hwLat: "
                   "LL 0.6, LL128 1.9, Simple 3.4 µs). One alpha for every protocol is "
                   "this model's simplification."),
        Param("ranks_per_node", "GPUs per node", "int", 8, unit="GPU",
              minimum=1, maximum=1024,
              help="8 in a DGX/HGX H100 node. Ranks are packed node by node; this sets "
                   "which steps cross the network, and the hierarchical split."),
        Param("intra_node_bandwidth", "Intra-node bandwidth per GPU, per direction",
              "float", 450e9, unit="B/s", minimum=1e6, maximum=1e14,
              help="NVLink per GPU, per direction: 450 GB/s on H100, 300 GB/s on A100."),
        Param("inter_node_bandwidth", "Inter-node bandwidth per GPU, per direction",
              "float", 50e9, unit="B/s", minimum=1e6, maximum=1e14,
              help="Each GPU's own NIC: 400 Gb/s NDR InfiniBand or 400G RoCE = 50 GB/s. "
                   "Applies only when the ranks span more than one node."),
        Param("inter_node_latency", "Latency per step across nodes", "float", 4e-6,
              unit="s", minimum=0, maximum=1,
              help="4 µs: NCCL 2.20.3's network ring step with LL128 (tuning.cc, hwLat: "
                   "LL 2.7, LL128 4.0, Simple 14 µs). Charged to every step that crosses "
                   "a node boundary, flat or hierarchical (in_network uses NVLS's own "
                   "23 and 18 µs steps, NCCL's allreduce tree the two inputs below). "
                   "Applies only when the ranks span more than one node."),
        Param("tree_latency", "Allreduce tree: latency per step inside a node", "float",
              nodes.TREE_NVLINK_LATENCY_S, unit="s", minimum=0, maximum=1,
              when=When("collective", ("allreduce",)),
              help="1.25 µs: NCCL 2.20.3's NVLink step of its allreduce tree with LL128 "
                   "(tuning.cc, hwLat tree: LL 0.6, LL128 1.25, Simple 28 µs), for the "
                   "2(g-1) steps of each node's chain. The ring's alpha applies to the "
                   "other collectives' trees, which are not NCCL's."),
        Param("tree_inter_node_latency", "Allreduce tree: latency per step across nodes",
              "float", nodes.TREE_NETWORK_LATENCY_S, unit="s", minimum=0, maximum=1,
              when=When("collective", ("allreduce",)),
              help="8.5 µs: NCCL 2.20.3's network step of its allreduce tree with LL128 "
                   "(tuning.cc, hwLat tree: LL 5.0, LL128 8.5, Simple 28 µs), for the "
                   "2 log2(nodes) steps through the double binary tree; twice the ring's "
                   "4 µs. Applies only when the ranks span more than one node."),
    ),
    outputs=(
        Output("time_s", "Time", "s"),
        Output("algbw", "Algorithm bandwidth S/t", "B/s"),
        Output("busbw", "Bus bandwidth", "B/s"),
        Output("bytes_sent_per_rank", "Bytes sent per rank", "B"),
        Output("bytes_received_per_rank", "Bytes received per rank", "B"),
        Output("regime", "Dominant term", "", "text"),
        Output("latency_time_s", "Latency term", "s"),
        Output("bandwidth_time_s", "Bandwidth term", "s"),
        Output("crossover_bytes", "Size where the terms are equal", "B"),
        Output("bus_factor", "busbw / algbw factor", "1", "fixed"),
        Output("algorithm_used", "Algorithm used", "", "text"),
    ),
    function=_collective_time,
    sources=(
        "Thakur, Rabenseifner and Gropp 2005, Optimization of Collective Communication "
        "Operations in MPICH, Sec. 2-4",
        "NVIDIA nccl-tests, doc/PERFORMANCE.md (algbw, busbw and their factors)",
        "NVIDIA nccl-tests issues #149 (A100, ~230 GB/s busbw) and #212 (H100, ~370 GB/s "
        "ring, ~480 GB/s NVLS)",
        "NVIDIA/nccl v2.20.3 src/graph/tuning.cc (per-step latencies, the tree's 0.92 "
        "and 1/2, NVLS steps, the algorithms tuned per collective)",
        "NVIDIA nccl-tests src/all_reduce.cu, AllReduceGetBw (busbw = algbw x 2(n-1)/n "
        "for every NCCL_ALGO, up to v2.19.6); PR #239 (open, not merged: NVLS algbw = "
        "link bandwidth x n/(n+1), S. Jeaugey)",
    ),
)
