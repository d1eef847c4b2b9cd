"""The ``moe_step`` calculator: one training step of a mixture of experts on an expert-,
pipeline-, tensor- and data-parallel layout: memory per GPU, the expert alltoall's bytes
and time, the compute it can hide behind, and the gradient allreduce of the same model
(formulas.moe.expert_parallel, formulas.moe.step_costs)."""

from __future__ import annotations

import math

from calculators.catalogues import hardware
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.spec import Choice, Output, Param, ValidationError
from calculators.formulas.collectives.costs import flat_cost
from calculators.formulas.model.model_states import device_capacity_bytes, usable_bytes
from calculators.formulas.moe.expert_parallel import (
    MoeParallelLayout,
    expert_params_per_gpu,
    model_state_bytes_per_gpu,
    non_expert_params_per_gpu,
)
from calculators.formulas.moe.step_costs import (
    activation_bytes_per_gpu,
    gradient_sync_bytes_per_gpu,
    step_alltoall_traffic,
    step_flops_per_gpu,
)
from calculators.inputs.hardware import PEAK_FLOPS_PARAM, accelerator_choices
from calculators.inputs.memory import MEMORY_RESERVE_PARAM
from calculators.inputs.moe import (
    EXPERT_COMM_PARAMS,
    MOE_ARCHITECTURE_DETAIL,
    MOE_ARCHITECTURE_PARAMS,
    alltoall_precision,
    max_nodes,
    moe_architecture,
)

#: Bytes per parameter (weights, gradients, optimizer incl. master weights).
STATE_BYTES: dict[str, tuple[float, float, float]] = {
    # ZeRO (Rajbhandari et al. 2020), Sec. 3.1: 2 + 2 + 12 for mixed-precision Adam.
    "mixed_adam": (2.0, 2.0, 12.0),
    # DeepSeek-V3 report, Sec. 3.3.3: FP32 master weights and gradients, BF16 Adam
    # moments; a BF16 working copy of the weights is our assumption.
    "deepseek_v3": (2.0, 4.0, 8.0),
}


