"""The planner with expert parallelism: EP x TP x CP x PP x DP layouts of a mixture of
experts, costed by the dense planner's model (formulas.planner) plus what experts add.

**Groups**: formulas.moe.expert_groups (Megatron-Core's folding of EP into a stage's TP x CP
x DP GPUs; EDP = TP x CP x DP / EP). **Memory**: the TP part of the parameters as in a
dense model, sharded by ZeRO over DP x CP (or hybrid); the routed experts split over EP
and sharded over EDP (Megatron-Core's expert distributed optimizer; not hybrid here);
activations from formulas.moe.layers. **Time**: every block with routed experts runs
four alltoalls per micro-batch (expert_groups.block_alltoall). Without overlap the
experts wait for their tokens and the alltoall is on the critical path; with
``overlap="batch"`` one micro-batch's alltoall runs while another computes (DeepSeek-V3's
DualPipe, Sec. 3.2.1; Megatron-Core 0.14's ``--overlap-moe-expert-parallel-comm``) and
hides behind one block's compute at the cluster's overlap efficiency, as the planner
hides data-parallel traffic. Expert gradients reduce over the EDP group.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.core.spec import ValidationError
from calculators.formulas.moe import layers as ml
from calculators.formulas.moe.block_times import MoeStack
from calculators.formulas.moe.expert_groups import ExpertComm, ep_sizes
from calculators.formulas.moe.layout_base import _MoeBase
from calculators.formulas.parallel.stages import balanced_split
from calculators.formulas.planner import layout_cost as lc
from calculators.formulas.planner.floors import FLOOR_SLACK
from calculators.formulas.planner.layout import Layout, Options
from calculators.formulas.planner.memo import Memo
from calculators.formulas.planner.sizes import (
    MAX_LAYOUTS,
    RECOMPUTE_MODES,
    candidate_dims,
    state_shardings,
)

if TYPE_CHECKING:
    from calculators.formulas.moe.layout_base import _Experts
    from calculators.formulas.moe.shape import MoeArchitecture
    from calculators.formulas.parallel.memory import StateBytes
    from calculators.formulas.parallel.placement import Dims
    from calculators.formulas.parallel.stages import StageSplit
    from calculators.formulas.planner.layout import Cluster

__all__ = ["ExpertComm", "Search", "evaluate", "search"]


@dataclass(frozen=True)
class Search:
    """The search's answer: the layouts that fit, fastest first (ties to less memory),
    how many choices were costed, and the least memory any costed choice needed. With
    a ``tolerance``, ``layouts`` holds only those within it of the fastest (and, with
    ``keep``, the ``keep`` fastest too), and ``fitting`` counts them all. ``work`` is
    what the search cost, in units of about one choice's memory (see ``BASE_WORK``):
    what a caller that runs many searches bounds, since it grows with the choices
    that do not fit as with those that do."""

    layouts: list[Layout]
    evaluated: int
    smallest_bytes: float
    fitting: int
    work: int = 0


#: One (TP, CP, PP, DP, micro-batch) base costs about this many choices' memory checks
#: to build (its blocks' kernel times, stage split and per-rank sums; measured with
#: cProfile on DeepSeek-V3-like shapes: about 0.5 ms against about 5 us), so the
#: search's work counts it so.
BASE_WORK = 100


class _Setup:
    """What every (dims, micro-batch) of one search shares."""

    def __init__(self, model: MoeArchitecture, seq_len: int, cluster: Cluster, *,
                 per_param: StateBytes, global_batch: int, comm: ExpertComm,
                 options: Options) -> None:
        self.model, self.comm, self.cluster, self.per_param = model, comm, cluster, per_param
        self.global_batch, self.options = global_batch, options
        self.arch = ml.stand_in(model, seq_len)
        self.memo = Memo(self.arch, options)
        self.dense_memo = Memo(ml.stand_in(model, seq_len, ffn=model.dense_ffn or None),
                               options)
        self.cache = lc.CollectiveCache(cluster)
        self.kinds = ml.blocks(model, seq_len, 1.0, fp8=options.saved_input_bytes < 2.0)
        self.stack = MoeStack(model, self.arch, cluster.machine, options)

    def base(self, dims: Dims, micro_batch: int) -> _MoeBase:
        return _MoeBase(self.model, self.comm, self.kinds, self.dense_memo,
                        arch_memo=self.memo, arch=self.arch, cluster=self.cluster,
                        per_param=self.per_param, options=self.options, cache=self.cache,
                        stack=self.stack, dims=dims, micro_batch=micro_batch,
                        micro_batches=self.global_batch // (dims.dp * micro_batch),
                        split=self.split(dims, micro_batch))

    def split(self, dims: Dims, micro_batch: int) -> StageSplit | None:
        """The split variant whose slowest rank computes least, by the blocks' own times
        (dense, MoE, MTP) and the output heads on the last rank; None: not split."""
        pp = dims.pp
        variants = self.memo.splits(pp, self.options.chunks(pp))
        if len(variants) < 2:
            return None
        kinds = self.stack.kinds(dims.tp, dims.cp, micro_batch)
        output = self.stack.compute(dims.tp, dims.cp, micro_batch)[1]
        per_block = [t.forward_s + t.backward_s for t in kinds]

        def seconds(split: StageSplit, rank: int) -> float:
            counts = ml.rank_blocks(self.model, split, rank, (0,) * split.chunks_per_rank).counts
            return split.compute_share * math.fsum(
                n * t for n, t in zip(counts, per_block, strict=True)) + (
                split.output_share(rank) * output)

        return balanced_split(variants, seconds)


#: One choice of a search: the (dims, micro-batch) base, the EP size, recomputation,
#: ZeRO stage and shard group.
Choice = tuple["_MoeBase", "_Experts", str, int, int]


class _Collected:
    """The layouts a search returns, gathered as it walks the choices that fit. Without
    a tolerance, every one is built. With one, a choice is timed and kept only if it
    could be within the search's bound (see ``search``): the tolerance of the fastest
    so far and, with ``keep``, the ``keep``-th fastest so far, whose step times a
    max-heap holds (negated); the ones within the final bound are built at the end."""

    def __init__(self, tolerance: float | None, keep: int | None) -> None:
        self.tolerance, self.keep = tolerance, keep
        self.layouts: list[Layout] = []  # without a tolerance
        self.choices: list[tuple[float, Choice]] = []  # with one
        self.fastest: list[float] = []
        self.best = self.limit = math.inf  # the fastest step so far, and the bound it sets

    def bound(self) -> float:
        assert self.tolerance is not None
        bound = self.best * (1.0 + self.tolerance)
        if self.keep is None:
            return bound
        return max(bound, -self.fastest[0] if len(self.fastest) == self.keep else math.inf)

    def cost(self, choice: Choice, compared: bool) -> float:
        """A choice's step time; with a tolerance, infinite for a choice skipped on its
        floor (never one ``compared``)."""
        base, ex, recompute, zero, shard = choice
        if self.tolerance is None:
            lay = base.layout(ex, recompute, zero, shard)
            self.layouts.append(lay)
            return lay.step_s
        if not compared and base.moe_step_floor(ex, recompute) > self.limit:
            return math.inf
        step = base.moe_step_s(ex, recompute, zero, shard)
        if step <= self.limit:
            self.choices.append((step, choice))
            if self.keep is not None:
                if len(self.fastest) < self.keep:
                    heapq.heappush(self.fastest, -step)
                else:
                    heapq.heappushpop(self.fastest, -step)
            self.best = min(self.best, step)
            self.limit = self.bound() * (1.0 + FLOOR_SLACK)
        return step

    def result(self) -> list[Layout]:
        """The layouts, fastest first (ties to less memory); with a tolerance, those
        within the final bound (for the tolerance alone, formulas.planner.ranking.preferred's)."""
        layouts = self.layouts
        if self.tolerance is not None:
            bound = self.bound()
            layouts = [b.layout(ex, r, z, sh) for step, (b, ex, r, z, sh) in self.choices
                       if step <= bound]
        layouts.sort(key=lambda lay: (lay.step_s, lay.memory.total))
        return layouts


def search(model: MoeArchitecture, seq_len: int, cluster: Cluster, per_param: StateBytes,
           global_batch: int, *, comm: ExpertComm | None = None, tp: int | None = None,
           pp: int | None = None, dp: int | None = None, cp: int | None = None,
           ep: int | None = None, micro_batch: int | None = None,
           options: Options | None = None, exhaustive: bool = False,
           tolerance: float | None = None, keep: int | None = None) -> Search:
    """The EP x TP x CP x PP x DP layouts of ``cluster.num_gpus`` GPUs that fit.

    Tensor parallelism stays inside the scale-up domain (Narayanan et al. 2021, Sec.
    3.3, Takeaway #1) unless fixed. EP sizes are costed from the smallest; one whose
    smallest memory (``_MoeBase.smallest_memory``) exceeds the GPU's is skipped. For
    each sharding, recomputation goes from none to full up to the first choice that
    fits: more of it is only slower with the same sharding (it lengthens every slot by
    more than it lets the data-parallel traffic hide). Once the fastest choices (no
    recomputation, the least sharding) fit, larger EP sizes are costed only while they
    get faster: a larger EP adds alltoall copies and peers and saves memory and
    expert-gradient traffic, and past the point where the first outweighs the second it
    does not pay again (an assumption the unit tests check with ``exhaustive``, which
    costs every EP size and every choice that fits).

    With a ``tolerance`` (cluster_sizing's use) the search walks the same choices but
    times in full only those that could be within it of the fastest found so far (a
    choice whose floor, its step time less the exposed data-parallel time, is past that
    is skipped; the choices the EP rule compares are timed in full), and returns those
    within it of the fastest: what formulas.planner.ranking's recommendation and a deadline on
    the step time look at (formulas.planner.search_near does the same for dense models).
    With ``keep`` as well (moe_plan's use: its table and notes read the first layouts of
    the recommended order), it also returns the ``keep`` fastest, every layout up to the
    step time of the ``keep``-th (ties come together), and the bound is the larger of
    the two. A choice skipped on its floor is slower than the bound when it was skipped,
    which never grows, so the result is the same as building every layout and keeping
    those within the final bound; only those are built, once the search is done.
    Raises ValidationError("num_gpus") when there are too many layouts to search,
    ValueError when the node limit cannot hold k experts."""
    if tolerance is not None and not 0.0 <= tolerance <= 1.0:
        raise ValueError(f"tolerance must be in [0, 1], got {tolerance}")
    if keep is not None and (tolerance is None or keep < 1 or exhaustive):
        raise ValueError("keep needs a tolerance, at least 1, and a pruned search")
    setup = _Setup(model, seq_len, cluster, per_param=per_param, global_batch=global_batch,
                   comm=comm or ExpertComm(), options=options or Options())
    fixed = {"tp": tp, "pp": pp, "dp": dp, "cp": cp, "micro_batch": micro_batch}
    domain = cluster.gpus_per_node
    candidates = [(d, b, sizes) for d, b in candidate_dims(setup.arch, cluster.num_gpus,
                                                           global_batch, setup.memo, fixed)
                  if (d.tp <= domain or tp is not None)
                  and (sizes := ep_sizes(model, d, domain, ep))]
    count = sum(len(RECOMPUTE_MODES) * (5 if d.dp * d.cp > 1 else 1) * len(s)
                for d, _, s in candidates)
    if count > MAX_LAYOUTS:
        raise ValidationError("num_gpus", _(
            "{gpus} GPUs give too many layouts to search here ({sizes} sizes and "
            "micro-batches); fix ep, tp, cp or pp, or pick a GPU count with fewer "
            "divisors").format(gpus=cluster.num_gpus, sizes=len(candidates)))
    collected = _Collected(tolerance, keep)
    evaluated, smallest, fitting = 0, math.inf, 0
    work = 0
    for dims, b, sizes in candidates:
        base = setup.base(dims, b)
        shardings = state_shardings(base.group, base.group_pd, setup.options.zero_stage)
        previous = math.inf  # step time of the last EP size's fastest choices, if they fit
        work += BASE_WORK
        for size in sizes:  # smallest first
            ex = base.experts(size)
            least = base.smallest_memory(ex, setup.options.recompute_modes(), tuple(shardings))
            smallest, evaluated = min(smallest, least), evaluated + 1
            work += 1 + len(shardings) * len(setup.options.recompute_modes())
            if least > cluster.memory_bytes:
                continue
            fastest = math.inf  # step time of no recomputation and the least sharding
            modes = setup.options.recompute_modes()
            for zero, shard in shardings:
                for recompute in modes:  # more recomputation: slower, smaller
                    evaluated, work = evaluated + 1, work + 1
                    if not base.fits(ex, recompute, zero, shard):
                        continue
                    fitting += 1
                    compared = recompute == modes[0] and (zero, shard) == shardings[0]
                    step = collected.cost((base, ex, recompute, zero, shard), compared)
                    if compared:
                        fastest = step
                    if not exhaustive:
                        break
            if not exhaustive and fastest < math.inf:
                if fastest >= previous:
                    break
                previous = fastest
    return Search(collected.result(), evaluated, smallest, fitting, work)


def evaluate(model: MoeArchitecture, seq_len: int, cluster: Cluster, per_param: StateBytes,
             global_batch: int, *, dims: Dims, micro_batch: int,
             comm: ExpertComm | None = None, options: Options | None = None) -> list[Layout]:
    """Every recomputation and sharding choice of one layout (``dims`` with its EP size),
    fitting or not, fastest first. Raises ValueError for a layout the rules forbid."""
    setup = _Setup(model, seq_len, cluster, per_param=per_param, global_batch=global_batch,
                   comm=comm or ExpertComm(), options=options or Options())
    fixed: dict[str, int | None] = {"tp": dims.tp, "pp": dims.pp, "dp": dims.dp,
                                    "cp": dims.cp, "micro_batch": micro_batch}
    found = candidate_dims(setup.arch, cluster.num_gpus, global_batch, setup.memo, fixed)
    if not found or dims.ep not in ep_sizes(model, found[0][0], cluster.gpus_per_node):
        raise ValueError(f"{dims.label()} with micro-batch {micro_batch} breaks a layout rule")
    base = setup.base(found[0][0], micro_batch)
    ex = base.experts(dims.ep)
    layouts = [base.layout(ex, recompute, zero, shard)
               for recompute in setup.options.recompute_modes()
               for zero, shard in state_shardings(base.group, base.group_pd,
                                                  setup.options.zero_stage)]
    layouts.sort(key=lambda lay: (lay.step_s, lay.memory.total))
    return layouts
