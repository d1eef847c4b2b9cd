"""One layout's cost: what a (TP, CP, micro-batch) costs per layer (``Width``), and for
one (dims, micro-batch) the slowest pipeline rank's slot, the bubble, the data-parallel
time of each sharding and the peak memory of each choice (``LayoutBase``), from the
formulas of formulas.planner.layout_cost and formulas.parallel.memory."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from calculators.catalogues.host_links import host_side
from calculators.formulas.kernels import muon
from calculators.formulas.parallel import memory as mem
from calculators.formulas.parallel import offload
from calculators.formulas.parallel.placement import group_per_domain
from calculators.formulas.parallel.stages import SplitError, balanced_split
from calculators.formulas.planner import layer_costs as costs
from calculators.formulas.planner import layout_cost as lc
from calculators.formulas.planner.kind_weights import kind_weights, weighted_layers
from calculators.formulas.planner.layout import Layout
from calculators.formulas.planner.sizes import shard_groups

if TYPE_CHECKING:
    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.parallel.memory import StateBytes
    from calculators.formulas.parallel.placement import Dims
    from calculators.formulas.parallel.stages import StageSplit
    from calculators.formulas.planner.layout import Cluster, Options
    from calculators.formulas.planner.memo import Memo

class Width(NamedTuple):
    """What one (TP, CP, micro-batch) costs per layer and micro-batch, whatever the
    pipeline, data parallelism and choices: the search's floors and its bases share it."""

    stack: costs.StackWidth  # the layer's compute, its TP traffic by mode, the output layer
    act: float  # bytes of one layer's activation (the TP collectives' size)
    tp_per_domain: int
    cp_per_domain: int
    cp_layer: tuple[float, float, float]  # one layer's CP: (s, s exposed, bytes sent)


def width_costs(arch: Architecture, cluster: Cluster, options: Options, cache: lc.CollectiveCache,
                stack: costs.DenseStack, *, dims: Dims, micro_batch: int) -> Width:
    tp, cp, domain = dims.tp, dims.cp, cluster.gpus_per_node
    tp_pd = group_per_domain(dims, ("tp",), domain)[1]
    cp_pd = group_per_domain(dims, ("cp",), domain)[1]
    costs = stack.width(cache, tp=tp, cp=cp, micro_batch=micro_batch, tp_per_domain=tp_pd)
    act = micro_batch * arch.seq_len / cp * arch.hidden * options.act_bytes
    times = costs.times
    cp_layer = lc.cp_layer_time(
        arch, cache, method=options.cp_method, tp=tp, cp=cp, per_domain=cp_pd,
        micro_batch=micro_batch, act_bytes=options.act_bytes,
        attention_s=(times.attention_forward_s, times.attention_backward_s),
        overlap=cluster.overlap)
    return Width(costs, act, tp_pd, cp_pd, cp_layer)


