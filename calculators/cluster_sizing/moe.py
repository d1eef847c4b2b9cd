"""Sizing a mixture of experts: compute from the active parameters, memory from the
total, the layout from the expert-parallel planner (formulas.moe.planner, run with
moe_plan's own inputs), and what its alltoalls ask of the network."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.cluster_sizing.dense import RunTime, attention_scores
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
from calculators.cluster_sizing.scan import MAX_MOE_SCAN_WORK, scan_for_layout
from calculators.cluster_sizing.steps import Plan, layout_traffic
from calculators.core.calculator import validate
from calculators.core.i18n import _
from calculators.core.spec import ValidationError
from calculators.formulas.failures.checkpoints import checkpoint_bytes_per_param
from calculators.formulas.model.flops import computed_count, flop_count
from calculators.formulas.moe import architecture as moe
from calculators.formulas.moe.layers import stand_in
from calculators.formulas.moe.planner import search
from calculators.formulas.parallel.memory import state_bytes
from calculators.inputs.cluster import planner_cluster, planner_state_bytes
from calculators.inputs.moe import EXPERT_COMM_PARAMS, MOE_ARCHITECTURE_PARAMS, moe_architecture
from calculators.inputs.moe_planner import MOE_PLANNER_PARAMS, expert_comm, moe_planner_options

if TYPE_CHECKING:
    from collections.abc import Mapping

    from calculators.cluster_sizing.machine import Machine, Report
    from calculators.core.calculator import Inputs
    from calculators.formulas.model.flops import FlopCount
    from calculators.formulas.planner.layout import Layout

#: cluster_sizing's inputs that moe_plan reads under the same name.
PLANNER_NAMES = (*(p.name for p in MOE_ARCHITECTURE_PARAMS), "seq_len", "global_batch",
                 "gpus_per_node", "gpu", "gpu_memory", "precision", "optimizer",
                 "fp8_recipe", "offload",
                 *(p.name for p in EXPERT_COMM_PARAMS), "ep_overlap")


def moe_plan_at(plan_raw: Mapping[str, object], num_gpus: int, blame: str, *,
                search_layouts: bool = True, micro_batch: int | None = None,
                screened: Plan | None = None) -> Plan:  # noqa: ARG001 - see below
    """moe_plan's layouts at ``num_gpus`` that decide its recommendation, of all that
    fit (steps.plan_at for a mixture of experts; formulas.moe.planner.search with a
    tolerance). Its search costs ``screened``'s micro-batch 1 again."""
    raw = {**plan_raw, "num_gpus": num_gpus}
    try:
        inputs = validate(MOE_PLANNER_PARAMS, raw, owner="moe_plan")
        model = moe_architecture(inputs)
    except ValidationError as err:
        if err.input_name in raw and err.input_name != "num_gpus":
            raise ValidationError(blame, _("leads to moe_plan rejecting {error}").format(
                error=err)) from None
        raise
    seq, cluster = inputs.whole("seq_len"), planner_cluster(inputs)
    if not search_layouts:
        return Plan(num_gpus, stand_in(model, seq), cluster, [], 0)
    tolerance = inputs.num("rank_tolerance")
    try:
        found = search(model, seq, cluster, planner_state_bytes(inputs),
                       inputs.whole("global_batch"), comm=expert_comm(inputs),
                       options=moe_planner_options(inputs), micro_batch=micro_batch,
                       tolerance=tolerance)
    except ValueError as err:
        if isinstance(err, ValidationError):
            raise
        raise ValidationError("max_nodes_per_token", str(err)) from None
    return Plan(num_gpus, stand_in(model, seq), cluster, found.layouts, found.fitting,
                tolerance, work=found.work)


def _model(inputs: Inputs) -> tuple[moe.MoeArchitecture, dict[str, object]]:
    """The model, and the raw inputs moe_plan validates. An FFN width left blank is the
    form's stated default, 4 x hidden (Param ffn_hidden), for the dense layers before the
    first MoE layer; with no dense layer it is unused."""
    raw: dict[str, object] = {name: inputs[name] for name in PLANNER_NAMES}
    if raw["ffn_hidden"] is None:
        raw["ffn_hidden"] = 4 * inputs.whole("hidden")
    probe = validate(MOE_PLANNER_PARAMS, {**raw, "num_gpus": 8}, owner="cluster_sizing")
    return moe_architecture(probe), raw


