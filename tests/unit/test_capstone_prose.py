"""docs/capstone.md: every figure its prose quotes is what the calculators compute.

The chapter's blocks are read from the Markdown as the site reads them
(bigmodel_guide.fence); each test computes a block (or the variant the prose describes:
`goodput: 1`, `nics_per_node: 4`, `deadline_days: 10`, the planners at one count), rounds
as the prose does, and checks that the sentence carrying the number is in the chapter.
A figure that moves with the speed model fails here with the number the page should now
say.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import calculators
from bigmodel_guide.fence import find_fences, parse_fence
from calculators.catalogues.link_speeds import LINK_SPEEDS
from calculators.core.calculator import validate
from calculators.inputs.reliability import goodput_for

CHAPTER = Path(__file__).resolve().parents[2] / "docs" / "capstone.md"
DAY = 86_400.0
#: The Llama-class example's steps: 15T tokens in batches of 2,048 x 8,192 tokens.
LLAMA_STEPS = 15e12 / (2048 * 8192)
#: The DeepSeek-V3-class example's: 14.8T tokens in batches of 15,360 x 4,096 tokens.
MOE_STEPS = 14.8e12 / (15360 * 4096)


@cache
def _text() -> str:
    """The chapter with its line breaks folded, as a reader sees a paragraph."""
    return " ".join(CHAPTER.read_text("utf-8").split())


def _says(*phrases: str) -> None:
    for phrase in phrases:
        assert phrase in _text(), f"docs/capstone.md should say: {phrase!r}"


@cache
def _blocks() -> dict[str, tuple[str, dict[str, object]]]:
    found = {}
    for located in find_fences(CHAPTER.read_text("utf-8")):
        fence = parse_fence(located.source)
        assert fence.anchor is not None
        found[fence.anchor] = (fence.calc_id, fence.overrides)
    return found


def _frozen(over: dict[str, object]) -> tuple[tuple[str, object], ...]:
    return tuple(sorted(over.items()))


@cache
def _run(anchor: str, over: tuple[tuple[str, object], ...] = ()) -> Any:
    calc_id, inputs = _blocks()[anchor]
    return calculators.compute(calc_id, **{**inputs, **dict(over)})


def block(anchor: str, **over: object) -> Any:
    """The result of the chapter's block ``anchor``, with ``over`` changed."""
    return _run(anchor, _frozen(over))


def v(result: Any, name: str) -> float:
    return float(result.value(name))


def row(result: Any, step: str) -> list[str]:
    rows: list[list[str]] = result.to_dict()["table"]["rows"]
    return next(r for r in rows if r[0] == step)


def layout(result: Any) -> tuple[int, ...]:
    """TP, CP, PP, DP (and EP for a mixture of experts) from the table's Layout row."""
    text = row(result, "Layout")[1]
    return tuple(int(n) for n in re.findall(r"(?:TP|CP|PP|DP|EP) (\d+)", text))


def band(result: Any) -> float:
    """The planner's relative error band, as its days output declares it (the "±")."""
    out = next(o for o in result.calculator.outputs if o.name == "planner_days")
    return float(out.band)


def days_pm(result: Any) -> str:
    """The planner's days as the output shows them, "18.1 days ± 10%"."""
    text: str = result.to_dict()["outputs"]["planner_days"]["text"]
    days, pm = text.split(" days ± ")
    return f"{float(days):,.1f} days ± {pm}"


def f1(x: float) -> str:
    return f"{x:,.1f}"


def largest_cost(result: Any) -> tuple[str, str]:
    """What the "Training time" row names as the largest cost besides compute, and its
    "<time> of a <step>" text, when the planner's estimate is the longer one."""
    why = row(result, "Training time (before failures)")[2]
    found = re.search(r"largest cost besides compute is (.+), (\S+ m?s of a \S+ m?s) step$", why)
    assert found is not None, why
    return found[1], found[2]


@cache
def _plan(num_gpus: int) -> Any:
    """parallel_plan on the Llama-class model at ``num_gpus``, as cluster_sizing asks it
    (the same architecture, batch and GPU, one 400 Gb/s NIC per GPU)."""
    _, inputs = _blocks()["llama3-70b-30-days"]
    skip = {"tokens", "deadline_days", "utilization", "flops_per_param_token", "goodput"}
    raw = {k: val for k, val in inputs.items() if k not in skip}
    return calculators.compute("parallel_plan", num_gpus=num_gpus,
                               inter_node_bandwidth="50 GB/s", **raw)


