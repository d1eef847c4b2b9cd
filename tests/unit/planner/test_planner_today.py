"""The planner as the dense stack is run today: context parallelism, pipeline schedules,
sharded data parallelism with pipelines, NVLink domains, overlap as an efficiency, and
Llama 3 405B's published layouts (Dubey et al. 2024, Table 4)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import calculators
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.model.flops import (
    CAUSAL_ATTENTION,
    FULL_ATTENTION,
    dense_model_flops_per_token,
)
from calculators.formulas.parallel import context_parallel as cpar
from calculators.formulas.parallel.memory import (
    Strategy,
    memory_per_gpu,
    output_layer_bytes,
    state_bytes,
)
from calculators.formulas.planner.layout import Cluster, Options
from calculators.formulas.planner.search import evaluate, search
from calculators.inputs.machine import cluster_for
from published_checks import speed

GB = 1e9
LLAMA3_405B = {"layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8,
               "ffn_hidden": 53248, "vocab": 128256, "seq_len": 8192, "gated_mlp": True,
               "biases": False, "position_embedding": "rotary", "tied_embeddings": False,
               "gpu": "h100_sxm"}
#: Llama 3's choices (Dubey et al. 2024, Sec. 3.3.2): interleaved pipeline with one-layer
#: chunks (126 layers + embedding and output chunks on 16 ranks: 8 per rank), all-gather
#: context parallelism, FP32 gradients.
LLAMA3_CHOICES = {"schedule": "interleaved", "virtual_stages": 8, "cp_method": "allgather",
                  "gradients": "fp32"}
#: Table 4 of Dubey et al. 2024: GPUs, TP, CP, PP, DP, sequence length, sequences per DP
#: group (so the global batch is DP x that), TFLOP/s per GPU.
TABLE_4 = [
    (8192, 8, 1, 16, 64, 8192, 32, 430e12),
    (16384, 8, 1, 16, 128, 8192, 16, 400e12),
    (16384, 8, 16, 16, 8, 131072, 16, 380e12),
]
L405 = Architecture(layers=126, hidden=16384, heads=128, kv_heads=8, head_dim=128,
                    ffn_hidden=53248, vocab=128256, seq_len=8192, gated_mlp=True,
                    biases=False, learned_positions=False, tied_embeddings=False)
GPT3 = Architecture(layers=96, hidden=12288, heads=96, kv_heads=96, head_dim=128,
                    ffn_hidden=4 * 12288, vocab=51200, seq_len=2048)
ADAM = state_bytes("bf16_mixed", "adamw")


def h100(num_gpus: int, domain: int = 8, overlap: float = 0.8) -> Cluster:
    return cluster_for("h100_sxm", num_gpus, domain=domain, memory_bytes=0.95 * 80 * 2**30,
                       overlap=overlap)


#: What Llama 3 states it ran (Sec. 3.3): no recomputation at 8K, gradients sharded with
#: FSDP (ZeRO-2), RoCE tuned to perform as InfiniBand; and the chapter's one setting of
#: its own, norms that keep their output (inputs.speed.LEAN_NORMS_PARAM).
LLAMA3_PUBLISHED = {"recompute": "none", "zero_stage": 2, "lean_norms": True,
                    "network": "roce_400g_tuned"}


def table_4(row: tuple[int, int, int, int, int, int, int, float], *,
            published: bool = False) -> calculators.Result:
    n, tp, cp, pp, dp, seq, per_dp, _ = row
    return calculators.compute("parallel_plan", **{
        **LLAMA3_405B, **LLAMA3_CHOICES, **(LLAMA3_PUBLISHED if published else {}),
        "num_gpus": n, "tp": tp, "cp": cp, "pp": pp, "dp": dp, "seq_len": seq,
        "global_batch": dp * per_dp})


@pytest.mark.parametrize("row", TABLE_4, ids=["8k-8192", "8k-16384", "131k-16384"])
def test_llama3_table_4_layouts_are_searched_and_fit_in_80_gb(
        row: tuple[int, int, int, int, int, int, int, float]) -> None:
    # Each of Dubey et al. 2024's Table 4 layouts is in the search space, and the planner
    # finds a way (recomputation, ZeRO stage) to fit it in an H100's 80 GB.
    _, tp, cp, pp, dp, _, per_dp, _ = row
    result = table_4(row)
    assert (result.value("tp"), result.value("cp"), result.value("pp"), result.value("dp")) == (
        tp, cp, pp, dp)
    total = result.value("memory_per_gpu_bytes")
    assert isinstance(total, float)
    assert total <= 80e9
    parts = sum(float(result.value(name)) for name in (  # type: ignore[arg-type]
        "weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes",
        "outer_bytes", "working_bytes"))
    assert parts == pytest.approx(total, rel=1e-12)
    # Llama 3, Sec. 3.3.2: the interleaved schedule's bubble is (PP - 1) / (V x M), with
    # M = per_dp micro-batches of one sequence.
    assert result.value("bubble_fraction") == pytest.approx((pp - 1) / (8 * per_dp),
                                                            rel=1e-12)
    assert result.value("micro_batch") == 1


def _chapter_table_4() -> list[list[str]]:
    """The rows of the dense chapter's table of the Table 4 layouts, cell by cell."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "dense.md").read_text("utf-8")
    lines = text[text.index("| Table 4 layout |"):].splitlines()
    rows = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip().replace("&nbsp;", " ") for cell in line.strip("|").split("|")])
    return rows