def size_moe(inputs: Inputs, machine: Machine, report: Report) -> None:
    """Compute (active parameters) and memory (total) give a GPU count; the expert-
    parallel planner's scan makes it a layout."""
    model, plan_raw = _model(inputs)
    plan_raw["inter_node_bandwidth"] = machine.nic_per_gpu
    # N_active with the MTP modules' pass, and the attention scores in the reader's
    # count: the one count of model FLOPs (formulas.model.flops), as dense sizing has it.
    count = flop_count(inputs.text("flop_count"))
    active = float(moe.flop_params(model))
    held = float(moe.total_params(model) + moe.mtp_params(model))
    tokens = inputs.num("tokens")
    per_token = moe.moe_model_flops_per_token(model, inputs.whole("seq_len"), count,
                                              machine.k)
    total = per_token * tokens
    per_param = state_bytes(inputs.text("precision"), inputs.text("optimizer"))
    checkpoint = held * checkpoint_bytes_per_param(per_param)
    failures = Failures(inputs, machine, checkpoint)
    exact = failures.deadline_gpus(machine.gpus_for(total))
    floor = math.ceil(held * per_param.total / machine.capacity)
    batch_tokens = inputs.whole("global_batch") * inputs.whole("seq_len")
    steps = tokens / batch_tokens

    def in_time(lay: Layout) -> bool:
        return steps * lay.step_s / failures.at(lay.dims.gpus).value <= machine.deadline_s

    scan = scan_for_layout(plan_raw, max(math.ceil(exact), floor), machine.per_node,
                           "nic_bandwidth", in_time, planner=moe_plan_at,
                           time_of=failures.wall_clock_of(total, steps),
                           budget=MAX_MOE_SCAN_WORK)
    report.notes.extend(scan.notes)
    n, plan = scan.num_gpus, scan.plan
    lay = plan.choose(in_time) if plan is not None else None
    run = RunTime.of(machine, n, lay, total=total, step_flops=per_token * batch_tokens,
                     steps=steps)
    goodput = failures.at(n).value
    report.values.update(
        num_gpus=float(n), num_nodes=float(n // machine.per_node), gpus_for_deadline=exact,
        training_mode=_("collective (EP x TP x PP x DP)"), total_flops=total,
        gpu_hours=run.hours / goodput, wall_clock_days=run.days / goodput, step_time=run.step_s,
        embedding_bytes=None, gpus_for_tables=None, ps_hosts=None, comm_time_per_step=None,
        checkpoint_bytes=checkpoint)
    which = (_("the weights a token multiplies, moe_params, and the MTP modules' pass")
             if model.mtp_modules else _("the weights a token multiplies, moe_params, and "
                                         "the MTP modules' pass: none here"))
    report.row(_("Training compute C"), fmt(total, "FLOP", "sci"), _(
        "{k:g} x N_active x D with N_active = {active} of {held} parameters ({which}), "
        "{scores}; D = {tokens}. Counted as {count}, the count the assumed MFU must be in "
        "too (flop_count)").format(
            k=machine.k, active=fmt(active, "", "count"), held=fmt(held, "", "count"),
            which=which, scores=attention_scores(
                (per_token - machine.k * active) * tokens if count.attention_share else None),
            tokens=fmt(tokens, "tokens", "count"), count=_(count.label)))
    deadline_row(report, machine, exact, run.compute_hours)
    report.row(_("GPUs for memory (floor)"), f"{floor:,}",
               _("{per_param:g} B of model states for each of the {held} parameters (all "
                 "experts and the MTP module) spread over every GPU must fit in "
                 "{capacity}").format(per_param=per_param.total, held=fmt(held, "", "count"),
                                      capacity=fmt(machine.capacity, "B")))
    why = (_("the fewest whole {per_node}-GPU nodes from {start:,} GPUs whose moe_plan "
             "winner fits and meets the deadline by the planner's step time ({tried})")
           if scan.fast_enough else
           _("none of the whole {per_node}-GPU node counts tried from {start:,} GPUs meets "
             "the deadline by the planner's step time ({tried}): {fallback}, by wall-clock"))
    report.row(_("GPUs"), machine.nodes_text(n), why.format(
        per_node=machine.per_node, start=scan.start_gpus, tried=scan.tried_text,
        fallback=scan.fallback_text))
    if plan is None or lay is None:
        _no_layout(report, machine, scan.start_gpus, scan.tried_text)
    else:
        # The traffic is set against the step the training time rests on: the planner's
        # when it is the longer, else the assumed MFU's.
        step = run.days * SECONDS_PER_DAY / steps
        _layout(report, machine, plan, lay, model=model, step=step,
                planner_step=run.planner_days > run.compute_days, steps=steps,
                batch_tokens=batch_tokens, count=count)
        _training_time(report, machine, run)
        if run.days / goodput * SECONDS_PER_DAY > machine.deadline_s * (1 + 1e-9):
            missed_deadline(report, machine, n, wall_days=run.days / goodput,
                            training_days=run.days, goodput=goodput,
                            why=_("no count tried meets it ({tried}); {gpus:,} GPUs is "
                                  "{fallback}").format(tried=scan.tried_text, gpus=n,
                                                       fallback=scan.fallback_text))
    storage(report, machine, n, rate=tokens / (run.days * SECONDS_PER_DAY),
            item_bytes=inputs.opt("bytes_per_token") or (2.0 if model.vocab <= 65_536 else 4.0),
            items=tokens, what="tokens")
    report.row(_("Checkpoint"), fmt(checkpoint, "B"),
               _("{per_param:g} B per parameter of weights and optimizer states, every "
                 "expert included").format(per_param=checkpoint_bytes_per_param(per_param)))
    failures.report(report, n, ideal_days=run.days)
    money(report, inputs, machine, run.hours / goodput)


def _no_layout(report: Report, machine: Machine, start: int, tried: str) -> None:
    empty_layout(report)
    report.values.update(dict.fromkeys((
        "ep", "intra_node_bytes_per_step", "inter_node_bytes_per_step",
        "intra_node_bandwidth_needed", "inter_node_bandwidth_needed")))
    report.values["inter_node_bandwidth_available"] = machine.nic_per_gpu
    report.warnings.append(_(
        "No layout fits at any count of whole nodes from {start:,} GPUs ({tried}): the "
        "global batch or the memory per GPU rules them out.").format(start=start, tried=tried))


def _training_time(report: Report, machine: Machine, run: RunTime) -> None:
    value = (_("{days}: the planner's estimate") if run.planner_days > run.compute_days
             else _("{days}: at the assumed MFU"))
    report.row(_("Training time (before failures)"),
               value.format(days=fmt(run.days, "days", "fixed")),
               _("the longer of {compute} at the assumed {mfu:.1%} MFU and {planner} by the "
                 "planner's step model (its MFU in the same count below)").format(
                   compute=fmt(run.compute_days, "days", "fixed"), mfu=machine.mfu,
                   planner=fmt(run.planner_days, "days", "fixed")))


def _layout(report: Report, machine: Machine, plan: Plan, lay: Layout, *,
            model: moe.MoeArchitecture, step: float, planner_step: bool, steps: float,
            batch_tokens: int, count: FlopCount) -> None:
    """The winning layout: memory, the alltoall and the rest of the traffic, set against
    ``step``, the step the training time rests on (the planner's if ``planner_step``,
    else the assumed MFU's)."""
    n, ep = plan.num_gpus, lay.dims.ep
    planner_mfu = (moe.moe_model_flops_per_token(model, plan.arch.seq_len,
                                                 computed_count(count, "fused"))
                   * batch_tokens / (n * plan.cluster.peak_flops * lay.step_s))
    traffic = layout_traffic(lay, machine.per_node)
    report.values.update(
        layout=lay.dims.summary(experts=True), tp=float(lay.tp), cp=float(lay.cp),
        pp=float(lay.pp), dp=float(lay.dp), ep=float(ep),
        micro_batch=float(lay.micro_batch), zero_stage=float(lay.zero_stage),
        recompute=lay.recompute, memory_per_gpu_bytes=lay.memory_bytes,
        memory_headroom_bytes=machine.capacity - lay.memory_bytes, planner_mfu=planner_mfu,
        planner_days=steps * lay.step_s / SECONDS_PER_DAY,
        intra_node_bytes_per_step=traffic.intra_bytes,
        inter_node_bytes_per_step=traffic.inter_bytes,
        intra_node_bandwidth_needed=traffic.intra_bytes / step,
        inter_node_bandwidth_needed=traffic.inter_bytes / step,
        inter_node_bandwidth_available=machine.nic_per_gpu)
    report.row(_("Layout"), _("TP {tp} x CP {cp} x PP {pp} x DP {dp}, EP {ep}, micro-batch "
                              "{micro}, recompute {recompute}, ZeRO {zero}").format(
        tp=lay.tp, cp=lay.cp, pp=lay.pp, dp=lay.dp, ep=ep, micro=lay.micro_batch,
        recompute=lay.recompute, zero=lay.zero_stage),
               _("moe_plan's recommended layout, of {considered:,} that fit at {gpus:,} GPUs; "
                 "{experts} experts of each layer per GPU, each replicated {copies} "
                 "times").format(considered=plan.considered, gpus=n,
                                 experts=model.routed_experts // ep,
                                 copies=lay.tp * lay.cp * lay.dp // ep))
    report.row(_("Memory per GPU"), _("{used} of {capacity}").format(
        used=fmt(lay.memory_bytes, "B"), capacity=fmt(machine.capacity, "B")),
               _("experts split by EP and their states sharded over the expert-data-parallel "
                 "group; the rest as in a dense model"))
    share = lay.ep_inter_bytes / lay.ep_bytes if lay.ep_bytes else 0.0
    report.row(_("Expert alltoalls per GPU"), _("{bytes} per step, {share:.0%} over the "
                                                "network").format(
        bytes=fmt(lay.ep_bytes, "B"), share=share),
               _("{time:.3g} s a step against {cover:.3g} s of MoE compute to hide behind; "
                 "{exposed:.3g} s exposed").format(time=lay.ep_s, cover=lay.ep_cover_s,
                                                   exposed=lay.ep_exposed_s))
    need, line, over = (fmt(traffic.inter_bytes / step, "B/s"), fmt(machine.nic_per_gpu, "B/s"),
                        fmt(step, "s"))
    report.row(_("Network traffic per GPU"), _("{bytes} per step = {rate}").format(
        bytes=fmt(traffic.inter_bytes, "B"), rate=need), (
        _("the alltoalls' share across nodes and the across-node phases of DP, over the "
          "planner's {step} step, which the training time rests on; the NICs give {nic} per "
          "GPU") if planner_step else
        _("the alltoalls' share across nodes and the across-node phases of DP, over the "
          "assumed MFU's {step} step, which the training time rests on; the NICs give {nic} "
          "per GPU")).format(step=over, nic=line))
    report.row(_("Planner's estimate"), _("{days:,.1f} days at {mfu:.1%} MFU").format(
        days=steps * lay.step_s / SECONDS_PER_DAY, mfu=planner_mfu),
               _("{step:.3g} s per step x {steps:,.0f} steps").format(step=lay.step_s,
                                                                       steps=steps))
    if traffic.inter_bytes / step > machine.nic_per_gpu:
        report.warnings.append((
            _("The layout needs {need} of network per GPU over the planner's {step} step, "
              "which the training time rests on, more than the {line} line rate.")
            if planner_step else
            _("The layout needs {need} of network per GPU over the assumed MFU's {step} "
              "step, which the training time rests on, more than the {line} line "
              "rate.")).format(need=need, step=over, line=line))
