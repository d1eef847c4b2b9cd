"""Sizing a mixture of experts: compute from the active parameters, memory from the
total, the layout from the expert-parallel planner (formulas.moe.planner, run with
moe_plan's own inputs), and what its alltoalls ask of the network."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.cluster_sizing.dense import RunTime
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
            raise ValidationError(blame, f"leads to moe_plan rejecting {err}") from None
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
        training_mode="collective (EP x TP x PP x DP)", total_flops=total,
        gpu_hours=run.hours / goodput, wall_clock_days=run.days / goodput, step_time=run.step_s,
        embedding_bytes=None, gpus_for_tables=None, ps_hosts=None, comm_time_per_step=None,
        checkpoint_bytes=checkpoint)
    report.row("Training compute C", fmt(total, "FLOP", "sci"),
               f"{machine.k:g} x N_active x D with N_active = {fmt(active, '', 'count')} of "
               f"{fmt(held, '', 'count')} parameters (the weights a token multiplies, "
               f"moe_params, and the MTP modules' pass"
               f"{'' if model.mtp_modules else ': none here'}), "
               + (f"plus {fmt((per_token - machine.k * active) * tokens, 'FLOP', 'sci')} of "
                  "attention scores" if count.attention_share else "no attention scores")
               + f"; D = {fmt(tokens, 'tokens', 'count')}. Counted as {count.label}, "
               "the count the assumed MFU must be in too (flop_count)")
    deadline_row(report, machine, exact, run.compute_hours)
    report.row("GPUs for memory (floor)", f"{floor:,}",
               f"{per_param.total:g} B of model states for each of the "
               f"{fmt(held, '', 'count')} parameters (all experts and the MTP module) spread "
               f"over every GPU must fit in {fmt(machine.capacity, 'B')}")
    report.row("GPUs", machine.nodes_text(n),
               f"the fewest whole {machine.per_node}-GPU nodes from {scan.start_gpus:,} GPUs "
               "whose moe_plan winner fits and meets the deadline by the planner's step "
               f"time ({scan.tried_text})" if scan.fast_enough else
               f"none of the whole {machine.per_node}-GPU node counts tried from "
               f"{scan.start_gpus:,} GPUs meets the deadline by the planner's step time "
               f"({scan.tried_text}): {scan.fallback_text}, by wall-clock")
    if plan is None or lay is None:
        _no_layout(report, machine, scan.start_gpus, scan.tried_text)
    else:
        # The traffic is set against the step the training time rests on: the planner's
        # when it is the longer, else the assumed MFU's.
        step = run.days * SECONDS_PER_DAY / steps
        _layout(report, machine, plan, lay, model=model, step=step,
                step_basis="the planner's" if run.planner_days > run.compute_days
                else "the assumed MFU's", steps=steps, batch_tokens=batch_tokens,
                count=count)
        _training_time(report, machine, run)
        if run.days / goodput * SECONDS_PER_DAY > machine.deadline_s * (1 + 1e-9):
            missed_deadline(report, machine, n, wall_days=run.days / goodput,
                            training_days=run.days, goodput=goodput,
                            why=f"no count tried meets it ({scan.tried_text}); {n:,} GPUs "
                                f"is {scan.fallback_text}")
    storage(report, machine, n, rate=tokens / (run.days * SECONDS_PER_DAY),
            item_bytes=inputs.opt("bytes_per_token") or (2.0 if model.vocab <= 65_536 else 4.0),
            items=tokens, what="tokens")
    report.row("Checkpoint", fmt(checkpoint, "B"),
               f"{checkpoint_bytes_per_param(per_param):g} B per parameter of weights and "
               "optimizer states, every expert included")
    failures.report(report, n, ideal_days=run.days)
    money(report, inputs, machine, run.hours / goodput)


def _no_layout(report: Report, machine: Machine, start: int, tried: str) -> None:
    empty_layout(report)
    report.values.update(dict.fromkeys((
        "ep", "intra_node_bytes_per_step", "inter_node_bytes_per_step",
        "intra_node_bandwidth_needed", "inter_node_bandwidth_needed")))
    report.values["inter_node_bandwidth_available"] = machine.nic_per_gpu
    report.warnings.append(
        f"No layout fits at any count of whole nodes from {start:,} GPUs ({tried}): the "
        "global batch or the memory per GPU rules them out.")


def _training_time(report: Report, machine: Machine, run: RunTime) -> None:
    longer = "the planner's estimate" if run.planner_days > run.compute_days else (
        "at the assumed MFU")
    report.row("Training time (before failures)", f"{fmt(run.days, 'days', 'fixed')}: {longer}",
               f"the longer of {fmt(run.compute_days, 'days', 'fixed')} at the assumed "
               f"{machine.mfu:.1%} MFU and {fmt(run.planner_days, 'days', 'fixed')} by the "
               "planner's step model (its MFU in the same count below)")


def _layout(report: Report, machine: Machine, plan: Plan, lay: Layout, *,
            model: moe.MoeArchitecture, step: float, step_basis: str, steps: float,
            batch_tokens: int, count: FlopCount) -> None:
    """The winning layout: memory, the alltoall and the rest of the traffic, set against
    ``step``, the step the training time rests on (``step_basis`` says whose)."""
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
    report.row("Layout", f"TP {lay.tp} x CP {lay.cp} x PP {lay.pp} x DP {lay.dp}, EP {ep}, "
               f"micro-batch {lay.micro_batch}, recompute {lay.recompute}, ZeRO "
               f"{lay.zero_stage}", f"moe_plan's recommended layout, of {plan.considered:,} "
               f"that fit at {n:,} GPUs; {model.routed_experts // ep} experts of each layer "
               f"per GPU, each replicated {lay.tp * lay.cp * lay.dp // ep} times")
    report.row("Memory per GPU", f"{fmt(lay.memory_bytes, 'B')} of {fmt(machine.capacity, 'B')}",
               "experts split by EP and their states sharded over the expert-data-parallel "
               "group; the rest as in a dense model")
    share = lay.ep_inter_bytes / lay.ep_bytes if lay.ep_bytes else 0.0
    report.row("Expert alltoalls per GPU", f"{fmt(lay.ep_bytes, 'B')} per step, "
               f"{share:.0%} over the network",
               f"{lay.ep_s:.3g} s a step against {lay.ep_cover_s:.3g} s of MoE compute to hide "
               f"behind; {lay.ep_exposed_s:.3g} s exposed")
    report.row("Network traffic per GPU", f"{fmt(traffic.inter_bytes, 'B')} per step = "
               f"{fmt(traffic.inter_bytes / step, 'B/s')}",
               f"the alltoalls' share across nodes and the across-node phases of DP, over "
               f"{step_basis} {fmt(step, 's')} step, which the training time rests on; the "
               f"NICs give {fmt(machine.nic_per_gpu, 'B/s')} per GPU")
    report.row("Planner's estimate", f"{steps * lay.step_s / SECONDS_PER_DAY:,.1f} days at "
               f"{planner_mfu:.1%} MFU", f"{lay.step_s:.3g} s per step x {steps:,.0f} steps")
    if traffic.inter_bytes / step > machine.nic_per_gpu:
        report.warnings.append(
            f"The layout needs {fmt(traffic.inter_bytes / step, 'B/s')} of network per GPU "
            f"over {step_basis} {fmt(step, 's')} step, which the training time rests on, "
            f"more than the {fmt(machine.nic_per_gpu, 'B/s')} line rate.")