def test_the_dense_chapter_shows_what_the_planner_computes_for_table_4() -> None:
    # The chapter's table is written in the Markdown: each figure must be the planner's
    # own with Llama 3's published settings, rounded as printed (GB to 0.1; the step to
    # three significant figures), and the measured steps the speed checks' own.
    rows = _chapter_table_4()
    assert len(rows) == len(TABLE_4)
    measured = {run.inputs["num_gpus"]: run.measured_step_s for run in speed.RUNS
                if run.id.startswith("llama3-405b-8k")}
    for cells, row in zip(rows, TABLE_4, strict=True):
        result = table_4(row, published=True)
        values = {o.name: result.value(o.name) for o in result.calculator.outputs}

        def gb(*names: str, values: dict[str, object] = values) -> float:
            return sum(float(values[n]) for n in names) / 1e9  # type: ignore[arg-type]

        assert values["recompute"] == "none" and values["zero_stage"] == 2
        parts = [gb("weights_bytes"), gb("gradients_bytes"), gb("optimizer_bytes"),
                 gb("activations_bytes", "outer_bytes"), gb("working_bytes")]
        assert cells[1] == (f"{gb('memory_per_gpu_bytes'):.1f} GB: "
                            + ", ".join(f"{part:.1f}" for part in parts))
        bubble = float(values["bubble_fraction"])  # type: ignore[arg-type]
        step = float(values["step_time"])  # type: ignore[arg-type]
        assert cells[2] == f"{100 * bubble:.1f}%, {step:#.3g} s"
        if row[0] in measured and row in TABLE_4[:2]:
            assert cells[3] == f"{measured[row[0]]:#.3g} s"
        tflops = float(values["model_flops_per_gpu"]) / 1e12  # type: ignore[arg-type]
        assert cells[4].split(" ")[0] == f"{tflops:.0f}"
        assert cells[5] == f"{row[7] / 1e12:.0f}"


def test_the_chapter_blocks_are_the_speed_checks_runs() -> None:
    # The chapter's two 8K blocks run exactly what the Validation page's speed section
    # checks against Meta's measured steps.
    for row in TABLE_4[:2]:
        run = next(r for r in speed.RUNS if r.id == f"llama3-405b-8k-{row[0]}")
        assert table_4(row, published=True).value("step_time") == pytest.approx(
            run.predict(), rel=1e-12)


def test_llama3_8k_without_recomputation_is_where_the_model_and_meta_differ() -> None:
    # Meta pre-trained at 8K "without activation checkpointing" (Sec. 3.3.2). By our
    # count (Korthikanti's tensors, Llama's shapes) the fullest rank of the interleaved
    # schedule holds 141 one-layer micro-batches of 0.53 GB: 75 GB of activations.
    # Searching every recomputation mode, the planner recomputes only the norms and the
    # activation function ("light", Megatron-Core's recompute modules), the cheapest
    # that fits.
    result = table_4(TABLE_4[0])
    assert result.value("recompute") == "light"
    none = evaluate(L405, h100(8192), state_bytes("bf16_mixed", "adamw", "fp32"), 2048,
                    tp=8, pp=16, dp=64, micro_batch=1, recompute="none", zero_stage=2,
                    options=Options("interleaved", 8, "allgather"))
    assert none.memory.activations / GB == pytest.approx(141 * 0.533, rel=0.01)
    assert none.memory.rank == 1
    assert not none.fits


def test_planner_tflops_against_table_4() -> None:
    # With Llama 3's published settings the 8K layouts come within 4% of Meta's TFLOP/s
    # (the chapter says 2-3%); the 131K layout, counted as PaLM counts (the whole s^2
    # term), runs 30-45% faster in the model, and 2-5% under Meta's 380 counting only the
    # causal half, which is what the chapter says of it.
    got = [float(table_4(row, published=True).value("model_flops_per_gpu"))  # type: ignore[arg-type]
           for row in TABLE_4]
    ratios = [g / row[7] for g, row in zip(got, TABLE_4, strict=True)]
    assert all(1.015 < r < 1.035 for r in ratios[:2])
    long = replace(L405, seq_len=131072)
    whole = dense_model_flops_per_token(long, FULL_ATTENTION)
    causal = dense_model_flops_per_token(long, CAUSAL_ATTENTION)
    assert causal == pytest.approx(
        whole - 6.0 * long.layers * long.heads * long.head_dim * long.seq_len)
    assert 1.3 < ratios[2] < 1.45
    assert 0.95 < ratios[2] * causal / whole < 0.98


