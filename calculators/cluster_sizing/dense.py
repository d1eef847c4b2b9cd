"""Sizing a dense model: compute, the planner's layout, its traffic and memory."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.cluster_sizing.machine import SECONDS_PER_DAY, empty_layout, fmt, money, storage
from calculators.cluster_sizing.steps import layout_traffic, scan_for_layout
from calculators.formulas.architecture import total_params
from calculators.formulas.flops import (
    gpu_seconds,
    megatron_model_flops_per_token,
    training_flops,
)
from calculators.formulas.memory import state_bytes
from calculators.formulas.planner import Layout  # noqa: TC001 - annotates a nested function
from calculators.inputs.architecture import ARCHITECTURE_PARAMS, architecture

if TYPE_CHECKING:
    from calculators.cluster_sizing.machine import Machine, Report
    from calculators.cluster_sizing.steps import Plan
    from calculators.core.spec import Inputs

#: Below this share of GPU memory left free, warn: the planner leaves out the logits,
#: communication buffers and allocator slack (dense.md, "Planning a layout").
MIN_HEADROOM = 0.05


def size_dense(inputs: Inputs, machine: Machine, report: Report) -> None:
    """Compute and memory give a GPU count; the planner's scan makes it a layout."""
    arch = architecture(inputs)
    counted = float(total_params(arch))
    params = inputs.opt("params") or counted
    tokens = inputs.num("tokens")
    total = training_flops(params, tokens, machine.k)
    exact = machine.gpus_for(total)
    per_param = state_bytes(inputs.text("precision"), inputs.text("optimizer"))
    floor = math.ceil(counted * per_param.total / machine.capacity)
    plan_raw = {p.name: inputs[p.name] for p in ARCHITECTURE_PARAMS}
    plan_raw.update({name: inputs[name] for name in (
        "global_batch", "gpus_per_node", "gpu", "gpu_memory", "precision", "optimizer")})
    plan_raw["inter_node_bandwidth"] = machine.nic_per_gpu
    batch_tokens = inputs.whole("global_batch") * arch.seq_len
    steps = tokens / batch_tokens

    def in_time(lay: Layout) -> bool:  # the planner's own estimate meets the deadline
        return steps * lay.step_s <= machine.deadline_s

    scan = scan_for_layout(plan_raw, max(math.ceil(exact), floor), machine.per_node,
                           "nic_bandwidth", in_time)
    n = scan.num_gpus
    hours = gpu_seconds(total, machine.gpu.peak_bf16_flops, machine.mfu) / 3600.0
    days = hours / n / 24.0
    step = gpu_seconds(training_flops(params, batch_tokens, machine.k),
                       machine.gpu.peak_bf16_flops, machine.mfu) / n
    report.values.update(
        num_gpus=float(n), num_nodes=float(n // machine.per_node), gpus_for_deadline=exact,
        training_mode="collective (TP x PP x DP)", total_flops=total, gpu_hours=hours,
        wall_clock_days=days, step_time=step, embedding_bytes=None, gpus_for_tables=None,
        ps_hosts=None, comm_time_per_step=None,
        checkpoint_bytes=params * per_param.total)
    if inputs["params"] is not None and abs(params / counted - 1) > 0.05:
        report.notes.append(f"N = {fmt(params, '', 'count')} differs from the architecture's "
                            f"{fmt(counted, '', 'count')}; the planner lays out the architecture.")
    report.row("Training compute C", fmt(total, "FLOP", "sci"),
               f"{machine.k:g} x N x D with N = {fmt(params, '', 'count')}, D = "
               f"{fmt(tokens, 'tokens', 'count')} "
               "(training_compute)")
    report.row("GPUs for the deadline", f"{exact:,.1f}",
               f"{fmt(hours, 'GPU-hours', 'count')} at {machine.mfu:.1%} of {machine.gpu.name}'s "
               f"{fmt(machine.gpu.peak_bf16_flops, 'FLOP/s')}, over "
               f"{machine.deadline_s / SECONDS_PER_DAY:g} days")
    report.row("GPUs for memory (floor)", f"{floor:,}",
               f"{per_param.total:g} B of model states per parameter spread over every GPU "
               f"must fit in {fmt(machine.capacity, 'B')} (ZeRO-3's best case)")
    tried = f"{scan.tried} {'count' if scan.tried == 1 else 'counts'} tried"
    why = (f"the fewest whole {machine.per_node}-GPU nodes from {scan.start_gpus:,} GPUs "
           "whose parallel_plan winner fits and, by the planner's own step time, meets "
           f"the deadline ({tried})" if scan.fast_enough else
           f"the fewest whole {machine.per_node}-GPU nodes from {scan.start_gpus:,} GPUs "
           f"whose parallel_plan winner fits; none within the search met the deadline by "
           f"the planner's step time ({tried})")
    report.row("GPUs", machine.nodes_text(n), why)
    if floor > math.ceil(exact):
        report.notes.append(f"Memory, not the deadline, sets the GPU count: {floor:,} GPUs "
                            f"to hold the model states, {math.ceil(exact):,} for the compute.")
    plan = scan.plan
    lay = plan.best if plan is not None else None
    if plan is None or lay is None:
        empty_layout(report)
        report.values.update(dict.fromkeys((
            "intra_node_bytes_per_step", "inter_node_bytes_per_step",
            "intra_node_bandwidth_needed", "inter_node_bandwidth_needed")))
        report.values["inter_node_bandwidth_available"] = machine.nic_per_gpu
        report.warnings.append(
            f"No layout fits at any count of whole nodes from {scan.start_gpus:,} GPUs "
            f"({scan.tried} counts tried): the global batch of "
            f"{inputs.whole('global_batch'):,} sequences or the memory per GPU rules them "
            "out. Try a larger batch, recomputation-friendly shapes or a larger GPU.")
    else:
        _layout(report, machine, plan, lay, step=step, steps=steps,
                batch_tokens=batch_tokens)
    per_token = inputs.opt("bytes_per_token") or (2.0 if arch.vocab <= 65_536 else 4.0)
    storage(report, machine, n, rate=tokens / (days * SECONDS_PER_DAY), item_bytes=per_token,
            items=tokens, what="tokens")
    report.row("Checkpoint", fmt(params * per_param.total, "B"),
               f"{per_param.total:g} B per parameter of weights and optimizer states")
    money(report, inputs, machine, hours)


def _layout(report: Report, machine: Machine, plan: Plan, lay: Layout, *, step: float,
            steps: float, batch_tokens: int) -> None:
    """The winning layout: memory headroom, traffic in and across nodes, and the
    planner's own estimate of the time as a cross-check."""
    n = plan.num_gpus
    headroom = machine.capacity - lay.memory_bytes
    planner_days = steps * lay.step_s / SECONDS_PER_DAY
    planner_mfu = (megatron_model_flops_per_token(plan.arch) * batch_tokens
                   / (n * plan.cluster.peak_flops * lay.step_s))
    traffic = layout_traffic(lay, machine.per_node)
    report.values.update(
        tp=float(lay.tp), pp=float(lay.pp), dp=float(lay.dp),
        micro_batch=float(lay.micro_batch), zero_stage=float(lay.zero_stage),
        recompute=lay.recompute, memory_per_gpu_bytes=lay.memory_bytes,
        memory_headroom_bytes=headroom, planner_mfu=planner_mfu,
        planner_days=planner_days, intra_node_bytes_per_step=traffic.intra_bytes,
        inter_node_bytes_per_step=traffic.inter_bytes,
        intra_node_bandwidth_needed=traffic.intra_bytes / step,
        inter_node_bandwidth_needed=traffic.inter_bytes / step,
        inter_node_bandwidth_available=machine.nic_per_gpu)
    report.row("Layout", f"TP {lay.tp} x PP {lay.pp} x DP {lay.dp}, micro-batch "
               f"{lay.micro_batch}, recompute {lay.recompute}, ZeRO {lay.zero_stage}",
               f"parallel_plan's fastest layout that fits, of {len(plan.layouts):,} "
               f"evaluated at {n:,} GPUs")
    report.row("Memory per GPU", f"{fmt(lay.memory_bytes, 'B')} of "
               f"{fmt(machine.capacity, 'B')} ({fmt(headroom, 'B')} free)",
               "weights, gradients, optimizer states and activations (model_memory)")
    report.row("Step time at the assumed MFU", fmt(step, "s"),
               f"{batch_tokens:,} tokens per step; the traffic below must move in this "
               "time to stay hidden behind compute")
    nvlink = machine.gpu.scale_up_bandwidth
    report.row("In-node traffic per GPU", f"{fmt(traffic.intra_bytes, 'B')} per step = "
               f"{fmt(traffic.intra_bytes / step, 'B/s')}",
               f"TP allreduces and the in-node phases of DP; NVLink gives "
               f"{fmt(nvlink, 'B/s')} per direction")
    report.row("Network traffic per GPU", f"{fmt(traffic.inter_bytes, 'B')} per step = "
               f"{fmt(traffic.inter_bytes / step, 'B/s')}",
               f"the across-node phases of DP{' and TP' if lay.tp_inter else ''}"
               f"{' and the pipeline sends' if lay.pp_inter else ''}; the NICs give "
               f"{fmt(machine.nic_per_gpu, 'B/s')} per GPU")
    report.row("Planner's estimate", f"{planner_days:,.1f} days at {planner_mfu:.1%} MFU",
               f"its step model: {lay.step_s:.3g} s per step x {steps:,.0f} steps")
    if headroom < MIN_HEADROOM * machine.capacity:
        report.warnings.append(f"Only {fmt(headroom, 'B')} per GPU left: the planner "
                               "leaves out the logits, buffers and allocator slack.")
    if traffic.inter_bytes / step > machine.nic_per_gpu:
        report.warnings.append(
            f"The layout needs {fmt(traffic.inter_bytes / step, 'B/s')} of network per "
            f"GPU to hide its traffic, more than the {fmt(machine.nic_per_gpu, 'B/s')} "
            "line rate: communication will show in the step time.")
    if planner_days > machine.deadline_s / SECONDS_PER_DAY:
        report.warnings.append(
            f"At the planner's estimate ({planner_mfu:.1%} MFU against the assumed "
            f"{machine.mfu:.1%}) the run takes {planner_days:,.1f} days and misses the "
            "deadline. Data parallelism cannot exceed the global batch; beyond it, GPUs "
            "go into pipeline stages with few micro-batches and large bubbles. A larger "
            "global batch, a longer deadline or a faster GPU is needed.")
