"""Speeds: published measured training runs, each declared once with its source, its model
and layout as published, the measured figure and how it becomes seconds per step. The
planners (parallel_plan, moe_plan) predict each run's step time with the layout fixed;
the Validation page's speed section lists every run with its error, misses included,
and the error band every step time in the guide carries comes from here
(catalogues.speed_validation holds the band; a unit test holds the two together).

Nothing here is tuned to these rows: the speed model's parameters come from kernel and
collective measurements (catalogues.kernel_speeds, catalogues.link_speeds). A run's
inputs are the settings its paper or code states (recomputation, sequence parallelism,
what overlaps what), each with the sentence that says so.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import calculators
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.model.flops import FULL_ATTENTION, dense_model_flops_per_token

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from published_checks import Value

_KORTHIKANTI = "https://arxiv.org/abs/2205.05198"
_SC21 = "https://arxiv.org/abs/2104.04473"
_LLAMA3 = "https://arxiv.org/abs/2407.21783"
_V3 = "https://arxiv.org/abs/2412.19437"


@dataclass(frozen=True)
class MeasuredRun:
    """One published measured run and how the guide predicts it."""

    id: str
    source: str
    url: str
    accelerator: str  # for the table per accelerator: "A100", "H100", "H800"
    calculator: str
    inputs: Mapping[str, Value]
    #: The published figure and what turns it into seconds per step.
    published: str
    measured_step_s: float
    derivation: str
    #: What the planner cannot express, or what the figure includes beyond a steady step.
    notes: str = ""
    settings: tuple[str, ...] = field(default_factory=tuple)

    def predict(self) -> float:
        """The planner's step time for this run, seconds."""
        result = calculators.compute(self.calculator, **dict(self.inputs))
        value = result.value("step_time")
        if not isinstance(value, float):
            raise TypeError(f"run {self.id!r}: no step time (the layout did not fit?)")
        return value

    def error(self) -> float:
        """(predicted - measured) / measured."""
        return self.predict() / self.measured_step_s - 1.0


# --- Korthikanti et al. 2022, Table 5 -------------------------------------------------------

#: Table 3's models, GPT shape (biases, learned positions, tied embeddings, 4h MLP with
#: GeLU), sequence 2,048, vocabulary 51,200, FP16, attention materialised with Megatron's
#: fused softmax and dropout 0.1; on DGX A100 80GB nodes (Selene).
_GPT: dict[str, Value] = {
    "seq_len": 2048, "vocab": 51200, "biases": True, "position_embedding": "learned",
        "tied_embeddings": True, "gated_mlp": False, "attention": "materialised",
        "dropout": True, "gpu": "a100_80gb_sxm", "precision": "fp16_mixed"}
_K5_LAYOUTS: dict[str, dict[str, Value]] = {
    "22b": {"layers": 48, "hidden": 6144, "heads": 64, "num_gpus": 8, "global_batch": 4,
            "tp": 8, "pp": 1, "dp": 1, "cp": 1, "micro_batch": 4, "schedule": "1f1b"},
    "175b": {"layers": 96, "hidden": 12288, "heads": 96, "num_gpus": 64, "global_batch": 64,
             "tp": 8, "pp": 8, "dp": 1, "cp": 1, "micro_batch": 1, "schedule": "interleaved",
             "virtual_stages": 3},
    "530b": {"layers": 105, "hidden": 20480, "heads": 128, "num_gpus": 280,
             "global_batch": 280, "tp": 8, "pp": 35, "dp": 1, "cp": 1, "micro_batch": 1,
             "schedule": "interleaved", "virtual_stages": 3},
    "1t": {"layers": 128, "hidden": 25600, "heads": 160, "num_gpus": 512,
           "global_batch": 512, "tp": 8, "pp": 64, "dp": 1, "cp": 1, "micro_batch": 1,
           "schedule": "1f1b"},
}
#: Table 5's two columns: the baseline (full recomputation, no sequence parallelism) and
#: the paper's work (sequence parallelism + selective recomputation). Sec. 6.2: "the
#: baseline backward overlaps its all-reduce with the weight-gradient GEMM".
_K5_MODES: dict[str, dict[str, Value]] = {
    "full": {"recompute": "full", "sequence_parallel": False, "tp_overlap": "backward"},
    "seqsel": {"recompute": "selective", "sequence_parallel": True, "tp_overlap": "backward"},
}
_K5_TIMES = {("22b", "full"): 1.42, ("22b", "seqsel"): 1.10, ("175b", "full"): 18.13,
             ("175b", "seqsel"): 13.75, ("530b", "full"): 49.05, ("530b", "seqsel"): 37.83,
             ("1t", "full"): 94.42, ("1t", "seqsel"): 71.49}


