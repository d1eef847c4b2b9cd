"""The worked problems of docs/compute.md, dense.md, moe.md and long-runs.md (issue 37):
every figure an answer states is what the calculators compute, or the chapter's own
arithmetic, and every link an answer gives opens its widget on those figures.

Each test computes a problem's figures with ``calculators.compute``, rounds as the prose
does and checks that the sentence carrying each number is in the chapter (its Markdown
folded as a reader sees a paragraph), as tests/unit/test_capstone_prose.py does for the
capstone. It then opens the answer's link as the page does: the widget's example inputs
(its fence), overridden by the link's inputs as the calculator parses them
(``calculators.core.share.decode_state``), computed by ``REGISTRY[id].compute``; the
link must give the same figures. A figure that moves with a model fails here with the
number the page should now say.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import pytest

import calculators
from tests.unit.worked_problems import check_share_links, link, opened, same
from tests.unit.worked_problems import says as _says
from tests.unit.worked_problems import widgets as _widgets

PAGES = ("compute.md", "dense.md", "moe.md", "long-runs.md")
HOUR = 3_600.0
#: The H100 SXM's and the A100's dense BF16 peaks, as the problems state them.
H100_BF16 = 989.4e12
A100_BF16 = 312e12
#: Llama 3's calibration (long-runs.md): 419 unexpected interruptions in 54 days on
#: 16,384 GPUs.
LLAMA3_GPU_HOURS_PER_INTERRUPTION = 54 * 24 * 16_384 / 419
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def v(result: Any, name: str) -> float:
    return float(result.value(name))


def sci(x: float, digits: int = 2) -> str:
    """A power of ten as the answers write it: 6.44e10 as 6.44, the multiplication
    sign, 10 and a superscript 10."""
    exponent = math.floor(math.log10(abs(x)))
    mantissa = x / 10**exponent
    if round(mantissa, digits) >= 10:
        exponent, mantissa = exponent + 1, mantissa / 10
    return f"{mantissa:.{digits}f} × 10{str(exponent).translate(_SUPERSCRIPT)}"


def thousands(x: float, places: int = -3) -> str:
    """``963,000``: rounded to the thousand (or to ``places``)."""
    return f"{round(x, places):,.0f}"


def gb(x: float, fmt: str = ".1f") -> str:
    return f"{x / 1e9:{fmt}} GB"


def pct(x: float, fmt: str = ".1%") -> str:
    return f"{x:{fmt}}"


def _normal_pdf(z: float) -> float:
    return math.exp(-z * z / 2) / math.sqrt(2 * math.pi)


def _normal_cdf(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


# --- Every link in the four chapters ---------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_every_share_link_opens_a_widget_with_valid_inputs(page: str) -> None:
    check_share_links(page)


# --- compute.md ----------------------------------------------------------------------

def test_compute_gpu_hours_and_days_for_a_70b_model() -> None:
    inputs = {"params": "70B", "tokens": "15T", "gpu": "h100_sxm", "num_gpus": 4096,
              "utilization": "40%", "flop_count": "6N"}
    r = calculators.compute("training_compute", **inputs)
    double = calculators.compute("training_compute", **{**inputs, "num_gpus": 8192})
    c, hours, days = v(r, "total_flops"), v(r, "gpu_hours"), v(r, "wall_clock_days")
    assert c == pytest.approx(6 * 70e9 * 15e12)
    assert hours == pytest.approx(c / (H100_BF16 * 0.40) / HOUR)
    assert days == pytest.approx(hours / 4096 / 24)
    assert v(double, "gpu_hours") == pytest.approx(hours)
    assert v(r, "cost_usd") == pytest.approx(2.0 * hours)
    _says("compute.md",
          f"C = 6 × 70 × 10⁹ × 15 × 10¹² = {sci(c, 1)} FLOP",
          f"989.4 × 0.40 = {H100_BF16 * 0.40 / 1e12:.0f} TFLOP/s into model FLOPs",
          f"{sci(c, 1)} / ({sci(H100_BF16 * 0.40)}) / 3,600 = {hours / 1e6:.2f} million "
          f"GPU-hours: {hours / 1e6:.2f} million / 4,096 / 24 = {days:.1f} days",
          f"and ${v(r, 'cost_usd') / 1e6:.2f} million at the assumed price",
          f"days halve, to {v(double, 'wall_clock_days'):.1f},")
    linked = link("compute.md", "compute.md", "gpt3-worked-example",
                  "params:70B,tokens:15T,gpu:h100_sxm,num_gpus:4096,utilization:40%25,"
                  "flop_count:6N")
    same(linked, r, "total_flops", "gpu_hours", "wall_clock_days", "cost_usd")


def test_compute_attention_at_8k_and_128k() -> None:
    arch = {"params": "70B", "tokens": "15T", "layers": 80, "hidden": 8192, "heads": 64}
    r8 = calculators.compute("training_compute", seq_len=8192, **arch)
    r128 = calculators.compute("training_compute", seq_len=131072, **arch)
    six_nd = 6 * 70e9 * 15e12
    per_token = 12 * 80 * 8192 * 8192
    att8, att128 = v(r8, "attention_flops"), v(r128, "attention_flops")
    assert att8 == pytest.approx(per_token * 15e12)
    assert att128 == pytest.approx(16 * att8)
    assert v(r8, "total_flops") == pytest.approx(six_nd + att8)
    _says("compute.md",
          f"6·N·D = 6 × 70 × 10⁹ × 15 × 10¹² = {sci(six_nd, 1)} FLOP",
          f"12 × 80 × 8,192 × 8,192 = {sci(per_token)} FLOP at 8K, against 6N = "
          f"{sci(6 * 70e9, 1)}",
          f"that is {sci(att8)} FLOP, {att8 / six_nd:.1%} on top of 6·N·D",
          f"s / (6·d) says {8192 / (6 * 8192):.1%}",
          f"the term is 16 times larger, {sci(att128)} FLOP, {att128 / six_nd:.2f} times "
          "6·N·D itself")
    state = "params:70B,tokens:15T,seq_len:8192,layers:80,hidden:8192,heads:64"
    same(link("compute.md", "compute.md", "attention-correction", state), r8,
         "attention_flops", "total_flops")
    same(opened("compute.md", "attention-correction", state.replace("8192", "131072", 1)),
         r128, "attention_flops")


def test_compute_an_moe_active_against_total() -> None:
    inputs = {"tokens": "10T", "gpu": "h100_sxm", "num_gpus": 2048,
              "utilization": "35%", "flop_count": "6N"}
    active = calculators.compute("training_compute", params="20B", total_params="400B",
                                 **inputs)
    total = calculators.compute("training_compute", params="400B", **inputs)
    assert v(active, "total_flops") == pytest.approx(6 * 20e9 * 10e12)
    assert v(total, "gpu_hours") / v(active, "gpu_hours") == pytest.approx(20)
    _says("compute.md",
          f"C = 6 × 20 × 10⁹ × 10 × 10¹² = {sci(v(active, 'total_flops'), 1)} FLOP",
          f"989.4 × 0.35 = {H100_BF16 * 0.35 / 1e12:.0f} TFLOP/s per GPU that is "
          f"{thousands(v(active, 'gpu_hours'))} GPU-hours, "
          f"{v(active, 'wall_clock_days'):.1f} days on 2,048 GPUs",
          f"gives C = {sci(v(total, 'total_flops'), 1)} FLOP, "
          f"{v(total, 'gpu_hours') / 1e6:.1f} million GPU-hours and "
          f"{v(total, 'wall_clock_days'):.0f} days: twenty times too much")
    linked = link("compute.md", "compute.md", "gpt3-worked-example",
                  "params:20B,total_params:400B,tokens:10T,gpu:h100_sxm,num_gpus:2048,"
                  "utilization:35%25,flop_count:6N")
    same(linked, active, "total_flops", "gpu_hours", "wall_clock_days")


# --- dense.md ------------------------------------------------------------------------

LLAMA3_70B_STATE = ("precision:bf16_mixed,tp:1,pp:1,dp:64,zero_stage:3,"
                    "sequence_parallel:false,recompute:full")


def _llama3_70b_dp64(**over: object) -> Any:
    """dense.md's Llama 3 70B fence, on 64 GPUs by data parallelism alone."""
    _, example = _widgets("dense.md")["llama3-70b-fp8-memory"]
    inputs = {**example, "precision": "bf16_mixed", "tp": 1, "pp": 1, "dp": 64,
              "sequence_parallel": False, **over}
    return calculators.compute("model_memory", **inputs)


