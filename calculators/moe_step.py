"""The ``moe_step`` calculator: one training step of a mixture of experts on an expert-,
pipeline-, tensor- and data-parallel layout: memory per GPU, the expert alltoall's bytes
and time, the compute it can hide behind, and the gradient allreduce of the same model
(formulas.moe.expert_parallel, formulas.moe.step_costs)."""

from __future__ import annotations

import math

from calculators.catalogues import hardware
from calculators.catalogues.host_links import host_side
from calculators.catalogues.link_speeds import network_curve, scale_up_curve
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Choice, Output, Param, ValidationError
from calculators.formulas.collectives.costs import flat_cost
from calculators.formulas.model.model_states import StateBytes, device_capacity_bytes, usable_bytes
from calculators.formulas.moe.architecture import expert_params
from calculators.formulas.moe.deepep import calibrate
from calculators.formulas.moe.eplb import busiest_gpu_factor, copies_per_gpu
from calculators.formulas.moe.expert_parallel import (
    MoeParallelLayout,
    expert_params_per_gpu,
    model_state_bytes_per_gpu,
    non_expert_params_per_gpu,
)
from calculators.formulas.moe.step_choices import muon_flops_per_gpu, offloaded
from calculators.formulas.moe.step_costs import (
    activation_bytes_per_gpu,
    gradient_sync_bytes_per_gpu,
    step_alltoall_traffic,
    step_flops_per_gpu,
)
from calculators.inputs.hardware import PEAK_FLOPS_PARAM, accelerator_choices
from calculators.inputs.memory import MEMORY_RESERVE_PARAM, OFFLOAD_PARAM
from calculators.inputs.moe import (
    EXPERT_COMM_PARAMS,
    MOE_ARCHITECTURE_DETAIL,
    MOE_ARCHITECTURE_PARAMS,
    REDUNDANT_EXPERTS_PARAM,
    alltoall_precision,
    max_nodes,
    moe_architecture,
)
from calculators.inputs.training import gemm_recipe_param, recipe_by_id

#: Bytes per parameter (weights, gradients, optimizer incl. master weights).
STATE_BYTES: dict[str, tuple[float, float, float]] = {
    # ZeRO (Rajbhandari et al. 2020), Sec. 3.1: 2 + 2 + 12 for mixed-precision Adam.
    "mixed_adam": (2.0, 2.0, 12.0),
    # DeepSeek-V3 report, Sec. 3.3.3: FP32 master weights and gradients, BF16 Adam
    # moments; a BF16 working copy of the weights is our assumption.
    "deepseek_v3": (2.0, 4.0, 8.0),
    # Muon with FP32 gradients: FP32 master weights and one FP32 momentum (Liu et al.
    # 2025, Sec. 2); its Newton-Schulz FLOPs are added to the compute.
    "muon": (2.0, 4.0, 8.0),
}


