"""One accounting of model FLOPs (issue 32): training_compute, mfu, cluster_sizing (dense
and MoE) and the planners count the same FLOPs per token, in a named convention."""

from __future__ import annotations

import pytest

import calculators
from calculators.catalogues.kernel_speeds import kernel_speed
from calculators.catalogues.moe_models import DEEPSEEK_V3
from calculators.formulas.model.architecture import Architecture, matmul_params
from calculators.formulas.model.flops import (
    CAUSAL_ATTENTION,
    FLOP_COUNTS,
    FULL_ATTENTION,
    dense_model_flops_per_token,
    flop_count,
)
from calculators.formulas.moe import architecture as moe
from published_checks import preset_inputs

V3 = DEEPSEEK_V3.architecture
#: The issue's run: Llama 3 70B's shape on 15T tokens, 8,192 H100s at 40% MFU, no
#: failures. Before, cluster_sizing timed 6ND (22.7 days at 8K tokens) and
#: training_compute 6ND + 12 L s d (26.1): the same run, two answers.
RUN = {"gpu": "h100_sxm", "tokens": "15T", "utilization": 0.4, "goodput": 1}


@pytest.mark.parametrize("seq_len", [8192, 32768])
@pytest.mark.parametrize("count", [c.id for c in FLOP_COUNTS])
def test_training_compute_and_cluster_sizing_count_the_same_c(seq_len: int,
                                                              count: str) -> None:
    compute = calculators.compute("training_compute", **preset_inputs(
        "training_compute", "llama3_70b", seq_len=seq_len, num_gpus=8192, flop_count=count,
        **RUN))
    sizing = calculators.compute("cluster_sizing", **preset_inputs(
        "cluster_sizing", "llama3_70b", seq_len=seq_len, deadline_days=30,
        global_batch=2048 * 8192 // seq_len, flop_count=count, **RUN))
    # N differs only by the norm scales (training_compute knows no more than the table).
    assert sizing.value("total_flops") == pytest.approx(compute.value("total_flops"), rel=1e-4)


def test_the_same_run_takes_the_same_days_in_both() -> None:
    compute = calculators.compute("training_compute", **preset_inputs(
        "training_compute", "llama3_70b", num_gpus=8192, **RUN))
    sizing = calculators.compute("cluster_sizing", **preset_inputs(
        "cluster_sizing", "llama3_70b", deadline_days=30, global_batch=2048, **RUN))
    # At 8K tokens the assumed MFU, not the planner, sets the time on these 8,192 GPUs.
    assert sizing.value("num_gpus") == 8192
    assert sizing.value("planner_days") < sizing.value("wall_clock_days")
    assert sizing.value("wall_clock_days") == pytest.approx(
        compute.value("wall_clock_days"), rel=1e-4)
    table = " ".join(" ".join(row) for row in sizing.to_dict()["table"]["rows"])
    assert "6N + full attention (PaLM)" in table


def test_the_planners_mfu_is_the_same_count() -> None:
    # parallel_plan's MFU is model FLOPs over the step and peak, with the attention its
    # kernel computes: the causal half when fused, the whole matrix when materialised;
    # its model FLOP/s per GPU count the whole matrix, as PaLM does.
    arch = Architecture(layers=96, hidden=12288, heads=96, kv_heads=96, head_dim=128,
                        ffn_hidden=4 * 12288, vocab=51200, seq_len=2048)
    tokens = 1536 * 2048
    for attention, count in (("fused", CAUSAL_ATTENTION), ("materialised", FULL_ATTENTION)):
        result = calculators.compute("parallel_plan", attention=attention)
        step = float(result.value("step_time"))  # type: ignore[arg-type]
        expected = dense_model_flops_per_token(arch, count) * tokens / (1024 * 312e12 * step)
        assert result.value("mfu") == pytest.approx(expected)
        assert result.value("model_flops_per_gpu") == pytest.approx(
            dense_model_flops_per_token(arch, FULL_ATTENTION) * tokens / (1024 * step))


@pytest.mark.parametrize("seq_len", [8192, 131072, 1048576])
def test_the_planners_mfu_stays_under_the_kernels_efficiency(seq_len: int) -> None:
    # Issue 36: counting the masked half of the scores, the MFU of a 1M-token sequence
    # was 101%, twice the FLOPs the step runs. No kernel runs faster than the GEMMs'
    # ceiling (catalogues.kernel_speeds).
    ceiling = kernel_speed("a100_80gb_sxm").gemm.max_efficiency
    result = calculators.compute("parallel_plan", seq_len=seq_len,
                                 global_batch=max(2, 1536 * 2048 // seq_len))
    assert 0 < float(result.value("mfu")) < ceiling  # type: ignore[arg-type]


def test_moe_sizing_counts_the_mtp_pass_and_the_attention_scores() -> None:
    # DeepSeek-V3's MTP module trains with the model (Sec. 2.2): its pass is in C, and
    # MLA's scores are in C as the chosen count says. Before: 6 x 36.6B x D alone.
    inputs = {"model_kind": "moe", "layers": 61, "hidden": 7168, "vocab": 129280,
              "heads": 128, "ffn_hidden": 18432, "gated_mlp": True, "tied_embeddings": False,
              "seq_len": 4096, "global_batch": 15360, "tokens": "14.8T", "gpu": "h100_sxm",
              "deadline_days": 45, "utilization": "45.5%", "goodput": 1}
    for count in ("6N", "6N+attention"):
        result = calculators.compute("cluster_sizing", **inputs, flop_count=count)
        per_token = moe.moe_model_flops_per_token(V3, 4096, flop_count(count))
        assert result.value("total_flops") == pytest.approx(per_token * 14.8e12)
        assert result.value("total_flops") > 6 * moe.active_matmul_params(V3) * 14.8e12


def test_n_is_the_weights_a_token_multiplies() -> None:
    arch = Architecture(layers=2, hidden=8, heads=2, kv_heads=2, head_dim=4, ffn_hidden=32,
                        vocab=100, seq_len=16, tied_embeddings=False)
    # The output layer once, never the input table: tied or not, the same N.
    assert matmul_params(arch) == 2 * (4 * 8 * 8 + 2 * 8 * 32) + 100 * 8
    tied = Architecture(**{**arch.__dict__, "tied_embeddings": True})
    assert matmul_params(tied) == matmul_params(arch)


def test_the_attention_term_follows_the_heads_not_the_width() -> None:
    # 6 L s n_h (d_qk + d_v), by hand. DeepSeek-V3's MLA: 128 heads, d_qk 128 + 64,
    # d_v 128; Qwen3-235B-A22B: 64 heads of 128 on a 4,096-wide model, twice 12 L s d.
    from calculators.catalogues.moe_models import QWEN3_235B_A22B

    assert moe.full_attention_flops(V3, 4096, include_mtp=False) == (
        6 * 61 * 4096 * 128 * (128 + 64 + 128))
    assert moe.attention_score_flops_per_token(V3, 4096, causal=True) == (
        3 * 61 * 4096 * 128 * (128 + 64 + 128))
    qwen = QWEN3_235B_A22B.architecture
    assert moe.full_attention_flops(qwen, 4096) == 2 * (12 * 94 * 4096 * 4096)
