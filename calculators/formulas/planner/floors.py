"""The floors that prune the planner's search: lower bounds on the step time of every
layout of one (sizes, micro-batch), cheap enough to rank thousands of sizes before any
is costed in full (formulas.planner.search.search_near)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.formulas.model.model_states import model_state_bytes
from calculators.formulas.parallel.placement import Dims, members_per_domain
from calculators.formulas.planner import layer_costs as costs
from calculators.formulas.planner import layout_cost as lc
from calculators.formulas.planner.base import Width, width_costs
from calculators.formulas.planner.sizes import shard_groups, state_shardings

if TYPE_CHECKING:
    from collections.abc import Sequence

    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.parallel.memory import StateBytes
    from calculators.formulas.parallel.stages import StageSplit
    from calculators.formulas.planner.layout import Cluster, Options
    from calculators.formulas.planner.memo import Memo
    from calculators.formulas.planner.sizes import Sizes

#: Relative slack on the floors below before a layout is skipped: the floor and the step
#: time add the same terms in a different order, so rounding may put a floor a few ulps
#: above the step time it bounds.
FLOOR_SLACK = 1e-9


class Floors:
    """A floor under the step time of every layout of one (sizes, micro-batch): the
    step time without recomputation (which only adds compute and TP allreduces) and
    without data-parallel time (whose exposed part is never negative), as ``LayoutBase``
    computes it from the slowest pipeline rank. Its parts are computed once and shared
    with the bases: what depends on TP, CP and the micro-batch, the pipeline's ranks by
    PP, the bubble by PP and micro-batches, the sends by their size and placement."""

    def __init__(self, arch: Architecture, cluster: Cluster, opts: Options, *,
                 cache: lc.CollectiveCache, stack: costs.DenseStack, memo: Memo) -> None:
        self.arch, self.cluster, self.opts, self.cache, self.stack, self.memo = (
            arch, cluster, opts, cache, stack, memo)
        self._widths: dict[tuple[int, int, int], Width] = {}
        self._per_layer: dict[tuple[int, int, int], tuple[float, float, float]] = {}
        self._ranks: dict[int, tuple[tuple[tuple[tuple[float, float], ...], ...], float]] = {}
        self._bubble: dict[tuple[int, int], float] = {}
        self._sends: dict[tuple[float, bool], float] = {}
        self._dp_terms: dict[tuple[int, int, int, float, float, float],
                             tuple[tuple[float, float, float], ...]] = {}

    def width(self, tp: int, cp: int, micro_batch: int) -> Width:
        key = (tp, cp, micro_batch)
        hit = self._widths.get(key)
        if hit is None:
            hit = self._widths[key] = width_costs(self.arch, self.cluster, self.opts, self.cache,
                                                  self.stack, dims=Dims(tp=tp, cp=cp),
                                                  micro_batch=micro_batch)
        return hit

    def _layer(self, tp: int, cp: int, micro_batch: int) -> tuple[float, float, float]:
        """Per micro-batch: one layer's compute with its least TP traffic (no
        recomputation repeats it) and its exposed CP time; the output layer's compute;
        one pipeline send's bytes."""
        key = (tp, cp, micro_batch)
        hit = self._per_layer.get(key)
        if hit is None:
            w = self.width(tp, cp, micro_batch)
            times, least_tp = w.stack.times, min(t.exposed_s for t in w.stack.tp.values())
            hit = self._per_layer[key] = (
                times.forward_s + times.backward_s + least_tp + w.cp_layer[1],
                w.stack.output_s, w.act / tp)
        return hit

    def _pipeline(self, pp: int) -> tuple[tuple[tuple[tuple[float, float], ...], ...], float]:
        """For ``pp`` stages, per split variant, per rank of interest (layers it runs per
        micro-batch, its share of the output layer), and the sends per micro-batch (as
        many as are exposed, layout_cost.pp_exposed_share): the ranks the step model
        looks at. A floor takes the variant that gives the least (a base the fastest)."""
        hit = self._ranks.get(pp)
        if hit is None:
            chunks = self.opts.chunks(pp)
            variants = self.memo.splits(pp, chunks)
            assert variants  # the candidates have checked it
            schedule = self.opts.schedule if pp > 1 else "1f1b"
            hit = self._ranks[pp] = (tuple(
                self._floor_ranks(split) for split in variants),
                self.opts.sends(pp) * lc.pp_exposed_share(schedule, self.cluster.overlap))
        return hit

    def _floor_ranks(self, split: StageSplit) -> tuple[tuple[float, float], ...]:
        """The ranks of interest, or, in a stack of mixed kinds (whose ranks the step
        model weighs by kind, formulas.planner.kind_weights), what any split's slowest
        rank runs at least: the average rank's layers, and the output layer's rank."""
        if self.arch.mix.uniform:
            return tuple((split.compute_layers(r), split.output_share(r))
                         for r in split.ranks_of_interest)
        average = split.layers / split.stages
        return ((average, 0.0), *((0.0, split.output_share(r)) for r in range(split.stages)
                                  if split.output_share(r)))

    @staticmethod
    def _slot(variants: tuple[tuple[tuple[float, float], ...], ...], per_layer: float,
              output: float) -> float:
        """The slowest rank's compute under the fastest split variant."""
        return min(max(layers * per_layer + share * output for layers, share in ranks)
                   for ranks in variants)

    def _sharding_times(self, tp: int, pp: int, group: int,
                        per_param: StateBytes) -> tuple[tuple[float, float, float], ...]:
        """The data-parallel time of each sharding whose model states alone fit on every
        pipeline rank, as (a, b, c): a + b m for m micro-batches per step (formulas.
        layout_cost.dp_from_runs: every term is constant or proportional to m), and c
        its optimizer step. A sharding that does not fit this way fits with no
        recomputation mode."""
        # The state bytes by value: hashing the record itself costs more than the lookup.
        key = (tp, pp, group, per_param.weights, per_param.gradients, per_param.optimizer)
        hit = self._dp_terms.get(key)
        if hit is None:
            chunks, capacity = self.opts.chunks(pp), self.cluster.memory_bytes
            params = self.memo.least_rank_params(tp, pp, chunks)
            most = max(params)
            grads, weights = most * per_param.gradients, most * per_param.wide_weights
            # The CP x DP group's members are TP ranks apart (placement).
            per_domain = members_per_domain(tp, group, self.cluster.gpus_per_node)
            terms = []
            for zero, shard in state_shardings(group, per_domain, self.opts.zero_stage):
                if any(w + g + o > capacity for w, g, o in (
                        model_state_bytes(p, per_param, zero, shard) for p in params)):
                    continue
                groups, replicas = shard_groups(shard, group, per_domain)
                runs = self.cache.dp(zero, groups, replicas, grads, weights)
                at = [lc.dp_from_runs(runs, zero, replicas > 1, micro_batches=m, forward_s=0.0,
                                      backward_s=0.0, overlap=0.0).time_s for m in (0, 1)]
                local = most / (shard if zero >= 1 else 1)
                terms.append((at[0], at[1] - at[0],
                              lc.optimizer_time_s(local, per_param, self.cluster.machine)))
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
        domain = self.cluster.gpus_per_node
        modes = len(self.opts.recompute_modes())
        out: list[tuple[float, int, bool]] = []
        considered = 0
        for i, (t, c, p, d, b) in enumerate(sizes):
            # The CP x DP group's members are TP ranks apart (placement).
            group = c * d
            considered += modes * len(state_shardings(
                group, members_per_domain(t, group, domain), self.opts.zero_stage))
            if skip_one and b == 1:
                continue
            m = global_batch // (d * b)
            times, output = self.stack.compute(t, c, b)
            layer = times.forward_s + times.backward_s
            variants, _ = self._pipeline(p)
            slot = self._slot(variants, layer, output)
            out.append((m * slot * (1.0 + self._bubble_of(p, m)), i, False))
        return out, considered

    def floor(self, sizes: Sizes, micro_batches: int, per_param: StateBytes) -> float:
        """The floor under every layout of these sizes that fits: the step time without
        recomputation (which only adds compute and TP allreduces), with the fewest TP
        allreduces, the exposed CP time and the pipeline sends, plus the least exposed
        data-parallel time of a sharding whose model states fit: at least the share
        ``1 - overlap`` of its time, since what hides is never more than the traffic
        (layout_cost.dp_cost), with its optimizer step. Infinite when no sharding's
        states fit."""
        tp, cp, pp, dp, micro_batch = sizes
        times = self._sharding_times(tp, pp, cp * dp, per_param)
        if not times:
            return math.inf
        per_layer, output, message = self._layer(tp, cp, micro_batch)
        variants, sends = self._pipeline(pp)
        slot = self._slot(variants, per_layer, output)
        if sends:
            # The pipeline group's members are TP x CP x DP ranks apart (placement).
            crosses = members_per_domain(tp * cp * dp, pp, self.cluster.gpus_per_node) < pp
            one = self._sends.get((message, crosses))
            if one is None:
                one = self._sends[(message, crosses)] = self.cache.p2p(message, crosses)
            slot += sends * one
        hidden = min(1.0, max(0.0, self.cluster.overlap))
        exposed = min((1.0 - hidden) * (a + micro_batches * b) + c for a, b, c in times)
        return micro_batches * slot * (1.0 + self._bubble_of(pp, micro_batches)) + exposed
