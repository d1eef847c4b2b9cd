"""search_near (the branch-and-bound search cluster_sizing runs) against the exhaustive
search, and the expert-parallel search with a tolerance against the same search
without: the same fitting layouts near the fastest, so the same recommendation and the
same choice under any deadline, and floors that never exceed the step times they
bound."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.catalogues.moe_models import MIXTRAL_8X7B, QWEN3_235B_A22B
from calculators.cluster_sizing.scan import Scan
from calculators.cluster_sizing.steps import Plan
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.moe import layers as moe_layers
from calculators.formulas.moe import planner as moe_planner
from calculators.formulas.moe.shape import MoeArchitecture
from calculators.formulas.parallel.memory import state_bytes
from calculators.formulas.planner import base as planner_base
from calculators.formulas.planner import floors as planner_floors
from calculators.formulas.planner import layer_costs as costs
from calculators.formulas.planner import layout_cost as lc
from calculators.formulas.planner import memo as planner_memo
from calculators.formulas.planner import search as planner_search
from calculators.formulas.planner import sizes as planner_sizes
from calculators.formulas.planner.layout import Cluster, Layout, Options
from calculators.formulas.planner.ranking import preferred
from calculators.inputs.machine import cluster_for

GPT3 = Architecture(layers=96, hidden=12288, heads=96, kv_heads=96, head_dim=128,
                    ffn_hidden=4 * 12288, vocab=51200, seq_len=2048)
# Llama 3 70B's shape (Dubey et al. 2024, Table 3): grouped-query attention, 8K context.
LLAMA3_70B = Architecture(layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
                          ffn_hidden=28672, vocab=128256, seq_len=8192, gated_mlp=True,
                          biases=False, learned_positions=False, tied_embeddings=False)
SMALL = Architecture(layers=24, hidden=2048, heads=16, kv_heads=16, head_dim=128,
                     ffn_hidden=8192, vocab=50257, seq_len=2048)
ADAM = state_bytes("bf16_mixed", "adamw")


def cluster(n: int, *, memory: float, inter: float) -> Cluster:
    return cluster_for("h100_sxm", n, memory_bytes=memory, inter_bandwidth=inter)


def deadlines(layouts: list[Layout]) -> list[float]:
    """Step-time limits to choose under: none passes, each of the 12 fastest fitting
    layouts' step times (where the choice changes), a slow one, and no limit."""
    steps = sorted({lay.step_s for lay in layouts if lay.fits})
    return [0.0, *steps[:12], *steps[-1:], math.inf]


def chosen(arch: Architecture, machine: Cluster, layouts: list[Layout], tolerance: float,
           limit: float) -> Layout | None:
    """cluster_sizing's choice (steps.Plan.choose) under a deadline on the step time."""
    plan = Plan(machine.num_gpus, arch, machine, layouts, len(layouts), tolerance)
    return plan.choose(lambda lay: lay.step_s <= limit)


@settings(max_examples=40, deadline=None)
@given(arch=st.sampled_from([GPT3, LLAMA3_70B, SMALL]),
       n=st.sampled_from([8, 24, 64, 96, 256, 512, 1024]),
       batch=st.sampled_from([96, 512, 1536]),
       memory=st.sampled_from([20e9, 40e9, 72e9, 180e9]),
       inter=st.sampled_from([5e9, 45e9]),
       tolerance=st.sampled_from([0.0, 0.02, 0.05, 0.3, 1.0]),
       schedule=st.sampled_from(["1f1b", "interleaved", "zb_h1"]),
       cp_method=st.sampled_from(["ring", "ulysses"]),
       micro_batch=st.sampled_from([None, 1, 4]))
