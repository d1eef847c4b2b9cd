"""Published weight-update (refit) times: the whole policy moved into running inference
engines, measured. The reload rate of formulas.rl.weight_sync is fitted to the single-
engine rows of each accelerator; the rows with many engines are checks
(published_checks.post_training).

Source: MoonshotAI/checkpoint-engine, README, "Benchmark" (commit 59a3c4f, 2026-06-08):
``examples/update.py`` on vLLM v0.10.2rc1, "broadcast update" column; "256xH20 TP16"
means 16 vLLM engines of TP 16, bucket size 8 GiB. Parameter counts: GLM-4.5-Air 106B
(GLM-4.5 report, arXiv 2508.06471, abstract), Qwen3-235B-A22B 235.1B (the guide's MoE
catalogue), DeepSeek-V3.1 671.0B (as DeepSeek-V3, report arXiv 2412.19437, without the
MTP module), Kimi K2 1.04T (Kimi K2 report, arXiv 2507.20534, abstract).
"""

from __future__ import annotations

from dataclasses import dataclass

URL = "https://github.com/MoonshotAI/checkpoint-engine#benchmark"


@dataclass(frozen=True)
class WeightUpdate:
    """One measured update of every engine's weights."""

    model: str
    params: float
    bytes_per_param: float  # BF16 2, FP8 1
    accelerator: str
    gpus: int  # all receiving GPUs
    engine_gpus: int  # the engines' tensor-parallel size
    seconds: float

    @property
    def model_bytes(self) -> float:
        return self.params * self.bytes_per_param


#: Single-engine rows: the fit.
FITTED: tuple[WeightUpdate, ...] = (
    WeightUpdate("GLM-4.5-Air (BF16)", 106e9, 2.0, "h800", 8, 8, 3.47),
    WeightUpdate("Qwen3-235B-A22B (BF16)", 235.09e9, 2.0, "h800", 8, 8, 6.22),
    WeightUpdate("DeepSeek-V3.1 (FP8)", 671.03e9, 1.0, "h20", 16, 16, 10.19),
    WeightUpdate("Kimi-K2-Instruct (FP8)", 1.04e12, 1.0, "h20", 16, 16, 14.36),
)
#: Sixteen engines at once: checks.
MANY_ENGINES: tuple[WeightUpdate, ...] = (
    WeightUpdate("DeepSeek-V3.1 (FP8)", 671.03e9, 1.0, "h20", 256, 16, 11.33),
    WeightUpdate("Kimi-K2-Instruct (FP8)", 1.04e12, 1.0, "h20", 256, 16, 16.04),
)
