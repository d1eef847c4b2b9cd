"""The expert-parallel planner (formulas.moe.planner, the moe_plan calculator): a dense
model is the dense planner's answer exactly, the layout rules hold, the pruning keeps
the winner, DeepSeek-V3's published layout is costed as moe_step costs it, CLI and API
agree, inputs are bounded with named errors, and the search is fast."""

from __future__ import annotations

import json
from typing import Any

import pytest

import calculators
from calculators import moe_plan
from calculators.catalogues import preset_entries, presets
from calculators.catalogues.moe_models import DEEPSEEK_V3, MIXTRAL_8X7B, QWEN3_235B_A22B
from calculators.core.cli import main
from calculators.core.spec import ValidationError
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.moe import architecture as moe
from calculators.formulas.moe import layers as moe_layers
from calculators.formulas.moe import planner as moe_planner
from calculators.formulas.moe.expert_parallel import DEEPSEEK_V3_PRECISION, MoeParallelLayout
from calculators.formulas.moe.shape import GroupedQueryAttention, MoeArchitecture
from calculators.formulas.moe.step_costs import activation_bytes_per_gpu, step_alltoall_traffic
from calculators.formulas.parallel.memory import state_bytes
from calculators.formulas.parallel.placement import Dims
from calculators.formulas.parallel.stages import split_layers
from calculators.formulas.planner.layout import Cluster, Options
from calculators.formulas.planner.ranking import preferred
from calculators.formulas.planner.search import search as dense_search
from calculators.inputs.machine import cluster_for

STATES = state_bytes("bf16_mixed", "adamw", "fp32")
#: DeepSeek-V3's published layout (report, Sec. 3.2) on its H800 links (Sec. 3.2.2).
V3_LAYOUT = {"tp": 1, "cp": 1, "pp": 16, "ep": 64, "micro_batch": 1,
             "intra_node_bandwidth": 200e9, "inter_node_bandwidth": 50e9,
             "gradients": "fp32", "optimizer": "adamw_bf16"}


def cluster(gpus: int, *, memory: float = 80e9) -> Cluster:
    return cluster_for("h100_sxm", gpus, memory_bytes=memory)


# --- a dense model is the dense planner's --------------------------------------------------


LLAMA_8B = Architecture(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128,
                        ffn_hidden=14336, vocab=128256, seq_len=8192, gated_mlp=True,
                        biases=False, learned_positions=False, tied_embeddings=False)
ONE_OF_ONE = MoeArchitecture(layers=32, hidden=4096, vocab=128256,
                             attention=GroupedQueryAttention(32, 8, 128), routed_experts=1,
                             experts_per_token=1, expert_ffn=14336)


@pytest.mark.parametrize("options", [
    Options(), Options(schedule="interleaved"),
    Options(attention="materialised", dropout=True, cp_method="allgather")],
    ids=["1f1b", "interleaved", "materialised"])
def test_one_expert_of_one_is_the_dense_planner(options: Options) -> None:
    # The dense planner's own results are pinned by test_parallel_plan and
    # test_planner_today; the MoE search must reproduce every layout of it that fits
    # (TP inside the node), to rounding.
    dense = {(lay.dims.label(), lay.micro_batch, lay.recompute, lay.zero_stage,
              lay.shard_group): lay
             for lay in dense_search(LLAMA_8B, cluster(256), STATES, 512, options=options)
             if lay.fits and lay.tp <= 8}
    found = moe_planner.search(ONE_OF_ONE, 8192, cluster(256), STATES, 512,
                               options=options, exhaustive=True).layouts
    as_moe = {(lay.dims.label(), lay.micro_batch, lay.recompute, lay.zero_stage,
               lay.shard_group): lay for lay in found}
    assert as_moe.keys() == dense.keys()
    for key, lay in dense.items():
        other = as_moe[key]
        assert other.dims.ep == 1 and other.ep_s == 0.0
        for name in ("step_s", "compute_s", "recompute_s", "bubble_s", "tp_s", "cp_s",
                     "dp_s", "dp_exposed_s", "pp_s", "inter_bytes"):
            assert getattr(other, name) == pytest.approx(getattr(lay, name), rel=1e-12)
        assert other.memory.total == pytest.approx(lay.memory.total, rel=1e-12)