def _layout(inputs: Inputs, experts: int, layers: int) -> MoeParallelLayout:
    gpus, tp, pp, ep = (inputs.whole(n) for n in ("num_gpus", "tp", "pp", "ep"))
    node = inputs.whole("gpus_per_node")
    if experts % ep:
        raise ValidationError("ep", f"expert parallel size {ep} must divide the {experts} "
                                    "routed experts")
    if pp > layers:
        raise ValidationError("pp", f"{pp} pipeline stages is more than the {layers} layers")
    if gpus % (tp * pp):
        raise ValidationError("num_gpus", f"{gpus} GPUs is not a multiple of tp x pp = "
                                          f"{tp * pp}")
    if (gpus // pp) % ep:
        raise ValidationError("ep", f"expert parallel size {ep} must divide the {gpus // pp} "
                                    "GPUs of a pipeline stage")
    if ep > node and ep % node:
        raise ValidationError("ep", f"an EP group of {ep} GPUs spanning nodes must fill "
                                    f"whole nodes of {node}")
    return MoeParallelLayout(gpus, tensor_parallel=tp, pipeline_parallel=pp,
                             expert_parallel=ep)


def _moe_step(inputs: Inputs) -> Computed:
    model = moe_architecture(inputs)
    layout = _layout(inputs, model.routed_experts, model.layers)
    node, seq = inputs.whole("gpus_per_node"), inputs.whole("seq_len")
    global_batch, micro = inputs.whole("global_batch"), inputs.whole("micro_batch")
    tokens = float(global_batch * seq)
    if global_batch % layout.data_parallel:
        raise ValidationError("global_batch", f"{global_batch} sequences do not split over "
                                              f"{layout.data_parallel} data-parallel replicas")
    weight_b, grad_b, optim_b = STATE_BYTES[inputs.text("model_states")]
    states = model_state_bytes_per_gpu(model, layout, zero_stage=inputs.whole("zero_stage"),
                                       weight_bytes=weight_b, gradient_bytes=grad_b,
                                       optimizer_bytes=optim_b)
    recompute = inputs.flag("full_recompute")
    activations = activation_bytes_per_gpu(model, layout, micro * seq, recompute=recompute)
    total = states.total + activations
    gpu = hardware.get(inputs.text("gpu"))
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
    a2a_time = traffic.time_s(intra_bw, inter_bw)
    peak = inputs.opt("peak_flops") or gpu.peak_bf16_flops
    flops = step_flops_per_gpu(model, tokens, layout.gpus, seq, recompute=recompute)
    compute_time = flops / (peak * inputs.num("compute_efficiency"))
    exposed = max(0.0, a2a_time - inputs.num("overlap") * compute_time)
    sync_bytes = gradient_sync_bytes_per_gpu(model, layout, grad_b)
    # Ring bandwidth terms over the network (an upper bound where a group shares a node).
    sync_time = math.fsum(
        flat_cost("allreduce", "ring", params * grad_b, ranks, inter_bw, 0.0).time_s
        for params, ranks in ((non_expert_params_per_gpu(model, layout), layout.data_parallel),
                              (expert_params_per_gpu(model, layout),
                               layout.expert_data_parallel)))
    a2a_bytes = traffic.intra_node_bytes + traffic.inter_node_bytes
    warnings = []
    if total > usable:
        warnings.append(f"Does not fit: {total / 1e9:.4g} GB per GPU against the "
                        f"{usable / 1e9:.4g} GB of {gpu.name}'s memory a layout may use "
                        f"(its {device_capacity_bytes(gpu.memory_bytes) / 1e9:.4g} GB less "
                        f"the {inputs.num('memory_reserve'):.0%} reserve).")
    notes = [
        f"Per step each GPU sends {a2a_bytes / 1e9:.4g} GB in expert alltoalls and "
        f"{sync_bytes / 1e9:.4g} GB to synchronise gradients: the alltoall grows with "
        "tokens x layers, the allreduce with parameters.",
        "Activations: a first-order estimate (1F1B, BF16, fused attention, no dropout); "
        "DeepSeek-V3's own savings (recomputed norms and MLA up-projections, FP8 caches) "
        "are not modelled.",
    ]
    rows = (
        ("Weights", states.weights), ("Gradients", states.gradients),
        ("Optimizer states (incl. master weights)", states.optimizer),
        ("Activations", activations),
    )
    table = Table(("Part", "Per GPU"), tuple((n, f"{v / 1e9:.4g} GB") for n, v in rows),
                  caption="Memory per GPU")
    return Computed(
        values={
            "total_bytes": total,
            "fits": total <= usable,
            "weights_bytes": states.weights,
            "gradients_bytes": states.gradients,
            "optimizer_bytes": states.optimizer,
            "activations_bytes": activations,
            "experts_per_gpu": model.routed_experts / layout.expert_parallel,
            "expert_data_parallel": float(layout.expert_data_parallel),
            "alltoall_inter_node_bytes": traffic.inter_node_bytes,
            "alltoall_intra_node_bytes": traffic.intra_node_bytes,
            "alltoall_time": a2a_time,
            "compute_time": compute_time,
            "alltoall_to_compute": a2a_time / compute_time,
            "exposed_alltoall_time": exposed,
            "step_time": compute_time + exposed,
            "allreduce_bytes": sync_bytes,
            "allreduce_time": sync_time,
            "alltoall_to_allreduce_bytes": a2a_bytes / sync_bytes if sync_bytes else None,
        },
        warnings=warnings,
        notes=notes,
        table=table,
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
                   Choice("mixed_adam", "Mixed-precision Adam: 2 + 2 + 12 B (ZeRO)")),
          help="Weights + gradients + optimizer bytes per parameter: DeepSeek-V3 report, "
               "Sec. 3.3.3; Rajbhandari et al. 2020, Sec. 3.1."),
    Param("full_recompute", "Full activation recomputation", "bool", False,
          help="Keep each layer's input only and repeat the forward pass (8 N per token "
               "instead of 6 N)."),
    *EXPERT_COMM_PARAMS,
    Param("gpu", "GPU", "choice", "h100_sxm", choices=accelerator_choices(),
          help="Peak FLOP/s and memory. The H800 has the H100's compute and 80 GB, with "
               "less NVLink: take h100_sxm and set the link bandwidths."),
    PEAK_FLOPS_PARAM,
    MEMORY_RESERVE_PARAM,
    _p("compute_efficiency", "Achieved fraction of peak in compute", 0.6, (0.01, 1),
       "Assumption: one average speed for every kernel, 60% of peak, so that this "
       "first-order step shows its parts; moe_plan prices each kernel at its measured "
       "speed instead (dense chapter, the speed model).",
       unit="1", kind="float"),
    _p("intra_node_bandwidth", "NVLink bandwidth per GPU", 160e9, (1e6, 1e14),
       "Per direction, achieved. DeepSeek-V3: 160 GB/s on H800 (Sec. 3.2.2).", unit="B/s",
       kind="float"),
    _p("inter_node_bandwidth", "Network bandwidth per GPU", 50e9, (1e6, 1e14),
       "Per direction: one 400 Gb/s InfiniBand NIC per GPU, 50 GB/s (Sec. 3.2.2).",
       unit="B/s", kind="float"),
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
        Output("experts_per_gpu", "Routed experts per GPU per layer", "", "fixed"),
        Output("expert_data_parallel", "Expert-data-parallel size", "", "count"),
        Output("alltoall_inter_node_bytes", "Alltoall bytes per GPU per step, network", "B"),
        Output("alltoall_intra_node_bytes", "Alltoall bytes per GPU per step, NVLink", "B"),
        Output("alltoall_time", "Alltoall time per step", "s"),
        Output("compute_time", "Compute time per step", "s"),
        Output("alltoall_to_compute", "Alltoall / compute", "1", "fixed"),
        Output("exposed_alltoall_time", "Alltoall not hidden", "s"),
        Output("step_time", "Step time (compute + exposed alltoall)", "s"),
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