def _plan_days(num_gpus: int) -> float:
    return LLAMA_STEPS * v(_plan(num_gpus), "step_time") / DAY


# --- GPT-3 on A100s ------------------------------------------------------------------

def test_gpt3_the_two_estimates() -> None:
    r = block("gpt3-34-days")
    assert layout(r) == (4, 1, 4, 64) and r.value("zero_stage") == 1
    assert r.value("recompute") == "none"
    _says("in 65.6 GB of each GPU's 85.9 GB", "about 0.7 GB/s of network per GPU")
    assert f"{v(r, 'memory_per_gpu_bytes') / 1e9:.1f}" == "65.6"
    assert f"{v(r, 'inter_node_bandwidth_needed') / 1e9:.1f}" == "0.7"
    mfu, days, wall = v(r, "planner_mfu"), v(r, "planner_days"), v(r, "wall_clock_days")
    _says(f"planner puts this layout at {mfu:.1%} MFU, {days_pm(r)}",
          f"planned on the planner's {f1(days)} days",
          f"33.65% MFU the example assumes, takes {f1(wall)} days")
    # "disagree by more than the planner's error band"
    assert days * (1 + band(r)) < wall


def test_gpt3_with_failures_counted() -> None:
    r = block("gpt3-34-days", goodput="")
    _says(f"the deadline needs about {round(v(r, 'gpus_for_deadline'), -1):,.0f} GPUs",
          f"the next count with a layout is {v(r, 'num_gpus'):,.0f} GPUs "
          f"({v(r, 'num_nodes'):,.0f} nodes)",
          f"which train for {f1(v(r, 'wall_clock_days') * v(r, 'goodput'))} days",
          f"at a goodput of {v(r, 'goodput'):.1%} (a checkpoint every "
          f"{v(r, 'checkpoint_interval') / 60:.1f} minutes",
          f"finish in {f1(v(r, 'wall_clock_days'))}, for ${v(r, 'cost_usd') / 1e6:.2f} million")


# --- Llama-3-70B class, 30 days --------------------------------------------------------

def test_llama_the_count_below_and_the_layout() -> None:
    r = block("llama3-70b-30-days")
    assert v(r, "num_gpus") == 8192
    # 6,912 GPUs: 27 stages times 256, a bubble of 20%, late by more than a week.
    below = _plan(6912)
    assert v(below, "pp") == 27 and v(below, "tp") * v(below, "cp") * v(below, "dp") == 256
    assert f"{v(below, 'bubble_fraction'):.0%}" == "20%"
    goodput = _llama_goodput(6912).value
    days = _plan_days(6912)
    _says(f"it trains for {f1(days)} days, and with failures {f1(days / goodput)}")
    assert days / goodput > 30 + 7
    # 8,192: no pipeline, no TP, CP 4 in the node, ZeRO-3.
    assert layout(r) == (1, 4, 1, 2048) and r.value("zero_stage") == 3
    _says("context parallelism of 4 within the node",
          f"train in {days_pm(r)} at {v(r, 'planner_mfu'):.1%} MFU",
          f"At the assumed 40% it takes {f1(v(r, 'wall_clock_days') * v(r, 'goodput'))} days",
          f"take **{f1(v(r, 'wall_clock_days'))} days** of wall-clock",
          f"{v(r, 'gpu_hours') / 1e6:.2f} million GPU-hours and "
          f"${v(r, 'cost_usd') / 1e6:.2f} million")
    # "Even the top of the planner's band stays well short of 22.7 days"
    assert v(r, "planner_days") * (1 + band(r)) < v(r, "wall_clock_days") * v(r, "goodput")


def test_llama_memory() -> None:
    r = block("llama3-70b-30-days")
    used, free = v(r, "memory_per_gpu_bytes") / 1e9, v(r, "memory_headroom_bytes") / 1e9
    _says(f"uses {used:.1f} GB of each GPU's 85.9 GB", f"which leaves {free:.1f} GB free")
    # "nearly all of that memory holds activations"
    plan = _plan(8192)
    assert v(plan, "memory_per_gpu_bytes") == pytest.approx(v(r, "memory_per_gpu_bytes"))
    assert v(plan, "activations_bytes") / v(plan, "memory_per_gpu_bytes") > 0.85


