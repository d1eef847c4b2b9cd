"""One layout's cost: what a (TP, CP, micro-batch) costs per layer (``Width``), and for
one (dims, micro-batch) the slowest pipeline rank's slot, the bubble, the data-parallel
time of each sharding and the peak memory of each choice (``LayoutBase``), from the
formulas of formulas.planner.layout_cost and formulas.parallel.memory."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from calculators.formulas.parallel import memory as mem
from calculators.formulas.parallel.placement import group_per_domain
from calculators.formulas.parallel.stages import SplitError
from calculators.formulas.planner import layout_cost as lc
from calculators.formulas.planner.layout import Layout
from calculators.formulas.planner.sizes import shard_groups

if TYPE_CHECKING:
    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.parallel.memory import StateBytes
    from calculators.formulas.parallel.placement import Dims
    from calculators.formulas.planner.layout import Cluster, Options
    from calculators.formulas.planner.memo import Memo

class Width(NamedTuple):
    """What one (TP, CP, micro-batch) costs per layer and micro-batch, whatever the
    pipeline, data parallelism and choices: the search's floors and its bases share it."""

    per_gpu: float  # seconds of compute per FLOP-per-token of one micro-batch
    act: float  # bytes of one layer's activation (the TP allreduce's size)
    tp_per_domain: int
    cp_per_domain: int
    tp_op: tuple[float, float, float]  # one TP allreduce: (s, bytes sent, share across nodes)
    cp_layer: tuple[float, float, float]  # one layer's CP: (s, s exposed, bytes sent)


def per_gpu_seconds(arch: Architecture, cluster: Cluster, tp: int, cp: int,
                    micro_batch: int) -> float:
    """Seconds of compute per FLOP-per-token of one micro-batch on one GPU: its tokens
    split over CP, their FLOPs over TP, at the achieved rate. The quick floor and
    ``width_costs`` both use it, so the floor is never above the step time it bounds."""
    rate = cluster.peak_flops * cluster.compute_efficiency
    return micro_batch * arch.seq_len / cp / tp / rate


def width_costs(arch: Architecture, cluster: Cluster, options: Options, cache: lc.CollectiveCache,
                flops: lc.LayerFlops, *, dims: Dims, micro_batch: int) -> Width:
    tp, cp, domain = dims.tp, dims.cp, cluster.gpus_per_node
    tp_pd = group_per_domain(dims, ("tp",), domain)[1]
    cp_pd = group_per_domain(dims, ("cp",), domain)[1]
    per_gpu = per_gpu_seconds(arch, cluster, tp, cp, micro_batch)
    act = micro_batch * arch.seq_len / cp * arch.hidden * options.act_bytes
    cp_layer = lc.cp_layer_time(
        arch, cache, method=options.cp_method, tp=tp, cp=cp, per_domain=cp_pd,
        micro_batch=micro_batch, act_bytes=options.act_bytes,
        attention_s=flops.attention_forward * per_gpu, overlap=cluster.overlap)
    return Width(per_gpu, act, tp_pd, cp_pd, cache.run("allreduce", act, tp, tp_pd), cp_layer)


