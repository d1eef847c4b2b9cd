"""Failures, checkpoints and goodput (docs/long-runs.md): Llama 3's interruptions and
effective training time, Young's and Daly's checkpoint intervals, and the GPU-hours of
the Llama 3.1 model card."""

from __future__ import annotations

from calculators.formulas import reliability as rel
from published_checks import Check

MINUTE, HOUR, DAY = 60.0, 3600.0, 86_400.0
_LLAMA3 = "https://arxiv.org/abs/2407.21783"
#: Daly 2006, Figs. 3-5: a 5-minute dump; "the new model predicts" these optima.
_DALY = ("Daly 2006, A higher order estimate of the optimum checkpoint interval for "
         "restart dumps, FGCS 22(3), Figs. 3-5 (dump time 5 min)")
_DALY_TOL = "the captions give 2-3 significant figures"


def _daly_min(mtbi_s: float) -> float:
    return rel.daly_interval_s(5 * MINUTE, mtbi_s) / MINUTE


CHECKS: tuple[Check, ...] = (
    Check(
        id="llama3-mtbi",
        chapter="long-runs.md",
        claim="Llama 3 405B: mean time between unexpected interruptions, 54 days / 419",
        source="Dubey et al. 2024, The Llama 3 Herd of Models, Sec. 3.3.4: 419 unexpected "
               "interruptions in a 54-day snapshot",
        url=_LLAMA3,
        calculator="goodput", inputs={}, output="mtbi",
        published=54 * DAY / 419, rel_tol=1e-9,
        why_tolerance="the calculator's defaults are the published counts",
        derived=True,
    ),
    Check(
        id="llama3-effective-training-time",
        chapter="long-runs.md",
        claim="Llama 3 405B: effective training time over 54 days on 16,384 H100s "
              "(published as a lower bound); model with the catalogue's assumptions",
        source="Dubey et al. 2024, Sec. 3.3.4: \"higher than 90% effective training "
               "time\"; stall and recovery times are not published (assumptions: "
               "catalogues.failure_rates)",
        url=_LLAMA3,
        calculator="goodput", inputs={}, output="goodput",
        published=0.90, rel_tol=0.03,
        why_tolerance="a lower bound, not a measurement: the model (92.2%) must lie above "
                      "it and close to it; the unit test checks above",
    ),
    Check(
        id="llama31-405b-gpu-hours",
        chapter="long-runs.md",
        claim="Llama 3.1 405B: H100 GPU-hours, C / (peak x 40% MFU) / estimated goodput",
        source="Meta, Llama 3.1 model card: 30.84M GPU-hours of training for 405B",
        url="https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/MODEL_CARD.md",
        calculator="training_compute",
        inputs={"params": "405B", "tokens": "15.6T", "gpu": "h100_sxm", "num_gpus": 16384,
                "goodput": ""},
        output="gpu_hours",
        published=30.84e6, rel_tol=0.10,
        why_tolerance="the card's cumulative time also covers evaluation and phases below "
                      "40% MFU; the estimate (28.9M) should come close from below",
    ),
    Check(
        id="young-graphlab-interval",
        chapter="long-runs.md",
        claim="Young's interval for 64 machines of 1-year MTBF and a 2-minute checkpoint",
        source="Low et al. 2012, Distributed GraphLab, PVLDB 5(8), fault-tolerance "
               "section (Young 1974's formula): about 3 hours",
        url="https://arxiv.org/abs/1204.6078",
        formula=lambda: rel.young_interval_s(
            2 * MINUTE, rel.job_mtbi_s([rel.ComponentPool("machine", 64, 365 * DAY)])) / HOUR,
        formula_name="reliability.young_interval_s(2 min, 1 year / 64) in hours",
        published=3.0, rel_tol=0.02, why_tolerance="the paper rounds to whole hours",
        unit="h",
    ),
    Check(
        id="daly-interval-24h",
        chapter="long-runs.md",
        claim="Daly's optimum interval, Eq. 37, M = 24 h",
        source=_DALY, formula=lambda: _daly_min(24 * HOUR),
        formula_name="reliability.daly_interval_s(5 min, 24 h) in minutes",
        published=117.0, rel_tol=0.01, why_tolerance=_DALY_TOL, unit="min",
    ),
    Check(
        id="daly-interval-6h",
        chapter="long-runs.md",
        claim="Daly's optimum interval, Eq. 37, M = 6 h",
        source=_DALY, formula=lambda: _daly_min(6 * HOUR),
        formula_name="reliability.daly_interval_s(5 min, 6 h) in minutes",
        published=57.0, rel_tol=0.01, why_tolerance=_DALY_TOL, unit="min",
    ),
    Check(
        id="daly-interval-15min",
        chapter="long-runs.md",
        claim="Daly's optimum interval, Eq. 37, M = 15 min",
        source=_DALY, formula=lambda: _daly_min(15 * MINUTE),
        formula_name="reliability.daly_interval_s(5 min, 15 min) in minutes",
        published=9.1, rel_tol=0.01, why_tolerance=_DALY_TOL, unit="min",
    ),
)
