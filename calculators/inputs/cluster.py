"""The planner's inputs (architecture, batch, GPUs, links, efficiencies, precision,
optimizer), declared once for ``parallel_plan`` and for the sizing that runs the same
search, and how they are read into the planner's ``Cluster``."""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.core.spec import Inputs, Param
from calculators.formulas.planner import Cluster
from calculators.inputs.architecture import ARCHITECTURE_PARAMS
from calculators.inputs.hardware import GPU_MEMORY_PARAM, PEAK_FLOPS_PARAM, accelerator_choices
from calculators.inputs.training import OPTIMIZER_PARAM, PRECISION_PARAM

PLANNER_PARAMS: tuple[Param, ...] = (
    *ARCHITECTURE_PARAMS,
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
        help="The NVLink domain: 8 in a DGX/HGX A100 or H100 node.",
    ),
    Param(
        "gpu",
        "GPU",
        "choice",
        "a100_80gb_sxm",
        choices=accelerator_choices(),
        help="Peak dense BF16 FLOP/s, memory and NVLink bandwidth from the datasheet.",
    ),
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
    Param(
        "comm_efficiency",
        "Achieved fraction of link bandwidth",
        "float",
        0.8,
        unit="1",
        minimum=0.01,
        maximum=1,
        help="Assumption: 0.8, about what nccl-tests measurements reach on NVLink "
        "and InfiniBand (NVIDIA nccl-tests issues).",
    ),
    Param(
        "latency",
        "Per-step latency alpha",
        "float",
        5e-6,
        unit="s",
        minimum=0,
        maximum=1,
        help="Assumption: 5 µs per message step (alpha-beta model).",
    ),
    Param(
        "compute_efficiency",
        "Achieved fraction of peak in compute",
        "float",
        0.6,
        unit="1",
        minimum=0.01,
        maximum=1,
        help="Assumption: the layers' kernels run at 60% of peak when nothing waits. "
        "Megatron reached 52% end to end, communication included "
        "(Narayanan et al. 2021, Table 1).",
    ),
    Param(
        "overlap_dp",
        "Overlap DP communication with backward",
        "bool",
        True,
        help="Assumption: gradient reduction runs in buckets behind the backward pass "
        "(PyTorch DDP, Li et al. 2020; ZeRO-3 prefetches weights). Off: all DP "
        "communication is exposed.",
    ),
    PRECISION_PARAM,
    OPTIMIZER_PARAM,
)


def planner_cluster(inputs: Inputs) -> Cluster:
    """The planner's cluster from validated ``PLANNER_PARAMS``: the one place that applies
    the link efficiency and the default NIC per GPU."""
    gpu = hardware.get(inputs.text("gpu"))
    efficiency = inputs.num("comm_efficiency")
    nic = hardware.default_nic(gpu.id)
    return Cluster(
        num_gpus=inputs.whole("num_gpus"),
        gpus_per_node=inputs.whole("gpus_per_node"),
        peak_flops=inputs.opt("peak_flops") or gpu.peak_bf16_flops,
        compute_efficiency=inputs.num("compute_efficiency"),
        intra_bandwidth=(inputs.opt("intra_node_bandwidth") or gpu.scale_up_bandwidth) * efficiency,
        inter_bandwidth=(inputs.opt("inter_node_bandwidth") or nic.bandwidth) * efficiency,
        latency=inputs.num("latency"),
        memory_bytes=inputs.opt("gpu_memory") or gpu.memory_bytes,
        overlap_dp=inputs.flag("overlap_dp"),
    )