def test_near_search_keeps_what_the_ranking_and_a_deadline_look_at(
        *, arch: Architecture, n: int, batch: int, memory: float, inter: float,
        tolerance: float, schedule: str, cp_method: str, micro_batch: int | None) -> None:
    options = Options(schedule=schedule, cp_method=cp_method)
    machine = cluster(n, memory=memory, inter=inter)
    full = planner_search.search(arch, machine, ADAM, batch, micro_batch=micro_batch,
                                 options=options)
    near = planner_search.search_near(arch, machine, ADAM, batch, tolerance=tolerance,
                                      micro_batch=micro_batch, options=options)
    assert near.considered == len(full)
    fastest = min((lay.step_s for lay in full if lay.fits), default=math.inf)
    assert near.layouts == [lay for lay in full
                            if lay.fits and lay.step_s <= fastest * (1 + tolerance)]
    ranked_full, ranked_near = preferred(full, tolerance), preferred(near.layouts, tolerance)
    assert ranked_near == ranked_full[:len(ranked_near)]
    for limit in deadlines(full):
        assert (chosen(arch, machine, near.layouts, tolerance, limit)
                == chosen(arch, machine, full, tolerance, limit))
    if micro_batch is None:
        screen = planner_search.search_near(arch, machine, ADAM, batch, tolerance=tolerance,
                                            micro_batch=1, options=options)
        reused = planner_search.search_near(arch, machine, ADAM, batch, tolerance=tolerance,
                                            options=options, screened=screen.layouts)
        assert reused.layouts == near.layouts
        assert reused.considered == near.considered


@settings(max_examples=25, deadline=None)
@given(arch=st.sampled_from([GPT3, LLAMA3_70B, SMALL]),
       n=st.sampled_from([16, 64, 128, 1024]),
       inter=st.sampled_from([5e9, 45e9]),
       schedule=st.sampled_from(["1f1b", "interleaved", "zb_h2"]),
       cp_method=st.sampled_from(["ring", "ulysses", "allgather"]))
def test_floors_never_exceed_the_step_times_they_bound(
        *, arch: Architecture, n: int, inter: float, schedule: str, cp_method: str) -> None:
    opts = Options(schedule=schedule, cp_method=cp_method)
    machine = cluster(n, memory=80e9, inter=inter)
    memo = planner_memo.Memo(arch, opts)
    fixed: dict[str, int | None] = dict.fromkeys(("tp", "pp", "dp", "cp", "micro_batch"))
    cache = lc.CollectiveCache(machine)
    stack = costs.DenseStack(arch, machine.machine, opts)
    candidates = planner_sizes.candidate_dims(arch, n, 1536, memo, fixed)
    assert candidates
    floors = planner_floors.Floors(arch, machine, opts, cache=cache, stack=stack, memo=memo)
    for dims, b in candidates:
        m = 1536 // (dims.dp * b)
        sizes = (dims.tp, dims.cp, dims.pp, dims.dp, b)
        floor = floors.floor(sizes, m, ADAM)
        quick = floors.quick([sizes], 1536, skip_one=False)[0][0][0]
        assert quick <= floor * (1 + planner_floors.FLOOR_SLACK)
        base = planner_base.LayoutBase(arch, machine, ADAM, options=opts, cache=cache,
                                       stack=stack, memo=memo, dims=dims, micro_batch=b,
                                       micro_batches=m)
        for recompute in planner_sizes.RECOMPUTE_MODES:
            inner = base.step_floor(recompute)
            for zero, shard in planner_sizes.state_shardings(base.group, base.group_pd):
                lay = base.layout(recompute, zero, shard)
                assert inner <= lay.step_s
                assert base.peak(recompute, zero, shard) == lay.memory.total
                if lay.fits:  # the floor bounds what the search can return
                    assert floor <= lay.step_s * (1 + planner_floors.FLOOR_SLACK)


def test_the_bound_skips_most_of_gpt3_on_1024_gpus() -> None:
    # The capstone's first example: 8,012 layouts (four recomputation modes); the floors
    # leave about 300 of them to cost, which is what keeps the page's first computation
    # short.
    machine = cluster_for("a100_80gb_sxm", 1024, memory_bytes=80e9)
    near = planner_search.search_near(GPT3, machine, ADAM, 1536, tolerance=0.05)
    assert near.considered == 8012
    assert near.costed < near.considered / 20
    assert near.layouts


def test_screened_layouts_must_be_micro_batch_one() -> None:
    machine = cluster(64, memory=80e9, inter=45e9)
    some = planner_search.search_near(SMALL, machine, ADAM, 512, tolerance=0.05, micro_batch=2)
    with pytest.raises(ValueError, match="micro-batch 1 layouts that fit"):
        planner_search.search_near(SMALL, machine, ADAM, 512, tolerance=0.05, screened=some.layouts)


