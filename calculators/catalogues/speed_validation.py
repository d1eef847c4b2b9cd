"""How far the guide's step times are from measured ones: the error the Validation page's
speed section measures over the published runs it reproduces (published_checks.speed),
kept here so that every calculator can show it beside a step time without importing
the checks (which are not shipped to the browser). A unit test recomputes the band from
the runs and fails when the two part: the band is measured, never typed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpeedBand:
    """The predicted step times' error against the measured runs."""

    runs: int
    mean_abs: float  # mean of |predicted / measured - 1|
    worst: float  # the largest |predicted / measured - 1|

    def words(self) -> str:
        """The band as the page, the CLI and the JSON say it."""
        return (f"within ±{self.worst:.0%} of measurement on {self.runs} published runs "
                f"(mean {self.mean_abs:.1%}; Validation page, speeds)")


#: Measured by published_checks.speed over its RUNS (tests/unit/planner/test_speed.py).
STEP_TIME_BAND = SpeedBand(runs=17, mean_abs=0.047, worst=0.095)
