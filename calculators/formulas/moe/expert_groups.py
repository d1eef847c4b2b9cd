"""Expert-parallel groups for the planner: which EP sizes a layout allows, where an EP
group sits, and what one block's four alltoalls cost on one GPU (formulas.moe.planner
uses them for every candidate).

Megatron-Core (``parallel_state.initialize_model_parallel``) lays the routed experts on a
grid of expert-TP x EP x expert-DP x PP over the same GPUs as the attention's TP x CP x
DP x PP, in the same rank order, and requires ``world % (ETP x EP x PP) == 0``; the
expert-data-parallel size is world / (ETP x EP x PP) ("MoE parallel folding"). Experts
here are whole on a GPU (ETP = 1, as in DeepSeek-V3, which uses no TP at all: report,
Sec. 3.2), so EP divides the routed experts and the TP x CP x DP GPUs of a pipeline
stage, and an EP group is EP consecutive ranks. One spanning several scale-up domains
must fill them whole (as the moe_step calculator requires).

An alltoall's time is the slower link's bandwidth term (formulas.moe.step_costs's copies per
link: every copy straight to its expert's GPU at NCCL's alltoall share of each line rate,
or DeepSeek-V3's one network copy per node with node-limited routing, Sec. 3.2.2, at the
shares DeepEP's kernels measure, formulas.moe.deepep) plus a latency alpha per peer per alltoall
(formulas.collectives.costs' direct alltoall): dispatch and combine, forward and backward
(GShard, Lepikhin et al. 2020, Sec. 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.moe.deepep import calibrate
from calculators.formulas.moe.expert_parallel import AlltoallPrecision
from calculators.formulas.moe.step_costs import direct_copies, node_limit, per_node_copies
from calculators.formulas.parallel.placement import members_per_domain
from calculators.formulas.planner.sizes import divisors

if TYPE_CHECKING:
    from calculators.formulas.moe.shape import MoeArchitecture
    from calculators.formulas.parallel.placement import Dims
    from calculators.formulas.planner.layout import Cluster

EP_OVERLAP = ("none", "batch")
#: BF16 for all four alltoalls unless a precision is given.
BF16_ALLTOALLS = AlltoallPrecision()


@dataclass(frozen=True)
class ExpertComm:
    """How the expert alltoalls run: DeepSeek's per-node dispatch or every copy direct,
    the node limit M (None: the model's router's, from its expert groups), bytes per
    element of the four alltoalls, and whether they hide behind another micro-batch's
    compute (``EP_OVERLAP``)."""

    per_node: bool = False
    max_nodes: int | None = None
    precision: AlltoallPrecision = BF16_ALLTOALLS
    overlap: str = "none"


def ep_sizes(model: MoeArchitecture, dims: Dims, domain: int,
             fixed: int | None = None) -> list[int]:
    """EP sizes allowed for ``dims`` (see the module docstring)."""
    stage = dims.tp * dims.cp * dims.dp
    return [e for e in divisors(math.gcd(model.routed_experts, stage))
            if (fixed is None or e == fixed) and (e <= domain or e % domain == 0)]


@dataclass(frozen=True)
class Alltoall:
    """One routed block's four alltoalls for one micro-batch on one GPU."""

    time_s: float
    intra_bytes: float
    inter_bytes: float


def block_alltoall(model: MoeArchitecture, comm: ExpertComm, cluster: Cluster, *,
                   tokens: float, ep: int) -> Alltoall:
    """``tokens`` per GPU (b s / (CP TP): sequence parallelism splits them over TP) x
    copies per link x h x the four alltoalls' bytes per element; raises ValueError when
    the node limit cannot hold k experts."""
    if ep <= 1:
        return Alltoall(0.0, 0.0, 0.0)
    local = members_per_domain(1, ep, cluster.gpus_per_node)
    k = model.experts_per_token
    limit = node_limit(model, ep, local, comm.max_nodes)
    copies = (per_node_copies(model.routed_experts, ep, local, k, limit)
              if comm.per_node else direct_copies(k, ep, local))
    per_copy = tokens * model.hidden * comm.precision.total_bytes_per_element
    intra, inter = copies.intra_node * per_copy, copies.inter_node * per_copy
    fabric = cluster.fabric  # at the alltoall's measured share of each link's line rate
    # NCCL's alltoall for direct copies; DeepEP's normal kernels, at the shares of the
    # line rates its published table measures (formulas.moe.deepep), for the per-node one.
    if comm.per_node:
        kernels = calibrate()
        intra_share, inter_share = kernels.nvlink_share, kernels.rdma_share
    else:
        intra_share, inter_share = (fabric.intra.alltoall_efficiency,
                                    fabric.inter.alltoall_efficiency)
    time = max(intra / (fabric.intra_bandwidth * intra_share),
               inter / (fabric.inter_bandwidth * inter_share))
    alltoalls = 4  # expert_parallel.ALLTOALLS_PER_MOE_LAYER_PER_STEP, per micro-batch here
    return Alltoall(time + alltoalls * (ep - 1) * cluster.latency, intra, inter)