def _states(r: Any) -> float:
    return v(r, "weights_bytes") + v(r, "gradients_bytes") + v(r, "optimizer_bytes")


def test_dense_llama3_70b_by_data_parallelism_alone() -> None:
    stages = {z: _llama3_70b_dp64(zero_stage=z) for z in (1, 2, 3)}
    psi = v(stages[1], "weights_bytes") / 2
    # The ZeRO table's formulas, with K = 12 and N_d = 64.
    assert _states(stages[1]) == pytest.approx(4 * psi + 12 * psi / 64)
    assert _states(stages[2]) == pytest.approx(2 * psi + 14 * psi / 64)
    assert _states(stages[3]) == pytest.approx(16 * psi / 64)
    usable = v(stages[3], "usable_bytes")
    assert _states(stages[2]) > usable > _states(stages[3])
    bare = stages[3]
    full = _llama3_70b_dp64(zero_stage=3, recompute="full")
    assert not bare.value("fits") and full.value("fits")
    _says("dense.md",
          "81.6 GB of each usable",
          f"Ψ = {psi / 1e9:.2f} billion parameters",
          f"4Ψ + 12Ψ/64 = {gb(4 * psi)[:-3]} + {gb(12 * psi / 64)[:-3]} = "
          f"{gb(_states(stages[1]))} per GPU",
          f"2Ψ + 14Ψ/64 = {gb(2 * psi)[:-3]} + {gb(14 * psi / 64)[:-3]} = "
          f"{gb(_states(stages[2]))}",
          f"16Ψ/64 = {gb(_states(stages[3]))}. Only stage 3 fits.",
          f"over 80 layers are {gb(v(bare, 'activations_bytes'), '.0f')} without "
          "recomputation",
          f"the GPU would need {gb(v(bare, 'total_bytes'), '.0f')} in all",
          f"they fall to {gb(v(full, 'activations_bytes'))}",
          f"the GPU needs {gb(v(full, 'total_bytes'))}")
    assert f"{usable / 1e9:.1f}" == "81.6"
    # The takeaway before it: 16 bytes per parameter cap the usable 81.6 GB at about
    # 5 billion parameters.
    assert f"{usable / 16 / 1e9:.0f}" == "5"
    _says("dense.md", "81.6 GB of it usable) at about 5 billion parameters")
    same(link("dense.md", "dense.md", "llama3-70b-fp8-memory", LLAMA3_70B_STATE), full,
         "weights_bytes", "optimizer_bytes", "activations_bytes", "total_bytes")


