"""DeepEP's measured dispatch and combine kernels on H800 (docs/moe.md, "The alltoall's
kernels"): every figure of its two tables against formulas.moe.deepep, whose four
parameters come from three of the rows (named in each check's claim); the other rows
are predictions."""

from __future__ import annotations

from calculators.catalogues import deepep as published
from calculators.formulas.moe import deepep
from published_checks import Check

_NORMAL = (f"{published.SOURCE}, \"Normal kernels with NVLink and RDMA forwarding\" (H800, "
           "CX7 400 Gb/s, 4,096 tokens, hidden 7,168, top-4 groups, top-8 experts, FP8 "
           "dispatch, BF16 combine)")
_LOW = (f"{published.SOURCE}, \"Low-latency kernels with pure RDMA\" (H800, CX7 400 Gb/s, "
        "128 tokens, hidden 7,168, top-8 experts, FP8 dispatch, BF16 combine)")
_CALIBRATION = ("a calibration row: the mean of its dispatch and combine sets the link's "
                "share, so each is within 2% of it")
_PREDICTED = ("a prediction from two link shares measured on other rows; at EP 16 the model "
              "finds NVLink forwarding the bottleneck and does not know its own overheads "
              "(the model is 10% high there): 12%")
_LATENCY = ("a prediction: the EP 8 row's latency plus the copies over the same two link "
            "shares the normal kernels measure; within 11% (the EP 128 combine is the "
            "farthest)")


def _normal(row: published.NormalRow, kind: str) -> Check:
    calibration = row.ep in (published.NORMAL_SETTING.gpus_per_node, 64)
    where = "intranode, NVLink" if row.link == "NVLink" else "internode, RDMA"
    value = row.dispatch_bytes_per_s if kind == "dispatch" else row.combine_bytes_per_s
    return Check(
        id=f"deepep-normal-{kind}-ep{row.ep}",
        chapter="moe.md",
        claim=f"DeepEP normal {kind}, EP {row.ep} ({where}): bottleneck bandwidth as DeepEP "
              "counts it" + (" (calibration row)" if calibration else ""),
        source=_NORMAL, url=published.URL,
        formula=lambda: deepep.normal_bottleneck_bandwidth(row.ep, kind),
        formula_name=f"formulas.moe.deepep.normal_bottleneck_bandwidth({row.ep}, {kind!r})",
        unit="B/s", published=value, rel_tol=0.02 if calibration else 0.12,
        why_tolerance=_CALIBRATION if calibration else _PREDICTED,
    )


def _low_latency(row: published.LowLatencyRow, kind: str) -> Check:
    calibration = row.ep == published.LOW_LATENCY_SETTING.gpus_per_node
    value = row.dispatch_s if kind == "dispatch" else row.combine_s
    return Check(
        id=f"deepep-low-latency-{kind}-ep{row.ep}",
        chapter="moe.md",
        claim=f"DeepEP low-latency {kind}, EP {row.ep}: time per call"
              + (" (calibration row: sets the kernel's fixed latency)" if calibration else ""),
        source=_LOW, url=published.URL,
        formula=lambda: deepep.low_latency_time_s(row.ep, kind),
        formula_name=f"formulas.moe.deepep.low_latency_time_s({row.ep}, {kind!r})",
        unit="s", published=value, rel_tol=1e-9 if calibration else 0.11,
        why_tolerance=("the row the latency is taken from: exact by construction"
                       if calibration else _LATENCY),
    )


CHECKS: tuple[Check, ...] = (
    *(_normal(row, kind) for row in published.NORMAL for kind in deepep.KINDS),
    *(_low_latency(row, kind) for row in published.LOW_LATENCY for kind in deepep.KINDS),
)
