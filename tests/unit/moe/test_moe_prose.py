"""docs/moe.md, DeepSeek-V3's layout: the figures its prose quotes are what the planner
computes for the chapter's blocks, read from the Markdown as the site reads them.

Issue 32, item 8: the prose said the planner splits the layers evenly; it splits them as
Llama 3 does and prices each stage as it holds its blocks, and the last stage (two MoE
layers, the MTP module and two BF16 output heads) paces the pipeline. These tests hold the
numbers the page gives for that stage and for DualPipe's pairing of the two ends."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import calculators
from bigmodel_guide.fence import find_fences, parse_fence
from calculators.formulas.moe import layers as moe_layers
from calculators.formulas.moe import layout_base
from published_checks import speed

CHAPTER = Path(__file__).resolve().parents[3] / "docs" / "moe.md"


@cache
def _text() -> str:
    return " ".join(CHAPTER.read_text("utf-8").split())


def _says(*phrases: str) -> None:
    for phrase in phrases:
        assert phrase in _text(), f"docs/moe.md should say: {phrase!r}"


def _block(anchor: str) -> dict[str, object]:
    for located in find_fences(CHAPTER.read_text("utf-8")):
        fence = parse_fence(located.source)
        if fence.anchor == anchor:
            return dict(fence.overrides)
    raise KeyError(anchor)


@cache
def _run(anchor: str) -> tuple[Any, Any]:
    """The block's result and the planner's base for its (only or best) layout."""
    bases: list[Any] = []
    slot = layout_base._MoeBase._slot

    def spy(self: Any, ex: Any, recompute: str) -> Any:
        bases.append(self)
        return slot(self, ex, recompute)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(layout_base._MoeBase, "_slot", spy)
        inputs = _block(anchor)
        result = calculators.compute("moe_plan", **inputs)
    dims = tuple(int(result.value(n)) for n in ("tp", "cp", "pp", "dp"))
    base = next(b for b in bases if (b.dims.tp, b.dims.cp, b.dims.pp, b.dims.dp) == dims)
    return result, base


def test_deepseek_layout_figures() -> None:
    r, _ = _run("deepseek-v3-layout")
    step = float(r.value("step_time"))
    measured = next(run for run in speed.RUNS if run.id == "deepseek-v3-pretrain")
    _says(f"with {r.value('memory_per_gpu_bytes') / 1e9:.1f} GB, "
          f"{r.value('activations_bytes') / 1e9:.1f} GB of it activations",
          f"each GPU sends {r.value('alltoall_bytes') / 1e9:.0f} GB per step",
          f"the alltoalls take {r.value('alltoall_time'):.2f} s per step against the "
          f"{r.value('alltoall_time') / r.value('alltoall_to_compute'):.2f} s of compute",
          f"{r.value('alltoall_to_compute'):.2f} of it",
          f"at 80% efficiency {r.value('alltoall_exposed_time'):.2f} s stays exposed",
          f"the step grows from {step:.1f} s to", f"a step of 15,360 sequences every "
          f"{measured.measured_step_s:.1f} s. The model's {step:.1f} s is "
          f"{1 - step / measured.measured_step_s:.1%} faster",
          f"the step is {r.value('mfu'):.1%} MFU")
    exposed = calculators.compute("moe_plan", **_block("deepseek-v3-layout-no-overlap"))
    _says(f"grows from {step:.1f} s to {exposed.value('step_time'):.1f} s")


def test_the_last_stage_sets_the_pace() -> None:
    _, base = _run("deepseek-v3-layout")
    first, middle, last = base.compute  # ranks 0, 1 and 15, one micro-batch each
    # The balanced split: both short blocks off the last stage, for its output heads.
    assert [rb.counts for rb in base.blocks] == [(3, 1, 0), (0, 4, 0), (0, 1, 1)]
    assert base.split.describe("block") == ("4 blocks on the first stage, 4 on each of "
                                             "the 14 stages between, 2 on the last")
    kind = base.kind_times
    moe_block = kind[moe_layers.MOE].forward_s + kind[moe_layers.MOE].backward_s
    mtp_block = kind[moe_layers.MTP].forward_s + kind[moe_layers.MTP].backward_s
    heads = last - moe_block - mtp_block
    assert 4 < heads / moe_block < 4.5  # "as long as four MoE layers in FP8"
    # Llama 3's split: the last stage holds one more MoE layer, the first one fewer.
    llama_first, llama_last = first - moe_block, last + moe_block
    _says(f"which alone take {heads:.3f} s per micro-batch",
          f"takes {last:.3f} s, {last / middle:.2f} times a middle stage's {middle:.3f} s",
          f"an MoE layer, takes {first:.3f} s",
          f"Llama 3's split would make it {llama_last / middle:.2f} times",
          f"would still take {(heads + mtp_block) / middle:.2f} times a middle stage",
          f"they do {(llama_first + llama_last) / 2 / middle:.2f} times a middle stage's work")
    # The planner paces the step by the slowest stage: the last.
    assert base._slot(base.experts(64), "light")[0] == 2


def test_the_searched_layout() -> None:
    r, base = _run("deepseek-v3-search")
    assert (r.value("tp"), r.value("pp"), r.value("dp"), r.value("ep")) == (1, 4, 512, 32)
    assert r.value("zero_stage") == 1 and r.value("recompute") == "full"
    assert base.split.describe("block").startswith("16 blocks on the first stage")
    layout, _ = _run("deepseek-v3-layout")
    faster = next(n for n in r.to_dict()["notes"] if n.startswith("2x1x4x256, EP 64 (b=1, "
                                                                   "light recomputation"))
    _says(f"{r.value('step_time'):.1f} s per step at {r.value('mfu'):.1%} MFU",
          f"{r.value('memory_per_gpu_bytes') / 1e9:.1f} GB per GPU",
          f"the bubble to {r.value('bubble_fraction'):.1%}",
          f"is {re.findall(r'is ([0-9.]+%) faster', faster)[0]} faster",
          f"the alltoalls, {r.value('alltoall_to_compute'):.2f} of the MoE blocks' compute",
          f"({r.value('step_time'):.1f} s against {layout.value('step_time'):.1f} s)")
    assert 0.08 < 1 - r.value("step_time") / layout.value("step_time") < 0.12  # "a tenth"


def test_the_node_limit_comes_from_the_routers_groups() -> None:
    limited = calculators.compute("moe_step")
    free = calculators.compute("moe_step", expert_groups=1)
    _says(f"{limited.value('alltoall_inter_node_bytes') / 1e9:.0f} GB over the network and "
          f"{limited.value('alltoall_time'):.1f} s per step",
          f"a router without groups) it is {free.value('alltoall_inter_node_bytes') / 1e9:.0f} GB",
          "so M = 4", "a token may reach 8")


def test_the_dense_chapter_on_fp8() -> None:
    # docs/dense.md, "FP8 at its measured speed": DeepSeek-V3's step in FP8 against the
    # same layout in BF16 (given the memory BF16's activations need), from the
    # measured-run check's inputs.
    run = next(r for r in speed.RUNS if r.id == "deepseek-v3-pretrain")
    fp8 = calculators.compute("moe_plan", **run.inputs).value("step_time")
    bf16 = {**run.inputs, "precision": "bf16_mixed", "peak_precision": "bf16"}
    bf16.pop("fp8_recipe")
    slower = calculators.compute("moe_plan", **bf16, gpu_memory="200 GB").value("step_time")
    text = " ".join((CHAPTER.parent / "dense.md").read_text("utf-8").split())
    assert f"runs {slower / fp8:.2f} times faster in FP8 than it would in BF16" in text