def _korthikanti(model: str, mode: str) -> MeasuredRun:
    label = "full recomputation" if mode == "full" else "sequence parallel + selective"
    return MeasuredRun(
        id=f"k5-{model}-{mode}", accelerator="A100", calculator="parallel_plan",
        source=f"Korthikanti et al. 2022, Table 5, {model.upper()} model, {label}; layouts "
               "from Table 3",
        url=_KORTHIKANTI, inputs={**_GPT, **_K5_LAYOUTS[model], **_K5_MODES[mode]},
        published=f"{_K5_TIMES[(model, mode)]} s per iteration",
        measured_step_s=_K5_TIMES[(model, mode)],
        derivation="measured seconds per iteration, end to end",
        settings=("FP16, materialised attention with fused softmax, dropout (Sec. 6)",
                  "the baseline overlaps the backward all-reduce with the weight-gradient "
                  "GEMM (Sec. 6.2)"))


# --- Narayanan et al. 2021 (SC21), Table 1 --------------------------------------------------

#: (id, layers, hidden, heads, TP, PP, DP, GPUs, batch, micro-batch, interleaving,
#: achieved TFLOP/s per GPU): Table 1's rows; micro-batch and interleaving from
#: Megatron-LM's examples/sc21/run_table_1.sh (unchanged since August 2021): every row
#: --fp16 with full ("uniform") recomputation; torch DDP for the 18B row (its gradient
#: all-reduce overlaps the backward), Megatron's local DDP for the others (after it).
_SC21_ROWS: tuple[tuple[str, int, int, int, int, int, int, int, int, int, int, float], ...] = (
    ("18b", 40, 6144, 48, 8, 1, 32, 256, 1024, 8, 1, 135.0),
    ("76b", 60, 10240, 80, 8, 4, 32, 1024, 1792, 2, 3, 140.0),
    ("145b", 80, 12288, 96, 8, 8, 24, 1536, 2304, 2, 2, 148.0),
    ("310b", 96, 16384, 128, 8, 16, 15, 1920, 2160, 1, 2, 155.0),
    ("530b", 105, 20480, 128, 8, 35, 9, 2520, 2520, 1, 3, 163.0),
    ("1t", 128, 25600, 160, 8, 64, 6, 3072, 3072, 1, 1, 163.0),
)


def sc21_flops_per_iteration(layers: int, hidden: int, batch: int, seq: int = 2048,
                             vocab: int = 51200) -> float:
    """Narayanan et al. 2021, Eq. 3: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), the FLOPs of
    one iteration with full recomputation (what Table 1's TFLOP/s count)."""
    return (96.0 * batch * seq * layers * hidden**2
            * (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden)))


def _sc21(row: tuple[str, int, int, int, int, int, int, int, int, int, int, float],
          ) -> MeasuredRun:
    name, layers, hidden, heads, tp, pp, dp, gpus, batch, micro, v, tflops = row
    flops = sc21_flops_per_iteration(layers, hidden, batch)
    layout: dict[str, Value] = {
        "layers": layers, "hidden": hidden, "heads": heads, "num_gpus": gpus,
        "global_batch": batch, "tp": tp, "pp": pp, "dp": dp, "cp": 1, "micro_batch": micro,
        "schedule": "interleaved" if v > 1 else "1f1b"}
    if v > 1:
        layout["virtual_stages"] = v
    return MeasuredRun(
        id=f"sc21-{name}", accelerator="A100", calculator="parallel_plan",
        source=f"Narayanan et al. 2021 (SC21), Table 1, {name.upper()} row",
        url=_SC21,
        inputs={**_GPT, **layout, "recompute": "full", "sequence_parallel": False,
                "tp_overlap": "none", "dp_overlap": name == "18b", "zero_stage": 0},
        published=f"{tflops:g} TFLOP/s per GPU",
        measured_step_s=flops / (gpus * tflops * 1e12),
        derivation=f"Eq. 3's {flops:.4g} FLOP per iteration / ({gpus:,} GPUs x "
                   f"{tflops:g} TFLOP/s); the paper measures end to end, data loading, "
                   "optimizer and logging included",
        settings=("FP16, full recomputation, no sequence parallelism (2021)",
                  "tensor-parallel all-reduces not overlapped (no async all-reduce in 2021); "
                  + ("torch DDP: the gradient all-reduce overlaps the backward" if name == "18b"
                     else "local DDP: gradients all-reduced after the backward")))


