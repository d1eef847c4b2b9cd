"""Sizing a dense model: compute, the planner's layout, its traffic and memory."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.cluster_sizing.failures import Failures
from calculators.cluster_sizing.machine import (
    SECONDS_PER_DAY,
    deadline_row,
    empty_layout,
    fmt,
    missed_deadline,
    money,
    storage,
)
from calculators.cluster_sizing.scan import scan_for_layout
from calculators.cluster_sizing.steps import layout_traffic
from calculators.core.i18n import _
from calculators.formulas.failures.checkpoints import checkpoint_bytes_per_param
from calculators.formulas.model.architecture import matmul_params, total_params
from calculators.formulas.model.flops import (
    FlopCount,
    computed_count,
    dense_model_flops_per_token,
    flop_count,
    gpu_seconds,
)
from calculators.formulas.parallel.memory import state_bytes
from calculators.formulas.planner.layout import Layout  # noqa: TC001 - annotates a nested function
from calculators.inputs.architecture import ARCHITECTURE_PARAMS, architecture

if TYPE_CHECKING:
    from calculators.cluster_sizing.machine import Machine, Report
    from calculators.cluster_sizing.scan import Scan
    from calculators.cluster_sizing.steps import Plan
    from calculators.core.calculator import Inputs
    from calculators.formulas.model.architecture import Architecture


def size_dense(inputs: Inputs, machine: Machine, report: Report) -> None:
    """Compute and memory give a GPU count; the planner's scan makes it a layout."""
    arch = architecture(inputs)
    counted = float(total_params(arch))
    params = inputs.opt("params") or counted
    tokens = inputs.num("tokens")
    count, flop_params, per_token = _model_flops(inputs, arch, machine.k)
    total = per_token * tokens
    per_param = state_bytes(inputs.text("precision"), inputs.text("optimizer"))
    checkpoint = params * checkpoint_bytes_per_param(per_param)
    failures = Failures(inputs, machine, checkpoint)
    # The deadline is wall-clock: / goodput.
    exact = failures.deadline_gpus(machine.gpus_for(total))
    floor = math.ceil(counted * per_param.total / machine.capacity)
    plan_raw = {p.name: inputs[p.name] for p in ARCHITECTURE_PARAMS}
    plan_raw.update({name: inputs[name] for name in (
        "global_batch", "gpus_per_node", "gpu", "gpu_memory", "precision", "optimizer",
        "fp8_recipe", "offload")})
    plan_raw["inter_node_bandwidth"] = machine.nic_per_gpu
    batch_tokens = inputs.whole("global_batch") * arch.seq_len
    steps = tokens / batch_tokens

    def in_time(lay: Layout) -> bool:  # the planner's own estimate meets the deadline
        gpus = lay.dims.gpus
        return steps * lay.step_s / failures.at(gpus).value <= machine.deadline_s

    scan = scan_for_layout(plan_raw, max(math.ceil(exact), floor), machine.per_node,
                           "nic_bandwidth", in_time,
                           time_of=failures.wall_clock_of(total, steps))
    report.notes.extend(scan.notes)
    n, plan = scan.num_gpus, scan.plan
    lay = plan.choose(in_time) if plan is not None else None
    run = RunTime.of(machine, n, lay, total=total, step_flops=per_token * batch_tokens,
                     steps=steps)
    goodput = failures.at(n).value  # the share of wall-clock that trains
    wall_days, wall_hours = run.days / goodput, run.hours / goodput
    report.values.update(
        num_gpus=float(n), num_nodes=float(n // machine.per_node), gpus_for_deadline=exact,
        training_mode=_("collective (TP x PP x DP)"), total_flops=total, gpu_hours=wall_hours,
        wall_clock_days=wall_days, step_time=run.step_s, embedding_bytes=None, gpus_for_tables=None,
        ps_hosts=None, comm_time_per_step=None,
        checkpoint_bytes=checkpoint)
    if inputs["params"] is not None and abs(params / counted - 1) > 0.05:
        report.notes.append(_("N = {given} differs from the architecture's {counted}; the "
                              "planner lays out the architecture.").format(
            given=fmt(params, "", "count"), counted=fmt(counted, "", "count")))
    report.row(_("Training compute C"), fmt(total, "FLOP", "sci"), _compute_why(
        count, machine.k, flop_params, per_token, tokens, given=inputs["params"] is not None))
    deadline_row(report, machine, exact, run.compute_hours)
    report.row(_("GPUs for memory (floor)"), f"{floor:,}",
               _("{per_param:g} B of model states per parameter spread over every GPU must "
                 "fit in {capacity} (ZeRO-3's best case)").format(
                   per_param=per_param.total, capacity=fmt(machine.capacity, "B")))
    why = (_("the fewest whole {per_node}-GPU nodes from {start:,} GPUs whose parallel_plan "
             "winner fits and, by the planner's own step time, meets the deadline "
             "({tried})") if scan.fast_enough else
           _("none of the whole {per_node}-GPU node counts tried from {start:,} GPUs meets "
             "the deadline by the planner's step time ({tried}): {fallback}, by wall-clock"))
    report.row(_("GPUs"), machine.nodes_text(n), why.format(
        per_node=machine.per_node, start=scan.start_gpus, tried=scan.tried_text,
        fallback=scan.fallback_text))
    if floor > math.ceil(exact):
        report.notes.append(_("Memory, not the deadline, sets the GPU count: {floor:,} GPUs "
                              "to hold the model states, {compute:,} for the compute.").format(
            floor=floor, compute=math.ceil(exact)))
    if plan is None or lay is None:
        empty_layout(report)
        report.values.update(dict.fromkeys((
            "intra_node_bytes_per_step", "inter_node_bytes_per_step",
            "intra_node_bandwidth_needed", "inter_node_bandwidth_needed")))
        report.values["inter_node_bandwidth_available"] = machine.nic_per_gpu
        report.warnings.append(_(
            "No layout fits at any count of whole nodes from {start:,} GPUs ({tried}): the "
            "global batch of {batch:,} sequences or the memory per GPU rules them out. Try a "
            "larger batch, recomputation-friendly shapes or a larger GPU.").format(
                start=scan.start_gpus, tried=scan.tried_text,
                batch=inputs.whole("global_batch")))
    else:
        planner_mfu = _layout(report, machine, plan, lay, step=run.step_s, steps=steps,
                              batch_tokens=batch_tokens, count=count)
        _wall_clock(report, machine, lay, run, planner_mfu, scan=scan, goodput=goodput)
    per_token = inputs.opt("bytes_per_token") or (2.0 if arch.vocab <= 65_536 else 4.0)
    storage(report, machine, n, rate=tokens / (run.days * SECONDS_PER_DAY), item_bytes=per_token,
            items=tokens, what="tokens")
    report.row(_("Checkpoint"), fmt(checkpoint, "B"),
               _("{per_param:g} B per parameter of weights and optimizer states (gradients "
                 "are not saved)").format(per_param=checkpoint_bytes_per_param(per_param)))
    failures.report(report, n, ideal_days=run.days)
    money(report, inputs, machine, wall_hours)


@dataclass(frozen=True)
class RunTime:
    """How long the run takes on ``n`` GPUs. It is no faster than either estimate: the
    compute at the assumed MFU (which is meant to cover what the planner leaves out) or
    the planner's step time for the chosen layout (which the assumed MFU cannot beat).
    GPU-hours are the GPUs held for that time."""

    gpus: int
    compute_hours: float
    planner_days: float
    step_s: float  # one step at the assumed MFU

    @classmethod
    def of(cls, machine: Machine, n: int, lay: Layout | None, *, total: float,
           step_flops: float, steps: float) -> RunTime:
        peak = machine.gpu.peak_bf16_flops
        hours = gpu_seconds(total, peak, machine.mfu) / 3600.0
        planner = steps * lay.step_s / SECONDS_PER_DAY if lay is not None else 0.0
        return cls(n, hours, planner, gpu_seconds(step_flops, peak, machine.mfu) / n)

    @property
    def compute_days(self) -> float:
        return self.compute_hours / self.gpus / 24.0

    @property
    def days(self) -> float:
        return max(self.compute_days, self.planner_days)

    @property
    def hours(self) -> float:
        if self.planner_days <= self.compute_days:
            return self.compute_hours
        return self.gpus * self.planner_days * 24.0


def _late_with_failures(report: Report, machine: Machine, scan: Scan, run: RunTime,
                        goodput: float) -> None:
    """Warn when the run is late only once failures are counted (``_layout`` warns when
    the planner's training time alone is past the deadline)."""
    wall_s = run.days / goodput * SECONDS_PER_DAY
    if (wall_s > machine.deadline_s * (1 + 1e-9)
            and run.planner_days * SECONDS_PER_DAY <= machine.deadline_s):
        missed_deadline(report, machine, scan.num_gpus, wall_days=wall_s / SECONDS_PER_DAY,
                        training_days=run.days, goodput=goodput,
                        why=_("no count tried meets it ({tried}); {gpus:,} GPUs is "
                              "{fallback}").format(tried=scan.tried_text, gpus=scan.num_gpus,
                                                   fallback=scan.fallback_text))


def _wall_clock(report: Report, machine: Machine, lay: Layout, run: RunTime,
                planner_mfu: float, *, scan: Scan, goodput: float) -> None:
    """The training time before failures: the longer of the two estimates, and why (the
    goodput row and the wall-clock row, which divides this by the goodput, follow); and
    the warning if only failures make the run late."""
    _late_with_failures(report, machine, scan, run, goodput)
    compute_days, planner_days = run.compute_days, run.planner_days
    both = _("the longer of {compute} at the assumed {mfu:.1%} MFU and {planner} by the "
             "planner's step model ({planner_mfu:.1%} MFU, over the attention its kernel "
             "computes)").format(compute=fmt(compute_days, "days", "fixed"), mfu=machine.mfu,
                                 planner=fmt(planner_days, "days", "fixed"),
                                 planner_mfu=planner_mfu)
    if planner_days > compute_days:
        name, waited = max(((part, t) for part, t in lay.parts() if part != "compute"),
                           key=lambda part: part[1])
        report.row(_("Training time (before failures)"),
                   _("{days}: the planner's estimate").format(
                       days=fmt(planner_days, "days", "fixed")),
                   _("{both}: this layout cannot reach the assumed MFU; its largest cost "
                     "besides compute is {part}, {time} of a {step} step").format(
                       both=both, part=_(name), time=fmt(waited, "s"), step=fmt(lay.step_s, "s")))
    else:
        report.row(_("Training time (before failures)"),
                   _("{days}: at the assumed MFU").format(days=fmt(compute_days, "days", "fixed")),
                   _("{both}: the assumed MFU also covers what the step model leaves "
                     "out").format(both=both))
    if machine.k >= 8 and lay.recompute != "full":
        report.warnings.append(_(
            "The compute counts {k:g} FLOP per parameter per token, full recomputation's "
            "count, but the planner's layout recomputes {recompute}: count 6 with an MFU, so "
            "that both describe the same run.").format(k=machine.k, recompute=lay.recompute))


def _layout(report: Report, machine: Machine, plan: Plan, lay: Layout, *, step: float,
            steps: float, batch_tokens: int, count: FlopCount) -> float:
    """The winning layout: memory headroom, traffic in and across nodes, and the
    planner's own estimate of the time; returns the MFU that estimate reaches."""
    n = plan.num_gpus
    headroom = machine.capacity - lay.memory_bytes
    planner_days = steps * lay.step_s / SECONDS_PER_DAY
    planner_mfu = (dense_model_flops_per_token(
        plan.arch, computed_count(count, plan.attention)) * batch_tokens
                   / (n * plan.cluster.peak_flops * lay.step_s))
    traffic = layout_traffic(lay, machine.per_node)
    report.values.update(
        layout=lay.dims.summary(), tp=float(lay.tp), cp=float(lay.cp), pp=float(lay.pp),
        dp=float(lay.dp),
        micro_batch=float(lay.micro_batch), zero_stage=float(lay.zero_stage),
        recompute=lay.recompute, memory_per_gpu_bytes=lay.memory_bytes,
        memory_headroom_bytes=headroom, planner_mfu=planner_mfu,
        planner_days=planner_days, intra_node_bytes_per_step=traffic.intra_bytes,
        inter_node_bytes_per_step=traffic.inter_bytes,
        intra_node_bandwidth_needed=traffic.intra_bytes / step,
        inter_node_bandwidth_needed=traffic.inter_bytes / step,
        inter_node_bandwidth_available=machine.nic_per_gpu)
    report.row(_("Layout"), _("TP {tp} x CP {cp} x PP {pp} x DP {dp}, micro-batch {micro}, "
                              "recompute {recompute}, ZeRO {zero}").format(
        tp=lay.tp, cp=lay.cp, pp=lay.pp, dp=lay.dp, micro=lay.micro_batch,
        recompute=lay.recompute, zero=lay.zero_stage),
               _("parallel_plan's recommended layout (the simplest that fits within "
                 "{tolerance:.0%} of the fastest, and meets the deadline if one such does), "
                 "of the {considered:,} its rules allow at {gpus:,} GPUs").format(
                   tolerance=plan.tolerance, considered=plan.considered, gpus=n))
    report.row(_("Memory per GPU"), _("{used} of {capacity} ({free} free)").format(
        used=fmt(lay.memory_bytes, "B"), capacity=fmt(machine.capacity, "B"),
        free=fmt(headroom, "B")),
               _("model states, activations, the output layer's logits and working buffers "
                 "(model_memory); a layout must leave {reserve:.0%} of the GPU free for the "
                 "CUDA context, communication buffers and fragmentation").format(
                   reserve=1 - plan.cluster.memory_bytes / machine.capacity))
    report.row(_("Step time at the assumed MFU"), fmt(step, "s"),
               _("{tokens:,} tokens per step; the traffic below must move in this time to "
                 "stay hidden behind compute").format(tokens=batch_tokens))
    nvlink = machine.gpu.scale_up_bandwidth
    per_step = _("{bytes} per step = {rate}")
    report.row(_("In-node traffic per GPU"), per_step.format(
        bytes=fmt(traffic.intra_bytes, "B"), rate=fmt(traffic.intra_bytes / step, "B/s")),
               _("TP allreduces and the in-node phases of DP; NVLink gives {rate} per "
                 "direction").format(rate=fmt(nvlink, "B/s")))
    phases = {(False, False): _("the across-node phases of DP"),
              (True, False): _("the across-node phases of DP and TP"),
              (False, True): _("the across-node phases of DP and the pipeline sends"),
              (True, True): _("the across-node phases of DP and TP and the pipeline sends")}
    report.row(_("Network traffic per GPU"), per_step.format(
        bytes=fmt(traffic.inter_bytes, "B"), rate=fmt(traffic.inter_bytes / step, "B/s")),
               _("{phases}; the NICs give {rate} per GPU").format(
                   phases=phases[bool(lay.tp_inter), bool(lay.pp_inter)],
                   rate=fmt(machine.nic_per_gpu, "B/s")))
    report.row(_("Planner's estimate"), _("{days:,.1f} days at {mfu:.1%} MFU").format(
        days=planner_days, mfu=planner_mfu),
               _("its step model: {step:.3g} s per step x {steps:,.0f} steps").format(
                   step=lay.step_s, steps=steps))
    if traffic.inter_bytes / step > machine.nic_per_gpu:
        report.warnings.append(_(
            "The layout needs {need} of network per GPU to hide its traffic, more than the "
            "{line} line rate: communication will show in the step time.").format(
                need=fmt(traffic.inter_bytes / step, "B/s"),
                line=fmt(machine.nic_per_gpu, "B/s")))
    if planner_days > machine.deadline_s / SECONDS_PER_DAY:
        report.warnings.append(_(
            "At the planner's estimate ({planner_mfu:.1%} MFU against the assumed "
            "{mfu:.1%}) the run takes {days:,.1f} days of training, before failures, and "
            "misses the deadline. Data parallelism cannot exceed the global batch; beyond "
            "it, GPUs go into pipeline stages with few micro-batches and large bubbles. A "
            "larger global batch, a longer deadline or a faster GPU is needed.").format(
                planner_mfu=planner_mfu, mfu=machine.mfu, days=planner_days))
    return planner_mfu


def _model_flops(inputs: Inputs, arch: Architecture, k: float) -> tuple[FlopCount, float, float]:
    """Model FLOPs per token in the reader's count (formulas.model.flops, as
    training_compute counts them), with N the weights a token multiplies."""
    count = flop_count(inputs.text("flop_count"))
    flop_params = inputs.opt("params") or float(matmul_params(arch))
    return count, flop_params, dense_model_flops_per_token(arch, count, flop_params, k)


def _compute_why(count: FlopCount, k: float, flop_params: float, per_token: float,
                 tokens: float, *, given: bool) -> str:
    """The "Training compute C" row's reason: the count, N and the attention's part."""
    attention = per_token - k * flop_params
    which = (_("given") if given else
             _("the weights a token multiplies: the input embedding, a lookup, left out"))
    return _("{k:g} x N x D with N = {params} ({which}), {scores}; D = {tokens}. Counted as "
             "{count}, the count the assumed MFU must be in too (flop_count; "
             "training_compute counts the same)").format(
        k=k, params=fmt(flop_params, "", "count"), which=which,
        scores=attention_scores(attention * tokens if attention else None),
        tokens=fmt(tokens, "tokens", "count"), count=_(count.label))


def attention_scores(flops: float | None) -> str:
    """The attention scores' part of C in words (None: not counted), for the "Training
    compute C" row."""
    return (_("no attention scores") if flops is None else
            _("plus {flops} of attention scores").format(flops=fmt(flops, "FLOP", "sci")))