def test_without_lean_norms_the_planner_recomputes_only_the_cheap_part() -> None:
    # The chapter: with Korthikanti et al.'s count the 8K layout on 8,192 GPUs does not
    # fit without recomputation; the planner recomputes the norms and the activation
    # function (light) and, keeping the gradients whole (ZeRO-1), runs about a fifth
    # faster than Meta's measured step, which sharded them (ZeRO-2).
    result = table_4(TABLE_4[0], published=False)
    run = next(r for r in speed.RUNS if r.id == "llama3-405b-8k-8192")
    inputs = {**dict(run.inputs), "lean_norms": False, "recompute": "search"}
    del inputs["zero_stage"]
    light = calculators.compute("parallel_plan", **inputs)
    assert result.value("recompute") == light.value("recompute") == "light"
    assert light.value("zero_stage") == 1
    step = light.value("step_time")
    assert isinstance(step, float)
    assert 0.75 < step / run.measured_step_s < 0.85
    inputs["recompute"] = "none"
    assert calculators.compute("parallel_plan", **inputs).value("zero_stage") == 3


def test_uneven_pipeline_split_is_llamas_or_rejected() -> None:
    # 126 layers on 16 stages: 8 per stage, one fewer on the first and last (Llama 3);
    # 80 layers on 73 stages would leave 66 stages half idle: rejected, naming pp.
    ok = calculators.compute("model_memory", **{k: v for k, v in LLAMA3_405B.items()
                                                if k != "gpu"}, tp=8, pp=16)
    assert ok.value("total_bytes")
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("parallel_plan", layers=80, num_gpus=584, gpus_per_node=8,
                            pp=73, global_batch=8)
    assert caught.value.input_name == "pp"
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("model_memory", layers=80, heads=64, hidden=8192, pp=73)
    assert caught.value.input_name == "pp"
    arch80 = replace(GPT3, layers=80)
    layouts = search(arch80, replace(h100(584), num_gpus=584), ADAM, 584)
    assert all(lay.pp != 73 for lay in layouts)


def test_overlap_is_an_efficiency() -> None:
    # Exposed DP traffic = traffic - overlap x what fits under the backward: 0 hides
    # nothing, 1 is the old perfect overlap, and the step grows as overlap falls.
    steps = []
    for overlap in (1.0, 0.9, 0.5, 0.0):
        lay = evaluate(GPT3, h100(1024, overlap=overlap), ADAM, 1536, tp=8, pp=1, dp=128,
                       micro_batch=1, recompute="selective", zero_stage=3)
        steps.append(lay.step_s)
        if overlap == 0.0:
            assert lay.dp_exposed_s == pytest.approx(lay.dp_s, rel=1e-12)
    assert steps == sorted(steps)
    hidden_at_1 = steps[-1] - steps[0]
    assert steps[2] - steps[0] == pytest.approx(0.5 * hidden_at_1, rel=1e-9)


def test_nvlink_domain_of_72_keeps_tp_and_cp_inside() -> None:
    # GB200 NVL72: 72 GPUs on NVLink, so TP 8 x CP 3 stays on NVLink where a DGX's 8
    # GPUs would send CP over the network.
    arch = replace(L405, seq_len=24576)
    inside = evaluate(arch, h100(1152, domain=72), ADAM, 144, tp=8, cp=3, pp=1, dp=48,
                      micro_batch=1, recompute="full", zero_stage=3)
    across = evaluate(arch, h100(1152, domain=8), ADAM, 144, tp=8, cp=3, pp=1, dp=48,
                      micro_batch=1, recompute="full", zero_stage=3)
    assert not inside.cp_inter and across.cp_inter
    assert inside.cp_s < across.cp_s
    result = calculators.compute("parallel_plan", gpu="gb200", num_gpus=1152,
                                 gpus_per_node=4)
    assert result.computed.notes[-1].endswith("NVLink domains of 72.")


