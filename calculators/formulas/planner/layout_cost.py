"""What one layout costs per step: compute per pipeline rank, the four kinds of traffic,
the bubble, and how much of the traffic hides behind compute.

Per micro-batch, the slowest pipeline rank sets the pace (the stage with the most
layers, or the last one with the output layer). Its slot is its compute, priced
operation by operation (formulas.kernels.dense_layer), its recomputation, the part of
its tensor-parallel collectives that does not hide behind its GEMMs (``TP_OVERLAPS``),
the part of its context-parallel traffic that does not hide behind attention, and its
pipeline sends. The step is m slots plus the schedule's bubble
(formulas.parallel.schedules), plus the data-parallel traffic that does not hide behind
the backward pass, plus the optimizer step. Collectives take what NCCL measures on the
links (formulas.collectives.achieved).

Hiding costs something: a collective's kernels take multiprocessors and HBM bandwidth
from the compute they overlap. ``overlap`` is the share of hidden traffic that really
disappears; the rest comes back as slower compute (``exposed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from calculators.formulas.collectives import achieved
from calculators.formulas.collectives import costs as comm
from calculators.formulas.kernels.memory_bound import memory_time_s, optimizer_step_bytes
from calculators.formulas.parallel import context_parallel as cpar
from calculators.formulas.parallel.schedules import DUAL_SCHEDULES, schedule_cost

if TYPE_CHECKING:
    from calculators.formulas.collectives.costs import Collective
    from calculators.formulas.kernels.dense_layer import Machine
    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.parallel.memory import StateBytes
    from calculators.formulas.planner.layout import Cluster

#: What the search tries; "light" (formulas.model.activations) only when asked for.
RECOMPUTE_MODES = ("none", "light", "selective", "full")
ALL_RECOMPUTE_MODES = RECOMPUTE_MODES


@dataclass(frozen=True)
class Links:
    """Ring bandwidths (B/s per GPU per direction, measured plateau), alpha, domain: what
    the alpha-beta model of context parallelism reads."""

    domain: int
    intra: float
    inter: float
    latency: float


class CollectiveCache:
    """Collective costs of one search, memoised: the same few sizes recur thousands of
    times. Values: (seconds, bytes each GPU sends, share of those bytes that leave the
    scale-up domain). Seconds are what NCCL reaches on the links
    (formulas.collectives.achieved); bytes are the algorithm's (formulas.collectives.
    costs, a ring inside the domain and one across)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.links = Links(cluster.gpus_per_node, cluster.intra_bandwidth,
                           cluster.inter_bandwidth, cluster.latency)
        self._seen: dict[tuple[str, float, int, int], tuple[float, float, float]] = {}
        self._dp: dict[tuple[int, tuple[int, int], int, float, float], DpRuns] = {}

    def run(self, kind: Collective, size: float, ranks: int,
            per_domain: int) -> tuple[float, float, float]:
        if ranks < 2 or size <= 0:
            return 0.0, 0.0, 0.0
        key = (kind, size, ranks, per_domain)
        hit = self._seen.get(key)
        if hit is None:
            lk, pd = self.links, max(1, per_domain)
            cost = comm.hierarchical_cost(kind, size, ranks, pd, lk.intra, lk.inter, 0.0)
            inside = comm.hierarchical_cost(kind, size, per_domain, per_domain, lk.intra,
                                            lk.inter, 0.0) if per_domain > 1 else None
            sent = cost.bytes_sent_per_rank
            local = inside.bytes_sent_per_rank if inside is not None else 0.0
            share = 0.0 if per_domain >= ranks else (sent - local) / sent if sent else 0.0
            time = achieved.collective_time_s(kind, size, ranks, pd, self.cluster.fabric)
            hit = (time, sent, share)
            self._seen[key] = hit
        return hit

    def dp(self, zero_stage: int, shard: tuple[int, int], replicas: int, grads: float,
           weights: float) -> DpRuns:
        """``dp_runs``, memoised: a search meets the same sharding of the same states for
        every micro-batch size, CP split and recomputation mode."""
        key = (zero_stage, shard, replicas, grads, weights)
        hit = self._dp.get(key)
        if hit is None:
            hit = self._dp[key] = dp_runs(self, zero_stage, shard, replicas, grads=grads,
                                          weights=weights)
        return hit

    def p2p(self, size: float, crosses: bool) -> float:
        """A send between neighbouring pipeline stages (NCCL send/recv)."""
        return achieved.send_time_s(size, crosses, self.cluster.fabric)


