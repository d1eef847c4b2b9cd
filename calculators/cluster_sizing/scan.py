"""cluster_sizing's scan for a GPU count: the smallest count of whole nodes whose
planner winner meets the deadline, within a bound on the planners' work so that the
page answers within seconds, with the best found so far when the bound stops it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from calculators.cluster_sizing.steps import MAX_GPUS, Plan, plan_at
from calculators.core.i18n import _
from calculators.core.spec import ValidationError
from calculators.formulas.planner.sizes import gpu_counts

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.planner.layout import Layout

#: The scan for a GPU count the planner accepts stops after this much search work: for
#: the dense planner, layouts considered (those its rules allow; its bound costs a
#: fraction of them in full), so that the page never waits long on an odd count.
MAX_EVALUATED_LAYOUTS = 3000
#: ... and for the expert-parallel planner, formulas.moe.planner.Search.work units
#: (about one memory check each): a count whose choices mostly do not fit costs as
#: much as one whose choices do. Set so that the slowest scans found (make bench's
#: cluster_sizing cases) stay near half a second natively and a few in Pyodide.
MAX_MOE_SCAN_WORK = 150_000
#: ... or after this many GPU counts.
MAX_NODE_COUNTS = 200


class Planner(Protocol):
    """``plan_at``'s signature: the planner's layouts at one GPU count."""

    def __call__(self, plan_raw: Mapping[str, object], num_gpus: int, blame: str, *,
                 search_layouts: bool = True, micro_batch: int | None = None,
                 screened: Plan | None = None) -> Plan: ...


@dataclass(frozen=True)
class Scan:
    """The GPU count chosen, how many counts were tried, and the plan there (if any)."""

    start_gpus: int
    num_gpus: int
    tried: int
    evaluated: int
    plan: Plan | None
    #: The winner at ``num_gpus`` passed the ``fast_enough`` test.
    fast_enough: bool
    #: Of the counts tried, how many had a layout that fits (the fallback's choice).
    fitting: int = 0
    #: The scan stopped at its work bound before a count met the test: the answer is
    #: the best found so far, and a larger count not tried might have met it.
    bounded: bool = False

    @property
    def tried_text(self) -> str:
        """How many GPU counts the scan tried, in words."""
        one = self.tried == 1
        said = ((_("{tried} count tried, where the search bound stopped it") if one else
                 _("{tried} counts tried, where the search bound stopped it")) if self.bounded
                else _("{tried} count tried") if one else _("{tried} counts tried"))
        return said.format(tried=self.tried)

    @property
    def notes(self) -> list[str]:
        """What the reader should know about the scan: that its bound stopped it."""
        if not self.bounded:
            return []
        return [_("The scan for a GPU count stopped at its search bound after {tried:,} "
                  "node counts from {start:,} GPUs (so that the page answers within "
                  "seconds): the count shown is the best found so far, and a larger count "
                  "not tried may meet the deadline. Fixing the parallel sizes in the "
                  "planner's own calculator, or a GPU count, searches further.").format(
            tried=self.tried, start=self.start_gpus)]

    @property
    def fallback_text(self) -> str:
        """Which count the scan fell back to when none was fast enough, in words."""
        return _("the only count tried whose layout fits") if self.fitting <= 1 else _(
            "the fastest of the {fitting} counts tried whose layouts fit (each compared at "
            "micro-batch 1, as the scan screens them)").format(fitting=self.fitting)


def candidate_counts(arch: Architecture, global_batch: int, gpus_per_node: int,
                     start: int) -> Iterator[int]:
    """GPU counts from ``start`` up, in whole nodes, that admit at least one layout under
    the planner's rules (formulas.planner.gpu_counts: tp divides the heads and KV
    heads, cp splits the sequence, pp splits the layers, dp divides the global batch),
    smallest first, as the scan asks for them."""
    return (n for n in gpu_counts(arch, global_batch, start=start, limit=MAX_GPUS)
            if n % gpus_per_node == 0)


def scan_for_layout(plan_raw: Mapping[str, object], start_gpus: int, gpus_per_node: int,
                    blame: str, fast_enough: Callable[[Layout], bool], *,
                    planner: Planner | None = None,
                    time_of: Callable[[Layout], float] | None = None,
                    budget: int = MAX_EVALUATED_LAYOUTS) -> Scan:
    """The smallest count of whole nodes with at least ``start_gpus`` GPUs whose
    planner winner (the layout parallel_plan recommends) is ``fast_enough``; failing that,
    within the search budget, the count whose winner finishes soonest by ``time_of``
    (the run's wall-clock with that layout), of those tried whose winner fits at all
    (without ``time_of``, the smallest of them), compared by their screens as the scan
    judges every count.

    Only counts that admit a layout are costed. Candidates are screened with
    micro-batch 1, the layouts with the least activation memory and the smallest
    pipeline bubble, so a quarter of the full search; the count chosen then gets
    parallel_plan's full search (reusing the screen's micro-batch-1 layouts), whose
    fastest layout is at least as fast (its recommended one is within the ranking
    tolerance of that). Both searches cost only what can decide the recommendation
    (formulas.planner.search_near), which ``fast_enough``, a deadline on the step time,
    allows. Counts with too many
    layouts to search are skipped. Whether a count is accepted depends on the count
    (and the test) alone, so a later start never ends lower. ``planner`` is ``plan_at``
    (the dense planner) unless given (the expert-parallel one, for a mixture of experts).
    The scan stops after ``budget`` of the planner's work (Plan.work) or
    MAX_NODE_COUNTS counts, with the best found so far (Scan.bounded).
    """
    plan_at_n = planner or plan_at
    first = max(1, math.ceil(start_gpus / gpus_per_node)) * gpus_per_node
    probe = plan_at_n(plan_raw, gpus_per_node, blame, search_layouts=False)
    batch = int(str(plan_raw["global_batch"]))
    tried = evaluated = 0
    chosen: int | None = None
    bounded = False
    screens: dict[int, Plan] = {}
    for n in candidate_counts(probe.arch, batch, gpus_per_node, first):
        if n > MAX_GPUS:
            break
        if tried >= MAX_NODE_COUNTS or evaluated >= budget:
            bounded = True
            break
        tried += 1
        try:
            screen = plan_at_n(plan_raw, n, blame, micro_batch=1)
        except ValidationError as err:
            if err.input_name != "num_gpus":
                raise
            continue  # too many layouts to search at this count
        evaluated += screen.work
        screens[n] = screen
        best = screen.choose(fast_enough)
        if best is not None and fast_enough(best):
            chosen = n
            break
    fitting = [n for n, screen in screens.items() if screen.choose(fast_enough) is not None]
    if chosen is not None:
        plan = plan_at_n(plan_raw, chosen, blame, screened=screens[chosen])
        return Scan(first, chosen, tried, evaluated + plan.considered, plan,
                    fast_enough=True, fitting=len(fitting))
    if not fitting:
        return Scan(first, first, tried, evaluated, None, fast_enough=False, bounded=bounded)
    # Counts compared as the scan judges every count, by their screens; the one chosen
    # then gets the full search. One whose full search has too many layouts gives way to
    # the next fastest.
    ranked = sorted(fitting, key=lambda n: (_time_of_screen(screens[n], fast_enough, time_of), n))
    for count in ranked:
        try:
            plan = plan_at_n(plan_raw, count, blame, screened=screens[count])
        except ValidationError as err:
            if err.input_name != "num_gpus":
                raise
            if count == ranked[-1]:  # said in this calculator's inputs, not the planner's
                raise ValidationError("deadline_days", _(
                    "at each GPU count the deadline leads to ({count:,} GPUs the last), "
                    "the planner has too many layouts to search here: change the deadline "
                    "or the global batch").format(count=count)) from None
            continue
        return Scan(first, count, tried, evaluated + plan.considered, plan,
                    fast_enough=False, fitting=len(fitting), bounded=bounded)
    raise AssertionError("unreachable: the last count either returns or raises")


def _time_of_screen(screen: Plan, fast_enough: Callable[[Layout], bool],
                    time_of: Callable[[Layout], float] | None) -> float:
    """A count's wall-clock by its screened winner (0 without ``time_of``: the smallest
    count wins, as the scan's order has it)."""
    lay = screen.choose(fast_enough)
    if time_of is None:
        return 0.0
    return math.inf if lay is None else time_of(lay)