def test_llama_network() -> None:
    r = block("llama3-70b-30-days")
    _says(f"Per step that is {v(r, 'intra_node_bytes_per_step') / 1e9:.0f} GB inside the "
          f"node and {v(r, 'inter_node_bytes_per_step') / 1e9:.1f} GB across the network",
          f"behind a step of {v(r, 'step_time'):.2f} s",
          f"about {v(r, 'inter_node_bandwidth_needed') / 1e9:.0f} GB/s of its 50 GB/s NIC and "
          f"{v(r, 'intra_node_bandwidth_needed') / 1e9:.0f} GB/s of NVLink's 450 GB/s")


def test_llama_with_half_the_nics() -> None:
    r = block("llama3-70b-30-days", nics_per_node=4)
    assert layout(r) == (4, 1, 1, 2048) and r.value("zero_stage") == 2
    what, took = largest_cost(r)
    assert what == "DP comm (exposed) + optimizer"
    _says("ZeRO-2 with tensor parallelism of 4 and still no pipeline",
          f"which sends {v(r, 'inter_node_bytes_per_step') / 1e9:.1f} GB per GPU per step",
          f"take {took} step, {v(r, 'planner_mfu'):.1%} MFU",
          f"{f1(v(r, 'planner_days'))} days of training, {f1(v(r, 'wall_clock_days'))} with "
          "failures, still inside the deadline even at the top of its band",
          f"uses {v(r, 'memory_per_gpu_bytes') / 1e9:.1f} GB of each GPU, "
          f"{v(r, 'memory_headroom_bytes') / 1e9:.1f} GB short of full")
    assert v(r, "planner_days") * (1 + band(r)) / v(r, "goodput") < 30
    assert v(r, "memory_headroom_bytes") > 0.05 * 85.9e9  # just over the 5% kept free


# --- 20 and 10 days --------------------------------------------------------------------

def _mtbi_hours(result: Any) -> float:
    """The interruption interval the Goodput row gives (goodput left to the model)."""
    found = re.search(r"an interruption every ([\d.]+) h", row(result, "Goodput")[2])
    assert found is not None
    return float(found[1])


def _llama_goodput(num_gpus: int) -> Any:
    """The goodput model at ``num_gpus`` for the Llama-class sizing (its checkpoint)."""
    result = block("llama3-70b-30-days")
    _, inputs = _blocks()["llama3-70b-30-days"]
    sizing = validate(result.calculator.params, {**inputs, "goodput": ""},
                      owner="cluster_sizing")
    return goodput_for(sizing, num_gpus, 8, v(result, "checkpoint_bytes"))


def test_llama_in_20_days() -> None:
    r = block("llama3-70b-20-days")
    _says(f"now asks for about {round(v(r, 'gpus_for_deadline'), -2):,.0f} GPUs",
          f"they train for {f1(_plan_days(10240))} and {f1(_plan_days(10496))} days")
    assert (v(_plan(10240), "pp"), v(_plan(10496), "pp")) == (5, 41)
    assert min(_plan_days(10240), _plan_days(10496)) > 20
    assert "(3 counts tried)" in row(r, "GPUs")[2]
    assert v(r, "num_gpus") == 12288
    assert layout(r) == (2, 4, 3, 512) and r.value("zero_stage") == 1
    what, took = largest_cost(r)
    assert what == "bubble"
    compute_days = float(re.findall(r"the longer of ([\d.]+) days",
                                    row(r, "Training time (before failures)")[2])[0])
    g, days = v(r, "goodput"), v(r, "planner_days")
    cost = v(r, "cost_usd") / v(block("llama3-70b-30-days"), "cost_usd") - 1
    _says(f"these GPUs would train in {compute_days:.1f} days",
          f"reaches {v(r, 'planner_mfu'):.1%} MFU",
          f"the pipeline bubble, {took} step: the 512 replicas leave each one 4 sequences",
          f"takes the planner's {f1(days)} days",
          f"the job stops every {_mtbi_hours(r):.1f} hours, Daly's interval is "
          f"{v(r, 'checkpoint_interval') / 60:.1f} minutes",
          f"the goodput falls to {g:.1%}: {f1(v(r, 'wall_clock_days'))} days",
          f"for {v(r, 'gpu_hours') / 1e6:.2f} million GPU-hours and "
          f"${v(r, 'cost_usd') / 1e6:.1f} million, {cost:.0%} more than the 30-day run",
          f"at the top of its band its {f1(days)} days become {f1(days * (1 + band(r)))}, "
          "a wall-clock of "
          f"{f1(days * (1 + band(r)) / g)} days: past the deadline")
    assert v(r, "wall_clock_days") <= 20 < days * (1 + band(r)) / g
    ideal = block("llama3-70b-20-days", goodput=1)
    assert v(ideal, "num_gpus") == 12288
    _says(f"the compute asks for {round(v(ideal, 'gpus_for_deadline'), -1):,.0f} GPUs")


