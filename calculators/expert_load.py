"""The ``expert_load`` calculator: uneven expert loads in one dispatch alltoall. With an
expert capacity, tokens over it are dropped and every buffer is padded to it; without one
(dropless), the GPU holding the busiest experts receives more than the rest, and in the
alltoall's tail every sender converges on it: an incast, run through the fluid queue of
``formulas.fabric.queueing`` that the incast calculator uses."""

from __future__ import annotations

from calculators.core.calculator import Calculator, Computed, Inputs
from calculators.core.i18n import _
from calculators.core.spec import Output, Param, ValidationError
from calculators.formulas.fabric.queueing import incast_run
from calculators.formulas.moe.eplb import busiest_gpu_factor
from calculators.formulas.moe.expert_parallel import (
    expected_dropped_fraction,
    expert_capacity_tokens,
    uniform_routing_load_cv,
)
from calculators.formulas.moe.step_costs import direct_copies
from calculators.inputs.moe import REDUNDANT_EXPERTS_PARAM


def _expert_load(inputs: Inputs) -> Computed:
    experts, k, ep = (inputs.whole(n) for n in ("routed_experts", "experts_per_token", "ep"))
    node, tokens = inputs.whole("gpus_per_node"), inputs.num("tokens_per_gpu")
    if k > experts:
        raise ValidationError("experts_per_token", _(
            "{k} experts per token is more than the {experts} routed experts").format(
            k=k, experts=experts))
    if experts % ep:
        raise ValidationError("ep", _(
            "expert parallel size {ep} must divide the {experts} routed experts").format(
            ep=ep, experts=experts))
    if ep > node and ep % node:
        raise ValidationError("ep", _(
            "an EP group of {ep} GPUs spanning nodes must fill whole nodes of {node}").format(
            ep=ep, node=node))
    group_tokens = tokens * ep
    mean_load = group_tokens * k / experts
    cv = inputs.opt("load_cv")
    if cv is None:
        cv = uniform_routing_load_cv(group_tokens, experts, k)
    factor = inputs.opt("capacity_factor")
    hot = busiest_gpu_factor(cv, experts, ep, inputs.whole("redundant_experts"))
    # Bytes each GPU receives through its NIC in one dispatch, loads balanced: its tokens'
    # copies that leave their node (direct dispatch).
    per_copy = inputs.whole("hidden") * inputs.num("dispatch_bytes")
    mean_network = tokens * direct_copies(k, ep, node).inter_node * per_copy
    bandwidth = inputs.num("inter_node_bandwidth")
    senders = ep - min(ep, node)
    notes: list[str] = []
    if factor is None:
        capacity, dropped, carried = None, 0.0, hot
        excess = (hot - 1.0) * mean_network
        notes.append(_("Dropless: every token is kept; the busiest GPU receives {hot:.3g}x "
                       "the mean, and the alltoall waits for it.").format(hot=hot))
    else:
        capacity = expert_capacity_tokens(group_tokens, experts, factor, k)
        dropped, carried, excess = expected_dropped_fraction(factor, cv), factor, 0.0
        notes.append(_("Capacity {factor:g}x the mean: buffers are padded to it (GShard, "
                       "Switch), so every GPU receives the same bytes; the overflow is dropped "
                       "and rides the residual connection.").format(factor=factor))
    balanced = mean_network / bandwidth if senders else None
    dispatch = carried * mean_network / bandwidth if senders else None
    run = None
    if senders and excess > 0:
        # The tail: others are served, so each sender sends its remaining bytes for the
        # busiest GPU at line rate; lossless (PFC, or InfiniBand's credits) port.
        run = incast_run(senders, excess / senders, bandwidth, drain=bandwidth,
                         buffer_bytes=inputs.num("switch_buffer_bytes"), mode="pfc")
    if not senders:
        notes.append(_("The EP group fits in one node: its alltoall stays on NVLink and no "
                       "switch port sees it."))
    return Computed(
        values={
            "mean_load_tokens": mean_load,
            "load_cv": cv,
            "capacity_tokens": capacity,
            "dropped_fraction": dropped,
            "dropped_tokens": dropped * group_tokens * k,
            "busiest_gpu_load": hot,
            "balanced_dispatch_time": balanced,
            "dispatch_time": dispatch,
            "slowdown": carried if senders else None,
            "incast_senders": float(senders),
            "tail_bytes_per_sender": excess / senders if senders else 0.0,
            "peak_queue_bytes": run.peak_queue_bytes if run else 0.0,
            "pause_time": run.pause_time_s if run else 0.0,
        },
        notes=notes,
    )