# --- Llama 3, Table 4 -----------------------------------------------------------------------

_LLAMA3_405B: dict[str, Value] = {
    "layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8, "ffn_hidden": 53248,
    "vocab": 128256, "seq_len": 8192, "gated_mlp": True, "biases": False,
    "position_embedding": "rotary", "tied_embeddings": False, "attention": "fused",
    "dropout": False, "gpu": "h100_sxm", "schedule": "interleaved", "virtual_stages": 8,
    "cp_method": "allgather", "gradients": "fp32", "global_batch": 2048, "tp": 8, "cp": 1,
    "pp": 16, "micro_batch": 1, "recompute": "none", "network": "roce_400g_tuned",
    "lean_norms": True, "zero_stage": 2}
_LLAMA3_TOKENS = 2048 * 8192
#: Model FLOPs per token counted as PaLM counts them (6N + full attention), the count
#: under which the planner's 8K steps come within 2-3% of Table 4's TFLOP/s.
_LLAMA3_FLOPS_PER_TOKEN = dense_model_flops_per_token(Architecture(
    layers=126, hidden=16384, heads=128, kv_heads=8, head_dim=128, ffn_hidden=53248,
    vocab=128256, seq_len=8192, gated_mlp=True, biases=False, learned_positions=False,
    tied_embeddings=False), FULL_ATTENTION)