@cache
def _gpt3_schedule(schedule: str) -> Any:
    _, example = _widgets("dense.md")["dualpipe-plan"]
    return calculators.compute("parallel_plan", **{**example, "schedule": schedule, "tp": 8,
                                                   "pp": 8, "dp": 16, "micro_batch": 1})


def test_dense_the_bubble_of_three_schedules() -> None:
    p, m = 8, 512 // 16
    bubbles = {"1f1b": (p - 1) / m, "interleaved": (p - 1) / (2 * m),
               "zb_h1": (p - 1) / (3 * m), "zb_h2": 0.0}
    for schedule, bubble in bubbles.items():
        assert v(_gpt3_schedule(schedule), "bubble_fraction") == pytest.approx(bubble)
    one, inter, zb1, zb2 = (_gpt3_schedule(s) for s in bubbles)
    assert gb(v(one, "memory_per_gpu_bytes")) == gb(v(zb1, "memory_per_gpu_bytes"))

    def step(r: Any) -> str:
        return f"{v(r, 'step_time'):.2f} s"

    _says("dense.md",
          f"(p − 1)/m = 7/32 = {bubbles['1f1b']:.1%} of the ideal step",
          f"7/64 = {bubbles['interleaved']:.1%}; ZB-H1 leaves 7/96 = {bubbles['zb_h1']:.1%}",
          f"fullest GPU at {gb(v(one, 'memory_per_gpu_bytes'))} under 1F1B and ZB-H1 alike",
          f"at {gb(v(inter, 'memory_per_gpu_bytes'))} interleaved",
          f"the step takes {step(one)} under 1F1B, {step(inter)} interleaved and "
          f"{step(zb1)} under ZB-H1",
          f"bubble altogether at {gb(v(zb2, 'memory_per_gpu_bytes'))}")
    same(link("dense.md", "dense.md", "dualpipe-plan",
              "schedule:1f1b,tp:8,pp:8,dp:16,micro_batch:1"), one,
         "bubble_fraction", "step_time", "memory_per_gpu_bytes")