def test_parallel_plan_results_do_not_depend_on_the_moe_fields() -> None:
    # A dense layout has EP 1: its label, parts and intra-node bytes are as before.
    lay = dense_search(LLAMA_8B, cluster(64), STATES, 64)[0]
    assert lay.dims.ep == 1 and not lay.moe
    assert "EP" not in lay.dims.label()
    assert [name for name, _ in lay.parts()][-1] == "DP comm (exposed) + optimizer"
    assert lay.intra_bytes == (lay.tp_bytes + lay.cp_bytes + lay.pp_bytes + lay.dp_bytes
                               - lay.inter_bytes)


# --- the rules -------------------------------------------------------------------------------


def test_every_layout_keeps_the_expert_rules() -> None:
    found = moe_planner.search(MIXTRAL_8X7B.architecture, 4096, cluster(512), STATES, 1024)
    assert found.layouts
    for lay in found.layouts:
        d = lay.dims
        assert d.tp * d.cp * d.pp * d.dp == 512
        assert 8 % d.ep == 0 and (d.tp * d.cp * d.dp) % d.ep == 0  # Megatron-Core folding
        assert d.tp <= 8 and (d.ep <= 8 or d.ep % 8 == 0)
        assert lay.fits and lay.moe


def test_blocks_of_deepseek_v3_are_its_dense_moe_and_mtp_layers() -> None:
    model = DEEPSEEK_V3.architecture
    split = split_layers(model.layers + model.mtp_modules, 16)
    first = moe_layers.rank_blocks(model, split, 0, (16,))
    last = moe_layers.rank_blocks(model, split, 15, (1,))
    assert first.counts == (3, 0, 0)  # the three dense layers, one fewer than the others
    assert last.counts == (0, 2, 1)  # two MoE layers and the MTP module
    kinds = moe_layers.blocks(model, 4096, 0.5)
    assert kinds[moe_layers.MOE].ep_params == 256 * 3 * 7168 * 2048
    # Every block's parameters, the tables and the MTP module add up to the checkpoint's
    # main model + MTP module (formulas.moe.architecture, checked against the release there).
    total = sum(n * (k.tp_params + k.ep_params) for n, k in zip(
        (model.dense_layers, model.moe_layers, model.mtp_modules), kinds, strict=True))
    total += sum(moe_layers.embedding_params_on(model, r, 1) for r in (0,))
    assert total == moe.total_params(model) + moe.mtp_params(model)


