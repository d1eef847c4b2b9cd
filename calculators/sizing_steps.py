"""The steps of ``cluster_sizing``, each a call into the calculator that owns its formula.

Nothing here re-derives a formula: the layout comes from the planner's ``search``
(parallel.py) with parallel_plan's own mapping of inputs to a cluster; embedding memory
and the PS-or-collective choice come from the ``embedding_memory`` and
``sparse_training`` calculators themselves, called with the reader's inputs. What is
new is the glue: which GPU count to ask about, and how to split a layout's traffic into
the part that stays in a node and the part that crosses the network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators import comm, plan_calc
from calculators.embeddings import EMBEDDING_MEMORY
from calculators.memory import state_bytes
from calculators.model import architecture
from calculators.parallel import divisors, search
from calculators.plan_calc import PARALLEL_PLAN
from calculators.sparse import SPARSE_TRAINING
from calculators.spec import ValidationError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from calculators.model import Architecture
    from calculators.parallel import Cluster, Layout
    from calculators.spec import Calculator, Inputs, Result

#: The scan for a GPU count the planner accepts stops after this many costed layouts
#: (about 25 µs each natively), so that the page never waits long on an odd count.
MAX_EVALUATED_LAYOUTS = 3000
#: ... or after this many GPU counts.
MAX_NODE_COUNTS = 200
#: parallel_plan accepts up to this many GPUs.
MAX_GPUS = 1_000_000


def run_component(calc: Calculator, raw: Mapping[str, object],
                  blame: Mapping[str, str]) -> Result:
    """Compute another calculator. An input it rejects is reported on the reader's input
    that led to it (``blame`` maps its names to ours; unlisted names keep their own),
    so that the error names a field on this form."""
    try:
        return calc.compute(raw)
    except ValidationError as err:
        ours = blame.get(err.input_name, err.input_name)
        raise ValidationError(ours, f"leads to {calc.id} rejecting {err}") from None


def planner_cluster(plan_inputs: Inputs) -> Cluster:
    """parallel_plan's own mapping from its validated inputs to a ``Cluster``: the one
    place that applies link efficiency and the default NIC per GPU."""
    return plan_calc._cluster(plan_inputs)  # the one implementation


@dataclass(frozen=True)
class Plan:
    """The planner's answer at one GPU count."""

    num_gpus: int
    arch: Architecture
    cluster: Cluster
    layouts: list[Layout]

    @property
    def best(self) -> Layout | None:
        """parallel_plan's winner: the fastest layout that fits."""
        return next((lay for lay in self.layouts if lay.fits), None)


def plan_at(plan_raw: Mapping[str, object], num_gpus: int, blame: str, *,
            search_layouts: bool = True, micro_batch: int | None = None) -> Plan:
    """Every layout of ``num_gpus`` GPUs, as parallel_plan ranks them (same search, same
    cluster, same state bytes and activation width); ``micro_batch`` narrows the search
    as parallel_plan's own input of that name does."""
    raw = {**plan_raw, "num_gpus": num_gpus}
    try:
        inputs = PARALLEL_PLAN.validate(raw)
    except ValidationError as err:
        if err.input_name in raw and err.input_name != "num_gpus":
            raise ValidationError(blame, f"leads to parallel_plan rejecting {err}") from None
        raise
    arch = architecture(inputs)
    precision = inputs.text("precision")
    cluster = planner_cluster(inputs)
    if not search_layouts:
        return Plan(num_gpus, arch, cluster, [])
    layouts = search(arch, cluster, state_bytes(precision, inputs.text("optimizer")),
                     inputs.whole("global_batch"), micro_batch=micro_batch,
                     act_bytes=4.0 if precision == "fp32" else 2.0)
    return Plan(num_gpus, arch, cluster, layouts)


@dataclass(frozen=True)
class Scan:
    """The GPU count chosen, how many counts were tried, and the plan there (if any)."""

    start_gpus: int
    num_gpus: int
    tried: int
    evaluated: int
    plan: Plan | None
    #: The winner at ``num_gpus`` passed the ``fast_enough`` test.
    fast_enough: bool


