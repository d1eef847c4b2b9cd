"""The expert-parallel planner's inputs, declared once for ``moe_plan`` and for the
sizing that runs the same search on a mixture of experts: the MoE architecture
(inputs.moe), the dense planner's cluster, schedule, precision and ranking inputs
(inputs.cluster, less its dense architecture), and how the expert alltoalls run.
Defaults: DeepSeek-V3 and its batch (report, Sec. 4.2) on 2,048 H100-class GPUs."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from calculators.formulas.moe.expert_groups import ExpertComm
from calculators.inputs.architecture import ARCHITECTURE_PARAMS
from calculators.inputs.cluster import PLANNER_PARAMS, planner_options
from calculators.inputs.moe import (
    EP_OVERLAP_PARAM,
    EXPERT_COMM_PARAMS,
    MOE_ARCHITECTURE_PARAMS,
    alltoall_precision,
    max_nodes,
)

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs
    from calculators.core.spec import Param
    from calculators.formulas.planner.layout import Options

_DENSE_ONLY = {p.name for p in ARCHITECTURE_PARAMS} - {"seq_len"}
_PLANNER = {p.name: p for p in PLANNER_PARAMS}
_V3 = "DeepSeek-V3 report"

MOE_PLANNER_PARAMS: tuple[Param, ...] = (
    *MOE_ARCHITECTURE_PARAMS,
    replace(_PLANNER["seq_len"], default=4096,
            help=f"Tokens per training sequence. {_V3}, Sec. 4.2: 4K in pre-training."),
    replace(_PLANNER["global_batch"], default=15360,
            help=f"Sequences per optimizer step. {_V3}, Sec. 4.2: 15,360 after the "
                 "ramp-up."),
    replace(_PLANNER["num_gpus"], default=2048,
            help=f"tp x cp x pp x dp must equal this; EP is folded into a stage's GPUs. "
                 f"{_V3}, Sec. 3.1: 2,048 H800."),
    # ``attention`` here is MLA or GQA (inputs.moe); the kernel is taken fused, the
    # accelerator's best.
    *(p for p in PLANNER_PARAMS if p.name not in _DENSE_ONLY | {
        "seq_len", "global_batch", "num_gpus", "gpu", "attention", "attention_kernel"}),
    replace(_PLANNER["gpu"], default="h800",
            help="Peak FLOP/s, memory and NVLink bandwidth from the datasheet. The H800 "
                 "has the H100's compute and memory with NVLink cut to 400 GB/s "
                 f"(DeepSeek-V3 trained on 2,048 of them; {_V3}, Sec. 3.1)."),
    *EXPERT_COMM_PARAMS,
    EP_OVERLAP_PARAM,
)


def moe_planner_options(inputs: Inputs) -> Options:
    """The choices the search holds fixed: inputs.cluster's, with a fused attention
    kernel (FlashAttention, as every MoE here trains; the ``attention`` input names the
    attention's kind instead)."""
    return replace(planner_options(inputs), attention="fused")


def expert_comm(inputs: Inputs) -> ExpertComm:
    """How the expert alltoalls run, from validated ``MOE_PLANNER_PARAMS``."""
    return ExpertComm(per_node=inputs.text("dispatch") == "per_node",
                      max_nodes=max_nodes(inputs), precision=alltoall_precision(inputs),
                      overlap=inputs.text("ep_overlap"))
