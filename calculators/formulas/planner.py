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

import math
from typing import TYPE_CHECKING, NamedTuple

from calculators.core.spec import ValidationError
from calculators.formulas import layout_cost as lc
from calculators.formulas import memory as mem
from calculators.formulas.layout import DEFAULT_OVERLAP, Cluster, Layout, Options
from calculators.formulas.placement import Dims, group_per_domain
from calculators.formulas.stages import SplitError, split_layers

if TYPE_CHECKING:
    from collections.abc import Sequence

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


class _Memo:
    """What a search computes once and looks up thereafter: pipeline splits by (stages,
    chunks) and a layer's activation bytes by (tp, cp, micro-batch)."""

    def __init__(self, arch: Architecture, options: Options) -> None:
        self.arch, self.options = arch, options
        self._splits: dict[tuple[int, int], StageSplit | None] = {}
        self._per_layer: dict[tuple[int, int, int], dict[str, float]] = {}

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


def _width(arch: Architecture, cluster: Cluster, options: Options, cache: lc.CollectiveCache,
           flops: lc.LayerFlops, *, dims: Dims, micro_batch: int) -> _Width:
    tp, cp, domain = dims.tp, dims.cp, cluster.gpus_per_node
    tp_pd = group_per_domain(dims, ("tp",), domain)[1]
    cp_pd = group_per_domain(dims, ("cp",), domain)[1]
    rate = cluster.peak_flops * cluster.compute_efficiency
    per_gpu = micro_batch * arch.seq_len / cp / tp / rate
    act = micro_batch * arch.seq_len / cp * arch.hidden * options.act_bytes
    cp_layer = lc.cp_layer_time(
        arch, cache, method=options.cp_method, tp=tp, cp=cp, per_domain=cp_pd,
        micro_batch=micro_batch, act_bytes=options.act_bytes,
        attention_s=flops.attention_forward * per_gpu, overlap=cluster.overlap)
    return _Width(per_gpu, act, tp_pd, cp_pd, cache.run("allreduce", act, tp, tp_pd), cp_layer)


class _Base:
    """Everything about one (dims, micro-batch) that the recomputation and sharding
    choices share, computed once; ``layout`` finishes one choice cheaply."""

    def __init__(self, arch: Architecture, cluster: Cluster, per_param: StateBytes, *,
                 options: Options, cache: lc.CollectiveCache, flops: lc.LayerFlops,
                 memo: _Memo,
                 dims: Dims, micro_batch: int, micro_batches: int) -> None:
        self.cluster, self.per_param, self.dims = cluster, per_param, dims
        self.b, self.m, self.options = micro_batch, micro_batches, options
        tp, cp, pp = dims.tp, dims.cp, dims.pp
        self.chunks = options.chunks(pp)
        self.schedule = options.schedule if pp > 1 else "1f1b"
        split = memo.split(pp, self.chunks)
        if split is None:
            raise SplitError(f"{arch.layers} layers do not split into {pp} stages of "
                             f"{self.chunks} chunks")
        domain = cluster.gpus_per_node
        width = _width(arch, cluster, options, cache, flops, dims=dims, micro_batch=micro_batch)
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
        strategy = mem.Strategy(tp=tp, pp=pp, dp=dims.dp, micro_batch=micro_batch,
                                sequence_parallel=tp > 1, cp=cp, attention=options.attention,
                                dropout=options.dropout, schedule=self.schedule,
                                virtual_stages=self.chunks, micro_batches=micro_batches,
                                cp_method=options.cp_method)
        self.loads = mem.rank_loads(arch, strategy, split=split)
        self.ranks = [(split.rank_layers(ld.rank),
                       per_gpu * (split.rank_layers(ld.rank) * flops.layer
                                  + (flops.output if ld.rank == pp - 1 else 0.0)))
                      for ld in self.loads]
        self.slowest: dict[str, tuple[int, float, float]] = {}
        self.states: dict[tuple[int, int], tuple[tuple[float, float, float], ...]] = {}
        scale = options.act_bytes / 2.0
        self.scale = scale
        self.per_layer = memo.per_layer(tp, cp, micro_batch)
        self.cp_working = mem.cp_working_bytes(arch, micro_batch, tp, cp,
                                               method=options.cp_method, scale=scale)
        self.gathered = {shard: mem.gathered_weight_bytes(arch, tp, per_param, shard)
                         for _, shard in _shardings(self.group, self.group_pd)}
        params = max(ld.params for ld in self.loads)
        self.grads, self.weights = params * per_param.gradients, params * per_param.weights
        self.cache = cache

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
        hybrid = shard < self.group
        return lc.dp_cost(self.cache, zero_stage, (shard, shard if hybrid else self.group_pd),
                          self.group // shard if hybrid else 1, grads=self.grads,
                          weights=self.weights, micro_batches=self.m, forward_s=compute / 3.0,
                          backward_s=backward, overlap=self.cluster.overlap)

    def step_s(self, recompute: str, dp: lc.DpCost) -> float:
        """One choice's step time, as its Layout has it."""
        return self.step_floor(recompute) + dp.exposed_s

    def memory(self, recompute: str, zero_stage: int, shard: int) -> mem.Breakdown:
        """The peak memory of one choice on its fullest pipeline rank."""
        working = self.cp_working + (self.per_layer["none"] if recompute == "full" else 0.0)
        if zero_stage >= 3:
            working += self.gathered[shard]
        states = self.states.get((zero_stage, shard))
        if states is None:
            states = mem.rank_states(self.loads, self.per_param, zero_stage, shard)
            self.states[(zero_stage, shard)] = states
        return mem.peak_breakdown(self.loads, states, per_layer=self.per_layer[recompute],
                                  working=working, scale=self.scale)

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


