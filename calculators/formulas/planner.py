"""The planner's search: enumerate TP x CP x PP x DP layouts, cost each, rank them.

Every cost comes from the one implementation of its formula: memory from
formulas.memory (per pipeline rank, schedule-aware), FLOPs and traffic from
formulas.layout_cost (which calls formulas.collectives, formulas.context_parallel and
formulas.schedules), placement from formulas.placement. The search varies the four
sizes, the micro-batch, the recomputation mode and the sharding of the model states
(ZeRO 1-3 over the whole data-parallel group, or 2-3 within the scale-up domain and
replicated across: hybrid sharding); the pipeline schedule, the context-parallel method
and the attention kernel are choices the reader makes.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from dataclasses import replace
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, NamedTuple

from calculators.core.spec import ValidationError
from calculators.formulas import layout_cost as lc
from calculators.formulas import memory as mem
from calculators.formulas.layout import DEFAULT_OVERLAP, Cluster, Layout, Options
from calculators.formulas.model_states import model_state_bytes
from calculators.formulas.placement import Dims, group_per_domain, members_per_domain
from calculators.formulas.stages import SplitError, split_layers

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from calculators.formulas.architecture import Architecture
    from calculators.formulas.memory import StateBytes
    from calculators.formulas.stages import StageSplit

__all__ = ["DEFAULT_OVERLAP", "MICRO_BATCHES", "RECOMPUTE_MODES", "Cluster", "Layout",
           "NearSearch", "Options", "divisors", "evaluate", "gpu_counts", "search",
           "search_near"]

RECOMPUTE_MODES = lc.RECOMPUTE_MODES
MICRO_BATCHES = (1, 2, 4, 8)
#: Smallest context-parallel chunk searched: one tile of a fused attention kernel
#: (FlashAttention-2 works in blocks of 64 or 128 query and key rows, Dao 2023, Sec.
#: 3.3); a chunk shorter than a tile leaves the kernel mostly idle.
MIN_CP_CHUNK_TOKENS = 128
#: A bound on the search so that a page never hangs on an odd GPU count.
MAX_LAYOUTS = 60_000
def divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def cp_allowed(arch: Architecture, tp: int, cp: int, method: str) -> bool:
    """The sequence splits into 2 x cp chunks (load balancing for the causal mask, as
    Llama 3 and Megatron-Core do) of at least one attention tile each; Ulysses also
    splits the heads left after TP."""
    if cp == 1:
        return True
    if arch.seq_len % (2 * cp) or arch.seq_len // (2 * cp) < MIN_CP_CHUNK_TOKENS:
        return False
    return method != "ulysses" or ((arch.heads // tp) % cp == 0 and (arch.kv_heads // tp) % cp == 0)


def _shardings(group: int, per_domain: int) -> list[tuple[int, int]]:
    """(ZeRO stage, shard group) pairs searched: ZeRO-1 to 3 over the whole group
    (stage 0 moves the same bytes as stage 1 and holds more, so it is left out), and
    hybrid ZeRO-2/3 inside the scale-up domain when that is a proper part of it."""
    if group == 1:
        return [(0, 1)]
    pairs = [(1, group), (2, group), (3, group)]
    if 1 < per_domain < group:
        pairs += [(2, per_domain), (3, per_domain)]
    return pairs


def shard_groups(shard: int, group: int, per_domain: int) -> tuple[tuple[int, int], int]:
    """``dp_cost``'s (ranks, ranks per domain) of the sharding group and its replica
    count, for states sharded over ``shard`` of the CP x DP group's ``group`` ranks
    (``per_domain`` of them per scale-up domain): a shard smaller than the group is
    hybrid sharding inside one domain, replicated across the rest."""
    if shard < group:
        return (shard, shard), group // shard
    return (shard, per_domain), 1


class _Memo:
    """What a search computes once and looks up thereafter: pipeline splits by (stages,
    chunks), the ranks' parameters by (tp, stages, chunks), a layer's activation
    bytes by (tp, cp, micro-batch) and ZeRO-3's gathered weights by (tp, shard)."""

    def __init__(self, arch: Architecture, options: Options) -> None:
        self.arch, self.options = arch, options
        self._splits: dict[tuple[int, int], StageSplit | None] = {}
        self._per_layer: dict[tuple[int, int, int], dict[str, float]] = {}
        self._params: dict[tuple[int, int, int], tuple[float, ...]] = {}
        self._gathered: dict[tuple[int, int, float], float] = {}

    def rank_params(self, tp: int, pp: int, chunks: int) -> tuple[float, ...]:
        """Parameters on one GPU of each pipeline rank of interest."""
        key = (tp, pp, chunks)
        hit = self._params.get(key)
        if hit is None:
            split = self.split(pp, chunks)
            if split is None:
                raise SplitError(f"{self.arch.layers} layers do not split into {pp} stages")
            hit = self._params[key] = tuple(mem.params_on_rank(self.arch, split, rank, tp)
                                            for rank in split.ranks_of_interest)
        return hit

    def gathered(self, tp: int, per_param: StateBytes, shard: int) -> float:
        key = (tp, shard, per_param.weights)
        hit = self._gathered.get(key)
        if hit is None:
            hit = self._gathered[key] = mem.gathered_weight_bytes(self.arch, tp, per_param,
                                                                  shard)
        return hit

    def split(self, pp: int, chunks: int) -> StageSplit | None:
        key = (pp, chunks)
        if key not in self._splits:
            try:
                self._splits[key] = split_layers(self.arch.layers, pp, chunks)
            except SplitError:
                self._splits[key] = None
        return self._splits[key]

    def per_layer(self, tp: int, cp: int, micro_batch: int) -> dict[str, float]:
        key = (tp, cp, micro_batch)
        hit = self._per_layer.get(key)
        if hit is None:
            opts = self.options
            hit = {r: opts.act_bytes / 2.0 * mem.activation_bytes_per_layer(
                self.arch, micro_batch, tp, tp > 1, r, attention=opts.attention,
                dropout=opts.dropout, cp=cp) for r in RECOMPUTE_MODES}
            self._per_layer[key] = hit
        return hit