def _layout(inputs: Inputs, experts: int, layers: int) -> MoeParallelLayout:
    gpus, tp, pp, ep = (inputs.whole(n) for n in ("num_gpus", "tp", "pp", "ep"))
    node = inputs.whole("gpus_per_node")
    if experts % ep:
        raise ValidationError("ep", _("expert parallel size {ep} must divide the {experts} "
                                      "routed experts").format(ep=ep, experts=experts))
    if pp > layers:
        raise ValidationError("pp", _("{stages} pipeline stages is more than the {layers} "
                                      "layers").format(stages=pp, layers=layers))
    if gpus % (tp * pp):
        raise ValidationError("num_gpus", _("{gpus} GPUs is not a multiple of tp x pp = "
                                            "{product}").format(gpus=gpus, product=tp * pp))
    if (gpus // pp) % ep:
        raise ValidationError("ep", _("expert parallel size {ep} must divide the {gpus} GPUs "
                                      "of a pipeline stage").format(ep=ep, gpus=gpus // pp))
    if ep > node and ep % node:
        raise ValidationError("ep", _("an EP group of {ep} GPUs spanning nodes must fill "
                                      "whole nodes of {node}").format(ep=ep, node=node))
    return MoeParallelLayout(gpus, tensor_parallel=tp, pipeline_parallel=pp,
                             expert_parallel=ep)


def _state_bytes(inputs: Inputs, accelerator: str) -> StateBytes:
    """Bytes per parameter of the model states, the recipe's quantized weight copies
    (formulas.model.recipes) on top of the 16-bit weights."""
    cache = recipe_by_id(inputs.text("gemm_recipe"), accelerator).weight_cache_bytes
    weights, gradients, optimizer = STATE_BYTES[inputs.text("model_states")]
    return StateBytes(weights + cache, gradients, optimizer, cache)


def _moe_step(inputs: Inputs) -> Computed:
    model = moe_architecture(inputs)
    layout = _layout(inputs, model.routed_experts, model.layers)
    node, seq = inputs.whole("gpus_per_node"), inputs.whole("seq_len")
    global_batch, micro = inputs.whole("global_batch"), inputs.whole("micro_batch")
    tokens = float(global_batch * seq)
    if global_batch % layout.data_parallel:
        raise ValidationError("global_batch", _(
            "{batch} sequences do not split over {replicas} data-parallel replicas").format(
            batch=global_batch, replicas=layout.data_parallel))
    gpu = hardware.get(inputs.text("gpu"))
    per_param = _state_bytes(inputs, gpu.id)
    states = model_state_bytes_per_gpu(model, layout, zero_stage=inputs.whole("zero_stage"),
                                       weight_bytes=per_param.weights,
                                       gradient_bytes=per_param.gradients,
                                       optimizer_bytes=per_param.optimizer)
    recompute = inputs.flag("full_recompute")
    activations = activation_bytes_per_gpu(model, layout, micro * seq, recompute=recompute)
    # The label read as GiB, less the reserve, as model_memory and the planner count it.
    usable = usable_bytes(device_capacity_bytes(gpu.memory_bytes), inputs.num("memory_reserve"))

    per_node = inputs.text("dispatch") == "per_node"
    try:
        traffic = step_alltoall_traffic(model, layout, tokens_per_step=tokens,
                                        gpus_per_node=node, precision=alltoall_precision(inputs),
                                        per_node=per_node, max_nodes=max_nodes(inputs))
    except ValueError as err:  # k experts cannot fit in M nodes
        raise ValidationError("max_nodes_per_token", str(err)) from None
    intra_bw, inter_bw = inputs.num("intra_node_bandwidth"), inputs.num("inter_node_bandwidth")
    # The shares of the line rates the kernels reach: DeepEP's normal kernels for the
    # per-node dispatch (formulas.moe.deepep, from its published H800 table); NCCL's
    # alltoall, as nccl-tests measures it, for direct copies (catalogues.link_speeds).
    if per_node:
        kernels = calibrate()
        intra_share, inter_share = kernels.nvlink_share, kernels.rdma_share
    else:
        intra_share = scale_up_curve(gpu.id).alltoall_efficiency
        inter_share = network_curve("ib_ndr").alltoall_efficiency
    # Hot experts: the alltoall waits for the busiest GPU, whose experts also compute
    # more; redundant copies (EPLB) flatten it (formulas.moe.eplb).
    redundant = inputs.whole("redundant_experts")
    cv = inputs.opt("load_cv") or 0.0
    hot = busiest_gpu_factor(cv, model.routed_experts, layout.expert_parallel, redundant)
    a2a_time = hot * traffic.time_s(intra_bw * intra_share, inter_bw * inter_share)
    peak = inputs.opt("peak_flops") or gpu.peak_bf16_flops
    flops = step_flops_per_gpu(model, tokens, layout.gpus, seq, recompute=recompute)
    routed = (6.0 * model.experts_per_token * expert_params(model) * model.moe_layers
              * tokens / layout.gpus * (4.0 / 3.0 if recompute else 1.0))
    muon = inputs.text("model_states") == "muon"
    flops += muon_flops_per_gpu(model, layout.gpus) if muon else 0.0
    compute_time = (flops + (hot - 1.0) * routed) / (peak * inputs.num("compute_efficiency"))
    host = offloaded(inputs.text("offload"), optimizer_bytes=states.optimizer,
                     per_param=per_param,
                     activations=activations, layers=model.layers, compute_s=compute_time,
                     host=host_side(gpu.id), overlap=inputs.num("overlap"))
    total = states.total - host.optimizer + activations - host.activations
    # Each GPU's redundant copies: an expert's weights, gradients and optimizer states,
    # sharded as the expert's own over its expert-data-parallel group.
    extra = (copies_per_gpu(redundant, layout.expert_parallel) * expert_params(model)
             * model.moe_layers / layout.pipeline_parallel)
    zero, edp = inputs.whole("zero_stage"), layout.expert_data_parallel
    redundant_bytes = extra * (per_param.weights / (edp if zero >= 3 else 1)
                               + per_param.gradients / (edp if zero >= 2 else 1)
                               + per_param.optimizer / (edp if zero >= 1 else 1))
    total += redundant_bytes
    exposed = max(0.0, a2a_time - inputs.num("overlap") * compute_time)
    sync_bytes = gradient_sync_bytes_per_gpu(model, layout, per_param.gradients)
    # Ring bandwidth terms over the network (an upper bound where a group shares a node).
    sync_time = math.fsum(
        flat_cost("allreduce", "ring", params * per_param.gradients, ranks, inter_bw,
                  0.0).time_s
        for params, ranks in ((non_expert_params_per_gpu(model, layout), layout.data_parallel),
                              (expert_params_per_gpu(model, layout),
                               layout.expert_data_parallel)))
    a2a_bytes = traffic.intra_node_bytes + traffic.inter_node_bytes
    warnings = []
    if total > usable:
        warnings.append(_(
            "Does not fit: {total:.4g} GB per GPU against the {usable:.4g} GB of {gpu}'s "
            "memory a layout may use (its {capacity:.4g} GB less the {reserve:.0%} "
            "reserve).").format(
            total=total / 1e9, usable=usable / 1e9, gpu=gpu.name,
            capacity=device_capacity_bytes(gpu.memory_bytes) / 1e9,
            reserve=inputs.num("memory_reserve")))
    notes = [
        _("Per step each GPU sends {alltoall:.4g} GB in expert alltoalls and {sync:.4g} GB "
          "to synchronise gradients: the alltoall grows with tokens x layers, the allreduce "
          "with parameters.").format(alltoall=a2a_bytes / 1e9, sync=sync_bytes / 1e9),
        _("Activations: a first-order estimate (1F1B, BF16, fused attention, no dropout); "
          "DeepSeek-V3's own savings (recomputed norms and MLA up-projections, FP8 caches) "
          "are not modelled."),
        _("Weights: {wide:g} B per parameter, plus {quantized:.3g} B of the GEMM recipe's "
          "quantized copies ({recipe}; formulas.model.recipes).").format(
            wide=per_param.wide_weights, quantized=per_param.quantized,
            recipe=inputs.text("gemm_recipe")),
    ]
    rows = (
        (_("Weights"), states.weights), (_("Gradients"), states.gradients),
        (_("Optimizer states (incl. master weights)"), states.optimizer - host.optimizer),
        (_("Activations"), activations - host.activations),
        (_("Redundant expert copies (EPLB)"), redundant_bytes),
        (_("In host memory (offload)"), host.optimizer + host.activations),
    )
    return Computed(
        values={
            "total_bytes": total, "fits": total <= usable,
            "weights_bytes": states.weights, "gradients_bytes": states.gradients,
            "optimizer_bytes": states.optimizer - host.optimizer,
            "activations_bytes": activations - host.activations,
            "redundant_expert_bytes": redundant_bytes, "busiest_gpu_load": hot,
            "experts_per_gpu": model.routed_experts / layout.expert_parallel,
            "expert_data_parallel": float(layout.expert_data_parallel),
            "alltoall_inter_node_bytes": traffic.inter_node_bytes,
            "alltoall_intra_node_bytes": traffic.intra_node_bytes,
            "alltoall_time": a2a_time, "compute_time": compute_time,
            "alltoall_to_compute": a2a_time / compute_time,
            "exposed_alltoall_time": exposed,
            "step_time": compute_time + exposed + host.exposed_s,
            "host_bytes": host.optimizer + host.activations,
            "allreduce_bytes": sync_bytes, "allreduce_time": sync_time,
            "alltoall_to_allreduce_bytes": a2a_bytes / sync_bytes if sync_bytes else None,
        },
        warnings=warnings, notes=notes,
        table=Table((_("Part"), _("Per GPU")),
                    tuple((n, f"{v / 1e9:.4g} GB") for n, v in rows),
                    caption=_("Memory per GPU")),
    )


def _p(name: str, label: str, default: float, bounds: tuple[float, float], help_text: str,
       *, unit: str = "", kind: str = "int") -> Param:
    return Param(name, label, "int" if kind == "int" else "float", default, unit=unit,
                 minimum=bounds[0], maximum=bounds[1], help=help_text)


_LAYOUT_PARAMS: tuple[Param, ...] = (
    _p("seq_len", "Sequence length", 4096, (1, 10_000_000),
       "Tokens per sequence. DeepSeek-V3 pre-training: 4K (report, Sec. 4.2).", unit="token"),
    _p("global_batch", "Global batch", 15360, (1, 100_000_000),
       "Sequences per step. DeepSeek-V3: 15,360 after the ramp-up (Sec. 4.2).",
       unit="sequence"),
    _p("micro_batch", "Micro-batch", 1, (1, 100_000),
       "Sequences per GPU per pass, for the activations. An assumption: DeepSeek does "
       "not publish it.", unit="sequence"),
    _p("num_gpus", "GPUs", 2048, (1, 10_000_000), "DeepSeek-V3: 2,048 H800 (Sec. 3.1).",
       unit="GPU"),
    _p("gpus_per_node", "GPUs per node", 8, (1, 1024), "The NVLink domain: 8 in an H800 node."),
    _p("tp", "Tensor-parallel size", 1, (1, 100_000), "DeepSeek-V3: none (Sec. 3.2)."),
    _p("pp", "Pipeline-parallel size", 16, (1, 100_000), "DeepSeek-V3: 16 (Sec. 3.2)."),
    _p("ep", "Expert-parallel size", 64, (1, 100_000),
       "GPUs sharing one layer's routed experts. DeepSeek-V3: 64 over 8 nodes (Sec. 3.2)."),
    _p("zero_stage", "ZeRO stage", 1, (0, 3),
       "Over the DP group for the rest, over the expert-DP group for experts. DeepSeek-V3: "
       "ZeRO-1 (Sec. 3.2)."),
    Param("model_states", "Model-state precision", "choice", "deepseek_v3",
          choices=(Choice("deepseek_v3", "DeepSeek-V3: 2 + 4 + 8 B (FP32 grads and master, "
                                         "BF16 moments)"),
                   Choice("mixed_adam", "Mixed-precision Adam: 2 + 2 + 12 B (ZeRO)"),
                   Choice("muon", "Muon: 2 + 4 + 8 B, and its Newton-Schulz FLOPs")),
          help="Weights + gradients + optimizer bytes per parameter: DeepSeek-V3 report, "
               "Sec. 3.3.3; Rajbhandari et al. 2020, Sec. 3.1."),
    Param("full_recompute", "Full activation recomputation", "bool", False,
          help="Keep each layer's input only and repeat the forward pass (8 N per token "
               "instead of 6 N)."),
    *EXPERT_COMM_PARAMS,
    Param("gpu", "GPU", "choice", "h800", choices=accelerator_choices(),
          help="Peak FLOP/s and memory; its NVLink's alltoall share for direct copies. "
               "DeepSeek-V3: H800, the H100's compute and 80 GB with NVLink at 200 GB/s "
               "per direction."),
    PEAK_FLOPS_PARAM,
    MEMORY_RESERVE_PARAM,
    _p("compute_efficiency", "Achieved fraction of peak in compute", 0.6, (0.01, 1),
       "Assumption: one average speed for every kernel, 60% of peak, so that this "
       "first-order step shows its parts; moe_plan prices each kernel at its measured "
       "speed instead (dense chapter, the speed model).",
       unit="1", kind="float"),
    _p("intra_node_bandwidth", "NVLink line rate per GPU", 200e9, (1e6, 1e14),
       "Per direction. H800: 400 GB/s bidirectional, 200 each way (DeepSeek-V3 measures "
       "160, Sec. 3.2.2). The alltoall reaches a measured share of it: DeepEP's normal "
       "kernels 0.68 per node (its H800 table, formulas.moe.deepep), NCCL's alltoall 0.71 "
       "direct (catalogues.link_speeds).", unit="B/s", kind="float"),
    _p("inter_node_bandwidth", "Network line rate per GPU", 50e9, (1e6, 1e14),
       "Per direction: one 400 Gb/s InfiniBand NIC per GPU, 50 GB/s (Sec. 3.2.2). DeepEP's "
       "kernels reach 0.88 of it, NCCL's alltoall 0.74 (as above).",
       unit="B/s", kind="float"),
    Param("load_cv", "Expert load imbalance (coefficient of variation)", "float", None,
          minimum=0, maximum=10, optional=True, placeholder="balanced",
          help="Standard deviation of an expert's load over its mean; blank: every expert "
               "equally loaded. The alltoall waits for the busiest GPU, whose experts also "
               "compute more (loads normal, as in expert_load)."),
    REDUNDANT_EXPERTS_PARAM,
    gemm_recipe_param("blockwise"),
    OFFLOAD_PARAM,
    _p("overlap", "Share of compute the alltoall hides behind", 0.0, (0, 1),
       "0: every dispatch waits (plain EP). 1: DeepSeek's DualPipe hides it fully behind "
       "another micro-batch's compute (Sec. 3.2.1).", unit="1", kind="float"),
)

MOE_STEP = Calculator(
    id="moe_step",
    headline=("total_bytes", "alltoall_time", "compute_time", "alltoall_to_allreduce_bytes"),
    advanced=(*MOE_ARCHITECTURE_DETAIL, "peak_flops", "compute_efficiency", "dispatch_bytes",
              "combine_bytes", "model_states", "micro_batch", "memory_reserve"),
    title="Mixture of experts: memory, expert alltoall and allreduce per step",
    summary="Memory per GPU under EP x TP x PP x DP; the dispatch and combine alltoalls "
            "per step, inside and between nodes, against compute and the gradient allreduce.",
    chapter="moe.md",
    params=(*MOE_ARCHITECTURE_PARAMS, *_LAYOUT_PARAMS),
    outputs=(
        Output("total_bytes", "Memory per GPU", "B"),
        Output("fits", "Fits in the GPU", "", "bool"),
        Output("weights_bytes", "Weights", "B"),
        Output("gradients_bytes", "Gradients", "B"),
        Output("optimizer_bytes", "Optimizer states", "B"),
        Output("activations_bytes", "Activations (first-order)", "B"),
        Output("redundant_expert_bytes", "Redundant expert copies (EPLB)", "B"),
        Output("busiest_gpu_load", "Busiest GPU's expert load / mean", "1", "fixed"),
        Output("experts_per_gpu", "Routed experts per GPU per layer", "", "fixed"),
        Output("expert_data_parallel", "Expert-data-parallel size", "", "count"),
        Output("alltoall_inter_node_bytes", "Alltoall bytes per GPU per step, network", "B"),
        Output("alltoall_intra_node_bytes", "Alltoall bytes per GPU per step, NVLink", "B"),
        Output("alltoall_time", "Alltoall time per step", "s"),
        Output("compute_time", "Compute time per step", "s"),
        Output("alltoall_to_compute", "Alltoall / compute", "1", "fixed"),
        Output("exposed_alltoall_time", "Alltoall not hidden", "s"),
        Output("step_time", "Step time (compute + exposed alltoall)", "s"),
        Output("host_bytes", "Offloaded to host memory, per GPU", "B"),
        Output("allreduce_bytes", "Gradient allreduce bytes per GPU per step", "B"),
        Output("allreduce_time", "Gradient allreduce time (network)", "s"),
        Output("alltoall_to_allreduce_bytes", "Alltoall bytes / allreduce bytes", "1", "fixed"),
    ),
    function=_moe_step,
    sources=(
        "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Secs. 2.1.2, 3.1-3.3, 4.2",
        "Lepikhin et al. 2020, GShard, Sec. 3 (dispatch and combine as AllToAll)",
        "Megatron-Core MoE documentation (expert and expert-data-parallel groups)",
        "Rajbhandari et al. 2020, ZeRO, Secs. 3.1, 5, 7",
        "Korthikanti et al. 2022, Reducing Activation Recomputation, Sec. 4, Table 2",
        "Thakur, Rabenseifner and Gropp 2005 (ring allreduce bytes)",
    ),
)