def test_llama_in_10_days() -> None:
    ideal = block("llama3-70b-20-days", deadline_days=10, goodput=1)
    assert v(ideal, "num_gpus") == 32768
    assert layout(ideal) == (4, 4, 1, 2048) and ideal.value("zero_stage") == 2
    more = v(ideal, "gpu_hours") / v(block("llama3-70b-30-days-no-failures"), "gpu_hours") - 1
    would = float(re.findall(r"would give ([\d.]+)%", row(ideal, "Goodput")[2])[0]) / 100
    days = float(row(ideal, "Training time (before failures)")[1].split(" ")[0])
    _says(f"reaches {v(ideal, 'planner_mfu'):.1%} MFU and trains in {days:.2f} days",
          f"for {v(ideal, 'gpu_hours') / 1e6:.2f} million GPU-hours, {more:.0%} more",
          f"stop every {_llama_goodput(32768).plan.mtbi_s / 3600:.2f} hours, the goodput "
          f"model gives {would:.1%}, and {days:.2f} days of training become "
          f"{days / would:.1f}",
          f"that traffic and the optimizer step take {largest_cost(ideal)[1]} step")
    assert largest_cost(ideal)[0] == "DP comm (exposed) + optimizer"
    late = block("llama3-70b-20-days", deadline_days=10)
    assert v(late, "num_gpus") == 20480 and "(5 counts tried)" in row(late, "GPUs")[2]
    assert late.computed.warnings
    assert layout(late) == (4, 4, 5, 256)
    what, took = largest_cost(late)
    assert what == "bubble"
    _says(f"the bubble takes {took} step")
    _says(f"20,480 GPUs, and warns: {f1(v(late, 'planner_days'))} days of training at "
          f"{v(late, 'planner_mfu'):.1%} MFU, {f1(v(late, 'wall_clock_days'))} days")


# --- DeepSeek-V3 class -----------------------------------------------------------------

def test_deepseek_servers() -> None:
    r = block("deepseek-v3-45-days")
    assert v(r, "num_gpus") == 2560
    assert layout(r) == (1, 2, 1, 1280, 128) and r.value("zero_stage") == 3
    assert "2 experts of each layer per GPU, each replicated 20 times" in row(r, "Layout")[2]
    plan = calculators.compute("moe_plan", num_gpus=2560, gpu="h100_sxm")
    assert v(plan, "step_time") == pytest.approx(v(r, "planner_days") * DAY / MOE_STEPS)
    days, g = v(r, "planner_days"), v(r, "goodput")
    _says(f"{v(r, 'memory_per_gpu_bytes') / 1e9:.1f} GB of each GPU's 85.9 GB, "
          f"{v(plan, 'activations_bytes') / 1e9:.1f} GB of them activations",
          f"expects {days_pm(r)} of training at {v(r, 'planner_mfu'):.1%} MFU",
          f"at the assumed 34.6% it takes {f1(v(r, 'wall_clock_days') * g)}",
          f"at a goodput of {g:.1%} that is **{f1(v(r, 'wall_clock_days'))} days**",
          f"{v(r, 'gpu_hours') / 1e6:.2f} million GPU-hours and "
          f"${v(r, 'cost_usd') / 1e6:.2f} million")
    # The top of the band is longer than the assumed MFU's days, and late with failures.
    top = days * (1 + band(r))
    _says(f"the top of its band, {f1(top)} days of training, is longer than "
          f"{f1(v(r, 'wall_clock_days') * g)}, and with failures would take {f1(top / g)} days, "
          "past the deadline")
    assert top > v(r, "wall_clock_days") * g and top / g > 45


