"""generative_recommender: counts against the reference code's layer shapes, the step
model's invariants, the deadline search, the DLRM comparison and bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.catalogues.kernel_speeds import kernel_speed
from calculators.formulas.sparse.generative import Lengths, SequenceModel, sample_counts
from calculators.formulas.sparse.generative_step import gpu_counts
from published_checks import preset_inputs


def compute(**inputs: object) -> calculators.Result:
    return calculators.compute("generative_recommender", **inputs)


def test_transformer_layer_is_twelve_d_squared_plus_thirteen_d() -> None:
    # Narayanan et al. 2021's count of a GPT layer: 12 h^2 + 13 h with biases and two
    # LayerNorms, at 4h feed-forward and h d_qk = h d_v = h.
    d = 768
    model = SequenceModel("transformer", 1, d, 12, 64, 64, 4 * d)
    assert model.layer_params() == 12 * d * d + 13 * d


def test_research_hstu_layer_is_f1_and_f2() -> None:
    d, h, dqk, dv = 50, 1, 50, 50
    model = SequenceModel("hstu", 2, d, h, dqk, dv, 0)
    assert model.layer_params() == d * h * (2 * dv + 2 * dqk) + h * dv * d + d
    assert model.params == 2 * 12_550


def test_padded_attention_pairs_are_the_causal_triangle() -> None:
    n = 1000
    padded = Lengths.from_spread(n, 10, 3.0, 0, padded=True)
    assert padded.attention_pairs == n * (n + 1) / 2
    # Jagged: mean^2 (1 + spread^2), capped at mean x max.
    jagged = Lengths.from_spread(n, 100, 1.0, 0, padded=False)
    assert jagged.mean_square == pytest.approx(2 * 100**2)
    capped = Lengths.from_spread(n, 100, 10.0, 0, padded=False)
    assert capped.mean_square == 100 * n
    ranking = Lengths.from_spread(n, n, 0.0, 10, padded=False)
    assert ranking.attention_pairs == n * (n + 1) / 2 + 10 * (n + 1)


def test_training_flops_are_three_times_gemms_and_three_and_a_half_attention() -> None:
    model = SequenceModel("hstu", 4, 256, 4, 64, 64, 0)
    counts = sample_counts(model, Lengths(200, 200.0, 40_000.0, 0), negatives=0)
    assert counts.loss_flops == 2 * 256 * 1 * 200  # each position against its next item
    assert counts.training_flops == pytest.approx(
        3 * (counts.gemm_flops + counts.loss_flops) + 3.5 * counts.attention_flops)
    assert counts.gemm_flops == 2 * model.layers * (256 * 1024 + 256 * 256) * 200


def test_headline_outputs_are_consistent() -> None:
    result = compute()
    step, batch = result.value("step_time"), 4096
    assert isinstance(step, float)
    assert result.value("samples_per_second") == pytest.approx(batch / step)
    days = result.value("training_days")
    assert days == pytest.approx(1e10 / batch * step / 86_400)
    assert result.value("embedding_params") == pytest.approx(2.9e9 * 512)


def test_deadline_search_returns_the_smallest_cluster_that_meets_it() -> None:
    result = compute(deadline_days=10)
    gpus, days = result.value("gpus_for_deadline"), result.value("days_at_that_size")
    assert isinstance(gpus, int) and isinstance(days, float)
    assert days <= 10
    smaller = [n for n in gpu_counts(8, 65_536) if n < gpus]
    for n in smaller[-2:]:
        tighter = compute(num_gpus=n).value("training_days")
        assert tighter is None or tighter > 10  # type: ignore[operator]


def test_jagged_histories_need_fewer_gpus_than_padded_ones() -> None:
    jagged = compute().value("gpus_for_deadline")
    padded = compute(padded=True).value("gpus_for_deadline")
    assert isinstance(jagged, int) and isinstance(padded, int)
    assert padded > jagged


def test_the_dlrm_pools_its_history_before_the_wire() -> None:
    result = compute(**preset_inputs("generative_recommender", "dlrm_v3_reference"))
    table = result.to_dict()["table"]
    assert isinstance(table, dict)
    rows = {row[0]: row for row in table["rows"]}  # type: ignore[index]
    assert rows["Embedding rows read per sample"][1] == rows["Embedding rows read per sample"][2]
    ratio = result.value("dlrm_flops_ratio")
    assert isinstance(ratio, float) and ratio > 100


@settings(max_examples=40, deadline=None)
@given(st.fixed_dictionaries({
    "gr_block": st.sampled_from(["hstu", "stu", "transformer"]),
    "gr_layers": st.integers(1, 48), "gr_dim": st.sampled_from([64, 256, 512, 1024, 4096]),
    "gr_heads": st.sampled_from([1, 2, 4, 8, 16]), "history_mean": st.integers(1, 8192),
    "gr_batch": st.integers(1, 100_000), "num_gpus": st.sampled_from([1, 8, 64, 1024]),
    "gpu": st.sampled_from(["a100_80gb_sxm", "h100_sxm", "b200"])}))
def test_mfu_never_exceeds_the_best_kernel_efficiency(inputs: dict[str, object]) -> None:
    result = compute(**inputs, table_rows=1e8)
    mfu = result.value("mfu")
    if mfu is None:
        assert result.to_dict()["warnings"]
        return
    assert isinstance(mfu, float)
    speed = kernel_speed(str(inputs["gpu"]))
    assert 0 < mfu <= max(speed.gemm.max_efficiency, speed.attention.forward)


def test_a_mean_above_the_cap_is_refused_by_name() -> None:
    with pytest.raises(calculators.ValidationError, match="history_mean"):
        compute(history_max=100, history_mean=200)


def test_memory_refusal_names_the_tables() -> None:
    warnings = compute(num_gpus=1).to_dict()["warnings"]
    assert isinstance(warnings, list)
    assert "share of the tables" in warnings[0]
