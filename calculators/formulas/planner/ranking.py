"""Which of the costed layouts the planner recommends: the fastest, unless a simpler one
is too close behind it for the cost model to tell them apart.

The step-time model is a sum of estimates, each with assumed efficiencies (compute at a
fraction of peak, links at a fraction of line rate, an overlap efficiency) and each
leaving something out: how efficiently each layout's smaller matrix multiplies and
attention blocks run, kernel launches and synchronisation, how much of the tensor-
parallel traffic a newer framework hides. Where it can be checked against measured
runs it lands within about 5 to 8% of them (the dense chapter's Llama 3 405B layouts
at 8K: 7-8%), and the parts it leaves out differ from one layout to the next. Two
layouts a few percent apart are therefore not ranked by the model but by its errors.

Within ``RANK_TOLERANCE`` of the fastest layout that fits, the planner prefers the
simpler layout: first the smallest model-parallel group, tensor x context x pipeline
(Narayanan et al. 2021, Sec. 3.3, Takeaway #2: a model-parallel size just large enough
for the model to fit, data parallelism for the rest; model-parallel traffic comes every
layer of every micro-batch and sits on the critical path, data-parallel traffic once per
step and mostly hides), then the fewest parallel dimensions in use (each is a process
group, a collective and a code path to tune and debug), then the step time. Layouts
further behind follow by step time. The tolerance is an input: 0 ranks by step time
alone.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.core.i18n import N_, _
from calculators.formulas.parallel.placement import RANK_ORDER

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from calculators.formulas.parallel.placement import Dims
    from calculators.formulas.planner.layout import Layout

#: Layouts within this fraction of the fastest that fits count as equally fast. An
#: assumption, a little under the model's error against measured runs (7-8% for
#: Llama 3 405B at 8K, Dubey et al. 2024, Table 4; see the module docstring).
RANK_TOLERANCE = 0.05


def dimensions_in_use(dims: Dims) -> int:
    """How many parallel dimensions have a size above 1 (expert parallelism included)."""
    return sum(1 for name in RANK_ORDER if dims.size(name) > 1) + (dims.ep > 1)


def model_parallel_size(dims: Dims) -> int:
    """GPUs that hold one replica of the model (everything but data parallelism). With
    expert parallelism (folded into a stage's TP x CP x DP GPUs, formulas.moe.planner),
    a stage's parameters are whole on the smallest block of consecutive ranks holding
    both a TP x CP group and an EP group: lcm(TP x CP, EP) GPUs."""
    return dims.pp * math.lcm(dims.tp * dims.cp, dims.ep)


def simplicity(lay: Layout) -> tuple[int, int]:
    """The key that orders layouts the model cannot tell apart: a smaller model-parallel
    group, then fewer dimensions in use."""
    return model_parallel_size(lay.dims), dimensions_in_use(lay.dims)


def preferred(layouts: Iterable[Layout], tolerance: float = RANK_TOLERANCE) -> list[Layout]:
    """The layouts that fit, recommended first: those within ``tolerance`` of the fastest
    by simplicity (then step time, then memory), the rest by step time."""
    if not 0.0 <= tolerance <= 1.0:
        raise ValueError(f"tolerance must be in [0, 1], got {tolerance}")
    fitting = sorted((lay for lay in layouts if lay.fits),
                     key=lambda lay: (lay.step_s, lay.memory.total))
    if not fitting or tolerance == 0.0:
        return fitting
    limit = fitting[0].step_s * (1.0 + tolerance)
    near = [lay for lay in fitting if lay.step_s <= limit]
    near.sort(key=lambda lay: (*simplicity(lay), lay.step_s, lay.memory.total))
    return near + fitting[len(near):]


#: A recomputation mode as the notes say it.
RECOMPUTE_WORDS = {"none": N_("no recomputation"), "selective": N_("selective recomputation"),
                   "light": N_("light recomputation"), "full": N_("full recomputation")}


def simplicity_in_words(lay: Layout) -> str:
    """What the simplicity key counts, in words (both planners' notes)."""
    dims = dimensions_in_use(lay.dims)
    return (_("{gpus:,} GPUs per replica, {dims} parallel dimensions in use") if dims != 1 else
            _("{gpus:,} GPUs per replica, {dims} parallel dimension in use")).format(
        gpus=model_parallel_size(lay.dims), dims=dims)


def recommendation_note(best: Layout, fitting: list[Layout], tolerance: float,
                        choices: Callable[[Layout], str]) -> str | None:
    """Why the recommended layout is not the fastest that fits, when it is not; ``choices``
    describes a layout's micro-batch, recomputation and sharding as its table does."""
    quickest = min(fitting, key=lambda lay: lay.step_s)
    if quickest.step_s >= best.step_s:
        return None
    return _("Recommended over the fastest layout that fits, {layout} ({choices}, "
             "{time:.3g} s, {its_simplicity}): it is {slower:.1%} slower, within the "
             "{tolerance:.0%} the step model cannot resolve, and simpler "
             "({simplicity}).").format(
        layout=quickest.dims.label(), choices=choices(quickest), time=quickest.step_s,
        its_simplicity=simplicity_in_words(quickest), slower=best.step_s / quickest.step_s - 1,
        tolerance=tolerance, simplicity=simplicity_in_words(best))


def distinct(fitting: list[Layout], count: int) -> list[Layout]:
    """The first ``count`` layouts in the recommended order, one per (layout, micro-batch,
    recomputation, step time): ZeRO stages that tie are listed once, the leaner first."""
    top: list[Layout] = []
    listed: set[tuple[str, int, str, float]] = set()
    for lay in fitting:
        key = (lay.dims.label(), lay.micro_batch, lay.recompute, lay.step_s)
        if key not in listed:
            listed.add(key)
            top.append(lay)
        if len(top) == count:
            break
    return top
