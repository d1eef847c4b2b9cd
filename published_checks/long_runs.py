"""Failures, checkpoints and goodput (docs/long-runs.md): Llama 3's interruptions and
effective training time, Young's and Daly's checkpoint intervals, and the GPU-hours of
the Llama 3.1 model card."""

from __future__ import annotations

import calculators
from calculators.catalogues.failure_rates import LLAMA3_405B
from calculators.formulas.failures import reliability as rel
from published_checks import Check, Value

MINUTE, HOUR, DAY = 60.0, 3600.0, 86_400.0
_LLAMA3 = "https://arxiv.org/abs/2407.21783"
#: Daly 2006, Figs. 3-5: a 5-minute dump; "the new model predicts" these optima.
_DALY = ("Daly 2006, A higher order estimate of the optimum checkpoint interval for "
         "restart dumps, FGCS 22(3), Figs. 3-5 (dump time 5 min)")
_DALY_TOL = "the captions give 2-3 significant figures"


def _daly_min(mtbi_s: float) -> float:
    return rel.daly_interval_s(5 * MINUTE, mtbi_s) / MINUTE


def _checkpoint_per_gpu() -> float:
    result = calculators.compute("goodput")
    total, gpus = result.value("checkpoint_bytes"), result.inputs["num_gpus"]
    assert isinstance(total, float)
    assert isinstance(gpus, int)
    return total / gpus


#: Llama 3.1 405B as compute.md runs it: 15.6T tokens on 16,384 H100s at 40% MFU.
_LLAMA31: dict[str, Value] = {"params": "405B", "tokens": "15.6T", "gpu": "h100_sxm",
                              "num_gpus": 16384}


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
        why_tolerance="a lower bound, not a measurement: the model (92.3%) must lie above "
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
                      "40% MFU; the estimate (28.8M) should come close from below",
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
    Check(
        id="llama3-mtbi-all", chapter="long-runs.md",
        claim="Llama 3 405B: mean time between interruptions, planned ones included "
              "(54 days / 466)",
        source="Dubey et al. 2024, Sec. 3.3.4: 466 interruptions (47 planned) in 54 days",
        url=_LLAMA3, derived=True,
        formula=lambda: rel.observed_mtbi_s(LLAMA3_405B.total, LLAMA3_405B.period_s) / HOUR,
        formula_name="reliability.observed_mtbi_s(466, 54 days) in hours",
        published=2.78, rel_tol=2e-3, why_tolerance="quoted to three digits", unit="h",
    ),
    Check(
        id="llama3-table-5-unexpected", chapter="long-runs.md",
        claim="Llama 3 405B: the root causes of Table 5 add up to the unexpected "
              "interruptions",
        source="Dubey et al. 2024, Sec. 3.3.4 and Table 5: 419 unexpected interruptions",
        url=_LLAMA3,
        formula=lambda: float(sum(c.count for c in LLAMA3_405B.causes)),
        formula_name="sum of Table 5's counts (catalogues.failure_rates)", unit="count",
        published=419, rel_tol=0.0, why_tolerance="a count: exact",
    ),
    Check(
        id="llama3-gpu-share-printed", chapter="long-runs.md",
        claim="Llama 3 405B: the GPU rows of Table 5, summing the printed percentages",
        source="Dubey et al. 2024, Sec. 3.3.4: GPU issues \"58.7% of all unexpected "
               "issues\"",
        url=_LLAMA3,
        formula=lambda: LLAMA3_405B.published_percent_by_category()["GPU"] / 100,
        formula_name="failure_rates: Table 5's printed shares of the GPU rows, summed",
        unit="%", published=0.587, rel_tol=1e-9,
        why_tolerance="a sum of printed one-decimal shares: exact",
    ),
    Check(
        id="llama3-gpu-share-by-count", chapter="long-runs.md",
        claim="The same by count: 268 of 419 (Faulty GPU's 148 is misprinted as 30.1%)",
        source="Derivation from Dubey et al. 2024, Table 5's counts: 268 / 419 = 64.0%",
        url=_LLAMA3, derived=True,
        formula=lambda: LLAMA3_405B.count_by_category()["GPU"] / LLAMA3_405B.unexpected,
        formula_name="failure_rates: GPU rows' counts / 419", unit="%",
        published=0.640, rel_tol=0.0005 / 0.640, why_tolerance="quoted to 0.1 point",
    ),
    Check(
        id="llama3-checkpoint-stall", chapter="long-runs.md",
        claim="Llama 3 405B: a synchronous checkpoint, 5.67 TB at Tectonic's 2 TB/s",
        source="Derivation: 405B parameters x 14 B (BF16 weights, FP32 master weights "
               "and two FP32 Adam moments) = 5.67 TB, written at the 2 TB/s Tectonic "
               "sustains (Dubey et al. 2024, Sec. 3.3.1): 5.67 TB / 2 TB/s = 2.835 s",
        url=_LLAMA3, derived=True,
        calculator="goodput", inputs={}, output="checkpoint_write_time",
        published=2.835, rel_tol=1e-6, why_tolerance="5.67 / 2 is exactly 2.835",
    ),
    Check(
        id="llama3-checkpoint-per-gpu", chapter="long-runs.md",
        claim="Llama 3 405B: each GPU's share of the 5.67 TB checkpoint (16,384 GPUs)",
        source="Derivation: 405B x 14 B / 16,384 = 346 MB; Dubey et al. 2024, Sec. 3.3.1 "
               "reports 1 MB to 4 GB per GPU",
        url=_LLAMA3, derived=True,
        formula=_checkpoint_per_gpu,
        formula_name="goodput: checkpoint_bytes / num_gpus (defaults)", unit="B",
        published=346e6, rel_tol=1e-3, why_tolerance="quoted to three digits",
    ),
    Check(
        id="llama31-405b-gpu-hours-ideal", chapter="long-runs.md",
        claim="Llama 3.1 405B: H100 GPU-hours at 40% MFU with nothing lost",
        source="Derivation: 6 x 405e9 x 15.6e12 FLOP / (40% x 989 TFLOP/s, the H100 "
               "SXM's dense BF16 peak) / 3,600 s = 26.6M; the model card's 30.84M is the "
               "measured figure",
        url="https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/MODEL_CARD.md",
        derived=True,
        calculator="training_compute", inputs=_LLAMA31, output="gpu_hours",
        published=26.6e6, rel_tol=2e-3, why_tolerance="quoted to three digits",
    ),
)
