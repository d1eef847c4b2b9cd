"""The mixture-of-experts calculators (moe_params, moe_step, expert_load) and the MoE
side of training_compute: presets against the released checkpoints and papers, CLI and
API agreement, and a named validation error for every rule that spans inputs."""

from __future__ import annotations

import json

import pytest

import calculators
from calculators.catalogues import moe_models, preset_entries, presets
from calculators.core.cli import main
from calculators.core.spec import ValidationError
from calculators.formulas.moe import architecture as moe
from calculators.formulas.moe import step_costs as step

MOE_CALCS = ("moe_params", "moe_step", "expert_load")
MOE_PRESETS = [p for p in preset_entries.PRESETS if p.kind == "moe_model"]


def with_preset(calc_id: str, preset_id: str,
                **extra: object) -> calculators.core.calculator.Result:
    calc = calculators.REGISTRY[calc_id]
    return calc.compute({**presets.preset_texts(calc, presets.get(preset_id)), **extra})


# --- presets against the releases ------------------------------------------------------


@pytest.mark.parametrize("preset", MOE_PRESETS, ids=[p.id for p in MOE_PRESETS])
def test_presets_are_the_catalogue_entries(preset: preset_entries.Preset) -> None:
    # One source of truth: the preset fills the inputs from catalogues.moe_models.
    arch = moe_models.get(preset.id).architecture
    result = with_preset("moe_params", preset.id)
    assert result.value("total_params") == moe.total_params(arch)
    assert result.value("active_params") == moe.active_params(arch)
    assert result.value("active_compute_params") == moe.active_matmul_params(arch)


def test_moe_presets_go_only_where_experts_or_active_counts_are_read() -> None:
    for calc in calculators.REGISTRY.values():
        offered = {p.kind for p in presets.presets_for(calc)}
        has_experts = any(p.name == presets.MOE_MARKER for p in calc.params)
        reads_counts = any(p.name == presets.COUNTS_MARKER for p in calc.params)
        asks_kind = any(p.name == "model_kind" for p in calc.params)
        assert ("moe_model" in offered) == (has_experts or reads_counts), calc.id
        # A calculator that asks the kind of model takes both (each preset sets it).
        assert not (has_experts and "model" in offered) or asks_kind, calc.id
    for calc_id in MOE_CALCS:
        ids = {p.id for p in presets.presets_for(calculators.REGISTRY[calc_id])}
        assert {p.id for p in MOE_PRESETS} <= ids


def test_switching_presets_leaves_nothing_of_the_previous_model() -> None:
    calc = calculators.REGISTRY["moe_params"]
    v3 = presets.preset_texts(calc, presets.get("deepseek_v3"))
    mixtral = presets.preset_texts(calc, presets.get("mixtral_8x7b"))
    assert set(v3) == set(mixtral) == {p.name for p in calc.params}
    direct = calc.compute(mixtral)
    after = calc.compute({**v3, **mixtral})
    assert after.to_dict() == direct.to_dict()


def test_expert_groups_must_divide_the_experts() -> None:
    # DeepSeek-V3's 8 groups do not split one expert: the error names the input to change.
    with pytest.raises(ValidationError, match="expert_groups: 8 expert groups do not divide"):
        calculators.compute("moe_params", routed_experts=1, experts_per_token=1)
    with pytest.raises(ValidationError, match="groups_per_token: 1 groups of 32 experts"):
        calculators.compute("moe_params", groups_per_token=1, experts_per_token=40)


def test_one_expert_of_one_is_the_dense_count_of_model_params() -> None:
    # Llama 2 7B (released checkpoint: 6,738,415,616) counted by both calculators.
    dense = calculators.compute("model_params", **presets.preset_texts(
        calculators.REGISTRY["model_params"], presets.get("llama2_7b")))
    as_moe = calculators.compute(
        "moe_params", layers=32, hidden=4096, vocab=32000, attention="gqa", heads=32,
        kv_heads=32, head_dim=128, routed_experts=1, experts_per_token=1,
        expert_ffn=11008, shared_experts=0, dense_layers=0, router_bias=False,
        mtp_modules=0, expert_groups=1, groups_per_token=1)
    # The count itself is a published check (published_checks.dense: llama2-7b-params).
    assert as_moe.value("total_params") == dense.value("params")
    assert as_moe.value("active_params") == as_moe.value("total_params")
    assert any("dense model" in note for note in as_moe.computed.notes)