def test_cluster_sizing_reports_what_the_rules_allow() -> None:
    # The capstone's GPT-3 example (docs/capstone.md, FLOPs counted as 6N): the count of
    # layouts parallel_plan's table would list at 1,024 GPUs.
    result = calculators.compute("cluster_sizing", goodput=1, flop_count="6N")
    rows = {row[0]: row for row in result.to_dict()["table"]["rows"]}  # type: ignore[index]
    assert "of the 8,012 its rules allow at 1,024 GPUs" in rows["Layout"][2]
    plan = calculators.compute("parallel_plan", num_gpus=1024, global_batch=1536)
    assert plan.value("layouts_evaluated") == 8012


@pytest.mark.parametrize(("model", "gpus", "batch", "memory"), [
    (MIXTRAL_8X7B.architecture, 256, 512, 81.6e9),
    (MIXTRAL_8X7B.architecture, 64, 256, 40e9),
    (QWEN3_235B_A22B.architecture, 512, 1024, 81.6e9),
], ids=["mixtral-256", "mixtral-64-small-memory", "qwen3-512"])
@pytest.mark.parametrize("tolerance", [0.0, 0.05, 0.5])
def test_moe_search_with_a_tolerance_keeps_what_the_ranking_looks_at(
        model: MoeArchitecture, gpus: int, batch: int, memory: float, tolerance: float) -> None:
    machine = cluster_for("h100_sxm", gpus, memory_bytes=memory)
    full = moe_planner.search(model, 4096, machine, ADAM, batch)
    near = moe_planner.search(model, 4096, machine, ADAM, batch, tolerance=tolerance)
    assert (near.evaluated, near.smallest_bytes) == (full.evaluated, full.smallest_bytes)
    assert near.fitting == full.fitting == len(full.layouts)
    fastest = min((lay.step_s for lay in full.layouts), default=math.inf)
    assert near.layouts == [lay for lay in full.layouts
                            if lay.step_s <= fastest * (1 + tolerance)]
    ranked_full = preferred(full.layouts, tolerance)
    ranked_near = preferred(near.layouts, tolerance)
    assert ranked_near == ranked_full[:len(ranked_near)]
    arch = moe_layers.stand_in(model, 4096)
    for limit in deadlines(full.layouts):
        assert (chosen(arch, machine, near.layouts, tolerance, limit)
                == chosen(arch, machine, full.layouts, tolerance, limit))


def test_the_count_of_gpu_counts_tried_is_in_words() -> None:
    # Seen on screen: the MoE sizing said "(1 counts tried)".
    assert Scan(8, 8, 1, 10, None, fast_enough=False).tried_text == "1 count tried"
    assert Scan(8, 16, 2, 10, None, fast_enough=False).tried_text == "2 counts tried"
    result = calculators.compute("cluster_sizing", goodput=1)
    rows = {row[0]: row for row in result.to_dict()["table"]["rows"]}  # type: ignore[index]
    assert rows["GPUs"][2].endswith("(1 count tried)")


def test_what_searches_share_does_not_change_their_answers() -> None:
    # The shared part (formulas.search.Space) is kept between searches of other GPU
    # counts, micro-batches and state bytes on the same machine: each answer is the one
    # a search from nothing gives.
    machine = cluster(256, memory=40e9, inter=45e9)
    cases = [(256, 1, ADAM), (512, None, ADAM), (256, None, state_bytes("fp32", "adamw")),
             (96, 4, ADAM), (256, None, ADAM)]
    fresh = []
    for n, micro_batch, per_param in cases:
        planner_search.shared_space.cache_clear()
        fresh.append(planner_search.search_near(LLAMA3_70B, replace(machine, num_gpus=n), per_param,
                                                512, tolerance=0.05, micro_batch=micro_batch))
    planner_search.shared_space.cache_clear()
    for (n, micro_batch, per_param), alone in zip(cases, fresh, strict=True):
        shared = planner_search.search_near(LLAMA3_70B, replace(machine, num_gpus=n), per_param,
                                            512, tolerance=0.05, micro_batch=micro_batch)
        assert shared == alone
    assert planner_search.shared_space.cache_info().hits >= len(cases) - 1