def cp_layer_time(arch: Architecture, cache: CollectiveCache, *, method: str,
                  tp: int, cp: int, per_domain: int, micro_batch: int, act_bytes: float,
                  attention_s: tuple[float, float], overlap: float) -> tuple[float, float, float]:
    """(time, exposed time, bytes sent) of one layer's context-parallel traffic for one
    micro-batch: each of the ring's sends hides behind the attention of the one block
    computed meanwhile (Liu et al. 2023, Sec. 3; context_parallel.ring_exposed_time_s)
    at the overlap efficiency; the all-gather (Llama 3) and Ulysses' all-to-alls are on
    the critical path. ``attention_s`` is the layer's (forward, backward) attention time
    on this GPU."""
    if cp <= 1:
        return 0.0, 0.0, 0.0
    dims = cpar.AttentionDims(arch.seq_len, micro_batch, arch.heads // tp,
                              arch.kv_heads // tp, arch.head_dim, act_bytes)
    lk = cache.links
    layer = cpar.layer_comm(method, dims, cp, cpar.Links(per_domain, lk.intra, lk.inter,
                                                         lk.latency))
    total = layer.forward_s + layer.backward_s
    if not layer.overlappable:
        return total, total, layer.bytes_sent
    exposed_s = (cpar.ring_exposed_time_s(layer.forward_s, cp, attention_s[0], overlap)
                 + cpar.ring_exposed_time_s(layer.backward_s, cp, attention_s[1], overlap))
    return total, exposed_s, layer.bytes_sent


#: Schedules that pair one micro-batch's forward chunk with another's backward chunk
#: and run the pipeline's sends under them (DeepSeek-V3 report, Sec. 3.2.1: "both
#: all-to-all and PP communication can be fully hidden").
OVERLAPPING_SCHEDULES = DUAL_SCHEDULES


def pp_exposed_share(schedule: str, overlap: float) -> float:
    """The share of the pipeline sends' time left on the critical path: all of it for
    the classic schedules; under DualPipe(V) what the overlap efficiency leaves of it
    (the sends are far shorter than the paired chunk's compute they hide behind)."""
    if schedule in OVERLAPPING_SCHEDULES:
        return 1.0 - min(1.0, max(0.0, overlap))
    return 1.0


def bubble_fraction(schedule: str, stages: int, micro_batches: int, chunks: int) -> float:
    """Idle time over ideal compute time (formulas.parallel.schedules, T_F = T_B = T_W)."""
    if stages <= 1:
        return 0.0
    return schedule_cost(schedule, stages, micro_batches,
                         virtual_stages=chunks).bubble_fraction


class DpCost(NamedTuple):
    """Data-parallel (sharding) traffic of one step on one GPU (a tuple: the search
    builds one per layout)."""

    time_s: float
    exposed_s: float
    bytes_sent: float
    inter_bytes: float


class DpRuns(NamedTuple):
    """The collectives one sharding runs, each (seconds, bytes each GPU sends, share of
    them across the scale-up domain): the gradients' reduce-scatter, the weights'
    allgather, the gradients' allreduce (stage 0) and, for hybrid sharding, the
    allreduce of the gradient shard across the replicas."""

    reduce_scatter: tuple[float, float, float]
    allgather: tuple[float, float, float]
    allreduce: tuple[float, float, float]
    replicas: tuple[float, float, float]


def dp_runs(cache: CollectiveCache, zero_stage: int, shard: tuple[int, int], replicas: int,
            *, grads: float, weights: float) -> DpRuns:
    """What ``dp_cost`` looks up: the same for every micro-batch count and window."""
    none = (0.0, 0.0, 0.0)
    return DpRuns(cache.run("reduce_scatter", grads, *shard),
                  cache.run("allgather", weights, *shard),
                  cache.run("allreduce", grads, *shard) if zero_stage == 0 else none,
                  cache.run("allreduce", grads / shard[0], replicas, 1) if replicas > 1
                  else none)


def dp_cost(cache: CollectiveCache, zero_stage: int, shard: tuple[int, int],
            replicas: int, *, grads: float, weights: float, micro_batches: int,
            forward_s: float, backward_s: float, overlap: float) -> DpCost:
    """Gradient reduction and (ZeRO-3) weight gathers per step, and what hides.

    ``shard`` = (ranks, ranks per domain) of the group that shards the states;
    ``replicas`` > 1 for hybrid sharding, which adds one allreduce of the gradient shard
    across the replicas (Zhao et al. 2023, PyTorch FSDP, Sec. 3.2.2). Rajbhandari et al.
    2020, Sec. 7: stages 0-2 move 2 Psi per step, stage 3 3 Psi. Stage 2 reduce-scatters
    every micro-batch's gradients as they are produced and stage 3 gathers the weights
    for every forward and every backward (DeepSpeed's behaviour; FSDP's too when it
    reshards). Hidden: at most ``overlap`` of what fits under one micro-batch's backward
    (bucketed reduction, Li et al. 2020, Sec. 3.2.3) or forward (prefetched gathers;
    ZeRO-1's gather of the updated weights behind the next step's first forward).
    """
    runs = cache.dp(zero_stage, shard, replicas, grads, weights)
    return dp_from_runs(runs, zero_stage, replicas > 1, micro_batches=micro_batches,
                        forward_s=forward_s, backward_s=backward_s, overlap=overlap)


def dp_from_runs(runs: DpRuns, zero_stage: int, hybrid: bool, *, micro_batches: int,
                 forward_s: float, backward_s: float, overlap: float) -> DpCost:
    """``dp_cost`` from its collectives (``dp_runs``)."""
    m = micro_batches
    rs_s, rs_b, rs_x = runs.reduce_scatter
    ag_s, ag_b, ag_x = runs.allgather
    if zero_stage == 0:
        time, sent, inter = runs.allreduce
        inter *= sent
        hideable = min(time, backward_s)
    elif zero_stage == 1:
        # The reduce-scatter behind the last micro-batch's backward, the gather of the
        # updated weights behind the next step's first forward (Megatron-Core's
        # distributed optimizer, --overlap-grad-reduce and --overlap-param-gather).
        time, sent, inter = rs_s + ag_s, rs_b + ag_b, rs_b * rs_x + ag_b * ag_x
        hideable = min(rs_s, backward_s) + min(ag_s, forward_s)
    elif zero_stage == 2:
        # Each micro-batch's reduce-scatter runs while the pipeline computes the next
        # (its forward and backward), not only behind its own backward.
        time, sent = m * rs_s + ag_s, m * rs_b + ag_b
        inter = m * rs_b * rs_x + ag_b * ag_x
        hideable = m * min(rs_s, forward_s + backward_s)
    else:
        time, sent = m * (2.0 * ag_s + rs_s), m * (2.0 * ag_b + rs_b)
        inter = m * (2.0 * ag_b * ag_x + rs_b * rs_x)
        hideable = m * (min(ag_s, forward_s) + min(ag_s + rs_s, backward_s))
    if hybrid:
        ar_s, ar_b, _ = runs.replicas
        time, sent, inter = time + ar_s, sent + ar_b, inter + ar_b
        hideable += min(ar_s, backward_s)
    return DpCost(time, time - overlap * hideable, sent, inter)


#: Kernels of one optimizer step: the gradient norm, the multi-tensor update, the copy of
#: the weights to 16 bits and the zeroing of the gradients.
OPTIMIZER_KERNELS = 4


def optimizer_time_s(params: float, per_param: StateBytes, machine: Machine) -> float:
    """The optimizer step over ``params`` local parameters: memory-bound
    (formulas.kernels.memory_bound.optimizer_step_bytes)."""
    moved = optimizer_step_bytes(params, per_param.wide_weights, per_param.gradients,
                                 per_param.optimizer, loss_scaling=machine.loss_scaling)
    return memory_time_s(moved, machine.memory_bandwidth, OPTIMIZER_KERNELS,
                         machine.kernel_overhead_s)