# --- CLI and API agree -------------------------------------------------------------------


@pytest.mark.parametrize("calc_id", MOE_CALCS)
@pytest.mark.parametrize("preset_id", [p.id for p in MOE_PRESETS])
def test_cli_and_api_agree_on_every_moe_preset(calc_id: str, preset_id: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main([calc_id, "--preset", preset_id, "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli == with_preset(calc_id, preset_id).to_dict()


# --- moe_step -----------------------------------------------------------------------


def test_moe_step_deepseek_layout() -> None:
    # DeepSeek-V3 report, Sec. 3.2: 2,048 GPUs, PP 16, EP 64, ZeRO-1, no TP: 4 routed
    # experts per GPU per layer, each replicated twice (2,048 / (64 x 16)).
    result = with_preset("moe_step", "deepseek_v3")
    assert result.value("experts_per_gpu") == 4
    assert result.value("expert_data_parallel") == 2
    # Weights: (654B routed / (64 x 16) + 17B rest / 16) x 2 B = 3.42 GB, a derived check
    # (published_checks.moe: deepseek-v3-weights-per-gpu).
    ratio = result.value("alltoall_to_allreduce_bytes")
    assert isinstance(ratio, float)
    assert ratio > 50


def test_overlap_hides_the_alltoall_behind_compute() -> None:
    plain = calculators.compute("moe_step")
    hidden = calculators.compute("moe_step", overlap=1)
    assert plain.value("exposed_alltoall_time") == plain.value("alltoall_time")
    assert hidden.value("exposed_alltoall_time") == 0.0
    assert hidden.value("step_time") == hidden.value("compute_time")


def test_per_node_dispatch_and_node_limit_cut_the_network_bytes() -> None:
    direct = calculators.compute("moe_step", dispatch="direct")
    # Without the router's groups nothing bounds the nodes a token reaches.
    free = calculators.compute("moe_step", expert_groups=1, groups_per_token=1)
    limited = calculators.compute("moe_step")
    values = [r.value("alltoall_inter_node_bytes") for r in (direct, free, limited)]
    assert values[0] > values[1] > values[2]
    assert values[2] / values[0] == pytest.approx(
        step.per_node_copies(256, 64, 8, 8, 4).inter_node / 7)


def test_full_recompute_keeps_layer_inputs_and_costs_a_forward() -> None:
    plain = calculators.compute("moe_step")
    recomputed = calculators.compute("moe_step", full_recompute=True)
    assert recomputed.value("activations_bytes") == pytest.approx(2 * 7168 * 61 * 4096)
    assert recomputed.value("compute_time") == pytest.approx(
        plain.value("compute_time") * 4 / 3)


# --- expert_load ---------------------------------------------------------------------


def test_capacity_pads_and_drops_dropless_makes_a_hot_receiver() -> None:
    skewed = {"load_cv": 0.5}
    dropless = calculators.compute("expert_load", **skewed)
    capped = calculators.compute("expert_load", capacity_factor=1.25, **skewed)
    balanced = dropless.value("balanced_dispatch_time")
    assert isinstance(balanced, float)
    # Capacity 1.25: every buffer padded to 1.25x, no hot receiver, some tokens dropped.
    assert capped.value("dispatch_time") == pytest.approx(1.25 * balanced)
    assert capped.value("peak_queue_bytes") == 0.0
    dropped = capped.value("dropped_fraction")
    assert isinstance(dropped, float)
    assert 0 < dropped < 0.2
    # Dropless: the busiest GPU's load sets the time, and its tail is an incast of the 56
    # off-node GPUs of the EP group (64 - 8).
    hot = dropless.value("busiest_gpu_load")
    assert dropless.value("dispatch_time") == pytest.approx(hot * balanced)
    assert dropless.value("incast_senders") == 56
    assert dropless.value("peak_queue_bytes") == 1e6  # the buffer fills
    assert dropless.value("dropped_fraction") == 0.0


def test_expert_load_default_is_the_uniform_routing_floor() -> None:
    result = calculators.compute("expert_load")
    # 4,096 tokens x 64 GPUs x top-8 over 256 experts: 8,192 per expert, cv 1.1%.
    assert result.value("mean_load_tokens") == 8192
    assert result.value("load_cv") == pytest.approx((255 / 256 / 8192) ** 0.5)


def test_one_node_ep_group_has_no_network_incast() -> None:
    result = calculators.compute("expert_load", ep=8, load_cv=0.5)
    assert result.value("incast_senders") == 0
    assert result.value("dispatch_time") is None
    assert any("NVLink" in note for note in result.computed.notes)


# --- training_compute: N is the active count ----------------------------------------------


def test_deepseek_v3_gpu_hours_and_the_mfu_they_imply() -> None:
    # DeepSeek-V3 report, Table 1: 2,664K H800 GPU-hours of pre-training on 14.8T tokens
    # (2.788M with context extension and post-training). With N = 37B active, those hours
    # imply 34.6% of the H800's dense BF16 peak (the H100's 989.4 TFLOP/s) and 17.3% of
    # its FP8 peak; with the total, 671B, an impossible 628%. Derived, not published.
    run = {"params": "37B", "total_params": "671B", "tokens": "14.8T", "gpu": "h100_sxm",
           "num_gpus": 2048, "reported_gpu_hours": 2_664_000, "goodput": 1}
    bf16 = calculators.compute("training_compute", **run)
    fp8 = calculators.compute("training_compute", peak_precision="fp8", **run)
    # 34.6% and 17.3% are derived checks (published_checks.compute: deepseek-v3-implied-*).
    assert bf16.value("implied_mfu") == pytest.approx(
        6 * 37e9 * 14.8e12 / (2_664_000 * 3600 * 989.4e12))
    assert fp8.value("implied_mfu") == pytest.approx(
        float(bf16.value("implied_mfu")) * 989.4 / 1978.9)  # type: ignore[arg-type]
    assert bf16.value("active_share") == pytest.approx(37 / 671)
    assert any("active count" in note for note in bf16.computed.notes)
    total = calculators.compute("training_compute", **{**run, "params": "671B",
                                                       "total_params": ""})
    assert total.value("gpu_hours") == pytest.approx(bf16.value("gpu_hours") * 671 / 37)
    assert any("mixture of experts" in w for w in total.computed.warnings)


# --- cross-field rules name their input ------------------------------------------------


@pytest.mark.parametrize(
    ("calc_id", "inputs", "named"),
    [
        ("moe_params", {"experts_per_token": 300}, "experts_per_token"),
        ("moe_params", {"dense_layers": 62}, "dense_layers"),
        ("moe_params", {"attention": "gqa", "kv_heads": 5}, "kv_heads"),
        ("moe_params", {"attention": "gqa", "heads": 100}, "heads"),
        ("moe_params", {"kv_lora_rank": ""}, "kv_lora_rank"),
        ("moe_params", {"v_head_dim": ""}, "v_head_dim"),
        ("moe_step", {"ep": 48}, "ep"),
        ("moe_step", {"ep": 128, "num_gpus": 1024}, "ep"),
        ("moe_step", {"attention": "gqa", "kv_heads": 3}, "kv_heads"),
        ("moe_step", {"ep": 32, "gpus_per_node": 12}, "ep"),
        ("moe_step", {"pp": 62}, "pp"),
        ("moe_step", {"num_gpus": 2040}, "num_gpus"),
        ("moe_step", {"global_batch": 15361}, "global_batch"),
        ("moe_step", {"routed_experts": 16, "experts_per_token": 9, "ep": 16,
                      "expert_groups": 1, "max_nodes_per_token": 1}, "max_nodes_per_token"),
        ("moe_step", {"routed_experts": 16, "experts_per_token": 9, "ep": 16},
         "groups_per_token"),
        ("expert_load", {"experts_per_token": 300}, "experts_per_token"),
        ("expert_load", {"ep": 48}, "ep"),
        ("expert_load", {"ep": 32, "gpus_per_node": 12}, "ep"),
        ("training_compute", {"params": "37B", "total_params": "36B"}, "total_params"),
    ],
)
def test_cross_field_errors_name_the_input(calc_id: str, inputs: dict[str, object],
                                           named: str) -> None:
    with pytest.raises(ValidationError) as caught:
        calculators.compute(calc_id, **inputs)
    assert caught.value.input_name == named
