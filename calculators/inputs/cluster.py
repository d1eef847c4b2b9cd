"""The planner's inputs (architecture, batch, GPUs, links, efficiencies, schedule,
precision, optimizer, memory), declared once for ``parallel_plan`` and for the sizing
that runs the same search, and how they are read into the planner's ``Cluster``,
``Options`` and state bytes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.core.spec import Param
from calculators.formulas.parallel.memory import StateBytes, state_bytes
from calculators.formulas.planner.layout import DEFAULT_OVERLAP, Cluster, Options
from calculators.formulas.planner.ranking import RANK_TOLERANCE
from calculators.inputs.architecture import ARCHITECTURE_PARAMS
from calculators.inputs.hardware import (
    GPU_MEMORY_PARAM,
    PEAK_FLOPS_PARAM,
    PEAK_PRECISION_PARAM,
    accelerator_choices,
    peak_flops,
    peak_precision,
)
from calculators.inputs.layer_mix import DOCUMENT_PARAMS
from calculators.inputs.machine import fabric_for, machine_for, with_reserved_sms
from calculators.inputs.memory import (
    ATTENTION_PARAM,
    DROPOUT_PARAM,
    GRADIENTS_PARAM,
    MEMORY_RESERVE_PARAM,
    PLANNER_OFFLOAD_PARAM,
    gpu_usable,
)
from calculators.inputs.parallel import (
    COMM_SMS_PARAM,
    CP_METHOD_PARAM,
    SCHEDULE_PARAM,
    VIRTUAL_STAGES_PARAM,
    reserved_sms,
)
from calculators.inputs.speed import COMM_EFFICIENCY_PARAM, SPEED_PARAMS
from calculators.inputs.training import (
    OPTIMIZER_PARAM,
    PRECISION_PARAM,
    checked_recipe,
    input_recipe,
)

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

PLANNER_PARAMS: tuple[Param, ...] = (
    *ARCHITECTURE_PARAMS,
    *DOCUMENT_PARAMS,
    Param(
        "global_batch",
        "Global batch",
        "int",
        1536,
        unit="sequence",
        minimum=1,
        maximum=100_000_000,
        help="Sequences per optimizer step. GPT-3 on 1,024 "
        "A100s: 1,536 (Narayanan et al. 2021, Sec. 5.1).",
    ),
    Param(
        "num_gpus",
        "GPUs",
        "int",
        1024,
        unit="GPU",
        minimum=1,
        maximum=1_000_000,
        help="tp x pp x dp must equal this.",
    ),
    Param(
        "gpus_per_node",
        "GPUs per node",
        "int",
        8,
        minimum=1,
        maximum=1024,
        help="GPUs per server: 8 in a DGX/HGX node, 4 in a GB200 NVL72 compute tray. "
        "GPU counts are whole nodes. It also scales the host memory per node; the links "
        "follow the NVLink domain below, so it may not change the layout.",
    ),
    Param(
        "nvlink_domain",
        "NVLink domain",
        "int",
        None,
        unit="GPU",
        minimum=1,
        maximum=1024,
        optional=True,
        placeholder="from the GPU",
        help="GPUs joined by the scale-up switches at the GPU's NVLink bandwidth. Blank: "
        "the catalogue's (8 in a DGX/HGX node, 72 in a GB200/GB300 NVL72 rack, 64 in a "
        "TPU cube or a Trn2 UltraServer, 384 in a CloudMatrix384). Ranks "
        "are placed TP, CP, DP, PP, fastest first (Megatron-Core's default order).",
    ),
    Param(
        "gpu",
        "GPU",
        "choice",
        "a100_80gb_sxm",
        choices=accelerator_choices(),
        help="Peak dense BF16 FLOP/s, memory and NVLink bandwidth from the datasheet.",
    ),
    PEAK_PRECISION_PARAM,
    PEAK_FLOPS_PARAM,
    GPU_MEMORY_PARAM,
    Param(
        "intra_node_bandwidth",
        "Intra-node bandwidth per GPU",
        "float",
        None,
        unit="B/s",
        minimum=1e6,
        maximum=1e14,
        optional=True,
        placeholder="NVLink, per direction",
        help="Blank: the GPU's scale-up bandwidth per direction (A100 300 GB/s, "
        "H100 450 GB/s).",
    ),
    Param(
        "inter_node_bandwidth",
        "Inter-node bandwidth per GPU",
        "float",
        None,
        unit="B/s",
        minimum=1e6,
        maximum=1e14,
        optional=True,
        placeholder="one NIC per GPU",
        help="Blank: one NIC per GPU, InfiniBand HDR 200 Gb/s for A100 and NDR "
        "400 Gb/s otherwise (DGX A100 / H100 designs).",
    ),
    COMM_EFFICIENCY_PARAM,
    Param(
        "latency",
        "Per-step latency alpha",
        "float",
        5e-6,
        unit="s",
        minimum=0,
        maximum=1,
        help="Assumption: 5 µs per message step, for the alpha-beta models of the "
        "context-parallel ring and the expert alltoall (the other collectives take "
        "nccl-tests' measured curves, whose floors are 10-50 µs).",
    ),
    Param(
        "overlap",
        "Overlap efficiency",
        "float",
        DEFAULT_OVERLAP,
        unit="1",
        minimum=0,
        maximum=1,
        help="Share of the traffic that fits under compute and really disappears: "
        "gradient reduction behind the backward pass (Li et al. 2020), ZeRO-3 gathers "
        "behind the pass before, the CP ring behind attention. Assumption: 0.8; compute "
        "overlapped with communication ran 18.9% slower on average in arXiv:2507.03114 "
        "(2025). 0: nothing hides; 1: perfect overlap, no contention.",
    ),
    Param(
        "rank_tolerance",
        "Ranking tolerance",
        "float",
        RANK_TOLERANCE,
        unit="1",
        minimum=0,
        maximum=0.5,
        help="Layouts within this fraction of the fastest that fits count as equally "
        "fast, and the simplest of them is recommended: fewest GPUs per model replica "
        "(Narayanan et al. 2021, Sec. 3.3), then fewest parallel dimensions. Assumption: "
        "5%, a little under the step model's "
        "error against measured runs (7-8% for Llama 3 405B at 8K, Dubey et al. 2024, "
        "Table 4). 0: rank by step time alone.",
    ),
    SCHEDULE_PARAM,
    VIRTUAL_STAGES_PARAM,
    COMM_SMS_PARAM,
    CP_METHOD_PARAM,
    ATTENTION_PARAM,
    DROPOUT_PARAM,
    PRECISION_PARAM,
    GRADIENTS_PARAM,
    OPTIMIZER_PARAM,
    MEMORY_RESERVE_PARAM,
    PLANNER_OFFLOAD_PARAM,
    *SPEED_PARAMS,
)


def planner_cluster(inputs: Inputs, *, reserve_sms: bool = True) -> Cluster:
    """The planner's cluster from validated ``PLANNER_PARAMS``: the kernels and links of
    the catalogue (inputs.machine) with the reader's overrides; ``reserve_sms`` False
    leaves every SM computing (what the reserved ones cost is the difference)."""
    gpu = hardware.get(inputs.text("gpu"))
    domain = inputs.whole("nvlink_domain") if inputs["nvlink_domain"] is not None else (
        gpu.scale_up_domain)
    precision = inputs.text("precision")
    network = inputs.text("network")
    override = inputs.opt("peak_flops")
    peak = peak_flops(inputs, gpu)
    # An override of the peak is at ``peak_precision``; the kernels scale from BF16.
    bf16 = override * gpu.peak_bf16_flops / gpu.peak_flops(peak_precision(inputs)) if (
        override) else None
    machine = machine_for(gpu.id, precision=precision,
                          fp8_recipe=checked_recipe(inputs, gpu.id).id, peak_bf16=bf16,
                          kernel_speed_scale=inputs.num("kernel_speed"),
                          attention_kernel=inputs.text("attention_kernel")
                          if inputs.text("attention") == "fused" else "best",
                          gradient_bytes=planner_state_bytes(inputs).gradients)
    if reserve_sms:
        machine = with_reserved_sms(machine, reserved_sms(inputs, machine.speed.sms))
    fabric = fabric_for(gpu.id, domain=domain, intra_bandwidth=inputs.opt("intra_node_bandwidth"),
                        inter_bandwidth=inputs.opt("inter_node_bandwidth"),
                        nic=None if network == "default" else network,
                        link_efficiency=inputs.opt("comm_efficiency"))
    return Cluster(
        num_gpus=inputs.whole("num_gpus"),
        gpus_per_node=domain,
        peak_flops=peak,
        machine=machine,
        fabric=fabric,
        latency=inputs.num("latency"),
        memory_bytes=gpu_usable(inputs, gpu),
        overlap=inputs.num("overlap"),
    )


def planner_options(inputs: Inputs) -> Options:
    """The choices the search holds fixed, from validated ``PLANNER_PARAMS``."""
    recompute = inputs.text("recompute")
    return Options(
        schedule=inputs.text("schedule"),
        virtual_stages=inputs.whole("virtual_stages"),
        cp_method=inputs.text("cp_method"),
        attention=inputs.text("attention"),
        dropout=inputs.flag("dropout"),
        act_bytes=4.0 if inputs.text("precision") == "fp32" else 2.0,
        sequence_parallel=inputs.flag("sequence_parallel"),
        tp_overlap=inputs.text("tp_overlap"),
        dp_overlap=inputs.flag("dp_overlap"),
        recompute=None if recompute == "search" else recompute,
        saved_input_bytes=input_recipe(inputs).saved_input_bytes,
        muon=inputs.text("optimizer") == "muon",
        offload="none" if inputs.text("offload") == "auto" else inputs.text("offload"),
        lean_norms=inputs.flag("lean_norms"),
        zero_stage=None if inputs["zero_stage"] is None else inputs.whole("zero_stage"),
    )


def sizing_options(inputs: Inputs) -> Options:
    """What cluster_sizing carries into the planner's search: ``planner_options``'
    recipe, Muon and offload, on the search's defaults for the rest (the sizing has none
    of parallel_plan's speed inputs)."""
    chosen = planner_options(inputs)
    return Options(saved_input_bytes=chosen.saved_input_bytes, muon=chosen.muon,
                   offload=chosen.offload)


def planner_state_bytes(inputs: Inputs) -> StateBytes:
    """Bytes per parameter of each model state (formulas.parallel.memory.state_bytes)."""
    return state_bytes(inputs.text("precision"), inputs.text("optimizer"),
                       inputs.text("gradients"), input_recipe(inputs).id,
                       narrow_weights=inputs.flag("fp8_weights"))