def test_context_parallel_divides_activations_and_costs_its_method() -> None:
    # Every activation is split along the sequence (Megatron-Core CP docs), and the
    # planner charges each layer the method's bytes (formulas.parallel.context_parallel).
    arch = replace(L405, seq_len=131072)
    one = memory_per_gpu(arch, Strategy(tp=8, pp=16, cp=1, sequence_parallel=True), ADAM)
    sixteen = memory_per_gpu(arch, Strategy(tp=8, pp=16, cp=16, sequence_parallel=True), ADAM)
    assert sixteen.activations == pytest.approx(one.activations / 16, rel=1e-12)
    opts = Options(cp_method="allgather")
    lay = evaluate(arch, h100(16384), ADAM, 128, tp=8, cp=16, pp=16, dp=8, micro_batch=1,
                   recompute="none", zero_stage=1, options=opts)
    dims = cpar.AttentionDims(131072, 1, 128 // 8, 8 // 8, 128)
    per_layer = (cpar.forward_bytes("allgather", dims, 16)
                 + cpar.backward_bytes("allgather", dims, 16))
    assert lay.cp_bytes == pytest.approx(lay.micro_batches * 8 * per_layer, rel=1e-12)
    assert lay.cp_exposed_s == pytest.approx(lay.cp_s, rel=1e-12)  # Llama 3: exposed
    ring = evaluate(arch, h100(16384), ADAM, 128, tp=8, cp=16, pp=16, dp=8, micro_batch=1,
                    recompute="none", zero_stage=1)
    assert ring.cp_exposed_s < ring.cp_s  # the ring hides behind attention


def test_sharded_data_parallel_combines_with_pipelines_and_hybrid_sharding() -> None:
    layouts = search(GPT3, h100(1024), ADAM, 1536, tp=8, pp=4)
    stages = {(lay.zero_stage, lay.hybrid) for lay in layouts}
    assert {(1, False), (2, False), (3, False)} <= stages
    # TP 8 fills a DGX node, so no DP ranks share it: no hybrid group; in NVL72 there are.
    assert not any(hybrid for _, hybrid in stages)
    # TP 8 on NVL72 leaves 9 DP ranks in each 72-GPU domain: ZeRO 2-3 sharded in groups
    # of 9 and replicated across the 16 racks (HSDP).
    nvl = search(GPT3, h100(1152, domain=72), ADAM, 1152, tp=8, pp=1, cp=1)
    groups = {lay.shard_group for lay in nvl if lay.hybrid}
    assert groups == {9}


def test_logits_live_on_the_last_stage() -> None:
    # 4sbh(1 + V/h)/t for one micro-batch (Korthikanti Sec. 4.3; Megatron's estimate):
    # on the only stage without a pipeline; with one, on the last stage, whose peak is
    # lower than the first stage's (fewer micro-batches in flight).
    alone = memory_per_gpu(L405, Strategy(tp=8, pp=1, sequence_parallel=True), ADAM)
    logits = output_layer_bytes(L405, 1, 8)
    assert logits == pytest.approx(4 * 8192 * (16384 + 128256) / 8, rel=1e-12)
    assert alone.outer >= logits
    piped = memory_per_gpu(L405, Strategy(tp=8, pp=16, sequence_parallel=True), ADAM)
    assert piped.rank != 15


@pytest.mark.parametrize(("name", "stages", "micro", "expected"), [
    ("1f1b", 8, 64, 7 / 64), ("interleaved", 8, 64, 7 / (2 * 64)),
    ("zb_h1", 8, 64, 7 / (3 * 64)), ("zb_h2", 8, 64, 0.0)])
def test_planner_bubble_is_each_papers(name: str, stages: int, micro: int,
                                       expected: float) -> None:
    # Narayanan et al. 2021 Sec. 2.2 ((p-1)/m, (p-1)/(vm)); Qi et al. 2024 Sec. 2 and
    # Table 2 at T_F = T_B = T_W (ZB-H1 a third of 1F1B, ZB-H2 none).
    lay = evaluate(GPT3, h100(1024), ADAM, 64 * 16, tp=8, pp=stages, dp=16, micro_batch=1,
                   recompute="selective", zero_stage=1, options=Options(name, 2))
    assert lay.bubble_fraction == pytest.approx(expected, rel=1e-12, abs=1e-15)
    sends = 2 * (2 if name == "interleaved" else 1)
    assert lay.pp_bytes == pytest.approx(64 * sends * 2048 * 12288 * 2 / 8, rel=1e-12)


def test_sixteen_thousand_gpu_search_stays_within_its_budget() -> None:
    # The slowest search the guide runs at 8,192 tokens: 16,384 GPUs, every dimension
    # free. make bench times it (about 0.12 s natively, 0.3 s in Pyodide); here its work,
    # the layouts costed: the full space, and no more than today's.
    result = calculators.compute(
        "parallel_plan", **{**LLAMA3_405B, "num_gpus": 16384, "global_batch": 2048})
    # Four recomputation modes (none, light, selective, full) since issue 32.
    assert 8_000 < result.value("layouts_evaluated") <= 10_500