def _blocks_one_by_one(model: MoeArchitecture, split: Any, rank: int,
                       in_flight: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """rank_blocks as it was written first: each block of each chunk looked at in turn."""
    counts, units = [0, 0, 0], [0, 0, 0]
    for c, flight in enumerate(in_flight):
        start = split.chunk_start(split.rank_chunks(rank)[c])
        for index in range(start, start + split.chunk_layers(rank, c)):
            kind = (moe_layers.DENSE if index < model.dense_layers
                    else moe_layers.MOE if index < model.layers else moe_layers.MTP)
            counts[kind] += 1
            units[kind] += flight
    return tuple(counts), tuple(units)


@pytest.mark.parametrize("placement", ["loop", "v", "dual"])
def test_blocks_by_runs_match_blocks_one_by_one(placement: str) -> None:
    # Issue 36: rank_blocks walked every block of a rank (a 6,754-layer model took 1.3 s
    # to plan); it now counts each chunk's overlap with the dense, MoE and MTP runs.
    model = DEEPSEEK_V3.architecture
    checked = 0
    for stages in (2, 4, 8, 16):
        for chunks in ((1, 2) if placement == "loop" else (2,)):
            try:
                split = split_layers(model.layers + model.mtp_modules, stages, chunks,
                                     placement)
            except ValueError:
                continue
            for rank in range(stages):
                flight = tuple(range(1, split.chunks_per_rank + 1))
                got = moe_layers.rank_blocks(model, split, rank, flight)
                assert (got.counts, got.units) == _blocks_one_by_one(model, split, rank,
                                                                     flight)
                checked += 1
    assert checked >= 14


def test_pruning_keeps_the_winner() -> None:
    for model, gpus, batch in ((MIXTRAL_8X7B.architecture, 1024, 1024),
                               (QWEN3_235B_A22B.architecture, 2048, 2048)):
        quick = preferred(moe_planner.search(model, 4096, cluster(gpus, memory=81.6e9),
                                             STATES, batch).layouts)
        full = preferred(moe_planner.search(model, 4096, cluster(gpus, memory=81.6e9), STATES,
                                            batch, exhaustive=True).layouts)
        assert quick[0].dims == full[0].dims
        assert quick[0].step_s == full[0].step_s


@pytest.mark.parametrize(("model", "gpus", "batch"), [
    (MIXTRAL_8X7B.architecture, 1024, 1024), (QWEN3_235B_A22B.architecture, 2048, 2048),
    (DEEPSEEK_V3.architecture, 2048, 15360)])
@pytest.mark.parametrize("tolerance", [0.0, 0.05, 0.3])
@pytest.mark.parametrize("keep", [1, 7, 60])
def test_keep_builds_the_fastest_and_those_within_the_tolerance(
        model: MoeArchitecture, gpus: int, batch: int, tolerance: float,
        keep: int) -> None:
    # The same as building every layout that fits and keeping those within the tolerance
    # of the fastest, or up to the keep-th fastest's step time: layout for layout, in
    # the same order, with the same counts.
    where = (model, 4096, cluster(gpus), STATES, batch)
    every = moe_planner.search(*where)
    kept = moe_planner.search(*where, tolerance=tolerance, keep=keep)
    steps = sorted(lay.step_s for lay in every.layouts)
    bound = max(steps[0] * (1.0 + tolerance), steps[min(keep, len(steps)) - 1])
    assert kept.layouts == [lay for lay in every.layouts if lay.step_s <= bound]
    assert len(kept.layouts) < len(every.layouts)
    assert (kept.evaluated, kept.fitting, kept.smallest_bytes) == (
        every.evaluated, every.fitting, every.smallest_bytes)


def test_keep_needs_a_tolerance_and_a_pruned_search() -> None:
    where = (MIXTRAL_8X7B.architecture, 4096, cluster(64), STATES, 64)
    for bad in ({"keep": 5}, {"keep": 0, "tolerance": 0.05},
                {"keep": 5, "tolerance": 0.05, "exhaustive": True}):
        with pytest.raises(ValueError, match="keep"):
            moe_planner.search(*where, **bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("inputs", [
    {}, {"top": "100", "rank_tolerance": "0"}, {"num_gpus": "1024", "gpu": "h200"},
    {"rank_tolerance": "0.3", "schedule": "zb_h1"}])
@pytest.mark.parametrize("first_keep", [None, 1])
def test_the_plan_is_the_same_as_from_every_layout(
        inputs: dict[str, str], first_keep: int | None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # moe_plan builds only the layouts its table and notes can read, and runs the search
    # again, building every layout, when they would run short (forced here with a first
    # search that keeps 1 and a table of 100 rows). Building every layout from the
    # start (a keep past them all) gives the same answer, table, notes and chart.
    calc = calculators.REGISTRY["moe_plan"]
    with monkeypatch.context() as patch:
        patch.setattr(moe_plan, "BUILT_PER_ROW", 10**6)
        every = calc.compute(inputs).to_dict()
    searches: list[int | None] = []
    real = moe_plan._search

    def watched(*args: Any, keep: int | None, **kwargs: Any) -> moe_planner.Search:
        if keep is not None and first_keep is not None:
            keep = first_keep
        searches.append(keep)
        return real(*args, keep=keep, **kwargs)

    monkeypatch.setattr(moe_plan, "_search", watched)
    assert calc.compute(inputs).to_dict() == every
    top = int(inputs.get("top", 10))
    if first_keep is None:  # moe_plan's own keep: one search
        assert searches == [moe_plan.BUILT_PER_ROW * (top + moe_plan.NOTED_LAYOUTS)]
    elif inputs.get("top") == "100":  # the rows run past the one layout kept
        assert searches == [1, None]


# --- DeepSeek-V3's published layout ------------------------------------------------------


def test_deepseek_v3_layout_as_moe_step_counts_it() -> None:
    model = DEEPSEEK_V3.architecture
    dims = Dims(tp=1, cp=1, pp=16, dp=128, ep=64)
    comm = moe_planner.ExpertComm(per_node=True, max_nodes=4, precision=DEEPSEEK_V3_PRECISION)
    lays = moe_planner.evaluate(model, 4096, cluster(2048, memory=81.6e9), STATES, 15360,
                                dims=dims, micro_batch=1, comm=comm)
    plain = next(lay for lay in lays if lay.recompute == "none" and lay.zero_stage == 1)
    # Without recomputation it does not fit: 1F1B keeps 15 micro-batches of four MoE
    # layers on the second stage, the ~140 GB moe_step's first-order count gives for
    # all 61 layers' worth (formulas.moe.step_costs; the two accountings differ in detail).
    assert not plain.fits
    v3 = MoeParallelLayout(2048, pipeline_parallel=16, expert_parallel=64)
    assert plain.memory.activations == pytest.approx(
        activation_bytes_per_gpu(model, v3, 4096) * 60 / 61, rel=0.03)
    # The alltoall bytes per (token, MoE layer) are moe_step's.
    traffic = step_alltoall_traffic(model, v3, tokens_per_step=15360 * 4096.0,
                                    gpus_per_node=8, precision=DEEPSEEK_V3_PRECISION,
                                    per_node=True, max_nodes=4)
    # The slowest stage, the last: one MoE layer and the MTP block (the balanced split
    # takes two blocks off it for the output heads: 4, 4, ..., 4, 2).
    assert plain.stages.endswith("4 on each of the 14 stages between, 2 on the last")
    pairs_here = plain.micro_batches * 2 * 4096
    pairs_step = 15360 * 4096 * model.moe_layers / 2048
    assert plain.ep_bytes / pairs_here == pytest.approx(
        (traffic.intra_node_bytes + traffic.inter_node_bytes) / pairs_step, rel=1e-12)


def test_deepseek_v3_layout_in_the_calculator() -> None:
    result = calculators.compute("moe_plan", **V3_LAYOUT)
    assert (result.value("tp"), result.value("pp"), result.value("dp"),
            result.value("ep")) == (1, 16, 128, 64)
    assert result.value("expert_data_parallel") == 2  # 2,048 / (64 x 16)
    assert result.value("experts_per_gpu") == 4
    assert result.value("recompute") == "full"  # the first-order count needs it
    assert result.value("memory_per_gpu_bytes") < 0.95 * 80 * 2**30
    assert 0 < result.value("alltoall_to_compute") < 1  # hideable, as DualPipe does
    # Without overlap every alltoall is on the critical path.
    exposed = calculators.compute("moe_plan", **V3_LAYOUT, ep_overlap="none")
    assert exposed.value("alltoall_exposed_time") == exposed.value("alltoall_time")
    assert exposed.value("step_time") > result.value("step_time")


def test_node_limit_and_per_node_dispatch_cut_the_network_bytes() -> None:
    limited = calculators.compute("moe_plan", **V3_LAYOUT)
    free = calculators.compute("moe_plan", **V3_LAYOUT, expert_groups=1, groups_per_token=1)
    direct = calculators.compute("moe_plan", **V3_LAYOUT, dispatch="direct")
    net = [r.value("alltoall_inter_node_bytes") for r in (limited, free, direct)]
    assert net[0] < net[1] < net[2]


# --- the calculator -------------------------------------------------------------------------


MOE_PRESETS = [p.id for p in preset_entries.PRESETS if p.kind == "moe_model"]


@pytest.mark.parametrize("preset_id", MOE_PRESETS)
def test_cli_and_api_agree(preset_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["moe_plan", "--preset", preset_id, "--num_gpus", "512", "--global_batch",
                 "1024", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    calc = calculators.REGISTRY["moe_plan"]
    texts = presets.preset_texts(calc, presets.get(preset_id))
    assert "ep" not in texts  # a preset never fixes the planner's EP
    api = calc.compute({**texts, "num_gpus": "512", "global_batch": "1024"})
    assert cli == api.to_dict()


@pytest.mark.parametrize(
    ("inputs", "named"),
    [
        ({"ep": 48}, "ep"),
        ({"num_gpus": 2044}, "num_gpus"),
        ({"tp": 1, "cp": 1, "pp": 16, "dp": 64}, "dp"),
        ({"pp": 3}, "pp"),
        ({"routed_experts": 16, "experts_per_token": 9, "expert_groups": 1,
          "max_nodes_per_token": 1}, "max_nodes_per_token"),
        ({"experts_per_token": 300}, "experts_per_token"),
        ({"global_batch": 7, "pp": 16, "tp": 1, "cp": 1}, "global_batch"),
    ],
)
def test_errors_name_the_input(inputs: dict[str, object], named: str) -> None:
    with pytest.raises(ValidationError) as caught:
        calculators.compute("moe_plan", **inputs)
    assert caught.value.input_name == named


def test_nothing_fits_warns() -> None:
    # Without offload (which the planner would otherwise choose: tests/unit/parallel/
    # test_offload.py), DeepSeek-V3 does not fit on 64 H800s.
    result = calculators.compute("moe_plan", num_gpus=64, global_batch=64, offload="none")
    assert result.value("step_time") is None
    assert "smallest needs" in result.computed.warnings[0]


def test_default_search_stays_within_its_budget() -> None:
    # DeepSeek-V3 on 2,048 GPUs, every size free: the work is the choices costed (about
    # 5 us each natively). make bench times this call: about 0.18 s natively and 0.3 s
    # in Pyodide, under the second a reader may wait. A search that grew would show
    # here first, on any machine.
    result = calculators.compute("moe_plan")
    # Four recomputation modes (light among them, DeepSeek-V3's own) since issue 32.
    assert 35_000 <= result.value("layouts_evaluated") <= 40_000


# --- cluster_sizing for a mixture of experts ----------------------------------------------


V3_SIZING = {"model_kind": "moe", "layers": 61, "hidden": 7168, "vocab": 129280,
             "heads": 128, "ffn_hidden": 18432, "gated_mlp": True, "tied_embeddings": False,
             "seq_len": 4096, "global_batch": 15360, "tokens": "14.8T", "gpu": "h100_sxm",
             "deadline_days": 45, "utilization": "45.5%", "goodput": 1}


def test_sizing_counts_active_compute_and_total_memory() -> None:
    result = calculators.compute("cluster_sizing", **V3_SIZING)
    model = DEEPSEEK_V3.architecture
    # C = model FLOPs per token x D, N the active count with the MTP pass (moe_params),
    # plus the whole attention-score matrix (the default count, as the MFU's).
    assert result.value("total_flops") == pytest.approx(
        moe.moe_model_flops_per_token(model, 4096) * 14.8e12, rel=1e-12)
    held = moe.total_params(model) + moe.mtp_params(model)
    assert result.value("checkpoint_bytes") == pytest.approx(14 * held, rel=1e-12)
    assert result.value("training_mode") == "collective (EP x TP x PP x DP)"
    ep, n = result.value("ep"), result.value("num_gpus")
    assert ep > 1 and 256 % ep == 0 and n % 8 == 0
    assert result.value("memory_per_gpu_bytes") <= 0.95 * 80 * 2**30
    assert result.value("wall_clock_days") <= 45
    dense = calculators.compute("cluster_sizing")
    assert dense.value("ep") is None


def test_sizing_switched_to_moe_from_the_defaults_sizes_dense_layers_at_4h() -> None:
    # A reader who picks "mixture of experts" in the capstone keeps the dense example's
    # blank FFN width; the form says blank is 4 x hidden, so the three dense layers
    # before the first MoE layer get 4h (not an error the reader did not make).
    blank = calculators.compute("cluster_sizing", model_kind="moe")
    given = calculators.compute("cluster_sizing", model_kind="moe", ffn_hidden=4 * 12288)
    assert blank.to_dict()["outputs"] == given.to_dict()["outputs"]
    narrower = calculators.compute("cluster_sizing", model_kind="moe", ffn_hidden=12288)
    assert narrower.value("total_flops") < blank.value("total_flops")


def test_sizing_a_weaker_network_costs_the_deadline() -> None:
    full = calculators.compute("cluster_sizing", **V3_SIZING)
    thin = calculators.compute("cluster_sizing", **V3_SIZING, nic_bandwidth="19.6 GB/s")
    assert thin.value("planner_days") > full.value("planner_days")
    assert thin.value("ep") < full.value("ep")  # the alltoall pulled back into the node


def test_sizing_cli_and_api_agree_on_the_moe_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster_sizing", "--preset", "deepseek_v3", "--tokens", "14.8T",
                 "--deadline_days", "45", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    calc = calculators.REGISTRY["cluster_sizing"]
    texts = presets.preset_texts(calc, presets.get("deepseek_v3"))
    assert texts["model_kind"] == "moe"
    api = calc.compute({**texts, "tokens": "14.8T", "deadline_days": "45"})
    assert cli == api.to_dict()


@pytest.mark.parametrize("inputs", [{"global_batch": "1"}, {"shared_expert_ffn": "1891538"}])
def test_the_slowest_stage_is_found_behind_the_dense_layers(inputs: dict[str, str]) -> None:
    """Found by issue 36's fuzzing: DeepSeek-V3's first three layers are dense, so on a
    32-stage pipeline rank 1 holds two dense blocks, and the ranks the planner looked at
    (first, rank 1, last) missed the ranks of two MoE blocks that set the step. The
    step came out at half its compute: 117% MFU with a wide shared expert, and an
    alltoall-to-compute ratio of 0 / 0 at a global batch of 1."""
    result = calculators.compute("moe_plan", **inputs)
    mfu = float(result.value("mfu"))  # type: ignore[arg-type]
    assert 0 < mfu < 0.8
    ratio = result.value("alltoall_to_compute")
    assert isinstance(ratio, float)
    assert ratio > 0
