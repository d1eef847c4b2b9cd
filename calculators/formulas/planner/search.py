"""The planner's search: enumerate TP x CP x PP x DP layouts, cost each, rank them.

Every cost comes from the one implementation of its formula: memory from
formulas.parallel.memory (per pipeline rank, schedule-aware), FLOPs and traffic from
formulas.planner.layout_cost (which calls formulas.collectives, formulas.parallel's
context parallelism and pipeline schedules), placement from formulas.parallel.placement.
The rules (formulas.planner.sizes) allow the sizes; each is costed by
formulas.planner.base, and search_near prunes with formulas.planner.floors. The search
varies the four sizes, the micro-batch, the recomputation mode and the sharding of the
model states (ZeRO 1-3 over the whole data-parallel group, or 2-3 within the scale-up
domain and replicated across: hybrid sharding); the pipeline schedule, the
context-parallel method and the attention kernel are choices the reader makes.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from calculators.formulas.parallel.placement import Dims, group_per_domain
from calculators.formulas.planner import layer_costs as costs
from calculators.formulas.planner import layout_cost as lc
from calculators.formulas.planner.base import LayoutBase
from calculators.formulas.planner.floors import FLOOR_SLACK, Floors
from calculators.formulas.planner.layout import Options
from calculators.formulas.planner.memo import Memo
from calculators.formulas.planner.sizes import (
    MICRO_BATCHES,
    allowed_sizes,
    refuse_too_many,
    searchable,
    state_shardings,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.parallel.memory import StateBytes
    from calculators.formulas.planner.layout import Cluster, Layout
    from calculators.formulas.planner.sizes import Sizes

def evaluate(arch: Architecture, cluster: Cluster, per_param: StateBytes,
             global_batch: int, *, tp: int, pp: int, dp: int, micro_batch: int,
             recompute: str, zero_stage: int, cp: int = 1, hybrid: bool = False,
             options: Options | None = None, act_bytes: float | None = None) -> Layout:
    """Cost one layout. ``zero_stage`` shards over DP x CP, or with ``hybrid`` over the
    part of that group inside one scale-up domain. Raises SplitError or ValueError for
    a layout the search would not consider."""
    opts = options_with(options, act_bytes)
    dims = Dims(tp=tp, cp=cp, dp=dp, pp=pp)
    m = global_batch // (dp * micro_batch)
    cache = lc.CollectiveCache(cluster)
    base = LayoutBase(arch, cluster, per_param, options=opts, cache=cache, memo=Memo(arch, opts),
                      stack=costs.DenseStack(arch, cluster.machine, opts), dims=dims,
                      micro_batch=micro_batch, micro_batches=m)
    return base.layout(recompute, zero_stage, base.group_pd if hybrid else base.group)


def options_with(options: Options | None, act_bytes: float | None) -> Options:
    opts = options or Options()
    if act_bytes is None:
        return opts
    return replace(opts, act_bytes=act_bytes)


class Searched(NamedTuple):
    """What ``search`` found when it keeps only what a plan shows."""

    #: Every layout that fits, and of those that do not, the fastest and the smallest;
    #: fastest first, ties to the one with less memory.
    layouts: list[Layout]
    #: How many choices were evaluated (those ``search`` would list), and how many fit.
    evaluated: int
    fitting: int


def search(arch: Architecture, cluster: Cluster, per_param: StateBytes,
           global_batch: int, *, tp: int | None = None, pp: int | None = None,
           dp: int | None = None, cp: int | None = None, micro_batch: int | None = None,
           options: Options | None = None, act_bytes: float | None = None) -> list[Layout]:
    """Every valid layout with tp x cp x pp x dp = num_gpus, fastest first (fitting or
    not); ties go to the one with less memory."""
    return _search(arch, cluster, per_param, global_batch, tp=tp, pp=pp, dp=dp, cp=cp,
                   micro_batch=micro_batch, options=options, act_bytes=act_bytes,
                   every=True).layouts


def search_shown(arch: Architecture, cluster: Cluster, per_param: StateBytes,
                 global_batch: int, *, tp: int | None = None, pp: int | None = None,
                 dp: int | None = None, cp: int | None = None,
                 micro_batch: int | None = None,
                 options: Options | None = None) -> Searched:
    """``search``, keeping of the layouts that do not fit only the fastest and the
    smallest (what a plan shows of them): the others' records are never built, which
    is most of the work when most do not fit."""
    return _search(arch, cluster, per_param, global_batch, tp=tp, pp=pp, dp=dp, cp=cp,
                   micro_batch=micro_batch, options=options, act_bytes=None, every=False)


def _search(arch: Architecture, cluster: Cluster, per_param: StateBytes, global_batch: int,
            *, tp: int | None, pp: int | None, dp: int | None, cp: int | None,
            micro_batch: int | None, options: Options | None, act_bytes: float | None,
            every: bool) -> Searched:
    opts = options_with(options, act_bytes)
    fixed = {"tp": tp, "pp": pp, "dp": dp, "cp": cp, "micro_batch": micro_batch}
    memo = Memo(arch, opts)
    candidates = searchable(arch, cluster.num_gpus, global_batch, memo, fixed)
    cache = lc.CollectiveCache(cluster)
    stack = costs.DenseStack(arch, cluster.machine, opts)
    capacity = cluster.memory_bytes
    layouts: list[Layout] = []
    evaluated = fitting = 0
    # Of those that do not fit (when not every layout is kept): (step, peak, base and
    # choice) of the fastest and of the smallest.
    fastest: tuple[float, float, LayoutBase, str, int, int] | None = None
    smallest: tuple[float, float, LayoutBase, str, int, int] | None = None
    for dims, b in candidates:
        base = LayoutBase(arch, cluster, per_param, options=opts, cache=cache, stack=stack,
                          memo=memo, dims=dims, micro_batch=b,
                          micro_batches=global_batch // (dims.dp * b))
        shardings = state_shardings(base.group, base.group_pd, opts.zero_stage)
        # Recomputation only trades time for memory: once a sharding fits with one mode,
        # a mode that costs as much or more time is never chosen; a plan need not build
        # it (it counts as evaluated: it is known to lose).
        fitted: dict[tuple[int, int], float] = {}
        for recompute in opts.recompute_modes():
            cost = base.recompute_cost(recompute)
            for zero, shard in shardings:
                evaluated += 1
                if every:
                    layouts.append(base.layout(recompute, zero, shard))
                    continue
                peak = base.peak(recompute, zero, shard)
                if fitted.get((zero, shard), math.inf) <= cost:
                    fitting += peak <= capacity
                    continue
                if peak <= capacity:
                    layouts.append(base.layout(recompute, zero, shard))
                    fitted[(zero, shard)] = cost
                    fitting += 1
                    continue
                dp_cost = base.dp(recompute, zero, shard)
                step = base.step_s(recompute, dp_cost, base.optimizer_s(zero, shard))
                if fastest is None or (step, peak) < fastest[:2]:
                    fastest = (step, peak, base, recompute, zero, shard)
                if smallest is None or (peak, step) < (smallest[1], smallest[0]):
                    smallest = (step, peak, base, recompute, zero, shard)
    for kept in {id(k): k for k in (fastest, smallest) if k is not None}.values():
        layouts.append(kept[2].layout(*kept[3:]))
    layouts.sort(key=lambda lay: (lay.step_s, lay.memory.total))
    if every:
        fitting = sum(lay.fits for lay in layouts)
    return Searched(layouts, evaluated, fitting)


#: Relative slack on the floors below before a layout is skipped: the floor and the step
#: time add the same terms in a different order, so rounding may put a floor a few ulps


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


class Space:
    """What the searches of one model, global batch, state bytes, options and machine
    (all but its GPU count) share: the memo, the collective costs, the floors' parts
    and the sizes the rules allow at each GPU count. cluster_sizing searches the same
    count twice (micro-batch 1, then all) and a reader's next edit often again."""

    def __init__(self, arch: Architecture, cluster: Cluster, opts: Options) -> None:
        self.memo = Memo(arch, opts)
        self.cache = lc.CollectiveCache(cluster)
        self.stack = costs.DenseStack(arch, cluster.machine, opts)
        self.floors = Floors(arch, cluster, opts, cache=self.cache, stack=self.stack,
                             memo=self.memo)
        self._sizes: dict[tuple[int, int], list[Sizes]] = {}

    def sizes(self, n: int, global_batch: int, micro_batch: int | None) -> list[Sizes]:
        """``allowed_sizes`` at ``n`` GPUs, every micro-batch or one; those of one micro-batch
        the search allows are those of every micro-batch with it, in the same order."""
        key = (n, global_batch)
        every = self._sizes.get(key)
        if every is None:
            fixed: dict[str, int | None] = dict.fromkeys(("tp", "pp", "dp", "cp",
                                                          "micro_batch"))
            every = self._sizes[key] = allowed_sizes(self.memo.arch, n, global_batch, self.memo,
                                                     fixed)
        if micro_batch is None:
            return every
        if micro_batch in MICRO_BATCHES:
            return [size for size in every if size[4] == micro_batch]
        fixed = {"tp": None, "pp": None, "dp": None, "cp": None, "micro_batch": micro_batch}
        return allowed_sizes(self.memo.arch, n, global_batch, self.memo, fixed)