def test_deepseek_network() -> None:
    r = block("deepseek-v3-45-days")
    plan = calculators.compute("moe_plan", num_gpus=2560, gpu="h100_sxm")
    share = v(plan, "alltoall_inter_node_bytes") / v(plan, "alltoall_bytes")
    assert share == pytest.approx(1 / 3, abs=0.01)  # "a third of it across the network"
    moe_compute = v(plan, "alltoall_time") / v(plan, "alltoall_to_compute")
    assert f"against {moe_compute:.1f} s of MoE compute" in row(r, "Expert alltoalls per GPU")[2]
    rows = {cells[1]: cells for cells in plan.to_dict()["table"]["rows"]}
    dp_tb = float(rows["1x2x1x1280, EP 128"][7].split(", ")[-1].removesuffix(" GB")) / 1e3
    _says(f"sends {v(plan, 'alltoall_bytes') / 1e9:.0f} GB per step in expert alltoalls",
          f"take {v(plan, 'alltoall_time'):.2f} s a step against the {moe_compute:.1f} s of "
          "compute",
          f"a fifth of that time, {v(plan, 'alltoall_exposed_time'):.2f} s, stays exposed",
          f"at {v(plan, 'alltoall_to_compute'):.2f} of the compute",
          f"{dp_tb:.2f} TB of data-parallel traffic",
          f"hides behind compute but for {v(plan, 'dp_exposed_time'):.1f} s",
          f"{v(r, 'inter_node_bytes_per_step') / 1e9:.0f} GB cross the network per GPU per "
          f"step: {v(r, 'inter_node_bandwidth_needed') / 1e9:.0f} GB/s of its 50 GB/s NIC at "
          f"the assumed step of {v(r, 'step_time'):.1f} s")
    assert "12 micro-batches per replica" in plan.to_dict()["notes"][0]
    _says("for each of a replica's 12 micro-batches")
    # More than the share of the line rate NCCL reaches across nodes, at the planner's step.
    planner_step = v(plan, "step_time")
    _says(f"At the planner's own step of {planner_step:.1f} s the same bytes would need more "
          "than the share of the line rate that NCCL reaches between nodes")
    ring_share = LINK_SPEEDS["ib_ndr"].curve.ring_efficiency
    assert v(r, "inter_node_bytes_per_step") / planner_step > ring_share * 50e9
    # A runner-up within the tolerance: ZeRO-1, far less DP traffic.
    second = rows["2x2x2x320, EP 64"]
    assert second[2] == "1, none, 1"
    second_gb = second[7].split(", ")[-1]
    slower = next(re.findall(r"is ([\d.]+%) slower", n)[0] for n in plan.to_dict()["notes"]
                  if n.startswith("2x2x2x320, EP 64 (b=1, no recomputation, ZeRO 1) is "))
    assert float(slower.rstrip("%")) < 5
    _says(f"320 replicas with ZeRO-1 and EP 64, {slower} slower",
          f"whose data-parallel traffic is {second_gb} a step instead of {dp_tb:.2f} TB")


def test_deepseek_on_an_oversubscribed_fabric() -> None:
    r = block("deepseek-v3-oversubscribed")
    assert (v(r, "num_gpus"), v(r, "num_nodes")) == (2520, 315)
    assert "none met the deadline" in row(r, "GPUs")[2]
    assert layout(r) == (2, 2, 21, 30, 2)
    assert "128 experts of each layer per GPU" in row(r, "Layout")[2]
    assert row(r, "Expert alltoalls per GPU")[1].endswith("0% over the network")
    late = v(r, "wall_clock_days") - 45
    assert 4.5 * 7 < late < 5 * 7  # "almost five weeks"
    _says(f"{v(r, 'planner_mfu'):.1%} MFU, {f1(v(r, 'planner_days'))} days of training, "
          f"{f1(v(r, 'wall_clock_days'))} of wall-clock")
    thin = calculators.compute("moe_plan", num_gpus=2560, gpu="h100_sxm",
                               inter_node_bandwidth="19.6 GB/s")
    step = v(thin, "step_time")
    _says(f"puts their step at {step:.1f} s, {f1(MOE_STEPS * step / DAY)} days of training")
    assert MOE_STEPS * step / DAY > 45