def _candidates(arch: Architecture, n: int, global_batch: int, memo: _Memo,
                fixed: dict[str, int | None]) -> list[tuple[Dims, int]]:
    """Every (dims, micro-batch) the rules allow: TP divides the heads and the KV heads
    (Megatron splits whole heads, and each rank needs whole KV heads under GQA); the
    sequence splits into 2 x CP chunks; the layers split into the pipeline's chunks
    (formulas.stages); DP divides the global batch and the micro-batch a replica's
    share; the interleaved schedule needs m to be a multiple of PP."""
    out: list[tuple[Dims, int]] = []
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
                    out.append((Dims(tp=t, cp=c, dp=d, pp=p), b))
    return out


def gpu_counts(arch: Architecture, global_batch: int, options: Options | None = None,
               *, limit: int = 1 << 62) -> set[int]:
    """Every GPU count up to ``limit`` that admits at least one layout under the search's
    rules (``_candidates``): t x c x p x d over the sizes each rule allows."""
    opts = options or Options()
    memo = _Memo(arch, opts)
    tps = divisors(math.gcd(arch.heads, arch.kv_heads))
    cps = [c for c in divisors(arch.seq_len) if any(cp_allowed(arch, t, c, opts.cp_method)
                                                    for t in tps)]
    pps = [p for p in range(1, arch.layers + 1) if memo.split(p, opts.chunks(p)) is not None]
    counts = {t * c for t in tps for c in cps}
    counts = {tc * p for tc in counts for p in pps if tc * p <= limit}
    return {tcp * d for tcp in counts for d in divisors(global_batch) if tcp * d <= limit}


def _options(options: Options | None, act_bytes: float | None) -> Options:
    opts = options or Options()
    if act_bytes is None:
        return opts
    return Options(opts.schedule, opts.virtual_stages, opts.cp_method, opts.attention,
                   opts.dropout, act_bytes)