EXPERT_LOAD = Calculator(
    id="expert_load",
    headline=("dropped_fraction", "busiest_gpu_load", "dispatch_time", "peak_queue_bytes"),
    advanced=("hidden", "dispatch_bytes", "switch_buffer_bytes"),
    title="Expert load: capacity, dropped tokens and the incast of hot experts",
    summary="One dispatch alltoall with uneven expert loads: a capacity drops and pads, "
            "dropless routing makes the busiest GPU an incast receiver.",
    chapter="moe.md",
    params=(
        Param("tokens_per_gpu", "Tokens per GPU per dispatch", "float", 4096.0,
              unit="token", minimum=1, maximum=1e9,
              help="Tokens each GPU routes in one alltoall (a micro-batch). An assumption: "
                   "one 4K-token sequence, DeepSeek-V3's pre-training length."),
        Param("routed_experts", "Routed experts E", "int", 256, minimum=1, maximum=100_000,
              help="DeepSeek-V3: 256."),
        Param("experts_per_token", "Experts per token k", "int", 8, minimum=1,
              maximum=100_000, help="DeepSeek-V3: 8."),
        Param("ep", "Expert-parallel size", "int", 64, minimum=1, maximum=100_000,
              help="GPUs sharing the experts. DeepSeek-V3: 64 over 8 nodes (Sec. 3.2)."),
        Param("gpus_per_node", "GPUs per node", "int", 8, minimum=1, maximum=1024,
              help="Copies to the same node's GPUs stay on NVLink."),
        Param("capacity_factor", "Capacity factor", "float", None, minimum=0,
              exclusive_minimum=True, maximum=1000, optional=True, placeholder="dropless",
              help="Expert capacity = tokens x k / E x this (Switch Transformer, Fedus et "
                   "al. 2021, Sec. 2.2; 1.0-2.0 in their Table 1). Blank: no capacity, no "
                   "dropped tokens (DeepSeek-V3, Sec. 2.1.2)."),
        Param("load_cv", "Expert load imbalance (coefficient of variation)", "float", None,
              minimum=0, maximum=10, optional=True, placeholder="uniform routing",
              help="Standard deviation of an expert's load over its mean. Blank: the floor "
                   "of uniform random routing, sqrt((1 - 1/E) E / (T k)); a learned "
                   "router is less even. Loads taken as normal (an assumption)."),
        REDUNDANT_EXPERTS_PARAM,
        Param("hidden", "Hidden size h", "int", 7168, minimum=1, maximum=1_000_000,
              help="Elements per dispatched copy. DeepSeek-V3: 7,168."),
        Param("dispatch_bytes", "Dispatch bytes per element", "float", 1.0, unit="B",
              minimum=0.5, maximum=8, help="FP8 = 1 (DeepSeek-V3, Sec. 3.3.3)."),
        Param("inter_node_bandwidth", "Network bandwidth per GPU", "float", 50e9, unit="B/s",
              minimum=1e6, maximum=1e14,
              help="Each GPU's NIC, per direction: 400 Gb/s = 50 GB/s (Sec. 3.2.2)."),
        Param("switch_buffer_bytes", "Buffer the port can use", "float", 1e6, unit="B",
              minimum=1, maximum=1e12,
              help="An assumption: 1 MB, as in the incast calculator."),
    ),
    outputs=(
        Output("mean_load_tokens", "Mean load per expert", "token", "count"),
        Output("load_cv", "Load imbalance used (cv)", "1", "fixed"),
        Output("capacity_tokens", "Expert capacity", "token", "count"),
        Output("dropped_fraction", "Token assignments dropped", "1", "percent"),
        Output("dropped_tokens", "Assignments dropped per dispatch (EP group)", "token",
               "count"),
        Output("busiest_gpu_load", "Busiest GPU's load / mean (dropless)", "1", "fixed"),
        Output("balanced_dispatch_time", "Dispatch time, loads even", "s"),
        Output("dispatch_time", "Dispatch time, this load", "s"),
        Output("slowdown", "Dispatch slowdown", "1", "fixed"),
        Output("incast_senders", "Senders converging on the busiest GPU", "", "count"),
        Output("tail_bytes_per_sender", "Tail bytes each sender sends it", "B"),
        Output("peak_queue_bytes", "Peak queue at its switch port", "B"),
        Output("pause_time", "Pause time per sender link (lossless)", "s"),
    ),
    function=_expert_load,
    sources=(
        "Fedus et al. 2021, Switch Transformers, Sec. 2.2 (capacity factor, dropped tokens)",
        "Lepikhin et al. 2020, GShard, Secs. 2.2 and 3 (expert capacity, padded dispatch)",
        "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Secs. 2.1.2, 3.2.2, 3.3.3",
        "Blom 1958, Statistical Estimates and Transformed Beta-Variables (expected maximum)",
        "DeepSeek-V3 report, Sec. 3.4.1, and deepseek-ai/EPLB (redundant experts)",
        "Graham 1969, Bounds on Multiprocessing Timing Anomalies (list scheduling's bound)",
        "Zhu et al. 2015, DCQCN (SIGCOMM), and IEEE 802.1Qbb (the lossless queue model)",
    ),
)