def candidate_counts(arch: Architecture, global_batch: int, gpus_per_node: int,
                     start: int) -> list[int]:
    """GPU counts from ``start`` up, in whole nodes, that admit at least one layout
    under the planner's rules (parallel.search: tp divides the heads and KV heads, pp
    is at most the layers, dp divides the global batch), smallest first."""
    tps, dps = divisors(math.gcd(arch.heads, arch.kv_heads)), divisors(global_batch)
    counts = {t * p * d for t in tps for p in range(1, arch.layers + 1) for d in dps}
    return sorted(n for n in counts if n >= start and n % gpus_per_node == 0)


def scan_for_layout(plan_raw: Mapping[str, object], start_gpus: int, gpus_per_node: int,
                    blame: str, fast_enough: Callable[[Layout], bool]) -> Scan:
    """The smallest count of whole nodes with at least ``start_gpus`` GPUs whose
    planner winner (the fastest layout that fits) is ``fast_enough``; failing that,
    within the search budget, the smallest whose winner fits at all.

    Only counts that admit a layout are costed. Candidates are screened with
    micro-batch 1, the layouts with the least activation memory and the smallest
    pipeline bubble, so a quarter of the full search; the count chosen then gets
    parallel_plan's full search, whose winner is at least as fast. Counts with too many
    layouts to search are skipped. Whether a count is accepted depends on the count
    (and the test) alone, so a later start never ends lower.
    """
    first = max(1, math.ceil(start_gpus / gpus_per_node)) * gpus_per_node
    probe = plan_at(plan_raw, gpus_per_node, blame, search_layouts=False)
    batch = int(str(plan_raw["global_batch"]))
    tried = evaluated = 0
    chosen: int | None = None
    fallback: int | None = None
    for n in candidate_counts(probe.arch, batch, gpus_per_node, first):
        if n > MAX_GPUS or tried >= MAX_NODE_COUNTS or evaluated >= MAX_EVALUATED_LAYOUTS:
            break
        tried += 1
        try:
            screen = plan_at(plan_raw, n, blame, micro_batch=1)
        except ValidationError as err:
            if err.input_name != "num_gpus":
                raise
            continue  # too many layouts to search at this count
        evaluated += len(screen.layouts)
        best = screen.best
        if best is None:
            continue
        if fast_enough(best):
            chosen = n
            break
        fallback = fallback or n
    count = chosen or fallback
    if count is None:
        return Scan(first, first, tried, evaluated, None, fast_enough=False)
    plan = plan_at(plan_raw, count, blame)
    return Scan(first, count, tried, evaluated + len(plan.layouts), plan,
                fast_enough=chosen is not None)


def inter_node_share(ranks: int, per_node: int) -> float:
    """The share of what a GPU sends in comm.py's two-level collective that crosses
    nodes: the whole collective's bytes less those of the same collective inside one
    node (its intra-node phases). The share is the same for allreduce, reduce-scatter
    and allgather, and for any size."""
    per_node = max(1, min(per_node, ranks))
    if ranks <= per_node:
        return 0.0
    whole = comm.hierarchical_cost("allreduce", 1.0, ranks, per_node, 1.0, 1.0, 0.0)
    inside = comm.hierarchical_cost("allreduce", 1.0, per_node, per_node, 1.0, 1.0, 0.0)
    return (whole.bytes_sent_per_rank - inside.bytes_sent_per_rank) / whole.bytes_sent_per_rank


@dataclass(frozen=True)
class Traffic:
    """Bytes one GPU sends per optimizer step, inside its node and across the network."""

    intra_bytes: float
    inter_bytes: float