def test_dense_which_run_did_more_useful_work() -> None:
    _, example = _widgets("dense.md")["gpt3-sc21-mfu"]
    a = calculators.compute("mfu", **example)
    b = calculators.compute("mfu", **{**example, "step_time": 27, "recompute": "none"})
    assert a.inputs["step_time"] == 31.5 and a.inputs["recompute"] == "full"
    assert a.inputs["global_batch"] == 1536 and a.inputs["num_gpus"] == 1024
    assert v(a, "tokens_per_second") == pytest.approx(1536 * 2048 / 31.5)
    assert v(b, "hfu") == pytest.approx(v(b, "mfu"))
    faster = v(b, "tokens_per_second") / v(a, "tokens_per_second") - 1
    _says("dense.md",
          f"Both need {sci(v(a, 'model_flops_per_token'))} model FLOPs per token",
          f"1,536 × 2,048 / 31.5 = {thousands(v(a, 'tokens_per_second'), -2)} tokens per "
          f"second, {v(a, 'achieved_flops_per_gpu') / 1e12:.0f} TFLOP/s of model FLOPs per "
          f"GPU: {v(a, 'mfu'):.1%} MFU",
          f"it executes {sci(v(a, 'hardware_flops_per_token'))} FLOPs per token, "
          f"{v(a, 'hfu'):.1%} HFU, {v(a, 'hfu'):.3f} × 312 = "
          f"{v(a, 'hfu') * A100_BF16 / 1e12:.0f} TFLOP/s per GPU",
          f"Run B processes {thousands(v(b, 'tokens_per_second'))} tokens per second, "
          f"{v(b, 'achieved_flops_per_gpu') / 1e12:.0f} TFLOP/s per GPU: {v(b, 'mfu'):.1%} MFU",
          f"B trains {faster:.0%} faster")
    same(link("dense.md", "dense.md", "gpt3-sc21-mfu", "step_time:27,recompute:none"), b,
         "mfu", "hfu", "tokens_per_second")


# --- moe.md --------------------------------------------------------------------------

def test_moe_a_mixtral_shaped_run() -> None:
    _, example = _widgets("moe.md")["mixtral-parameters"]
    counts = calculators.compute("moe_params", **example)
    n_active = v(counts, "active_compute_params")
    assert v(counts, "training_flops_per_token") == pytest.approx(6 * n_active)
    inputs = {"tokens": "2T", "gpu": "h100_sxm", "num_gpus": 512, "utilization": "35%",
              "flop_count": "6N"}
    active = calculators.compute("training_compute", params="12.75B", total_params="46.7B",
                                 **inputs)
    total = calculators.compute("training_compute", params="46.7B", **inputs)
    assert f"{n_active / 1e9:.2f}" == "12.75"
    assert f"{v(counts, 'total_params') / 1e9:.1f}" == "46.7"
    _says("moe.md",
          f"The widget counts {n_active / 1e9:.2f} billion parameters that a token "
          f"multiplies ({v(counts, 'active_params') / 1e9:.2f} billion with the input "
          f"table, {v(counts, 'total_params') / 1e9:.2f} billion in total)",
          f"6 × 12.75 × 10⁹ = {sci(v(counts, 'training_flops_per_token'))}",
          f"C = {sci(v(counts, 'training_flops_per_token'))} × 2 × 10¹² = "
          f"{sci(v(active, 'total_flops'))} FLOP",
          f"989.4 × 0.35 = {H100_BF16 * 0.35 / 1e12:.0f} TFLOP/s per GPU",
          f"/ ({sci(H100_BF16 * 0.35)}) / 3,600 = {thousands(v(active, 'gpu_hours'))} "
          f"GPU-hours, {v(active, 'wall_clock_days'):.1f} days on 512 GPUs",
          f"gives {sci(v(total, 'total_flops'), 1)} FLOP, "
          f"{thousands(v(total, 'gpu_hours'), -4)} GPU-hours and "
          f"{v(total, 'wall_clock_days'):.1f} days: "
          f"{v(total, 'gpu_hours') / v(active, 'gpu_hours'):.1f} times too much")
    linked = link("moe.md", "compute.md", "gpt3-worked-example",
                  "params:12.75B,total_params:46.7B,tokens:2T,gpu:h100_sxm,num_gpus:512,"
                  "utilization:35%25,flop_count:6N")
    same(linked, active, "total_flops", "gpu_hours", "wall_clock_days")


