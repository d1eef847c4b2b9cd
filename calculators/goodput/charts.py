"""The ``goodput`` calculator's two charts: goodput against the job's size (it falls as
the job grows) and against the checkpoint interval (with the optimum marked)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from calculators.core.charts import Marker, Series, line_chart, stack_charts
from calculators.core.i18n import _

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs
    from calculators.formulas.failures.goodput import GoodputPlan

MINUTE = 60.0
#: Job sizes drawn: from 1/64 to 8 times the job, by factors of two.
SIZE_STEPS = tuple(2.0**k for k in range(-6, 4))
#: Intervals drawn: from 1/20 to 20 times the one in use, 41 points evenly in log.
INTERVAL_POINTS = 41
INTERVAL_SPAN = 20.0


class PlanAt(Protocol):
    """The calculator's ``plan_at``, passed in so that this module imports no other."""

    def __call__(self, inputs: Inputs, gpus: int, *, asynchronous: bool | None = None,
                 interval_s: float | None = None, use_given_interval: bool = True,
                 ) -> GoodputPlan: ...


def _by_size(inputs: Inputs, plan_at: PlanAt) -> str:
    gpus = inputs.whole("num_gpus")
    sizes = sorted({max(1, round(gpus * step)) for step in SIZE_STEPS})
    series = [
        Series(label, tuple((float(n), 100 * plan_at(inputs, n, asynchronous=mode).goodput)
                            for n in sizes))
        for label, mode in ((_("synchronous saves"), False), (_("asynchronous saves"), True))
    ]
    return line_chart(_("Goodput falls as the job grows"), series, _("GPUs in the job"),
                      _("goodput (%)"), log_x=True,
                      markers=(Marker(float(gpus), _("{gpus:,} GPUs").format(gpus=gpus)),))


def _by_interval(inputs: Inputs, plan: GoodputPlan, plan_at: PlanAt) -> str:
    gpus = inputs.whole("num_gpus")
    best = plan_at(inputs, gpus, use_given_interval=False)
    low = min(plan.interval_s, best.interval_s) / INTERVAL_SPAN
    ratio = (INTERVAL_SPAN**2) ** (1 / (INTERVAL_POINTS - 1))
    points = tuple(
        (tau / MINUTE, 100 * plan_at(inputs, gpus, interval_s=tau).goodput)
        for tau in (low * ratio**i for i in range(INTERVAL_POINTS)))
    markers = [Marker(best.interval_s / MINUTE, _("optimum {minutes:.3g} min").format(
        minutes=best.interval_s / MINUTE))]
    if plan.interval_rule == "given":
        markers.append(Marker(plan.interval_s / MINUTE, _("yours")))
    return line_chart(_("Goodput against the checkpoint interval"),
                      [Series(_("{gpus:,} GPUs").format(gpus=gpus), points)],
                      _("minutes of training between checkpoints"), _("goodput (%)"),
                      log_x=True, markers=tuple(markers))


def goodput_charts(inputs: Inputs, plan: GoodputPlan, plan_at: PlanAt) -> str:
    """Both charts in one SVG."""
    return stack_charts(_("Goodput by job size and by checkpoint interval"),
                        [_by_size(inputs, plan_at), _by_interval(inputs, plan, plan_at)])