class LayoutBase:
    """Everything about one (dims, micro-batch) that the recomputation and sharding
    choices share; ``layout`` finishes one choice cheaply. What only the memory check
    needs (the ranks' loads, activation and working bytes) is computed on first use:
    a search skips most bases on their step time alone."""

    def __init__(self, arch: Architecture, cluster: Cluster, per_param: StateBytes, *,
                 options: Options, cache: lc.CollectiveCache, flops: lc.LayerFlops,
                 memo: Memo,
                 dims: Dims, micro_batch: int, micro_batches: int,
                 width: Width | None = None) -> None:
        self.arch, self.memo = arch, memo
        self.cluster, self.per_param, self.dims = cluster, per_param, dims
        self.b, self.m, self.options = micro_batch, micro_batches, options
        tp, cp, pp = dims.tp, dims.cp, dims.pp
        self.chunks = options.chunks(pp)
        self.schedule = options.schedule if pp > 1 else "1f1b"
        split = memo.split(pp, self.chunks)
        if split is None:
            raise SplitError(f"{arch.layers} layers do not split into {pp} stages of "
                             f"{self.chunks} chunks")
        self.split = split
        domain = cluster.gpus_per_node
        if width is None:
            width = width_costs(arch, cluster, options, cache, flops, dims=dims,
                                micro_batch=micro_batch)
        per_gpu, act = width.per_gpu, width.act
        self.group, group_pd = group_per_domain(dims, ("cp", "dp"), domain)
        self.group_pd = group_pd
        pp_pd = group_per_domain(dims, ("pp",), domain)[1]
        self.tp_inter, self.cp_inter = width.tp_per_domain < tp, width.cp_per_domain < cp
        self.dp_inter, self.pp_inter = group_pd < self.group, pp_pd < pp
        self.rec_layer = {k: v * per_gpu for k, v in flops.recompute.items()}
        self.tp_op, self.cp_layer = width.tp_op, width.cp_layer
        msg = act / tp
        sends = 2 * self.chunks if pp > 1 else 0
        self.pp_mb = sends * cache.p2p(msg, self.pp_inter) if sends else 0.0
        self.pp_mb_bytes = sends * msg
        self.bubble = lc.bubble_fraction(self.schedule, pp, micro_batches, self.chunks)
        self.ranks = [(split.rank_layers(rank),
                       per_gpu * (split.rank_layers(rank) * flops.layer
                                  + (flops.output if rank == pp - 1 else 0.0)))
                      for rank in split.ranks_of_interest]
        self.slowest: dict[str, tuple[int, float, float]] = {}
        self.states: dict[tuple[int, int], tuple[tuple[float, float, float], ...]] = {}
        self.scale = options.act_bytes / 2.0
        params = max(memo.rank_params(tp, pp, self.chunks))
        self.grads, self.weights = params * per_param.gradients, params * per_param.weights
        self.cache = cache

    @cached_property
    def loads(self) -> tuple[mem.RankLoad, ...]:
        """What each pipeline rank of interest holds before the choices."""
        dims, opts = self.dims, self.options
        strategy = mem.Strategy(tp=dims.tp, pp=dims.pp, dp=dims.dp, micro_batch=self.b,
                                sequence_parallel=dims.tp > 1, cp=dims.cp,
                                attention=opts.attention, dropout=opts.dropout,
                                schedule=self.schedule, virtual_stages=self.chunks,
                                micro_batches=self.m, cp_method=opts.cp_method)
        return mem.rank_loads(self.arch, strategy, split=self.split)

    @cached_property
    def per_layer(self) -> dict[str, float]:
        return self.memo.per_layer(self.dims.tp, self.dims.cp, self.b)

    @cached_property
    def cp_working(self) -> float:
        return mem.cp_working_bytes(self.arch, self.b, self.dims.tp, self.dims.cp,
                                    method=self.options.cp_method, scale=self.scale)

    def _dense_slot(self, recompute: str) -> tuple[int, float, float]:
        """(layers, compute seconds, slot seconds) of the slowest pipeline rank for one
        micro-batch: its compute, recomputation, TP and exposed CP time, pipeline sends."""
        hit = self.slowest.get(recompute)
        if hit is None:
            ops = lc.TP_ALLREDUCES_PER_LAYER[recompute]
            per_layer_s = self.rec_layer[recompute] + ops * self.tp_op[0] + self.cp_layer[1]
            layers, compute = max(self.ranks, key=lambda lr: lr[1] + lr[0] * per_layer_s)
            hit = (layers, compute, compute + layers * per_layer_s + self.pp_mb)
            self.slowest[recompute] = hit
        return hit

    def step_floor(self, recompute: str) -> float:
        """The step time of every layout with this recomputation, less its exposed
        data-parallel time (which is never negative): a floor under all of them."""
        return self.m * self._dense_slot(recompute)[2] * (1.0 + self.bubble)

    def dp(self, recompute: str, zero_stage: int, shard: int) -> lc.DpCost:
        """The data-parallel cost of one choice: with the slot, all its step time needs."""
        layers, compute, _ = self._dense_slot(recompute)
        backward = 2.0 / 3.0 * compute + layers * self.rec_layer[recompute]
        groups, replicas = shard_groups(shard, self.group, self.group_pd)
        return lc.dp_cost(self.cache, zero_stage, groups, replicas, grads=self.grads,
                          weights=self.weights, micro_batches=self.m, forward_s=compute / 3.0,
                          backward_s=backward, overlap=self.cluster.overlap)

    def step_s(self, recompute: str, dp: lc.DpCost) -> float:
        """One choice's step time, as its Layout has it."""
        return self.step_floor(recompute) + dp.exposed_s

    def _memory_parts(self, recompute: str, zero_stage: int, shard: int) -> tuple[
            tuple[tuple[float, float, float], ...], float, float]:
        """(each rank's model states, one layer's activations, the working bytes)."""
        working = self.cp_working + (self.per_layer["none"] if recompute == "full" else 0.0)
        if zero_stage >= 3:
            working += self.memo.gathered(self.dims.tp, self.per_param, shard)
        states = self.states.get((zero_stage, shard))
        if states is None:
            states = mem.rank_states(self.loads, self.per_param, zero_stage, shard)
            self.states[(zero_stage, shard)] = states
        return states, self.per_layer[recompute], working

    def peak(self, recompute: str, zero_stage: int, shard: int) -> float:
        """The peak memory of one choice (``memory(...).total``), without its breakdown."""
        states, per_layer, working = self._memory_parts(recompute, zero_stage, shard)
        return mem.peak_rank(self.loads, states, per_layer=per_layer, working=working,
                             scale=self.scale)[1]

    def memory(self, recompute: str, zero_stage: int, shard: int) -> mem.Breakdown:
        """The peak memory of one choice on its fullest pipeline rank."""
        states, per_layer, working = self._memory_parts(recompute, zero_stage, shard)
        return mem.peak_breakdown(self.loads, states, per_layer=per_layer, working=working,
                                  scale=self.scale)

    def layout(self, recompute: str, zero_stage: int, shard: int, *,
               dp: lc.DpCost | None = None, memory: mem.Breakdown | None = None) -> Layout:
        m, cl, ops = self.m, self.cluster, lc.TP_ALLREDUCES_PER_LAYER[recompute]
        cp_total, cp_exposed, cp_bytes = self.cp_layer
        layers, compute, slot = self._dense_slot(recompute)
        recompute_mb = layers * self.rec_layer[recompute]
        if dp is None:
            dp = self.dp(recompute, zero_stage, shard)
        if memory is None:
            memory = self.memory(recompute, zero_stage, shard)
        tp_bytes = m * layers * ops * self.tp_op[1]
        cp_sent = m * layers * cp_bytes
        pp_bytes = m * self.pp_mb_bytes
        inter = (tp_bytes * self.tp_op[2] + cp_sent * self.cp_inter
                 + pp_bytes * self.pp_inter + dp.inter_bytes)
        return Layout(
            dims=self.dims, micro_batch=self.b, recompute=recompute, zero_stage=zero_stage,
            shard_group=shard, schedule=self.schedule, chunks=self.chunks, micro_batches=m,
            memory=memory, fits=memory.total <= cl.memory_bytes, bubble_fraction=self.bubble,
            compute_s=m * compute, recompute_s=m * recompute_mb,
            bubble_s=self.bubble * m * slot, tp_s=m * layers * ops * self.tp_op[0],
            cp_s=m * layers * cp_total, cp_exposed_s=m * layers * cp_exposed,
            pp_s=m * self.pp_mb, dp_s=dp.time_s, dp_exposed_s=dp.exposed_s,
            tp_bytes=tp_bytes, cp_bytes=cp_sent, pp_bytes=pp_bytes, dp_bytes=dp.bytes_sent,
            inter_bytes=inter, tp_inter=self.tp_inter, cp_inter=self.cp_inter,
            pp_inter=self.pp_inter, dp_inter=self.dp_inter,
            step_s=self.step_s(recompute, dp))


def links_of(cluster: Cluster) -> lc.Links:
    return lc.Links(cluster.gpus_per_node, cluster.intra_bandwidth, cluster.inter_bandwidth,
                    cluster.latency)