class _Width(NamedTuple):
    """What one (TP, CP, micro-batch) costs per layer and micro-batch, whatever the
    pipeline, data parallelism and choices: the search's floors and its bases share it."""

    per_gpu: float  # seconds of compute per FLOP-per-token of one micro-batch
    act: float  # bytes of one layer's activation (the TP allreduce's size)
    tp_per_domain: int
    cp_per_domain: int
    tp_op: tuple[float, float, float]  # one TP allreduce: (s, bytes sent, share across nodes)
    cp_layer: tuple[float, float, float]  # one layer's CP: (s, s exposed, bytes sent)


def _per_gpu(arch: Architecture, cluster: Cluster, tp: int, cp: int, micro_batch: int) -> float:
    """Seconds of compute per FLOP-per-token of one micro-batch on one GPU: its tokens
    split over CP, their FLOPs over TP, at the achieved rate. The quick floor and
    ``_width`` both use it, so the floor is never above the step time it bounds."""
    rate = cluster.peak_flops * cluster.compute_efficiency
    return micro_batch * arch.seq_len / cp / tp / rate


def _width(arch: Architecture, cluster: Cluster, options: Options, cache: lc.CollectiveCache,
           flops: lc.LayerFlops, *, dims: Dims, micro_batch: int) -> _Width:
    tp, cp, domain = dims.tp, dims.cp, cluster.gpus_per_node
    tp_pd = group_per_domain(dims, ("tp",), domain)[1]
    cp_pd = group_per_domain(dims, ("cp",), domain)[1]
    per_gpu = _per_gpu(arch, cluster, tp, cp, micro_batch)
    act = micro_batch * arch.seq_len / cp * arch.hidden * options.act_bytes
    cp_layer = lc.cp_layer_time(
        arch, cache, method=options.cp_method, tp=tp, cp=cp, per_domain=cp_pd,
        micro_batch=micro_batch, act_bytes=options.act_bytes,
        attention_s=flops.attention_forward * per_gpu, overlap=cluster.overlap)
    return _Width(per_gpu, act, tp_pd, cp_pd, cache.run("allreduce", act, tp, tp_pd), cp_layer)


