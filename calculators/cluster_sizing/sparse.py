"""Sizing a sparse model: compute, embedding memory, PS or collective, communication."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from calculators.cluster_sizing.failures import Failures
from calculators.cluster_sizing.machine import (
    SECONDS_PER_DAY,
    Report,
    empty_layout,
    fmt,
    money,
    storage,
)
from calculators.cluster_sizing.steps import MAX_GPUS, sparse_side
from calculators.core.i18n import _
from calculators.core.spec import ValidationError
from calculators.formulas.failures.checkpoints import checkpoint_bytes_per_param
from calculators.formulas.model.flops import gpu_seconds, training_flops
from calculators.formulas.parallel.memory import state_bytes
from calculators.inputs.reliability import Hosts

if TYPE_CHECKING:
    from collections.abc import Callable

    from calculators.cluster_sizing.machine import Machine
    from calculators.cluster_sizing.steps import SparseSide
    from calculators.core.calculator import Inputs


def _sparse_at(inputs: Inputs, machine: Machine, n: int, budget: float) -> SparseSide:
    """sparse_training at ``n`` workers; a PS gets the servers its target needs."""
    side = sparse_side(inputs, workers=n, nic_per_gpu=machine.nic_per_gpu,
                       scale_up=machine.gpu.scale_up_bandwidth, step_budget=budget)
    needed = side.training.servers_needed
    if (side.mode == "ps" and inputs["num_ps_servers"] is None and needed is not None
            and float(needed) > side.servers):
        side = sparse_side(inputs, workers=n, nic_per_gpu=machine.nic_per_gpu,
                           scale_up=machine.gpu.scale_up_bandwidth, step_budget=budget,
                           servers=int(float(needed)))
    return side


def _fast_enough(side: SparseSide, budget: float) -> bool:
    """The recommended mode fits somewhere, and its communication fits a step."""
    return side.mode != "neither" and side.comm_time() <= budget


def _sparse_workers(inputs: Inputs, machine: Machine, start: int, budget: float,
                    step_time: Callable[[int, SparseSide], float],
                    ) -> tuple[int, SparseSide, bool]:
    """The fewest whole nodes from ``start`` GPUs whose communication per step fits the
    step budget: node counts doubling through powers of two, then halving the gap
    (communication per worker shrinks as the batch is shared out, until fixed costs
    such as the dense part remain). When no count fits, the count among those tried
    with the shortest step: as fast as this design gets."""
    per_node = machine.per_node
    low = start // per_node
    side = _sparse_at(inputs, machine, start, budget)
    if _fast_enough(side, budget):
        return start, side, True
    cap = max(low, min(MAX_GPUS, inputs.whole("batch_size")) // per_node)
    tried = [(step_time(start, side), start, side)]
    high = low
    found: SparseSide | None = None
    while high < cap:
        low, high = high, min(cap, 1 << high.bit_length())  # the next power of two
        trial = _sparse_at(inputs, machine, high * per_node, budget)
        if _fast_enough(trial, budget):
            found = trial
            break
        tried.append((step_time(high * per_node, trial), high * per_node, trial))
    if found is None:
        _time, best, side = min(tried, key=lambda t: (t[0], t[1]))
        return best, side, False
    while high - low > 1:
        mid = (low + high) // 2
        trial = _sparse_at(inputs, machine, mid * per_node, budget)
        if _fast_enough(trial, budget):
            high, found = mid, trial
        else:
            low = mid
    return high * per_node, found, True


def size_sparse(inputs: Inputs, machine: Machine, report: Report) -> None:
    """With a goodput below 1 only that share of the deadline trains, so the sizing is
    for deadline x goodput. A given goodput is known at once; an estimate depends on the
    count and the PS hosts (they fail and write their tables too), so a first pass at
    the full deadline finds them, and the sizing is redone for its goodput."""
    goodput = inputs.opt("goodput")
    if goodput is None:
        probe = Report()
        _size_sparse(inputs, machine, probe)
        goodput = float(probe.values["goodput"] or 1.0)
    deadline_s = machine.deadline_s
    _size_sparse(inputs, replace(machine, deadline_s=deadline_s * goodput), report)
    days, used = report.values["wall_clock_days"], report.values["goodput"]
    if (isinstance(days, float) and isinstance(used, float) and used < 1.0
            and days * SECONDS_PER_DAY > deadline_s * (1 + 1e-9)):
        report.warnings.append(_(
            "With a goodput of {goodput:.1%} the run takes {days:,.1f} days, past the "
            "deadline: the goodput at the count chosen is below the one the sizing allowed "
            "for, or communication does not fit the step budget.").format(goodput=used,
                                                                         days=days))


def _size_sparse(inputs: Inputs, machine: Machine, report: Report) -> None:
    """Compute gives a first count; the tables, the PS-or-collective choice and the
    step budget the deadline leaves decide the final one."""
    dense_params = inputs.num("dense_params")
    samples = inputs.num("dataset_samples") * inputs.num("epochs")
    total = training_flops(dense_params, samples, machine.k)
    exact = machine.gpus_for(total)
    start = machine.whole_nodes(exact)
    batch = inputs.whole("batch_size")
    steps = samples / batch
    budget = machine.deadline_s / steps
    peak = machine.gpu.peak_bf16_flops
    step_gpu_s = gpu_seconds(training_flops(dense_params, batch, machine.k), peak, machine.mfu)

    def step_time(n: int, side: SparseSide) -> float:
        return max(step_gpu_s / n, side.comm_time())

    n, side, in_time = _sparse_workers(inputs, machine, start, budget, step_time)
    compute_step = step_gpu_s / n
    training, emb = side.training, side.embedding
    comm_step = side.comm_time()
    wall_s = steps * max(compute_step, comm_step)
    _check_timed(wall_s, side.mode)
    hours = n * wall_s / 3600.0
    if side.mode == "ps":  # pulls come in while pushes go out: the larger direction
        sent = max(training.ps.pull_bytes, training.ps.push_bytes)
    else:
        sent = (training.alltoall.bytes_sent_per_rank
                + training.allreduce.bytes_sent_per_rank)
    per_param = state_bytes(inputs.text("precision"), inputs.text("optimizer"))
    checkpoint = emb.total_bytes + dense_params * checkpoint_bytes_per_param(per_param)
    # Goodput at the count chosen: the PS hosts fail too (Llama 3's host rows per host),
    # and write their tables (and read them back) through their own NICs.
    on_servers = emb.total_bytes + (dense_params * checkpoint_bytes_per_param(per_param)
                                    if inputs.flag("dense_on_ps") else 0.0)
    hosts = (Hosts(side.servers, on_servers, inputs.num("server_nic_bandwidth"))
             if side.mode == "ps" else None)
    failures = Failures(inputs, machine, checkpoint, hosts=hosts)
    goodput = failures.at(n).value
    empty_layout(report)
    report.values.update(
        num_gpus=float(n), num_nodes=float(n // machine.per_node), gpus_for_deadline=exact,
        training_mode=side.mode, total_flops=total, step_time=compute_step,
        # A design that fits nowhere has no run to time: no days, not 0 days.
        gpu_hours=hours / goodput if side.mode != "neither" else None,
        wall_clock_days=wall_s / goodput / SECONDS_PER_DAY if side.mode != "neither" else None,
        intra_node_bytes_per_step=None, inter_node_bytes_per_step=sent,
        intra_node_bandwidth_needed=None, inter_node_bandwidth_needed=sent / budget,
        inter_node_bandwidth_available=machine.nic_per_gpu,
        embedding_bytes=emb.total_bytes, gpus_for_tables=emb.min_gpus,
        ps_hosts=float(side.servers) if side.mode == "ps" else 0.0,
        comm_time_per_step=comm_step, checkpoint_bytes=checkpoint)
    report.row(_("Training compute C"), fmt(total, "FLOP", "sci"),
               _("{k:g} x {params} x {samples}: embedding lookups are gathers, not FLOPs "
                 "(training_compute)").format(
                   k=machine.k, params=fmt(dense_params, "dense parameters", "count"),
                   samples=fmt(samples, "samples", "count")))
    report.row(_("GPUs for the compute"), f"{fmt(exact, '', 'count')} -> {start:,}",
               _("at {mfu:.1%} of {peak} by the deadline, rounded up to whole nodes").format(
                   mfu=machine.mfu, peak=fmt(peak, "FLOP/s")))
    report.row(_("Embedding tables"), fmt(emb.total_bytes, "B"),
               _("weights + optimizer state (embedding_memory): {gpus:,} GPUs or {hosts:,} "
                 "PS host(s) to hold them").format(gpus=emb.min_gpus, hosts=emb.min_ps_hosts))
    report.row(_("Step budget"), _("{budget} per step of {batch:,} samples").format(
        budget=fmt(budget, "s"), batch=batch),
               _("deadline / {steps:,.0f} steps").format(steps=steps))
    report.row(_("GPUs"), machine.nodes_text(n),
               _("the compute's count") if n == start else
               _("the fewest whole nodes whose communication per step fits the budget (the "
                 "compute alone needs {start:,})").format(start=start))
    report.row(_("PS or collective"), _("{mode}, {hosts:,} PS hosts").format(
        mode=side.mode, hosts=side.servers) if side.mode == "ps" else side.mode,
        training.reason + " (sparse_training)")
    report.row(_("Communication per step"), fmt(comm_step, "s"),
               _("{sent} per GPU in its busier direction, {rate} over the budget; compute "
                 "takes {compute}; communication hidden behind compute where it fits, so a "
                 "step takes the longer of the two").format(
                   sent=fmt(sent, "B"), rate=fmt(sent / budget, "B/s"),
                   compute=fmt(compute_step, "s")))
    if side.mode == "neither":
        report.warnings.append(training.reason)
    if not in_time and side.mode != "neither":  # "neither" has no step to time
        report.warnings.append(_(
            "No number of GPUs up to the batch size brings communication within the "
            "{budget} step budget. The fastest count tried, {gpus:,} GPUs, takes {comm} per "
            "step, and the run {days:,.1f} days. Fewer bytes on the wire (fp16, "
            "de-duplication), more PS servers or a larger batch would help.").format(
                budget=fmt(budget, "s"), gpus=n, comm=fmt(comm_step, "s"),
                days=wall_s / SECONDS_PER_DAY))
    if side.mode == "ps":
        alt = sparse_side(inputs, workers=emb.min_gpus, nic_per_gpu=machine.nic_per_gpu,
                          scale_up=machine.gpu.scale_up_bandwidth, step_budget=budget,
                          servers=side.servers).training
        report.notes.append(_("A collective design would instead need {gpus:,} GPUs to hold "
                              "the tables in GPU memory; on those, its communication would "
                              "take {comm} per step (sparse_training).").format(
            gpus=emb.min_gpus, comm=fmt(alt.collective_time_s, "s")))
    # A design that fits nowhere ("neither") has no step to time: no read rate then.
    storage(report, machine, n, rate=samples / wall_s if side.mode != "neither" else 0.0,
            item_bytes=inputs.num(
        "bytes_per_sample"), items=inputs.num("dataset_samples"), what="samples")
    report.row(_("Checkpoint"), fmt(checkpoint, "B"), _(
        "embedding tables with their optimizer state, plus the dense part") if hosts is None
        else _("embedding tables with their optimizer state, plus the dense part; each PS "
               "host writes its {size} through its {nic} NIC").format(
            size=fmt(on_servers / side.servers, "B"),
            nic=fmt(inputs.num("server_nic_bandwidth"), "B/s")))
    failures.report(report, n, ideal_days=wall_s / SECONDS_PER_DAY
                    if side.mode != "neither" else None)
    _money_of_run(report, inputs, machine, side, gpus=n, wall_hours=wall_s / goodput / 3600.0)


def _check_timed(wall_s: float, mode: str) -> None:
    """A run of 0 days would read as free: it is a missing input (a design that fits
    nowhere, "neither", has no run and says so instead)."""
    if wall_s <= 0 and mode != "neither":
        raise ValidationError(
            "dense_params", _("with no dense parameters there is no compute to time, and "
                              "here no communication either: give the dense part's "
                              "parameters (the MLPs over the embeddings)"))


def _money_of_run(report: Report, inputs: Inputs, machine: Machine, side: SparseSide, *,
                  gpus: int, wall_hours: float) -> None:
    """Cost, energy and carbon of the run (the GPUs', and the PS hosts' for as long as
    the run); none when nothing fits, so no run."""
    if side.mode == "neither":
        report.values.update(cost_usd=None, ps_cost_usd=None, energy_kwh=None,
                             co2_tonnes=None)
        return
    money(report, inputs, machine, gpus * wall_hours,
          ps_host_hours=side.servers * wall_hours if side.mode == "ps" else 0.0)
