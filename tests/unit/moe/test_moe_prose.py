"""docs/moe.md, DeepSeek-V3's layout: the figures its prose quotes are what the planner
computes for the chapter's blocks, read from the Markdown as the site reads them.

Issue 32, item 8: the prose said the planner splits the layers evenly; it splits them as
Llama 3 does and prices each stage as it holds its blocks, and the last stage (two MoE
layers, the MTP module and two BF16 output heads) paces the pipeline. These tests hold the
numbers the page gives for that stage and for DualPipe's pairing of the two ends."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

import calculators
from bigmodel_guide.fence import find_fences, parse_fence
from calculators.formulas.moe import layers as moe_layers
from calculators.formulas.moe import layout_base

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
    _says(f"with {r.value('memory_per_gpu_bytes') / 1e9:.1f} GB, "
          f"{r.value('activations_bytes') / 1e9:.1f} GB of it activations",
          f"the step grows from {step:.1f} s to", f"The model's {step:.1f} s is "
          f"{step / 19.9 - 1:.1%} slower", f"the step is {r.value('mfu'):.1%} MFU")


def test_the_last_stage_sets_the_pace() -> None:
    _, base = _run("deepseek-v3-layout")
    first, middle, last = base.compute  # ranks 0, 1 and 15, one micro-batch each
    assert [rb.counts for rb in base.blocks] == [(3, 0, 0), (0, 4, 0), (0, 2, 1)]
    moe_block = base.kind_times[moe_layers.MOE].forward_s + base.kind_times[
        moe_layers.MOE].backward_s
    mtp_block = base.kind_times[moe_layers.MTP].forward_s + base.kind_times[
        moe_layers.MTP].backward_s
    heads = last - 2 * moe_block - mtp_block
    assert 4 < heads / moe_block < 4.5  # "as long as four MoE layers in FP8"
    _says(f"{first:.3f} s of compute per micro-batch", f"four MoE layers, {middle:.3f} s",
          f"which alone take {heads:.3f} s", f"The last stage's {last:.3f} s is "
          f"{last / middle:.2f} times a middle stage's",
          f"would bring that to {(last - moe_block) / middle:.2f} times",
          f"stays at {(heads + mtp_block) / middle:.2f} times",
          f"they do {(first + last) / 2 / middle:.2f} times a middle stage's work")
    # The planner paces the step by the slowest stage: the last.
    assert base._slot(base.experts(64), "light")[0] == 2


def test_the_searched_layout() -> None:
    r, base = _run("deepseek-v3-search")
    assert (r.value("tp"), r.value("pp"), r.value("dp"), r.value("ep")) == (2, 4, 256, 32)
    assert r.value("zero_stage") == 1 and r.value("recompute") == "light"
    layout, _ = _run("deepseek-v3-layout")
    first_middle_last = base.compute
    _says(f"{r.value('step_time'):.1f} s per step at {r.value('mfu'):.1%} MFU",
          f"{r.value('memory_per_gpu_bytes') / 1e9:.1f} GB per GPU",
          f"does {first_middle_last[-1] / first_middle_last[1]:.2f} times a middle stage's "
          "work instead of 1.86",
          f"({r.value('step_time'):.1f} s against {layout.value('step_time'):.1f} s)")
    assert 0.19 < 1 - r.value("step_time") / layout.value("step_time") < 0.22  # "a fifth"


def test_the_node_limit_comes_from_the_routers_groups() -> None:
    limited = calculators.compute("moe_step")
    free = calculators.compute("moe_step", expert_groups=1)
    _says(f"{limited.value('alltoall_inter_node_bytes') / 1e9:.0f} GB over the network and "
          f"{limited.value('alltoall_time'):.1f} s per step",
          f"a router without groups) it is {free.value('alltoall_inter_node_bytes') / 1e9:.0f} GB",
          "so M = 4", "a token may reach 8")