class _Base:
    """Everything about one (dims, micro-batch) that the recomputation and sharding
    choices share; ``layout`` finishes one choice cheaply. What only the memory check
    needs (the ranks' loads, activation and working bytes) is computed on first use:
    a search skips most bases on their step time alone."""

    def __init__(self, arch: Architecture, cluster: Cluster, per_param: StateBytes, *,
                 options: Options, cache: lc.CollectiveCache, flops: lc.LayerFlops,
                 memo: _Memo,
                 dims: Dims, micro_batch: int, micro_batches: int,
                 width: _Width | None = None) -> None:
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
            width = _width(arch, cluster, options, cache, flops, dims=dims,
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


def _links(cluster: Cluster) -> lc.Links:
    return lc.Links(cluster.gpus_per_node, cluster.intra_bandwidth, cluster.inter_bandwidth,
                    cluster.latency)


def evaluate(arch: Architecture, cluster: Cluster, per_param: StateBytes,
             global_batch: int, *, tp: int, pp: int, dp: int, micro_batch: int,
             recompute: str, zero_stage: int, cp: int = 1, hybrid: bool = False,
             options: Options | None = None, act_bytes: float | None = None) -> Layout:
    """Cost one layout. ``zero_stage`` shards over DP x CP, or with ``hybrid`` over the
    part of that group inside one scale-up domain. Raises SplitError or ValueError for
    a layout the search would not consider."""
    opts = _options(options, act_bytes)
    dims = Dims(tp=tp, cp=cp, dp=dp, pp=pp)
    m = global_batch // (dp * micro_batch)
    cache = lc.CollectiveCache(_links(cluster))
    base = _Base(arch, cluster, per_param, options=opts, cache=cache, memo=_Memo(arch, opts),
                 flops=lc.layer_flops(arch, opts.attention), dims=dims,
                 micro_batch=micro_batch, micro_batches=m)
    return base.layout(recompute, zero_stage, base.group_pd if hybrid else base.group)


#: One (TP, CP, PP, DP, micro-batch) the rules allow.
Sizes = tuple[int, int, int, int, int]


def _sizes(arch: Architecture, n: int, global_batch: int, memo: _Memo,
           fixed: dict[str, int | None]) -> list[Sizes]:
    """Every (TP, CP, PP, DP, micro-batch) the rules allow: TP divides the heads and the
    KV heads (Megatron splits whole heads, and each rank needs whole KV heads under GQA);
    the sequence splits into 2 x CP chunks; the layers split into the pipeline's chunks
    (formulas.stages); DP divides the global batch and the micro-batch a replica's
    share; the interleaved schedule needs m to be a multiple of PP."""
    out: list[Sizes] = []
    opts = memo.options
    sizes = MICRO_BATCHES if fixed["micro_batch"] is None else (fixed["micro_batch"],)
    for t in divisors(n):
        if arch.heads % t or arch.kv_heads % t or fixed["tp"] not in (None, t):
            continue
        for c in divisors(n // t):
            if fixed["cp"] not in (None, c) or not cp_allowed(arch, t, c, opts.cp_method):
                continue
            for p in divisors(n // (t * c)):
                d = n // (t * c * p)
                if fixed["pp"] not in (None, p) or fixed["dp"] not in (None, d):
                    continue
                if global_batch % d:
                    continue
                if memo.split(p, opts.chunks(p)) is None:
                    continue
                per_replica = global_batch // d
                for b in sizes:
                    m = per_replica // b
                    if per_replica % b or (opts.chunks(p) > 1 and m % p):
                        continue
                    out.append((t, c, p, d, b))
    return out


def _candidates(arch: Architecture, n: int, global_batch: int, memo: _Memo,
                fixed: dict[str, int | None]) -> list[tuple[Dims, int]]:
    """``_sizes`` as (dims, micro-batch)."""
    return [(Dims(tp=t, cp=c, dp=d, pp=p), b)
            for t, c, p, d, b in _sizes(arch, n, global_batch, memo, fixed)]


def gpu_counts(arch: Architecture, global_batch: int, options: Options | None = None,
               *, start: int = 1, limit: int = 1 << 62) -> Iterator[int]:
    """Every GPU count from ``start`` to ``limit`` that admits at least one layout under
    the search's rules (``_sizes``), smallest first: t x c x p x d over the sizes each
    rule allows. Lazily, as a merge of the multiples of each t x c x p by the divisors
    d of the global batch: a caller that stops early does not pay for the rest."""
    opts = options or Options()
    memo = _Memo(arch, opts)
    tps = divisors(math.gcd(arch.heads, arch.kv_heads))
    cps = [c for c in divisors(arch.seq_len) if any(cp_allowed(arch, t, c, opts.cp_method)
                                                    for t in tps)]
    pps = [p for p in range(1, arch.layers + 1) if memo.split(p, opts.chunks(p)) is not None]
    tcps = {t * c * p for t in tps for c in cps for p in pps}
    ds = divisors(global_batch)
    line: list[tuple[int, int, int]] = []  # (count, t x c x p, index of its d)
    for tcp in tcps:
        j = bisect_left(ds, -(-start // tcp))  # the smallest d with tcp x d >= start
        if j < len(ds) and tcp * ds[j] <= limit:
            line.append((tcp * ds[j], tcp, j))
    heapq.heapify(line)
    last = 0
    while line:
        count, tcp, j = line[0]
        if count != last:
            yield count
            last = count
        if j + 1 < len(ds) and tcp * ds[j + 1] <= limit:
            heapq.heapreplace(line, (tcp * ds[j + 1], tcp, j + 1))
        else:
            heapq.heappop(line)


def _options(options: Options | None, act_bytes: float | None) -> Options:
    opts = options or Options()
    if act_bytes is None:
        return opts
    return Options(opts.schedule, opts.virtual_stages, opts.cp_method, opts.attention,
                   opts.dropout, act_bytes)


def _too_many(n: int, sizes: Sequence[Sizes]) -> None:
    """A ValidationError when ``sizes`` give too many layouts to search here."""
    count = sum(len(RECOMPUTE_MODES) * (5 if d * c > 1 else 1) for _, c, _, d, _ in sizes)
    if count > MAX_LAYOUTS:
        raise ValidationError("num_gpus", f"{n} GPUs give too many layouts to search here "
                              f"({len(sizes)} sizes and micro-batches); fix tp, cp or "
                              "pp, or pick a GPU count with fewer divisors")


def _searchable(arch: Architecture, n: int, global_batch: int, memo: _Memo,
                fixed: dict[str, int | None]) -> list[tuple[Dims, int]]:
    """The candidates, or a ValidationError when they are too many to search here."""
    sizes = _sizes(arch, n, global_batch, memo, fixed)
    _too_many(n, sizes)
    return [(Dims(tp=t, cp=c, dp=d, pp=p), b) for t, c, p, d, b in sizes]


def search(arch: Architecture, cluster: Cluster, per_param: StateBytes,
           global_batch: int, *, tp: int | None = None, pp: int | None = None,
           dp: int | None = None, cp: int | None = None, micro_batch: int | None = None,
           options: Options | None = None, act_bytes: float | None = None) -> list[Layout]:
    """Every valid layout with tp x cp x pp x dp = num_gpus, fastest first (fitting or
    not); ties go to the one with less memory."""
    opts = _options(options, act_bytes)
    fixed = {"tp": tp, "pp": pp, "dp": dp, "cp": cp, "micro_batch": micro_batch}
    memo = _Memo(arch, opts)
    candidates = _searchable(arch, cluster.num_gpus, global_batch, memo, fixed)
    cache = lc.CollectiveCache(_links(cluster))
    flops = lc.layer_flops(arch, opts.attention)
    layouts: list[Layout] = []
    for dims, b in candidates:
        base = _Base(arch, cluster, per_param, options=opts, cache=cache, flops=flops,
                     memo=memo, dims=dims, micro_batch=b,
                     micro_batches=global_batch // (dims.dp * b))
        shardings = _shardings(base.group, base.group_pd)
        for recompute in RECOMPUTE_MODES:
            for zero, shard in shardings:
                layouts.append(base.layout(recompute, zero, shard))
    layouts.sort(key=lambda lay: (lay.step_s, lay.memory.total))
    return layouts


#: Relative slack on the floors below before a layout is skipped: the floor and the step
#: time add the same terms in a different order, so rounding may put a floor a few ulps
#: above the step time it bounds.
FLOOR_SLACK = 1e-9


class NearSearch(NamedTuple):
    """What ``search_near`` returns."""

    #: Every layout that fits within the tolerance of the fastest that fits, in
    #: ``search``'s order.
    layouts: list[Layout]
    #: How many layouts the search's rules allow: those ``search`` would cost.
    considered: int
    #: How many had their memory (and, when they fit, their traffic) computed; a floor
    #: ruled out the rest.
    costed: int


class _Floors:
    """A floor under the step time of every layout of one (sizes, micro-batch): the
    step time without recomputation (which only adds compute and TP allreduces) and
    without data-parallel time (whose exposed part is never negative), as ``_Base``
    computes it from the slowest pipeline rank. Its parts are computed once and shared
    with the bases: what depends on TP, CP and the micro-batch, the pipeline's ranks by
    PP, the bubble by PP and micro-batches, the sends by their size and placement."""

    def __init__(self, arch: Architecture, cluster: Cluster, opts: Options, *,
                 cache: lc.CollectiveCache, flops: lc.LayerFlops, memo: _Memo) -> None:
        self.arch, self.cluster, self.opts, self.cache, self.flops, self.memo = (
            arch, cluster, opts, cache, flops, memo)
        self._widths: dict[tuple[int, int, int], _Width] = {}
        self._per_layer: dict[tuple[int, int, int], tuple[float, float, float]] = {}
        self._ranks: dict[int, tuple[int, int, int]] = {}
        self._bubble: dict[tuple[int, int], float] = {}
        self._sends: dict[tuple[float, bool], float] = {}
        self._fewest = min(lc.TP_ALLREDUCES_PER_LAYER.values())
        self._dp_terms: dict[tuple[int, int, int, float, float, float],
                             tuple[tuple[float, float], ...]] = {}

    def width(self, tp: int, cp: int, micro_batch: int) -> _Width:
        key = (tp, cp, micro_batch)
        hit = self._widths.get(key)
        if hit is None:
            hit = self._widths[key] = _width(self.arch, self.cluster, self.opts, self.cache,
                                             self.flops, dims=Dims(tp=tp, cp=cp),
                                             micro_batch=micro_batch)
        return hit

    def _layer(self, tp: int, cp: int, micro_batch: int) -> tuple[float, float, float]:
        """Per micro-batch: one layer's compute with its fewest TP allreduces and its
        exposed CP time; the output layer's compute; one pipeline send's bytes."""
        key = (tp, cp, micro_batch)
        hit = self._per_layer.get(key)
        if hit is None:
            w, flops = self.width(tp, cp, micro_batch), self.flops
            hit = self._per_layer[key] = (
                w.per_gpu * flops.layer + self._fewest * w.tp_op[0] + w.cp_layer[1],
                w.per_gpu * flops.output, w.act / tp)
        return hit

    def _pipeline(self, pp: int) -> tuple[int, int, int]:
        """(layers on the fullest rank before the last, on the last, sends per
        micro-batch) for ``pp`` stages: the ranks the step model looks at."""
        hit = self._ranks.get(pp)
        if hit is None:
            chunks = self.opts.chunks(pp)
            split = self.memo.split(pp, chunks)
            assert split is not None  # the candidates have checked it
            ranks = split.ranks_of_interest
            hit = self._ranks[pp] = (
                max((split.rank_layers(r) for r in ranks if r != pp - 1), default=0),
                split.rank_layers(pp - 1), 2 * chunks if pp > 1 else 0)
        return hit

    def _sharding_times(self, tp: int, pp: int, group: int,
                        per_param: StateBytes) -> tuple[tuple[float, float], ...]:
        """The data-parallel time of each sharding whose model states alone fit on every
        pipeline rank, as (a, b): a + b m for m micro-batches per step (formulas.
        layout_cost.dp_from_runs: every term is constant or proportional to m). A
        sharding that does not fit this way fits with no recomputation mode."""
        # The state bytes by value: hashing the record itself costs more than the lookup.
        key = (tp, pp, group, per_param.weights, per_param.gradients, per_param.optimizer)
        hit = self._dp_terms.get(key)
        if hit is None:
            chunks, capacity = self.opts.chunks(pp), self.cluster.memory_bytes
            params = self.memo.rank_params(tp, pp, chunks)
            most = max(params)
            grads, weights = most * per_param.gradients, most * per_param.weights
            # The CP x DP group's members are TP ranks apart (placement).
            per_domain = members_per_domain(tp, group, self.cluster.gpus_per_node)
            terms = []
            for zero, shard in _shardings(group, per_domain):
                if any(w + g + o > capacity for w, g, o in (
                        model_state_bytes(p, per_param, zero, shard) for p in params)):
                    continue
                groups, replicas = shard_groups(shard, group, per_domain)
                runs = self.cache.dp(zero, groups, replicas, grads, weights)
                at = [lc.dp_from_runs(runs, zero, replicas > 1, micro_batches=m, forward_s=0.0,
                                      backward_s=0.0, overlap=0.0).time_s for m in (0, 1)]
                terms.append((at[0], at[1] - at[0]))
            hit = self._dp_terms[key] = tuple(terms)
        return hit

    def _bubble_of(self, pp: int, micro_batches: int) -> float:
        bubble = self._bubble.get((pp, micro_batches))
        if bubble is None:
            bubble = self._bubble[(pp, micro_batches)] = lc.bubble_fraction(
                self.opts.schedule if pp > 1 else "1f1b", pp, micro_batches,
                self.opts.chunks(pp))
        return bubble

    def quick(self, sizes: Sequence[Sizes], global_batch: int, *,
              skip_one: bool) -> tuple[list[tuple[float, int, bool]], int]:
        """A first, cheaper floor for each of ``sizes`` (those of micro-batch 1 left out
        with ``skip_one``), as (floor, index, False): ``floor``'s without any traffic,
        the slowest rank's compute and the bubble. And how many layouts ``search`` would
        cost for all of them: each recomputation mode with each sharding of the CP x DP
        group."""
        domain, arch, flops = self.cluster.gpus_per_node, self.arch, self.flops
        modes = len(RECOMPUTE_MODES)
        out: list[tuple[float, int, bool]] = []
        considered = 0
        for i, (t, c, p, d, b) in enumerate(sizes):
            # The CP x DP group's members are TP ranks apart (placement).
            group = c * d
            considered += modes * len(_shardings(group, members_per_domain(t, group, domain)))
            if skip_one and b == 1:
                continue
            m = global_batch // (d * b)
            per_gpu = _per_gpu(arch, self.cluster, t, c, b)
            layer = per_gpu * flops.layer
            before_last, last, _ = self._pipeline(p)
            slot = max(before_last * layer, last * layer + per_gpu * flops.output)
            out.append((m * slot * (1.0 + self._bubble_of(p, m)), i, False))
        return out, considered

    def floor(self, sizes: Sizes, micro_batches: int, per_param: StateBytes) -> float:
        """The floor under every layout of these sizes that fits: the step time without
        recomputation (which only adds compute and TP allreduces), with the fewest TP
        allreduces, the exposed CP time and the pipeline sends, plus the least exposed
        data-parallel time of a sharding whose model states fit: at least the share
        ``1 - overlap`` of its time, since what hides is never more than the traffic
        (layout_cost.dp_cost). Infinite when no sharding's states fit."""
        tp, cp, pp, dp, micro_batch = sizes
        times = self._sharding_times(tp, pp, cp * dp, per_param)
        if not times:
            return math.inf
        per_layer, output, message = self._layer(tp, cp, micro_batch)
        before_last, last, sends = self._pipeline(pp)
        slot = max(before_last * per_layer, last * per_layer + output)
        if sends:
            # The pipeline group's members are TP x CP x DP ranks apart (placement).
            crosses = members_per_domain(tp * cp * dp, pp, self.cluster.gpus_per_node) < pp
            one = self._sends.get((message, crosses))
            if one is None:
                one = self._sends[(message, crosses)] = self.cache.p2p(message, crosses)
            slot += sends * one
        hidden = min(1.0, max(0.0, self.cluster.overlap))
        exposed = (1.0 - hidden) * min(a + micro_batches * b for a, b in times)
        return micro_batches * slot * (1.0 + self._bubble_of(pp, micro_batches)) + exposed


class _Space:
    """What the searches of one model, global batch, state bytes, options and machine
    (all but its GPU count) share: the memo, the collective costs, the floors' parts
    and the sizes the rules allow at each GPU count. cluster_sizing searches the same
    count twice (micro-batch 1, then all) and a reader's next edit often again."""

    def __init__(self, arch: Architecture, cluster: Cluster, opts: Options) -> None:
        self.memo = _Memo(arch, opts)
        self.cache = lc.CollectiveCache(_links(cluster))
        self.flops = lc.layer_flops(arch, opts.attention)
        self.floors = _Floors(arch, cluster, opts, cache=self.cache, flops=self.flops,
                              memo=self.memo)
        self._sizes: dict[tuple[int, int], list[Sizes]] = {}

    def sizes(self, n: int, global_batch: int, micro_batch: int | None) -> list[Sizes]:
        """``_sizes`` at ``n`` GPUs, every micro-batch or one; those of one micro-batch
        the search allows are those of every micro-batch with it, in the same order."""
        key = (n, global_batch)
        every = self._sizes.get(key)
        if every is None:
            fixed: dict[str, int | None] = dict.fromkeys(("tp", "pp", "dp", "cp",
                                                          "micro_batch"))
            every = self._sizes[key] = _sizes(self.memo.arch, n, global_batch, self.memo,
                                              fixed)
        if micro_batch is None:
            return every
        if micro_batch in MICRO_BATCHES:
            return [size for size in every if size[4] == micro_batch]
        fixed = {"tp": None, "pp": None, "dp": None, "cp": None, "micro_batch": micro_batch}
        return _sizes(self.memo.arch, n, global_batch, self.memo, fixed)


@lru_cache(maxsize=4)
def _space(arch: Architecture, machine: Cluster, opts: Options) -> _Space:
    """The shared part of searches on ``machine`` (a cluster whose GPU count is left
    out: nothing here depends on it). A few are kept: the page's last few models."""
    return _Space(arch, machine, opts)


def _enumeration_order(lay: Layout, domain: int) -> tuple[int, ...]:
    """Where ``search`` enumerates a layout: by TP, CP, PP (DP follows), micro-batch,
    recomputation, sharding, which is how its sort breaks ties."""
    dims = lay.dims
    shardings = _shardings(*group_per_domain(dims, ("cp", "dp"), domain))
    return (dims.tp, dims.cp, dims.pp, lay.micro_batch, RECOMPUTE_MODES.index(lay.recompute),
            shardings.index((lay.zero_stage, lay.shard_group)))


def search_near(arch: Architecture, cluster: Cluster, per_param: StateBytes,
                global_batch: int, *, tolerance: float, micro_batch: int | None = None,
                screened: Sequence[Layout] = (), options: Options | None = None,
                act_bytes: float | None = None) -> NearSearch:
    """The layouts that decide formulas.ranking's recommendation: every layout that fits
    within ``tolerance`` of the fastest that fits, in ``search``'s order (step time,
    then memory, then the order of enumeration). ``preferred`` ranks them as it ranks
    the whole list, and a test that only gets harder as the step time grows (a deadline)
    picks from them what it would pick from the whole list: a layout past the tolerance
    only comes first when none within it passes, and then none past it passes either.

    Branch and bound: the sizes and micro-batches are costed in order of a floor under
    the step times of their layouts that fit (``_Floors.floor``: compute, the fewest
    TP allreduces, exposed CP time, pipeline sends, the bubble and the least exposed
    data-parallel time of a sharding whose model states fit), and each recomputation
    mode is skipped when its own floor (``_Base.step_floor``) is past the tolerance of
    the fastest fitting layout found so far; once a floor is past it, every later one
    is too. A choice's step time comes first and its memory only if that is within the
    tolerance: most choices the bound reaches are too slow. What does not depend on the
    GPU count (collective costs, per-layer costs, splits) is kept between searches
    (``_Space``).

    ``screened`` is what this search with ``micro_batch=1`` returned (cluster_sizing
    screens GPU counts that way first). Micro-batch 1 is then not costed again: the
    fastest layout overall is no slower than the fastest of micro-batch 1, so every
    micro-batch-1 layout within the tolerance of it is among those. The fastest of them
    that fits also bounds the search from its start."""
    if not 0.0 <= tolerance <= 1.0:
        raise ValueError(f"tolerance must be in [0, 1], got {tolerance}")
    if screened and (micro_batch is not None
                     or any(lay.micro_batch != 1 or not lay.fits for lay in screened)):
        raise ValueError("screened layouts are micro-batch 1 layouts that fit, for a search "
                         "of every micro-batch")
    opts = _options(options, act_bytes)
    space = _space(arch, replace(cluster, num_gpus=0), opts)
    memo, cache, flops, bounds = space.memo, space.cache, space.flops, space.floors
    sizes = space.sizes(cluster.num_gpus, global_batch, micro_batch)
    _too_many(cluster.num_gpus, sizes)
    domain = cluster.gpus_per_node
    # Best first: the sizes by a quick floor; the first time one comes up it gets its
    # full floor and goes back in line, the second time it is costed. Each comes up in
    # the order of its full floor, and only those whose quick floor is within the
    # limit ever get one.
    line, considered = bounds.quick(sizes, global_batch, skip_one=bool(screened))
    heapq.heapify(line)
    found = list(screened)
    # The fastest fitting layout so far, and the step time past which nothing counts.
    fastest = min((lay.step_s for lay in found), default=math.inf)
    limit = fastest * (1.0 + tolerance) * (1.0 + FLOOR_SLACK)
    costed = 0
    while line:
        floor, i, full = heapq.heappop(line)
        if floor > limit:
            break
        if not full:
            _, _, _, d, b = sizes[i]
            heapq.heappush(line, (bounds.floor(sizes[i], global_batch // (d * b), per_param),
                                  i, True))
            continue
        t, c, p, d, b = sizes[i]
        base = _Base(arch, cluster, per_param, options=opts, cache=cache, flops=flops,
                     memo=memo, dims=Dims(tp=t, cp=c, dp=d, pp=p), micro_batch=b,
                     micro_batches=global_batch // (d * b), width=bounds.width(t, c, b))
        shardings = _shardings(base.group, base.group_pd)
        for recompute in RECOMPUTE_MODES:
            if base.step_floor(recompute) > limit:
                continue
            for zero, shard in shardings:
                costed += 1
                dp = base.dp(recompute, zero, shard)
                if base.step_s(recompute, dp) > limit:
                    continue
                if base.peak(recompute, zero, shard) > cluster.memory_bytes:
                    continue
                lay = base.layout(recompute, zero, shard, dp=dp)
                found.append(lay)
                if lay.step_s < fastest:
                    fastest = lay.step_s
                    limit = fastest * (1.0 + tolerance) * (1.0 + FLOOR_SLACK)
    # The same bound as formulas.ranking.preferred's, computed the same way.
    near = fastest * (1.0 + tolerance)
    found = [lay for lay in found if lay.step_s <= near]
    found.sort(key=lambda lay: (lay.step_s, lay.memory.total, *_enumeration_order(lay, domain)))
    return NearSearch(found, considered, costed)