def test_moe_keeping_the_dispatch_in_bf16() -> None:
    fp8 = calculators.compute("moe_step")
    bf16 = calculators.compute("moe_step", dispatch_bytes=2)
    per_token = 8 * 7168 * (2 + 2 + 2 + 2)
    assert per_token == 458_752
    for name in ("alltoall_inter_node_bytes", "alltoall_time"):
        assert v(bf16, name) / v(fp8, name) == pytest.approx(4 / 3)
    assert v(bf16, "compute_time") == pytest.approx(v(fp8, "compute_time"))
    assert v(bf16, "alltoall_to_compute") < 1
    _says("moe.md",
          f"8 × 7,168 × (2 + 2 + 2 + 2) = {per_token:,} bytes, {per_token / 1e3:.0f} KB "
          f"against {8 * 7168 * 6 / 1e3:.0f} KB with an FP8 dispatch",
          f"rises from {gb(v(fp8, 'alltoall_inter_node_bytes'), '.0f')} to "
          f"{gb(v(bf16, 'alltoall_inter_node_bytes'), '.0f')}",
          f"the alltoall time from {v(fp8, 'alltoall_time'):.2f} s to "
          f"{v(bf16, 'alltoall_time'):.2f} s",
          f"stays at {v(fp8, 'compute_time'):.1f} s, so the ratio rises from "
          f"{v(fp8, 'alltoall_to_compute'):.2f} to {v(bf16, 'alltoall_to_compute'):.2f}",
          f"the step grows from {v(fp8, 'step_time'):.1f} s to {v(bf16, 'step_time'):.1f} s")
    same(link("moe.md", "moe.md", "deepseek-v3-step", "dispatch_bytes:2"), bf16,
         "alltoall_inter_node_bytes", "alltoall_time", "alltoall_to_compute", "step_time")


def test_moe_a_capacity_factor_for_a_well_balanced_router() -> None:
    def dropped(c: float, cv: float) -> float:
        z = (c - 1) / cv
        return cv * (_normal_pdf(z) - z * (1 - _normal_cdf(z)))

    one = calculators.compute("expert_load", load_cv=0.1, capacity_factor=1.0)
    tenth = calculators.compute("expert_load", load_cv=0.1, capacity_factor=1.1)
    dropless = calculators.compute("expert_load", load_cv=0.1)
    assert v(one, "mean_load_tokens") == 4096 * 64 * 8 / 256 == 8192
    assert v(one, "dropped_fraction") == pytest.approx(dropped(1.0, 0.1), rel=1e-6)
    assert v(tenth, "dropped_fraction") == pytest.approx(dropped(1.1, 0.1), rel=1e-6)
    assert v(tenth, "slowdown") == pytest.approx(1.1)
    assert v(dropless, "dropped_fraction") == 0
    assert v(dropless, "slowdown") > v(tenth, "slowdown")
    _says("moe.md",
          "4,096 × 64 × 8 / 256 = 8,192 tokens",
          f"z = 0: 0.1 × {_normal_pdf(0):.3f} = {v(one, 'dropped_fraction'):.2%} of the "
          "assignments are dropped",
          f"z = 1: 0.1 × ({_normal_pdf(1):.3f} − {1 - _normal_cdf(1):.3f}) = "
          f"{v(tenth, 'dropped_fraction'):.2%}",
          f"for {v(tenth, 'capacity_tokens'):,.0f} tokens per expert",
          f"the busiest GPU, {v(dropless, 'busiest_gpu_load'):.2f} times the mean")
    same(link("moe.md", "moe.md", "capacity-factor", "load_cv:0.1,capacity_factor:1.1"),
         tenth, "dropped_fraction", "capacity_tokens", "slowdown")
    same(opened("moe.md", "capacity-factor", "load_cv:0.1,capacity_factor:"), dropless,
         "busiest_gpu_load", "slowdown")


# --- long-runs.md --------------------------------------------------------------------

def test_long_runs_interruptions_of_a_4096_gpu_job() -> None:
    r = calculators.compute("goodput", num_gpus=4096)
    mtbi_h = v(r, "mtbi") / HOUR
    assert mtbi_h == pytest.approx(LLAMA3_GPU_HOURS_PER_INTERRUPTION / 4096)
    assert mtbi_h == pytest.approx(4 * 54 * 24 / 419)
    _says("long-runs.md",
          f"54 × 24 × 16,384 / 419 = {thousands(LLAMA3_GPU_HOURS_PER_INTERRUPTION, -2)} "
          "GPU-hours",
          f"50,700 / 4,096 = {mtbi_h:.1f} hours between interruptions, four times Llama 3's "
          f"{54 * 24 / 419:.2f} hours",
          f"30 × 24 / 12.4 = {30 * 24 / mtbi_h:.0f} of them")
    same(link("long-runs.md", "long-runs.md", "goodput-128k-gpus", "num_gpus:4096"), r,
         "mtbi")