def _llama3(gpus: int, tflops: float) -> MeasuredRun:
    step = _LLAMA3_TOKENS * _LLAMA3_FLOPS_PER_TOKEN / (gpus * tflops * 1e12)
    return MeasuredRun(
        id=f"llama3-405b-8k-{gpus}", accelerator="H100", calculator="parallel_plan",
        source=f"Dubey et al. 2024 (Llama 3), Table 4: 405B at 8K, {gpus:,} H100s, "
               "TP 8, CP 1, PP 16",
        url=_LLAMA3, inputs={**_LLAMA3_405B, "num_gpus": gpus, "dp": gpus // 128},
        published=f"{tflops:g} TFLOP/s per GPU",
        measured_step_s=step,
        derivation=f"16M tokens per step x {_LLAMA3_FLOPS_PER_TOKEN:.5g} model FLOP per "
                   f"token (attention counted whole, as PaLM defines MFU) / ({gpus:,} x "
                   f"{tflops:g} TFLOP/s)",
        notes="Virtual stages (8) and micro-batch 1 are our reading of Sec. 3.3.2, not "
              "stated in Table 4; the attention kernel, sequence parallelism and TP overlap "
              "are not stated (the defaults are used). Meta cites PaLM for MFU without "
              "saying which parameters it counts: the measured step is within about 4% of "
              "the figure here either way.",
        settings=("no activation recomputation at 8K; FP32 gradient accumulation and "
                  "reduce-scatter; FSDP sharding gradients and optimizer states (Sec. 3.3.2)",
                  "RoCE, 400 Gb/s per GPU (Sec. 3.3.1), which Meta reports performs as its "
                  "InfiniBand clusters do (engineering blog, March 2024)"))


# --- DeepSeek-V3 ----------------------------------------------------------------------------

_V3_TOKENS_PER_S = 14.8e12 / (2.664e6 * 3600.0 / 2048)
_V3_INPUTS: dict[str, Value] = {
    "layers": 61, "hidden": 7168, "attention": "mla", "heads": 128, "q_lora_rank": 1536,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "routed_experts": 256, "experts_per_token": 8, "expert_ffn": 2048, "shared_experts": 1,
    "dense_layers": 3, "ffn_hidden": 18432, "gated_mlp": True, "router_bias": True,
    "mtp_modules": 1, "seq_len": 4096, "global_batch": 15360, "num_gpus": 2048,
    "gpu": "h800", "precision": "fp8_mixed", "fp8_recipe": "blockwise",
    "peak_precision": "fp8", "optimizer": "adamw_bf16", "gradients": "fp32", "schedule": "zb_h1",
    "dispatch": "per_node", "max_nodes_per_token": 4, "dispatch_bytes": 1,
    "combine_bytes": 2, "ep_overlap": "batch", "tp": 1, "cp": 1, "pp": 16, "dp": 128,
    "ep": 64, "micro_batch": 1, "recompute": "light", "zero_stage": 1}

RUNS: tuple[MeasuredRun, ...] = (
    *(_korthikanti(m, mode) for m in ("22b", "175b", "530b", "1t")
      for mode in ("full", "seqsel")),
    *(_sc21(row) for row in _SC21_ROWS),
    _llama3(8192, 430.0),
    _llama3(16384, 400.0),
    MeasuredRun(
        id="deepseek-v3-pretrain", accelerator="H800", calculator="moe_plan",
        source="DeepSeek-AI 2024, DeepSeek-V3 Technical Report: Table 1 (2,664K H800 GPU-"
               "hours of pre-training), Sec. 3.1-3.3 (2,048 H800, PP 16, EP 64, DualPipe, "
               "FP8), Sec. 4.2 (14.8T tokens, batch 15,360 of 4,096 tokens)",
        url=_V3, inputs=_V3_INPUTS,
        published="2,664K H800 GPU-hours for 14.8T tokens",
        measured_step_s=15360 * 4096 / _V3_TOKENS_PER_S,
        derivation="14.8e12 tokens / (2.664e6 GPU-hours / 2,048 GPUs) = "
                   f"{_V3_TOKENS_PER_S / 1e6:.4g}M tokens/s; a step of 15,360 x 4,096 "
                   "tokens at that rate",
        notes="A whole-run average: it includes the batch ramp-up (3,072 to 15,360 over "
              "the first 469B tokens) and whatever else the run lost, so it bounds the "
              "steady step from above. DualPipe is not a choice: ZB-H1 is the nearest "
              "schedule (DualPipe's bubble is about half of it). DeepSeek recomputes only "
              "RMSNorm, the MLA up-projections and the SwiGLU outputs (Sec. 3.2.3): the "
              "planner's 'light' mode.",
        settings=("FP8 GEMMs with 1 x 128 / 128 x 128 tiles; attention, norms, embedding, "
                  "output head and gating in BF16 (Sec. 3.3.1)",
                  "H800: NVLink 160 GB/s, InfiniBand 50 GB/s per GPU (Sec. 3.2.2); FP8 "
                  "dispatch, BF16 combine; ZeRO-1 over DP",
                  "master weights and gradients kept in FP32, AdamW moments in BF16 "
                  "(Secs. 3.3.1, 3.3.3)")),
)


@dataclass(frozen=True)
class SpeedSummary:
    """The errors of the predicted step times."""

    count: int
    mean_abs: float
    worst: float
    within_10: int


def summarise(errors: Mapping[str, float]) -> SpeedSummary:
    """Mean and worst absolute error, and how many runs are within 10%."""
    values = [abs(e) for e in errors.values()]
    return SpeedSummary(len(values), statistics.fmean(values), max(values),
                        sum(1 for e in values if e <= 0.10))


def errors(runs: tuple[MeasuredRun, ...] = RUNS,
           predict: Callable[[MeasuredRun], float] | None = None) -> dict[str, float]:
    """Each run's relative error, by id (``predict`` defaults to the planner)."""
    out = {}
    for run in runs:
        predicted = run.predict() if predict is None else predict(run)
        if not math.isfinite(predicted):
            raise ValueError(f"run {run.id!r}: no finite prediction")
        out[run.id] = predicted / run.measured_step_s - 1.0
    return out
