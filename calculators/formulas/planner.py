"""The TP x PP x DP planner's search: enumerate layouts, cost each, rank them.

Every cost comes from the one implementation of its formula: memory from
formulas.memory, FLOPs from formulas.flops, collectives from formulas.collectives. The
time model (one pipeline step of 1F1B, Narayanan et al. 2021, Sec. 2.2):

    step = (m + p - 1) x (compute + TP comm + PP comm per micro-batch and stage) + DP comm

with m micro-batches per replica, so the (p - 1) extra slots are the bubble, (p-1)/m of
the ideal time. TP and PP communication are taken as exposed (not overlapped with
compute), as in Megatron-LM at the time of the SC21 paper; DP communication may hide
behind backward compute (bucketed allreduce: Li et al. 2020, PyTorch Distributed, Sec.
3.2.3) when ``overlap_dp`` is set. Ranks are placed TP fastest, then DP, then PP
(Megatron-LM's default order), which decides what crosses the node boundary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.core.spec import ValidationError
from calculators.formulas import collectives as comm
from calculators.formulas.flops import megatron_model_flops_per_token, recompute_flops_per_token
from calculators.formulas.memory import Strategy, memory_per_gpu, params_on_gpu

if TYPE_CHECKING:
    from calculators.formulas.architecture import Architecture
    from calculators.formulas.collectives import Collective
    from calculators.formulas.memory import StateBytes

RECOMPUTE_MODES = ("none", "selective", "full")
MICRO_BATCHES = (1, 2, 4, 8)
#: Megatron's tensor parallelism: two allreduces per layer forward (after attention,
#: after the MLP) and two backward (Shoeybi et al. 2019, Sec. 3, Fig. 4); full
#: recomputation repeats the forward pair. With sequence parallelism each allreduce
#: becomes a reduce-scatter + allgather of the same total bytes (Korthikanti et al.
#: 2022, Sec. 4.2.2), so the cost is the same.
TP_ALLREDUCES_PER_LAYER = {"none": 4, "selective": 4, "full": 6}
#: A bound on the search so that a page never hangs on an odd GPU count.
MAX_LAYOUTS = 20_000


@dataclass(frozen=True)
class Cluster:
    """Machines and the assumptions about them (efficiencies are inputs, not facts)."""

    num_gpus: int
    gpus_per_node: int
    peak_flops: float
    compute_efficiency: float
    intra_bandwidth: float  # B/s per GPU per direction, already x efficiency
    inter_bandwidth: float  # B/s per GPU per direction, already x efficiency
    latency: float
    memory_bytes: float
    overlap_dp: bool = True  # DP communication may hide behind backward compute


@dataclass(frozen=True)
class Layout:
    """One costed layout; times in seconds per optimizer step, bytes per GPU per step."""

    tp: int
    pp: int
    dp: int
    micro_batch: int
    recompute: str
    zero_stage: int
    micro_batches: int
    memory_bytes: float
    fits: bool
    compute_s: float
    recompute_s: float
    bubble_s: float
    tp_s: float
    pp_s: float
    dp_s: float
    dp_exposed_s: float
    tp_bytes: float
    pp_bytes: float
    dp_bytes: float
    tp_inter: bool
    pp_inter: bool
    dp_inter: bool
    step_s: float

    @property
    def bubble_fraction(self) -> float:
        """(p - 1) / m: Narayanan et al. 2021, Sec. 2.2.1."""
        return (self.pp - 1) / self.micro_batches

    def parts(self) -> list[tuple[str, float]]:
        return [("compute", self.compute_s), ("recompute", self.recompute_s),
                ("bubble", self.bubble_s), ("TP comm", self.tp_s), ("PP comm", self.pp_s),
                ("DP comm (exposed)", self.dp_exposed_s)]


def divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _collective(cluster: Cluster, kind: Collective, size: float, ranks: int,
                per_node: int) -> tuple[float, float]:
    """(seconds, bytes each GPU sends) of one collective: the ring of
    formulas.collectives inside a node, its two-level form across nodes."""
    if ranks < 2 or size <= 0:
        return 0.0, 0.0
    cost = comm.hierarchical_cost(kind, size, ranks, max(1, per_node), cluster.intra_bandwidth,
                                  cluster.inter_bandwidth, cluster.latency)
    return cost.time_s, cost.bytes_sent_per_rank


def _p2p(cluster: Cluster, size: float, inter: bool) -> float:
    """A point-to-point send: a two-rank broadcast in formulas.collectives, a + n/B."""
    bandwidth = cluster.inter_bandwidth if inter else cluster.intra_bandwidth
    return comm.flat_cost("broadcast", "ring", size, 2, bandwidth, cluster.latency).time_s


def evaluate(arch: Architecture, cluster: Cluster, per_param: StateBytes, global_batch: int,
             *, tp: int, pp: int, dp: int, micro_batch: int, recompute: str, zero_stage: int,
             act_bytes: float = 2.0) -> Layout:
    """Cost one layout: memory, FLOPs and collectives from their formulas."""
    gpn = cluster.gpus_per_node
    m = global_batch // (dp * micro_batch)
    stage_share = math.ceil(arch.layers / pp) / arch.layers
    tokens_mb = micro_batch * arch.seq_len
    rate = cluster.peak_flops * cluster.compute_efficiency
    model_t = megatron_model_flops_per_token(arch) * tokens_mb * stage_share / tp / rate
    extra_t = recompute_flops_per_token(arch, recompute) * tokens_mb * stage_share / tp / rate
    sp = tp > 1
    memory = memory_per_gpu(
        arch, Strategy(tp=tp, pp=pp, dp=dp, zero_stage=zero_stage, micro_batch=micro_batch,
                       sequence_parallel=sp, recompute=recompute, in_flight=min(pp, m)),
        per_param, None, act_bytes / 2.0)
    # TP: allreduces of the b x s x h activation, per layer on this stage.
    act = tokens_mb * arch.hidden * act_bytes
    tp_count = TP_ALLREDUCES_PER_LAYER[recompute] * math.ceil(arch.layers / pp)
    # A TP group that does not divide the node (e.g. 6 of 8 GPUs) straddles two nodes
    # for some groups; the slowest group sets the pace, so cost it across nodes.
    tp_inter = tp > gpn or gpn % tp != 0
    tp_per_node = min(tp, gpn) if gpn % tp == 0 or tp > gpn else math.gcd(tp, gpn)
    tp_one, tp_one_bytes = _collective(cluster, "allreduce", act, tp, tp_per_node)
    # PP: the activation forward and its gradient back, 1/t of it per TP rank
    # (Narayanan et al. 2021, Sec. 4.1, scatter/gather optimisation).
    pp_inter = pp > 1 and tp * dp * pp > gpn
    pp_msg = act / tp
    pp_one = 2.0 * _p2p(cluster, pp_msg, pp_inter) if pp > 1 else 0.0
    # DP: gradients (and ZeRO-3 weights) of this GPU's shard, over dp ranks with stride tp.
    shard = params_on_gpu(arch, tp, pp)
    grads, weights = shard * per_param.gradients, shard * per_param.weights
    dp_node = max(1, min(dp, gpn // tp)) if tp < gpn else 1
    dp_inter = tp * dp > gpn

    # Rajbhandari et al. 2020, Sec. 7: 2 Psi per step for stages 0-2, 3 Psi for stage 3.
    # Stages 2-3 repeat per micro-batch (DeepSpeed reduces each micro-batch's gradients
    # as they are produced; stage 3 gathers weights for every forward and backward).
    def dp_op(kind: Collective, size: float) -> tuple[float, float]:
        return _collective(cluster, kind, size, dp, dp_node)

    backward = 2.0 / 3.0 * model_t + extra_t  # backward = 4 of the 6 FLOP, + recompute
    if zero_stage <= 1:  # one allreduce (ZeRO-1: reduce-scatter + allgather, same bytes)
        dp_s, dp_bytes = dp_op("allreduce", grads)
        hidden = min(dp_s, backward)  # bucketed, behind the last backward pass
    elif zero_stage == 2:
        (rs_s, rs_b), (ag_s, ag_b) = dp_op("reduce_scatter", grads), dp_op("allgather", weights)
        dp_s, dp_bytes = m * rs_s + ag_s, m * rs_b + ag_b
        hidden = m * min(rs_s, backward)
    else:
        (rs_s, rs_b), (ag_s, ag_b) = dp_op("reduce_scatter", grads), dp_op("allgather", weights)
        dp_s, dp_bytes = m * (2 * ag_s + rs_s), m * (2 * ag_b + rs_b)
        # Forward allgather behind the forward pass, backward allgather + reduce-scatter
        # behind the backward pass (prefetching, as DeepSpeed and FSDP do).
        hidden = m * (min(ag_s, model_t / 3.0) + min(ag_s + rs_s, backward))
    dp_exposed = dp_s - (hidden if cluster.overlap_dp else 0.0)
    slot = model_t + extra_t + tp_count * tp_one + pp_one
    return Layout(
        tp=tp, pp=pp, dp=dp, micro_batch=micro_batch, recompute=recompute,
        zero_stage=zero_stage, micro_batches=m, memory_bytes=memory.total,
        fits=memory.total <= cluster.memory_bytes, compute_s=m * model_t,
        recompute_s=m * extra_t, bubble_s=(pp - 1) * slot, tp_s=m * tp_count * tp_one,
        pp_s=m * pp_one, dp_s=dp_s, dp_exposed_s=dp_exposed, tp_bytes=m * tp_count * tp_one_bytes,
        pp_bytes=m * 2 * pp_msg * (pp > 1), dp_bytes=dp_bytes, tp_inter=tp_inter,
        pp_inter=pp_inter, dp_inter=dp_inter, step_s=(m + pp - 1) * slot + dp_exposed,
    )


def search(arch: Architecture, cluster: Cluster, per_param: StateBytes, global_batch: int,
           *, tp: int | None = None, pp: int | None = None, dp: int | None = None,
           micro_batch: int | None = None, act_bytes: float = 2.0) -> list[Layout]:
    """Every valid layout with tp x pp x dp = num_gpus, fastest first (fitting or not).

    Valid: tp divides the heads and KV heads, pp <= layers, dp divides the global batch,
    the micro-batch divides each replica's batch; ZeRO 2-3 only without pipelining.
    """
    n = cluster.num_gpus
    pairs = sum(1 for t in divisors(n) if arch.heads % t == 0 and tp in (None, t)
                for p in divisors(n // t) if p <= arch.layers and pp in (None, p))
    sizes = MICRO_BATCHES if micro_batch is None else (micro_batch,)
    if pairs * len(sizes) * len(RECOMPUTE_MODES) * 4 > MAX_LAYOUTS:
        raise ValidationError("num_gpus", f"{n} GPUs give too many layouts to search here "
                              f"({pairs} tp x pp pairs); fix tp or pp, or pick a GPU count "
                              "with fewer divisors")
    layouts: list[Layout] = []
    for t in divisors(n):
        if arch.heads % t or arch.kv_heads % t or (tp is not None and t != tp):
            continue
        for p in divisors(n // t):
            if p > arch.layers or (pp is not None and p != pp):
                continue
            d = n // (t * p)
            if global_batch % d or (dp is not None and d != dp):
                continue
            per_replica = global_batch // d
            for b in sizes:
                if per_replica % b:
                    continue
                for recompute in RECOMPUTE_MODES:
                    for zero in range(4 if p == 1 and d > 1 else 2 if d > 1 else 1):
                        layouts.append(evaluate(
                            arch, cluster, per_param, global_batch, tp=t, pp=p, dp=d,
                            micro_batch=b, recompute=recompute, zero_stage=zero,
                            act_bytes=act_bytes))
    layouts.sort(key=lambda lay: (lay.step_s, lay.memory_bytes))
    return layouts