def _searchable(arch: Architecture, n: int, global_batch: int, memo: _Memo,
                fixed: dict[str, int | None]) -> list[tuple[Dims, int]]:
    """The candidates, or a ValidationError when they are too many to search here."""
    candidates = _candidates(arch, n, global_batch, memo, fixed)
    count = sum(len(RECOMPUTE_MODES) * (5 if d.dp * d.cp > 1 else 1) for d, _ in candidates)
    if count > MAX_LAYOUTS:
        raise ValidationError("num_gpus", f"{n} GPUs give too many layouts to search here "
                              f"({len(candidates)} sizes and micro-batches); fix tp, cp or "
                              "pp, or pick a GPU count with fewer divisors")
    return candidates


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
    """A floor under the step time of every layout of one (sizes, micro-batch), from
    what is cheap to know before costing them: the pipeline ranks' mean compute (the
    slowest rank does at least the mean; the step model takes it among ranks 0, 1 and
    the last, and every other rank holds rank 1's layers), the fewest TP allreduces a
    layer makes, the
    exposed context-parallel time, the pipeline sends, and the schedule's bubble. It
    leaves out recomputation, the slowest rank's excess over the mean and data-parallel
    time, which only add. Its parts are computed once per search: what depends on TP,
    CP and the micro-batch, and the bubble by PP and micro-batches."""

    def __init__(self, arch: Architecture, cluster: Cluster, opts: Options,
                 cache: lc.CollectiveCache, flops: lc.LayerFlops) -> None:
        self.arch, self.cluster, self.opts, self.cache, self.flops = (
            arch, cluster, opts, cache, flops)
        self._width: dict[tuple[int, int, int], tuple[float, float, float]] = {}
        self._bubble: dict[tuple[int, int], float] = {}
        self._sends: dict[tuple[float, bool], float] = {}

    def _per_width(self, dims: Dims, micro_batch: int) -> tuple[float, float, float]:
        """(compute of every layer and the output layer, TP and exposed CP time of one
        layer, the activation one pipeline send carries), all per micro-batch."""
        key = (dims.tp, dims.cp, micro_batch)
        hit = self._width.get(key)
        if hit is None:
            arch, flops = self.arch, self.flops
            w = _width(arch, self.cluster, self.opts, self.cache, flops, dims=dims,
                       micro_batch=micro_batch)
            fewest = min(lc.TP_ALLREDUCES_PER_LAYER.values())
            hit = (w.per_gpu * (arch.layers * flops.layer + flops.output),
                   fewest * w.tp_op[0] + w.cp_layer[1], w.act / dims.tp)
            self._width[key] = hit
        return hit

    def floor(self, dims: Dims, micro_batch: int, micro_batches: int) -> float:
        pp, opts = dims.pp, self.opts
        compute, per_layer, message = self._per_width(dims, micro_batch)
        bubble = self._bubble.get((pp, micro_batches))
        if bubble is None:
            bubble = lc.bubble_fraction(opts.schedule if pp > 1 else "1f1b", pp, micro_batches,
                                        opts.chunks(pp))
            self._bubble[(pp, micro_batches)] = bubble
        sends = 0.0
        if pp > 1:
            crosses = group_per_domain(dims, ("pp",), self.cluster.gpus_per_node)[1] < pp
            one = self._sends.get((message, crosses))
            if one is None:
                one = self._sends[(message, crosses)] = self.cache.p2p(message, crosses)
            sends = 2 * opts.chunks(pp) * one
        slot = compute / pp + self.arch.layers / pp * per_layer + sends
        return micro_batches * slot * (1.0 + bubble)


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
    their step times (``_Floors``), and each recomputation mode is skipped when its
    own floor (``_Base.step_floor``) is past the tolerance of the fastest fitting layout
    found so far; once a floor is past it, every later one is too. A choice's memory
    comes first: one that does not fit is not costed further.

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
    fixed: dict[str, int | None] = dict.fromkeys(("tp", "pp", "dp", "cp"))
    fixed["micro_batch"] = micro_batch
    memo = _Memo(arch, opts)
    candidates = _searchable(arch, cluster.num_gpus, global_batch, memo, fixed)
    cache = lc.CollectiveCache(_links(cluster))
    flops = lc.layer_flops(arch, opts.attention)
    domain = cluster.gpus_per_node
    considered = 0
    bounds = _Floors(arch, cluster, opts, cache, flops)
    floors: list[tuple[float, int]] = []
    for i, (dims, b) in enumerate(candidates):
        considered += len(RECOMPUTE_MODES) * len(_shardings(
            *group_per_domain(dims, ("cp", "dp"), domain)))
        if screened and b == 1:
            continue
        floors.append((bounds.floor(dims, b, global_batch // (dims.dp * b)), i))
    floors.sort()
    found = list(screened)
    # The fastest fitting layout so far, and the step time past which nothing counts.
    fastest = min((lay.step_s for lay in found), default=math.inf)
    limit = fastest * (1.0 + tolerance) * (1.0 + FLOOR_SLACK)
    costed = 0
    for floor, i in floors:
        if floor > limit:
            break
        dims, b = candidates[i]
        base = _Base(arch, cluster, per_param, options=opts, cache=cache, flops=flops,
                     memo=memo, dims=dims, micro_batch=b,
                     micro_batches=global_batch // (dims.dp * b))
        shardings = _shardings(base.group, base.group_pd)
        for recompute in RECOMPUTE_MODES:
            if base.step_floor(recompute) > limit:
                continue
            for zero, shard in shardings:
                costed += 1
                memory = base.memory(recompute, zero, shard)
                if memory.total > cluster.memory_bytes:
                    continue
                dp = base.dp(recompute, zero, shard)
                if base.step_s(recompute, dp) > limit:
                    continue
                lay = base.layout(recompute, zero, shard, dp=dp, memory=memory)
                found.append(lay)
                if lay.step_s < fastest:
                    fastest = lay.step_s
                    limit = fastest * (1.0 + tolerance) * (1.0 + FLOOR_SLACK)
    # The same bound as formulas.ranking.preferred's, computed the same way.
    near = fastest * (1.0 + tolerance)
    found = [lay for lay in found if lay.step_s <= near]
    found.sort(key=lambda lay: (lay.step_s, lay.memory.total, *_enumeration_order(lay, domain)))
    return NearSearch(found, considered, costed)