@lru_cache(maxsize=4)
def shared_space(arch: Architecture, machine: Cluster, opts: Options) -> Space:
    """The shared part of searches on ``machine`` (a cluster whose GPU count is left
    out: nothing here depends on it). A few are kept: the page's last few models."""
    return Space(arch, machine, opts)


def enumeration_order(lay: Layout, domain: int, zero: int | None = None) -> tuple[int, ...]:
    """Where ``search`` enumerates a layout: by TP, CP, PP (DP follows), micro-batch,
    recomputation, sharding, which is how its sort breaks ties."""
    dims = lay.dims
    shardings = state_shardings(*group_per_domain(dims, ("cp", "dp"), domain), zero)
    return (dims.tp, dims.cp, dims.pp, lay.micro_batch,
            lc.ALL_RECOMPUTE_MODES.index(lay.recompute),
            shardings.index((lay.zero_stage, lay.shard_group)))


def search_near(arch: Architecture, cluster: Cluster, per_param: StateBytes,
                global_batch: int, *, tolerance: float, micro_batch: int | None = None,
                screened: Sequence[Layout] = (), options: Options | None = None,
                act_bytes: float | None = None) -> NearSearch:
    """The layouts that decide formulas.planner.ranking's recommendation: every layout that fits
    within ``tolerance`` of the fastest that fits, in ``search``'s order (step time,
    then memory, then the order of enumeration). ``preferred`` ranks them as it ranks
    the whole list, and a test that only gets harder as the step time grows (a deadline)
    picks from them what it would pick from the whole list: a layout past the tolerance
    only comes first when none within it passes, and then none past it passes either.

    Branch and bound: the sizes and micro-batches are costed in order of a floor under
    the step times of their layouts that fit (``Floors.floor``: compute, the fewest
    TP allreduces, exposed CP time, pipeline sends, the bubble and the least exposed
    data-parallel time of a sharding whose model states fit), and each recomputation
    mode is skipped when its own floor (``LayoutBase.step_floor``) is past the tolerance of
    the fastest fitting layout found so far; once a floor is past it, every later one
    is too. A choice's step time comes first and its memory only if that is within the
    tolerance: most choices the bound reaches are too slow. What does not depend on the
    GPU count (collective costs, per-layer costs, splits) is kept between searches
    (``Space``).

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
    opts = options_with(options, act_bytes)
    space = shared_space(arch, replace(cluster, num_gpus=0), opts)
    memo, cache, stack, bounds = space.memo, space.cache, space.stack, space.floors
    sizes = space.sizes(cluster.num_gpus, global_batch, micro_batch)
    refuse_too_many(cluster.num_gpus, sizes)
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
        base = LayoutBase(arch, cluster, per_param, options=opts, cache=cache, stack=stack,
                          memo=memo, dims=Dims(tp=t, cp=c, dp=d, pp=p), micro_batch=b,
                          micro_batches=global_batch // (d * b), width=bounds.width(t, c, b))
        shardings = state_shardings(base.group, base.group_pd, opts.zero_stage)
        for recompute in opts.recompute_modes():
            if base.step_floor(recompute) > limit:
                continue
            for zero, shard in shardings:
                costed += 1
                dp = base.dp(recompute, zero, shard)
                if base.step_s(recompute, dp, base.optimizer_s(zero, shard)) > limit:
                    continue
                if base.peak(recompute, zero, shard) > cluster.memory_bytes:
                    continue
                lay = base.layout(recompute, zero, shard, dp=dp)
                found.append(lay)
                if lay.step_s < fastest:
                    fastest = lay.step_s
                    limit = fastest * (1.0 + tolerance) * (1.0 + FLOOR_SLACK)
    # The same bound as formulas.planner.ranking.preferred's, computed the same way.
    near = fastest * (1.0 + tolerance)
    found = [lay for lay in found if lay.step_s <= near]
    found.sort(key=lambda lay: (lay.step_s, lay.memory.total,
                                *enumeration_order(lay, domain, opts.zero_stage)))
    return NearSearch(found, considered, costed)