def test_long_runs_a_checkpoint_interval_for_a_70b_job() -> None:
    inputs = {"params": "70B", "num_gpus": 2048, "storage_bandwidth": "200GB/s",
              "ideal_days": 30}
    r = calculators.compute("goodput", **inputs)
    size, stall, mtbi = v(r, "checkpoint_bytes"), v(r, "checkpoint_stall"), v(r, "mtbi")
    assert size == pytest.approx(70e9 * 14)
    assert stall == pytest.approx(size / min(256 * 25e9, 200e9))
    assert mtbi == pytest.approx(LLAMA3_GPU_HOURS_PER_INTERRUPTION / 2048 * HOUR)
    assert v(r, "young_interval") == pytest.approx(math.sqrt(2 * stall * mtbi))
    _says("long-runs.md",
          f"70 × 10⁹ × 14 bytes = {gb(size, '.0f')}",
          f"256 × 25 = {256 * 25:,} GB/s, so storage binds: 980 / 200 = {stall:.1f} s of stall",
          f"50,700 GPU-hours / 2,048 = {mtbi / HOUR:.1f} hours, {thousands(mtbi, -2)} s",
          f"√(2 × 4.9 × 89,100) = {v(r, 'young_interval'):.0f} s, "
          f"{v(r, 'young_interval') / 60:.1f} minutes",
          f"Daly's Eq. 37, which the calculator uses, gives "
          f"{v(r, 'checkpoint_interval') / 60:.1f} minutes",
          f"With {v(r, 'recovery_time') / 60:.1f} minutes of downtime per interruption the "
          f"goodput is {v(r, 'goodput'):.1%}, and the 30 days of training take "
          f"{v(r, 'wall_clock_days'):.1f} days")
    # The takeaway's "a job four times larger checkpoints twice as often".
    small, large = (calculators.compute("goodput", num_gpus=n) for n in (4096, 16384))
    assert v(small, "young_interval") / v(large, "young_interval") == pytest.approx(2)
    state = "params:70B,num_gpus:2048,storage_bandwidth:200GB/s,ideal_days:30"
    same(link("long-runs.md", "long-runs.md", "llama3-54-days", state), r,
         "checkpoint_bytes", "checkpoint_stall", "checkpoint_interval", "goodput",
         "wall_clock_days")


def test_long_runs_four_times_the_gpus() -> None:
    inputs = {"params": "70B", "tokens": "15T", "gpu": "h100_sxm", "flop_count": "6N",
              "goodput": ""}
    r8, r32 = (calculators.compute("training_compute", num_gpus=n, **inputs)
               for n in (8192, 32768))
    ideal = calculators.compute("training_compute", **{**inputs, "goodput": 1},
                                num_gpus=8192)
    for r in (r8, r32):
        assert v(r, "gpu_hours") == pytest.approx(v(ideal, "gpu_hours") / v(r, "goodput"))
    _says("long-runs.md",
          f"C = 6 × 70 × 10⁹ × 15 × 10¹² = {sci(v(r8, 'total_flops'), 1)} FLOP, "
          f"{v(ideal, 'gpu_hours') / 1e6:.2f} million GPU-hours at 40% MFU",
          f"the estimated goodput is {v(r8, 'goodput'):.1%}: "
          f"{v(ideal, 'gpu_hours') / 1e6:.2f} / {v(r8, 'goodput'):.3f} = "
          f"{v(r8, 'gpu_hours') / 1e6:.2f} million GPU-hours, "
          f"{v(r8, 'wall_clock_days'):.1f} days",
          f"the goodput is {v(r32, 'goodput'):.1%}, the run takes "
          f"{v(r32, 'gpu_hours') / 1e6:.2f} million GPU-hours and "
          f"{v(r32, 'wall_clock_days'):.2f} days",
          f"make the run {v(r8, 'wall_clock_days') / v(r32, 'wall_clock_days'):.1f} times "
          f"faster, not four, and cost {v(r32, 'gpu_hours') / v(r8, 'gpu_hours') - 1:.0%} "
          "more GPU-hours")
    for r, n in ((r8, 8192), (r32, 32768)):
        same(link("long-runs.md", "long-runs.md", "llama3-405b-with-goodput",
                  f"params:70B,tokens:15T,num_gpus:{n},flop_count:6N"), r,
             "goodput", "gpu_hours", "wall_clock_days")
