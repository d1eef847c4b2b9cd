"""What one layout costs per step: compute per pipeline rank, the four kinds of traffic,
the bubble, and how much of the traffic hides behind compute.

Per micro-batch, the slowest pipeline rank sets the pace (the stage with the most
layers, or the last one with the output layer). Its slot is its compute, its
recomputation, its tensor-parallel collectives (exposed, as in Megatron-LM at the time
of Narayanan et al. 2021), the part of its context-parallel traffic that does not hide
behind attention, and its pipeline sends. The step is m slots plus the schedule's
bubble (formulas.parallel.schedules), plus the data-parallel traffic that does not hide behind
the backward pass. Hiding is an efficiency ``overlap`` between 0 and 1: the share of the
communication that fits under the compute it could hide behind and actually disappears.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from calculators.formulas.collectives import costs as comm
from calculators.formulas.model.architecture import matmul_params_per_layer
from calculators.formulas.model.flops import recompute_flops_per_token
from calculators.formulas.parallel import context_parallel as cpar
from calculators.formulas.parallel.schedules import schedule_cost

if TYPE_CHECKING:
    from calculators.formulas.collectives.costs import Collective
    from calculators.formulas.model.architecture import Architecture

RECOMPUTE_MODES = ("none", "selective", "full")
#: Megatron's tensor parallelism: two allreduces per layer forward (after attention,
#: after the MLP) and two backward (Shoeybi et al. 2019, Sec. 3, Fig. 4); full
#: recomputation repeats the forward pair. With sequence parallelism each allreduce
#: becomes a reduce-scatter + allgather of the same total bytes (Korthikanti et al.
#: 2022, Sec. 4.2.2), so the cost is the same.
TP_ALLREDUCES_PER_LAYER = {"none": 4, "selective": 4, "full": 6}
#: A fused causal attention kernel skips the blocks above the diagonal, about half of
#: QK^T and of the product with V for long sequences (Dao 2023, FlashAttention-2, Sec.
#: 3.1.1). Time is charged for what runs; model FLOPs (MFU) still count the whole s^2
#: term, as PaLM's 12 L H Q T and Megatron's s/(6h) do. Materialised attention computes
#: the full matrix and masks it.
CAUSAL_SHARE = 0.5


@dataclass(frozen=True)
class Links:
    """Bandwidths (B/s per GPU per direction, efficiency applied), latency, domain."""

    domain: int
    intra: float
    inter: float
    latency: float


class CollectiveCache:
    """Collective costs of one search, memoised: the same few sizes recur thousands of
    times. Values: (seconds, bytes each GPU sends, share of those bytes that leave the
    scale-up domain)."""

    def __init__(self, links: Links) -> None:
        self.links = links
        self._seen: dict[tuple[str, float, int, int], tuple[float, float, float]] = {}
        self._dp: dict[tuple[int, tuple[int, int], int, float, float], DpRuns] = {}

    def run(self, kind: Collective, size: float, ranks: int,
            per_domain: int) -> tuple[float, float, float]:
        if ranks < 2 or size <= 0:
            return 0.0, 0.0, 0.0
        key = (kind, size, ranks, per_domain)
        hit = self._seen.get(key)
        if hit is None:
            lk = self.links
            cost = comm.hierarchical_cost(kind, size, ranks, max(1, per_domain), lk.intra,
                                          lk.inter, lk.latency)
            inside = comm.hierarchical_cost(kind, size, per_domain, per_domain, lk.intra,
                                            lk.inter, lk.latency) if per_domain > 1 else None
            sent = cost.bytes_sent_per_rank
            local = inside.bytes_sent_per_rank if inside is not None else 0.0
            share = 0.0 if per_domain >= ranks else (sent - local) / sent if sent else 0.0
            hit = (cost.time_s, sent, share)
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
        """A send between neighbouring stages: a + n/B (a two-rank broadcast)."""
        lk = self.links
        bandwidth = lk.inter if crosses else lk.intra
        return comm.flat_cost("broadcast", "ring", size, 2, bandwidth, lk.latency).time_s


@dataclass(frozen=True)
class LayerFlops:
    """FLOPs one layer runs per token, forward + backward, and what recomputation adds
    (counted as run: fused causal attention at ``CAUSAL_SHARE``)."""

    layer: float
    attention_forward: float
    recompute: dict[str, float]
    output: float


def layer_flops(arch: Architecture, attention: str) -> LayerFlops:
    """6 x matrix weights + 12 s (heads x head_dim) per token per layer (Korthikanti et al.
    2022, Sec. 6, divided by layers and tokens); the output layer 6 V h (its logits);
    full recomputation one more forward, selective the attention-score term again
    (formulas.model.flops.recompute_flops_per_token)."""
    share = CAUSAL_SHARE if attention == "fused" else 1.0
    matmul = 2.0 * matmul_params_per_layer(arch)
    attn_fwd = 4.0 * arch.seq_len * arch.attention_width * share
    return LayerFlops(
        layer=3.0 * (matmul + attn_fwd), attention_forward=attn_fwd,
        recompute={"none": 0.0, "full": matmul + attn_fwd,
                   "selective": recompute_flops_per_token(arch, "selective") / arch.layers
                   * share},
        output=6.0 * arch.vocab * arch.hidden)


def cp_layer_time(arch: Architecture, cache: CollectiveCache, *, method: str,
                  tp: int, cp: int, per_domain: int, micro_batch: int, act_bytes: float,
                  attention_s: float, overlap: float) -> tuple[float, float, float]:
    """(time, exposed time, bytes sent) of one layer's context-parallel traffic for one
    micro-batch: each of the ring's sends hides behind the attention of the one block
    computed meanwhile (Liu et al. 2023, Sec. 3; context_parallel.ring_exposed_time_s)
    at the overlap efficiency; the all-gather (Llama 3) and Ulysses' all-to-alls are on
    the critical path. ``attention_s`` is the layer's forward attention time on this
    GPU; the backward's is twice that."""
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
    exposed = (cpar.ring_exposed_time_s(layer.forward_s, cp, attention_s, overlap)
               + cpar.ring_exposed_time_s(layer.backward_s, cp, 2.0 * attention_s, overlap))
    return total, exposed, layer.bytes_sent


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
    (bucketed reduction, Li et al. 2020, Sec. 3.2.3) or forward (prefetched gathers).
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
        time, sent, inter = rs_s + ag_s, rs_b + ag_b, rs_b * rs_x + ag_b * ag_x
        hideable = min(time, backward_s)
    elif zero_stage == 2:
        time, sent = m * rs_s + ag_s, m * rs_b + ag_b
        inter = m * rs_b * rs_x + ag_b * ag_x
        hideable = m * min(rs_s, backward_s)
    else:
        time, sent = m * (2.0 * ag_s + rs_s), m * (2.0 * ag_b + rs_b)
        inter = m * (2.0 * ag_b * ag_x + rs_b * rs_x)
        hideable = m * (min(ag_s, forward_s) + min(ag_s + rs_s, backward_s))
    if hybrid:
        ar_s, ar_b, _ = runs.replicas
        time, sent, inter = time + ar_s, sent + ar_b, inter + ar_b
        hideable += min(ar_s, backward_s)
    return DpCost(time, time - overlap * hideable, sent, inter)
