"""The steps of ``cluster_sizing``, each a call into the formulas the other calculators
compose too.

Nothing here re-derives a formula: the layout comes from the planner's ``search``
(formulas.planner) with the planner's own inputs and cluster (inputs.cluster, validated
by the same declarations as parallel_plan's); embedding memory and the PS-or-collective
choice come from formulas.sparse.embeddings and formulas.sparse.step, as the
``embedding_memory`` and ``sparse_training`` calculators compute them. What is new is
the glue: which GPU count to ask about, and how to split a layout's traffic into the
part that stays in a node and the part that crosses the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.core.calculator import validate
from calculators.core.i18n import _
from calculators.core.spec import ValidationError
from calculators.formulas.collectives import costs as comm
from calculators.formulas.planner.ranking import RANK_TOLERANCE, preferred
from calculators.formulas.planner.search import search_near
from calculators.formulas.sparse.embeddings import table_memory
from calculators.formulas.sparse.sharding import COMM_BYTES, Network
from calculators.formulas.sparse.step import MAX_TABLE_BYTES, Job, compare_step
from calculators.inputs.architecture import architecture
from calculators.inputs.cluster import (
    PLANNER_PARAMS,
    planner_cluster,
    planner_state_bytes,
    sizing_options,
)
from calculators.inputs.embeddings import (
    DEFAULT_LATENCY_S,
    host_usable_bytes,
    tables_from_inputs,
    usable_gpu_bytes,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from calculators.core.calculator import Inputs
    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.planner.layout import Cluster, Layout
    from calculators.formulas.sparse.embeddings import TableMemory
    from calculators.formulas.sparse.step import StepComparison

#: parallel_plan accepts up to this many GPUs.
MAX_GPUS = 1_000_000


@dataclass(frozen=True)
class Plan:
    """The planner's answer at one GPU count: the layouts that decide its recommendation
    (formulas.planner.search_near; all of moe_plan's that fit), of ``considered``."""

    num_gpus: int
    arch: Architecture
    cluster: Cluster
    layouts: list[Layout]
    #: How many layouts the planner's rules allow at this count: parallel_plan's list.
    considered: int
    tolerance: float = RANK_TOLERANCE
    attention: str = "fused"  # the kernel the layouts are priced with
    #: What the search cost, in the unit the scan's budget is in (see MAX_EVALUATED_LAYOUTS).
    work: int = 0

    @property
    def best(self) -> Layout | None:
        """parallel_plan's winner: the layout it recommends (formulas.planner.ranking: the
        simplest of those that fit within the ranking tolerance of the fastest)."""
        return next(iter(preferred(self.layouts, self.tolerance)), None)

    def choose(self, ok: Callable[[Layout], bool]) -> Layout | None:
        """The first layout in parallel_plan's order that passes ``ok`` (meets the
        deadline), else its winner: the simplicity rule never costs the deadline when
        a faster layout within the tolerance would meet it. ``ok`` must only get harder
        to pass as the step time grows, as a deadline does: then a layout that passes,
        if any does, is within the tolerance of the fastest, among ``layouts``."""
        ranked = preferred(self.layouts, self.tolerance)
        return next((lay for lay in ranked if ok(lay)), ranked[0] if ranked else None)


def plan_at(plan_raw: Mapping[str, object], num_gpus: int, blame: str, *,
            search_layouts: bool = True, micro_batch: int | None = None,
            screened: Plan | None = None) -> Plan:
    """The layouts of ``num_gpus`` GPUs that decide parallel_plan's recommendation, as it
    ranks them (same search, cluster, state bytes, activation width); ``micro_batch``
    narrows the search as parallel_plan's own input of that name does.
    ``screened`` is this count's plan with ``micro_batch=1``, whose layouts the search
    of every micro-batch then reuses (formulas.planner.search_near)."""
    raw = {**plan_raw, "num_gpus": num_gpus}
    try:
        inputs = validate(PLANNER_PARAMS, raw, owner="parallel_plan")
    except ValidationError as err:
        if err.input_name in raw and err.input_name != "num_gpus":
            raise ValidationError(blame, _("leads to parallel_plan rejecting {error}").format(
                error=err)) from None
        raise
    arch = architecture(inputs)
    precision = inputs.text("precision")
    cluster = planner_cluster(inputs)
    if not search_layouts:
        return Plan(num_gpus, arch, cluster, [], 0)
    tolerance = inputs.num("rank_tolerance")
    # The recipe's narrow saved inputs and Muon's step, on the search's own defaults.
    options = sizing_options(inputs)
    found = search_near(arch, cluster, planner_state_bytes(inputs),
                        inputs.whole("global_batch"), tolerance=tolerance,
                        micro_batch=micro_batch, act_bytes=4.0 if precision == "fp32" else 2.0,
                        screened=screened.layouts if screened is not None else (),
                        options=options)
    return Plan(num_gpus, arch, cluster, found.layouts, found.considered, tolerance,
                options.attention, work=found.considered)


def inter_node_share(ranks: int, per_node: int) -> float:
    """The share of what a GPU sends in formulas.collectives.costs' two-level collective
    that crosses nodes: the whole collective's bytes less those of the same collective inside one
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


def layout_traffic(lay: Layout, gpus_per_node: int) -> Traffic:  # noqa: ARG001 - kept for callers
    """Split the planner's per-step bytes by where they travel, as the planner placed
    the groups (formulas.planner: ranks TP, CP, DP, PP in NVLink domains; each
    two-level collective's share that leaves the domain, as ``inter_node_share``
    computes it; pipeline and context-parallel sends across the network once their
    group leaves the domain)."""
    return Traffic(lay.intra_bytes, lay.inter_bytes)


@dataclass(frozen=True)
class SparseSide:
    """The tables' memory and the PS-or-collective answer for one job."""

    embedding: TableMemory
    training: StepComparison
    servers: int

    @property
    def mode(self) -> str:
        return self.training.mode

    def comm_time(self) -> float:
        """Communication per step of the recommended mode (sparse_training's model)."""
        step = self.training
        return step.ps.time_s if self.mode == "ps" else step.collective_time_s


def sparse_side(inputs: Inputs, *, workers: int, nic_per_gpu: float, scale_up: float,
                step_budget: float, servers: int | None = None) -> SparseSide:
    """The tables' memory (as embedding_memory computes it), then the PS-or-collective
    comparison (as sparse_training computes it) for ``workers`` GPUs and the PS hosts
    that hold the tables (or the reader's count), aiming the PS at a communication time
    of one step's budget."""
    tables = tables_from_inputs(inputs)
    memory = table_memory(tables, inputs.text("embedding_dtype"),
                          inputs.text("embedding_optimizer"),
                          gpu_usable=usable_gpu_bytes(inputs),
                          host_usable=host_usable_bytes(inputs))
    if memory.total_bytes > MAX_TABLE_BYTES:
        raise ValidationError("tables", _(
            "the tables and their optimizer state come to {size:.3g} B, beyond the "
            "{most:g} B the sparse step is modelled for").format(size=memory.total_bytes,
                                                                 most=MAX_TABLE_BYTES))
    if servers is None:
        given = inputs["num_ps_servers"]
        servers = (memory.min_ps_hosts or 1) if given is None else inputs.whole("num_ps_servers")
    # Features look up tables; blank means one feature per table (DLRM).
    features = (len(tables) if inputs["num_sparse_features"] is None
                else inputs.whole("num_sparse_features"))
    job = Job(batch=float(inputs.whole("batch_size")), features=features,
              pooling=inputs.num("pooling_factor"), unique=inputs.num("unique_ratio"),
              dim=inputs.whole("embedding_dim"), value_bytes=COMM_BYTES[inputs.text("wire_dtype")],
              dense_params=inputs.num("dense_params"), workers=workers, servers=servers,
              server_nic=inputs.num("server_nic_bandwidth"),
              dense_on_ps=inputs.flag("dense_on_ps"),
              net=Network(nic_per_gpu, scale_up, inputs.whole("gpus_per_node"),
                          DEFAULT_LATENCY_S))
    # sparse_training's target must be positive and at most 1e4 s.
    target = min(max(step_budget, 1e-9), 1e4)
    training = compare_step(job, table_bytes=memory.total_bytes,
                            gpu_usable=usable_gpu_bytes(inputs),
                            host_usable=host_usable_bytes(inputs), target_s=target,
                            asynchronous=False)
    return SparseSide(memory, training, servers)