class LayoutBase:
    """Everything about one (dims, micro-batch) that the recomputation and sharding
    choices share; ``layout`` finishes one choice cheaply. What only the memory check
    needs (the ranks' loads, activation and working bytes) is computed on first use:
    a search skips most bases on their step time alone."""

    def __init__(self, arch: Architecture, cluster: Cluster, per_param: StateBytes, *,
                 options: Options, cache: lc.CollectiveCache, stack: costs.DenseStack,
                 memo: Memo, dims: Dims, micro_batch: int, micro_batches: int,
                 width: Width | None = None, split: StageSplit | None = None) -> None:
        self.arch, self.memo = arch, memo
        self.cluster, self.per_param, self.dims = cluster, per_param, dims
        self.b, self.m, self.options = micro_batch, micro_batches, options
        tp, cp, pp = dims.tp, dims.cp, dims.pp
        self.chunks = options.chunks(pp)
        self.schedule = options.schedule if pp > 1 else "1f1b"
        variants = memo.splits(pp, self.chunks)
        if not variants:
            raise SplitError(f"{arch.layers} layers do not split into {pp} stages of "
                             f"{self.chunks} chunks")
        domain = cluster.gpus_per_node
        if width is None:
            width = width_costs(arch, cluster, options, cache, stack, dims=dims,
                                micro_batch=micro_batch)
        act, costs = width.act, width.stack
        times = costs.times
        layer = times.forward_s + times.backward_s
        # A stack of mixed kinds weighs each rank's layers by kind (kind_weights); then
        # any rank may be the slowest, so every rank is weighed.
        weights = kind_weights(arch, times, options.attention)
        run = weighted_layers(arch, weights)
        if split is None:
            # The output layer sits on the last rank: where it outweighs the layers it
            # displaces, the variant with a lighter last stage is faster.
            split = balanced_split(variants, lambda sp, rank: run(sp, rank) * layer
                                   + sp.output_share(rank) * costs.output_s,
                                   every_rank=len(arch.mix.pattern) if weights else 0)
        self.split = split
        self.group, group_pd = group_per_domain(dims, ("cp", "dp"), domain)
        self.group_pd = group_pd
        pp_pd = group_per_domain(dims, ("pp",), domain)[1]
        self.tp_inter, self.cp_inter = width.tp_per_domain < tp, width.cp_per_domain < cp
        self.dp_inter, self.pp_inter = group_pd < self.group, pp_pd < pp
        self.rec_layer = {k: times.recompute_s(k) for k in lc.ALL_RECOMPUTE_MODES}
        self.tp_layer, self.cp_layer = costs.tp, width.cp_layer
        self.forward_layer, self.backward_layer = times.forward_s, times.backward_s
        msg = act / tp
        sends = options.sends(pp)
        self.pp_mb = sends * cache.p2p(msg, self.pp_inter) * lc.pp_exposed_share(
            self.schedule, cluster.overlap) if sends else 0.0
        self.pp_mb_bytes = sends * msg
        self.bubble = lc.bubble_fraction(self.schedule, pp, micro_batches, self.chunks)
        # Per rank of interest: layers run per micro-batch (half of the two copies under
        # DualPipe) and their compute with the rank's share of the output layer.
        self.ranks = [(split.compute_layers(rank),
                       run(split, rank) * layer + split.output_share(rank) * costs.output_s)
                      for rank in (split.weighed_ranks(len(arch.mix.pattern)) if weights
                                   else split.ranks_of_interest)]
        self.slowest: dict[str, tuple[float, float, float]] = {}
        self.states: dict[tuple[int, int], tuple[tuple[float, float, float], ...]] = {}
        # Per (ZeRO stage, shard): the data-parallel collectives and the optimizer step,
        # the same for every recomputation mode.
        self._dp_runs: dict[tuple[int, int], tuple[lc.DpRuns, bool]] = {}
        self._optimizer_cache: dict[tuple[int, int], float] = {}
        self.scale = options.act_bytes / 2.0
        params = max(memo.rank_params(tp, split))
        self.params = params
        self.grads, self.weights = params * per_param.gradients, params * per_param.wide_weights
        self.cache = cache

    @cached_property
    def loads(self) -> tuple[mem.RankLoad, ...]:
        """What each pipeline rank of interest holds before the choices."""
        dims, opts = self.dims, self.options
        strategy = mem.Strategy(tp=dims.tp, pp=dims.pp, dp=dims.dp, micro_batch=self.b,
                                sequence_parallel=opts.sp(dims.tp), cp=dims.cp,
                                attention=opts.attention, dropout=opts.dropout,
                                schedule=self.schedule, virtual_stages=self.chunks,
                                micro_batches=self.m, cp_method=opts.cp_method,
                                input_bytes=opts.saved_input_bytes, lean_norms=opts.lean_norms)
        return mem.rank_loads(self.arch, strategy, split=self.split,
                              ranks=self.ranks_of_interest())

    def ranks_of_interest(self) -> tuple[int, ...]:
        """The pipeline ranks whose memory and compute can be the largest."""
        return self.split.ranks_of_interest

    @cached_property
    def per_layer(self) -> dict[str, float]:
        return self.memo.per_layer(self.dims.tp, self.dims.cp, self.b)

    @cached_property
    def cp_working(self) -> float:
        return mem.cp_working_bytes(self.arch, self.b, self.dims.tp, self.dims.cp,
                                    method=self.options.cp_method, scale=self.scale)

    def _dense_slot(self, recompute: str) -> tuple[float, float, float]:
        """(layers, compute seconds, slot seconds) of the slowest pipeline rank for one
        micro-batch: its compute, recomputation, TP and exposed CP time, pipeline sends."""
        hit = self.slowest.get(recompute)
        if hit is None:
            per_layer_s = (self.rec_layer[recompute] + self.tp_layer[recompute].exposed_s
                           + self.cp_layer[1] + self._streamed_s(recompute))
            layers, compute = max(self.ranks, key=lambda lr: lr[1] + lr[0] * per_layer_s)
            hit = (layers, compute, compute + layers * per_layer_s + self.pp_mb)
            self.slowest[recompute] = hit
        return hit

    def _streamed_s(self, recompute: str) -> float:
        """Per layer and micro-batch, the exposed time of offloaded activations going to
        the host and back (formulas.parallel.offload), 0 when they stay."""
        if not offload.offloads_activations(self.options.offload):
            return 0.0
        return offload.activation_offload_s(
            self.per_layer[recompute], self.forward_layer,
            self.backward_layer + self.rec_layer[recompute],
            host_side(self.cluster.machine.speed.accelerator), overlap=self.cluster.overlap)

    def recompute_cost(self, recompute: str) -> float:
        """What a recomputation mode adds to the slowest rank's slot per micro-batch: of
        two modes, the one that adds more is never faster."""
        return self._dense_slot(recompute)[2] - self._dense_slot("none")[2]

    def step_floor(self, recompute: str) -> float:
        """The step time of every layout with this recomputation, less its exposed
        data-parallel time (which is never negative): a floor under all of them."""
        return self.m * self._dense_slot(recompute)[2] * (1.0 + self.bubble)

    def dp(self, recompute: str, zero_stage: int, shard: int) -> lc.DpCost:
        """The data-parallel cost of one choice: with the slot, all its step time needs."""
        layers, compute, _ = self._dense_slot(recompute)
        hit = self._dp_runs.get((zero_stage, shard))
        if hit is None:
            groups, replicas = shard_groups(shard, self.group, self.group_pd)
            hit = self._dp_runs[(zero_stage, shard)] = (
                self.cache.dp(zero_stage, groups, replicas, self.grads, self.weights),
                replicas > 1)
        hides = self.options.dp_overlap
        # The slowest rank's compute less its forward is its backward (with the output
        # layer's, on the last rank), plus what recomputation adds.
        forward = layers * self.forward_layer if hides else 0.0
        backward = (compute - layers * self.forward_layer
                    + layers * self.rec_layer[recompute]) if hides else 0.0
        return lc.dp_from_runs(hit[0], zero_stage, hit[1], micro_batches=self.m,
                               forward_s=forward, backward_s=backward,
                               overlap=self.cluster.overlap)

    def optimizer_s(self, zero_stage: int, shard: int) -> float:
        """The optimizer step on the fullest rank's shard of the parameters."""
        hit = self._optimizer_cache.get((zero_stage, shard))
        if hit is None:
            local = self.params / (shard if zero_stage >= 1 else 1)
            if offload.offloads_optimizer(self.options.offload):
                # The last micro-batch's backward on the slowest rank hides the copy down.
                layers, compute, _ = self._dense_slot("none")
                hit = offload.optimizer_offload(
                    local, self.per_param, host_side(self.cluster.machine.speed.accelerator),
                    backward_s=compute - layers * self.forward_layer,
                    overlap=self.cluster.overlap).exposed_s
            else:
                hit = lc.optimizer_time_s(local, self.per_param, self.cluster.machine)
            if self.options.muon:
                hit += self._muon_s(zero_stage, shard)
            self._optimizer_cache[(zero_stage, shard)] = hit
        return hit

    def _muon_s(self, zero_stage: int, shard: int) -> float:
        """Muon's Newton-Schulz on the fullest rank's matrices, spread by whole matrices
        over the TP x shard ranks that hold pieces of them, and the gather and scatter
        that assemble each (formulas.kernels.muon): over the shard group (16-bit
        momentum) and over the TP group."""
        arch, tp = self.arch, self.dims.tp
        ranks = tp * (shard if zero_stage >= 1 else 1)
        layers = max(rank[0] for rank in self.ranks)
        shapes = muon.dense_layer_matrices(arch.hidden, arch.attention_width, arch.kv_width,
                                           arch.ffn_hidden, arch.gated_mlp)
        compute = muon.muon_compute_s(((r, c, float(layers)) for r, c in shapes), ranks,
                                      self.cluster.machine.gemm)
        # Each rank sends its 16-bit piece of every matrix to the matrix's owner and gets
        # the orthogonalised piece back: two alltoalls of its shard, per group.
        piece = self.params * 2.0 / (shard if zero_stage >= 1 else 1)
        gathers = 0.0
        if zero_stage >= 1 and shard > 1:
            groups, _ = shard_groups(shard, self.group, self.group_pd)
            gathers += 2.0 * self.cache.run("alltoall", piece, *groups)[0]
        if tp > 1:
            gathers += 2.0 * self.cache.run("alltoall", piece, tp,
                                            min(tp, self.cluster.gpus_per_node))[0]
        return compute + gathers

    def step_s(self, recompute: str, dp: lc.DpCost, optimizer_s: float) -> float:
        """One choice's step time, as its Layout has it."""
        return self.step_floor(recompute) + dp.exposed_s + optimizer_s

    def _memory_parts(self, recompute: str, zero_stage: int, shard: int) -> tuple[
            tuple[tuple[float, float, float], ...], float, float]:
        """(each rank's model states, one layer's activations, the working bytes)."""
        working = self.cp_working + (self.per_layer["none"] if recompute == "full" else 0.0)
        if zero_stage >= 3:
            working += self.memo.gathered(self.dims.tp, self.per_param, shard, self.dims.pp)
        states = self.states.get((zero_stage, shard))
        if states is None:
            states = mem.rank_states(self.loads, self.per_param, zero_stage, shard)
            self.states[(zero_stage, shard)] = states
        return states, self.per_layer[recompute], working

    def peak(self, recompute: str, zero_stage: int, shard: int) -> float:
        """The peak memory of one choice (``memory(...).total``), without its breakdown."""
        states, per_layer, working = self._memory_parts(recompute, zero_stage, shard)
        return mem.peak_rank(self.loads, states, per_layer=per_layer, working=working,
                             scale=self.scale, offload=self.options.offload)[1]

    def memory(self, recompute: str, zero_stage: int, shard: int) -> mem.Breakdown:
        """The peak memory of one choice on its fullest pipeline rank."""
        states, per_layer, working = self._memory_parts(recompute, zero_stage, shard)
        return mem.peak_breakdown(self.loads, states, per_layer=per_layer, working=working,
                                  scale=self.scale, offload=self.options.offload)

    def layout(self, recompute: str, zero_stage: int, shard: int, *,
               dp: lc.DpCost | None = None, memory: mem.Breakdown | None = None) -> Layout:
        m, cl, tp = self.m, self.cluster, self.tp_layer[recompute]
        cp_total, cp_exposed, cp_bytes = self.cp_layer
        layers, compute, slot = self._dense_slot(recompute)
        recompute_mb = layers * self.rec_layer[recompute]
        if dp is None:
            dp = self.dp(recompute, zero_stage, shard)
        if memory is None:
            memory = self.memory(recompute, zero_stage, shard)
        optimizer = self.optimizer_s(zero_stage, shard)
        tp_bytes = m * layers * tp.bytes_sent
        cp_sent = m * layers * cp_bytes
        pp_bytes = m * self.pp_mb_bytes
        inter = (tp_bytes * tp.inter_share + cp_sent * self.cp_inter
                 + pp_bytes * self.pp_inter + dp.inter_bytes)
        return Layout(
            dims=self.dims, micro_batch=self.b, recompute=recompute, zero_stage=zero_stage,
            shard_group=shard, schedule=self.schedule, chunks=self.chunks, micro_batches=m,
            memory=memory, fits=memory.total <= cl.memory_bytes, bubble_fraction=self.bubble,
            compute_s=m * compute, recompute_s=m * recompute_mb,
            bubble_s=self.bubble * m * slot, tp_s=m * layers * tp.exposed_s,
            cp_s=m * layers * cp_total, cp_exposed_s=m * layers * cp_exposed,
            pp_s=m * self.pp_mb, dp_s=dp.time_s, dp_exposed_s=dp.exposed_s,
            optimizer_s=optimizer,
            tp_bytes=tp_bytes, cp_bytes=cp_sent, pp_bytes=pp_bytes, dp_bytes=dp.bytes_sent,
            inter_bytes=inter, tp_inter=self.tp_inter, cp_inter=self.cp_inter,
            pp_inter=self.pp_inter, dp_inter=self.dp_inter,
            step_s=self.step_s(recompute, dp, optimizer), stages=self.split.describe())
