"""Failures, checkpoints and goodput of a long synchronous training job.

A synchronous job stops when any part fails, so its mean time between interruptions
(MTBI) is set by the sum of all failure rates. Checkpoints bound the work a failure
destroys; writing them costs time. Young (1974) and Daly (2006) give the interval that
balances the two; Daly's cost function gives the resulting goodput: the fraction of
wall-clock time that advances training. How long a checkpoint takes is in
``formulas.failures.checkpoints``; ``formulas.failures.goodput`` composes the two. All times in
seconds, sizes in bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86_400.0


def _positive(name: str, value: float) -> None:
    if not value > 0 or math.isinf(value):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


def _non_negative(name: str, value: float) -> None:
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"{name} must be zero or a positive finite number, got {value!r}")


def _fraction(name: str, value: float, *, open_low: bool = False) -> None:
    low_ok = value > 0 if open_low else value >= 0
    if not (low_ok and value <= 1):
        side = "(0, 1]" if open_low else "[0, 1]"
        raise ValueError(f"{name} must be in {side}, got {value!r}")


# --- How often the job stops -------------------------------------------------------


@dataclass(frozen=True)
class ComponentPool:
    """``count`` identical parts, each failing on average once per ``mtbf_s`` seconds of
    operation in a way that stops the job (bounds: count 0..1e7, mtbf_s > 0)."""

    name: str
    count: int
    mtbf_s: float

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"{self.name}: count must be >= 0, got {self.count!r}")
        _positive(f"{self.name}: mtbf_s", self.mtbf_s)


def mtbf_s_from_failures_per_unit_hour(failures_per_unit_hour: float) -> float:
    """Per-unit MTBF from a rate quoted per unit-hour (e.g. failures per GPU-hour)."""
    _positive("failures_per_unit_hour", failures_per_unit_hour)
    return SECONDS_PER_HOUR / failures_per_unit_hour


def job_mtbi_s(pools: Iterable[ComponentPool]) -> float:
    """MTBI of a job that stops when any part fails: 1 / sum(count / MTBF).

    Derivation: with independent exponential lifetimes, the first failure among all
    parts is exponential with the sum of the rates (the minimum of exponentials)."""
    rate = math.fsum(pool.count / pool.mtbf_s for pool in pools)
    if rate <= 0:
        raise ValueError("no component can fail: give at least one pool with count > 0")
    return 1.0 / rate


def observed_mtbi_s(interruptions: int, period_s: float) -> float:
    """MTBI observed on one job: its period over its interruptions (Llama 3, Sec. 3.3.4:
    419 unexpected interruptions in 54 days gives 3.09 h)."""
    if interruptions < 1:
        raise ValueError(f"interruptions must be >= 1, got {interruptions!r}")
    _positive("period_s", period_s)
    return period_s / interruptions


def per_gpu_mtbf_s(interruptions: int, period_s: float, gpus: int) -> float:
    """Job-stopping MTBF per GPU implied by an observed rate: ASSUMES every interruption,
    whatever its cause (switches, software), scales with the GPU count."""
    if gpus < 1:
        raise ValueError(f"gpus must be >= 1, got {gpus!r}")
    return observed_mtbi_s(interruptions, period_s) * gpus


def scaled_mtbi_s(interruptions: int, period_s: float, observed_gpus: int, gpus: int) -> float:
    """An observed MTBI moved to another GPU count, scaled linearly.

    ASSUMPTIONS: rates are constant in time (no infant mortality or wear-out), the fleet's
    mix of parts per GPU is unchanged, and every cause scales with the GPU count. Fabric
    tiers grow faster than linearly at scale, so this is optimistic for much larger jobs."""
    if gpus < 1:
        raise ValueError(f"gpus must be >= 1, got {gpus!r}")
    return per_gpu_mtbf_s(interruptions, period_s, observed_gpus) / gpus


# --- How often to checkpoint -------------------------------------------------------


def young_interval_s(checkpoint_s: float, mtbi_s: float) -> float:
    """Young 1974 (CACM 17(9), 530-531): compute time between checkpoints T = sqrt(2 δ M),
    δ = time to save, M = mean time to failure. First order: valid for δ << M."""
    _positive("checkpoint_s", checkpoint_s)
    _positive("mtbi_s", mtbi_s)
    return math.sqrt(2.0 * checkpoint_s * mtbi_s)


def daly_interval_s(checkpoint_s: float, mtbi_s: float) -> float:
    """Daly 2006 (FGCS 22(3), 303-312), Eq. 37, the higher-order estimate:
    τ = sqrt(2δM) [1 + (1/3) sqrt(δ/2M) + (1/9) (δ/2M)] - δ for δ < 2M, else τ = M.

    It approximates the exact minimum of Daly's wall-clock model (``optimal_interval_s``)
    to 0.04% at δ = 0.1 M and 1.8% at δ = M."""
    _positive("checkpoint_s", checkpoint_s)
    _positive("mtbi_s", mtbi_s)
    if checkpoint_s >= 2.0 * mtbi_s:
        return mtbi_s
    ratio = checkpoint_s / (2.0 * mtbi_s)
    return (
        math.sqrt(2.0 * checkpoint_s * mtbi_s) * (1.0 + math.sqrt(ratio) / 3.0 + ratio / 9.0)
        - checkpoint_s
    )


def optimal_interval_s(checkpoint_s: float, mtbi_s: float) -> float:
    """The exact interval that maximises ``daly_goodput``.

    Derivation: setting d/dτ [τ / (e^{(τ+δ)/M} - 1)] = 0 gives τ/M = 1 - e^{-(τ+δ)/M},
    whose left side minus right side rises monotonically from below 0 at τ = 0 to above 0
    at τ = M; bisection finds the root (Daly's Lambert-function solution, solved
    numerically). The restart time R drops out: it only scales the cost by e^{R/M}."""
    _positive("checkpoint_s", checkpoint_s)
    _positive("mtbi_s", mtbi_s)
    low, high = 0.0, mtbi_s
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid / mtbi_s + math.exp(-(mid + checkpoint_s) / mtbi_s) < 1.0:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


# --- What a failure costs ----------------------------------------------------------


def expected_lost_work_s(interval_s: float, checkpoint_s: float, mtbi_s: float) -> float:
    """Expected time lost when a failure strikes a segment of τ compute + δ checkpoint.

    Derivation: the time to failure X is exponential with mean M; given X < L = τ + δ,
    E[X | X < L] = M - L / (e^{L/M} - 1). It tends to L/2 (half an interval plus half
    the checkpoint write) for L << M and stays below L/2."""
    _positive("interval_s", interval_s)
    _non_negative("checkpoint_s", checkpoint_s)
    _positive("mtbi_s", mtbi_s)
    segment = interval_s + checkpoint_s
    x = segment / mtbi_s
    if x < 1e-6:
        return segment / 2.0 - segment * x / 12.0  # series; avoids cancellation
    if x > 700.0:
        return mtbi_s  # e^x overflows; segment / (e^x - 1) is 0 to double precision
    return mtbi_s - segment / math.expm1(x)


def recovery_time_s(
    detection_s: float,
    restart_s: float,
    replacement_s: float = 0.0,
    replaced_fraction: float = 1.0,
    hot_spares: bool = False,
) -> float:
    """Mean downtime per interruption: detect, (replace the node), restart from checkpoint.

    Derivation: a ``replaced_fraction`` of interruptions takes a node out (Llama 3,
    Sec. 3.3.4: about 78% confirmed or suspected hardware) and waits ``replacement_s``
    for one; with hot spares a healthy node is swapped in at once and only the restart
    remains. Bounds: each time 0..1e6 s."""
    for name, value in (
        ("detection_s", detection_s),
        ("restart_s", restart_s),
        ("replacement_s", replacement_s),
    ):
        _non_negative(name, value)
    _fraction("replaced_fraction", replaced_fraction)
    waiting = 0.0 if hot_spares else replaced_fraction * replacement_s
    return detection_s + waiting + restart_s


def nodes_in_repair(node_failure_mtbi_s: float, repair_s: float) -> float:
    """Mean number of nodes out for repair: Little's law (Little 1961), L = λ W, with
    λ = 1 / MTBI of node-replacing failures and W the repair turnaround. Hot spares
    fewer than this run out on average."""
    _positive("node_failure_mtbi_s", node_failure_mtbi_s)
    _non_negative("repair_s", repair_s)
    return repair_s / node_failure_mtbi_s


# --- Goodput -----------------------------------------------------------------------


def _daly_log_segment_s(
    interval_s: float, checkpoint_s: float, restart_s: float, mtbi_s: float
) -> float:
    x = (interval_s + checkpoint_s) / mtbi_s
    log_expm1 = x if x > 700 else math.log(math.expm1(x))
    return math.log(mtbi_s) + restart_s / mtbi_s + log_expm1


def daly_goodput(interval_s: float, checkpoint_s: float, restart_s: float, mtbi_s: float) -> float:
    """Fraction of wall-clock that advances training, from Daly 2006's complete model.

    Each segment of τ compute + δ checkpoint is retried until it runs through; after a
    failure the job first spends R restarting, and the restart itself can fail. Under
    exponential failures the expected wall-clock per segment is M e^{R/M} (e^{(τ+δ)/M} - 1)
    (Daly 2006, the cost function whose optimum is Eq. 37; re-derived here from the
    exponential law), so goodput = τ / that. ``restart_s`` is the mean recovery time
    (``recovery_time_s``); using its mean in e^{R/M} is exact only for a fixed R."""
    _positive("interval_s", interval_s)
    _non_negative("checkpoint_s", checkpoint_s)
    _non_negative("restart_s", restart_s)
    _positive("mtbi_s", mtbi_s)
    log_segment = _daly_log_segment_s(interval_s, checkpoint_s, restart_s, mtbi_s)
    return math.exp(math.log(interval_s) - log_segment)


def first_order_goodput(
    interval_s: float, checkpoint_s: float, restart_s: float, mtbi_s: float
) -> float:
    """The common first-order approximation 1 - δ/τ - (τ/2 + R)/M, floored at 0: the
    waste whose minimum is Young 1974's interval, plus R per failure. Never above
    ``daly_goodput`` (derivation: x/(e^x - 1) >= 1 - x/2, e^{-R/M} >= 1 - R/M, and
    δ lowers Daly's term no faster than δ/τ); within 1.5 points when δ <= 1% and
    R <= 5% of M at Young's interval."""
    _positive("interval_s", interval_s)
    _non_negative("checkpoint_s", checkpoint_s)
    _non_negative("restart_s", restart_s)
    _positive("mtbi_s", mtbi_s)
    waste = checkpoint_s / interval_s + (interval_s / 2.0 + restart_s) / mtbi_s
    return max(0.0, 1.0 - waste)


def recovery_budget_s(
    goodput: float, interval_s: float, checkpoint_s: float, mtbi_s: float
) -> float:
    """The largest mean recovery time R that still reaches ``goodput``: Daly's model
    solved for R, R = M ln(τ / (g M (e^{(τ+δ)/M} - 1))). Negative when even R = 0 falls
    short. Example: what restart time did Llama 3's >90% allow?"""
    _fraction("goodput", goodput, open_low=True)
    best = daly_goodput(interval_s, checkpoint_s, 0.0, mtbi_s)
    return mtbi_s * math.log(best / goodput)


def goodput_with_planned_stops(
    goodput: float, planned_stops: float, period_s: float, restart_s: float
) -> float:
    """Goodput after planned stops (maintenance), each costing one restart and no lost
    work because a checkpoint is taken first. Derivation: they remove
    planned_stops x R of every ``period_s`` of wall-clock (a mean, so it may be
    fractional: Llama 3's 47 planned stops in 54 days are 0.87 a day)."""
    _fraction("goodput", goodput)
    if not planned_stops >= 0 or math.isinf(planned_stops):
        raise ValueError(f"planned_stops must be >= 0, got {planned_stops!r}")
    _positive("period_s", period_s)
    _non_negative("restart_s", restart_s)
    return goodput * max(0.0, 1.0 - planned_stops * restart_s / period_s)


# --- Time and money ----------------------------------------------------------------


def wall_clock_s(ideal_s: float, goodput: float) -> float:
    """Wall-clock for a run that needs ``ideal_s`` of failure-free training."""
    _non_negative("ideal_s", ideal_s)
    _fraction("goodput", goodput, open_low=True)
    return ideal_s / goodput


def extra_cost_usd(gpus: int, ideal_s: float, goodput: float, usd_per_gpu_hour: float) -> float:
    """Money spent on GPUs while they do not advance training: GPUs x (wall-clock -
    ideal) x price per GPU-hour."""
    if gpus < 1:
        raise ValueError(f"gpus must be >= 1, got {gpus!r}")
    _non_negative("usd_per_gpu_hour", usd_per_gpu_hour)
    lost_s = wall_clock_s(ideal_s, goodput) - ideal_s
    return gpus * lost_s / SECONDS_PER_HOUR * usd_per_gpu_hour