def layout_traffic(lay: Layout, gpus_per_node: int) -> Traffic:
    """Split the planner's per-step bytes by where they travel. Ranks are ordered TP,
    DP, PP (parallel.py): a TP group holds min(tp, g) ranks per node, a DP group
    g // tp when tp < g and one otherwise, as the planner places them; pipeline sends
    are counted where the planner counts them (across nodes once the model spans
    more than one node)."""
    g = gpus_per_node
    tp_share = inter_node_share(lay.tp, min(lay.tp, g))
    dp_per_node = max(1, min(lay.dp, g // lay.tp)) if lay.tp < g else 1
    dp_share = inter_node_share(lay.dp, dp_per_node)
    pp_share = 1.0 if lay.pp_inter else 0.0
    inter = (lay.tp_bytes * tp_share + lay.pp_bytes * pp_share + lay.dp_bytes * dp_share)
    intra = (lay.tp_bytes * (1 - tp_share) + lay.pp_bytes * (1 - pp_share)
             + lay.dp_bytes * (1 - dp_share))
    return Traffic(intra, inter)


#: Which of the reader's inputs leads to each sparse_training input we pass.
SPARSE_BLAME = {
    "num_sparse_features": "num_tables", "dtype": "wire_dtype", "num_workers": "deadline_days",
    "embedding_bytes": "tables",
    "target_step_time": "deadline_days", "scale_up_bandwidth": "gpu",
}


@dataclass(frozen=True)
class SparseSide:
    """The tables' memory and the PS-or-collective answer for one job."""

    embedding: Result
    training: Result
    servers: int

    @property
    def mode(self) -> str:
        return str(self.training.value("recommended_mode"))

    def comm_time(self) -> float:
        """Communication per step of the recommended mode (sparse_training's model)."""
        name = "ps_step_comm_time_s" if self.mode == "ps" else "collective_step_comm_time_s"
        return float(self.training.value(name) or 0.0)


def sparse_side(inputs: Inputs, *, workers: int, nic_per_gpu: float, scale_up: float,
                step_budget: float, servers: int | None = None) -> SparseSide:
    """embedding_memory for the tables, then sparse_training for ``workers`` GPUs and
    the PS hosts that hold the tables (or the reader's count), aiming the PS at a
    communication time of one step's budget."""
    embedding = run_component(EMBEDDING_MEMORY, {
        "tables": inputs["tables"], "num_tables": inputs["num_tables"],
        "rows_per_table": inputs["rows_per_table"], "embedding_dim": inputs["embedding_dim"],
        "dtype": inputs["embedding_dtype"], "optimizer": inputs["embedding_optimizer"],
        "gpu": inputs["gpu"], "gpu_memory": inputs["gpu_memory"],
        "gpu_reserve": inputs["gpu_reserve"], "host_memory": inputs["host_memory"],
        "host_reserve": inputs["host_reserve"]},
        {"dtype": "embedding_dtype", "optimizer": "embedding_optimizer"})
    if servers is None:
        given = inputs["num_ps_servers"]
        servers = (int(embedding.value("min_ps_hosts") or 1) if given is None
                   else inputs.whole("num_ps_servers"))
    # sparse_training's target must be positive and at most 1e4 s.
    target = min(max(step_budget, 1e-9), 1e4)
    training = run_component(SPARSE_TRAINING, {
        "batch_size": inputs["batch_size"],
        "num_sparse_features": embedding.value("num_tables"),
        "pooling_factor": inputs["pooling_factor"], "unique_ratio": inputs["unique_ratio"],
        "embedding_dim": inputs["embedding_dim"], "dtype": inputs["wire_dtype"],
        "dense_params": inputs["dense_params"], "num_workers": workers,
        "num_ps_servers": servers, "server_nic_bandwidth": inputs["server_nic_bandwidth"],
        "dense_on_ps": inputs["dense_on_ps"], "asynchronous": False,
        "embedding_bytes": embedding.value("total_bytes"), "gpu": inputs["gpu"],
        "gpu_memory": inputs["gpu_memory"], "gpu_reserve": inputs["gpu_reserve"],
        "host_memory": inputs["host_memory"], "host_reserve": inputs["host_reserve"],
        "target_step_time": target, "nic_bandwidth": nic_per_gpu,
        "scale_up_bandwidth": scale_up, "gpus_per_node": inputs["gpus_per_node"]},
        {**SPARSE_BLAME, "num_ps_servers": "tables" if inputs["num_ps_servers"] is None
         else "num_ps_servers"})
    return SparseSide(embedding, training, servers)
