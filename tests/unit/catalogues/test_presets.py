"""The presets catalogue: every preset validates and computes where it is offered, and
the published figures come back out of the calculators."""

from __future__ import annotations

import pytest

import calculators
import published_checks
from calculators.catalogues import preset_entries, presets
from calculators.catalogues.preset_base import Preset
from calculators.catalogues.preset_entries import PRESETS
from calculators.catalogues.presets import get, preset_texts, presets_for
from calculators.core.spec import ValidationError
from calculators.registry import REGISTRY

PAIRS = [(calc, preset) for calc in REGISTRY.values() for preset in presets_for(calc)]
MODELS = [p for p in PRESETS if p.kind == "model"]


def compute_with(calc_id: str, preset_id: str,
                 **extra: object) -> calculators.core.calculator.Result:
    calc = REGISTRY[calc_id]
    return calc.compute({**preset_texts(calc, get(preset_id)), **extra})


def test_catalogue_is_well_formed() -> None:
    ids = [p.id for p in PRESETS]
    assert len(ids) == len(set(ids))
    known_inputs = {param.name for calc in REGISTRY.values() for param in calc.params}
    known_inputs |= {key for keys in presets.INPUT_SOURCES.values() for key in keys.values()}
    for preset in PRESETS:
        assert preset.kind in preset_entries.KINDS
        assert preset.label
        assert preset.source
        # A misspelt name would be silently ignored by every calculator.
        assert set(preset.values) <= known_inputs, preset.id
        assert any(preset in presets_for(calc) for calc in REGISTRY.values()), preset.id


@pytest.mark.parametrize(("calc", "preset"), PAIRS,
                         ids=[f"{c.id}-{p.id}" for c, p in PAIRS])
def test_texts_validate_round_trip_and_compute(calc: calculators.core.calculator.Calculator,
                                               preset: preset_entries.Preset) -> None:
    texts = preset_texts(calc, preset)
    values = presets.assignments(calc, preset)
    assert texts
    assert set(texts) == set(values) <= {p.name for p in calc.params}
    for name, text in texts.items():
        param = calc.param(name)
        assert param.parse(text) == param.parse(values[name]), (name, text)
    tp = next((p.default for p in calc.params if p.name == "tp"), None)
    heads = values.get("heads")
    if isinstance(tp, int) and isinstance(heads, int) and heads % tp:
        # A model whose heads the calculator's default TP cannot split (Qwen2.5 7B's 28
        # heads and the roofline's TP 8): refused by name, not computed wrongly.
        with pytest.raises(calculators.ValidationError, match="tp: "):
            calc.compute(texts)
        return
    result = calc.compute(texts)
    for name in texts:
        assert result.inputs[name] == calc.param(name).parse(values[name])


def test_kinds_show_up_where_they_make_sense() -> None:
    expected = {
        # 6N reads an MoE as its active count and its total, which MoE presets state.
        "training_compute": {"model", "moe_model"}, "model_params": {"model"},
        "model_memory": {"model"}, "mfu": {"model"}, "parallel_plan": {"model", "cluster"},
        "collective_time": {"cluster"}, "incast": {"cluster"}, "ecmp_collisions": {"cluster"},
        "embedding_memory": {"sparse_model"},
        "embedding_sharding": {"sparse_model", "cluster"},
        "sparse_training": {"sparse_model", "cluster"},
        "data_pipeline": {"sparse_model", "cluster"},
        # It asks for the kind of model (dense, MoE or sparse), which each preset sets.
        "cluster_sizing": {"model", "moe_model", "sparse_model", "cluster"},
        # A layer's GEMMs take a dense model's widths; a cluster preset sets only the GPU.
        "roofline": {"model"},
        # MoE calculators take MoE models (a dense preset would leave the experts at
        # their defaults), and the cluster's nodes and links where they use them.
        "moe_params": {"moe_model"}, "moe_step": {"moe_model", "cluster"},
        "expert_load": {"moe_model", "cluster"}, "moe_plan": {"moe_model", "cluster"},
        # Post-training asks for the kind of model; a cluster preset sets only its GPU.
        "rollout": {"model", "moe_model"}, "rl_step": {"model", "moe_model"},
        # Failures scale with the cluster's GPUs, nodes and NICs; a model preset would
        # set only the parameter count behind the checkpoint size.
        "goodput": {"cluster"}, "fabric_sizing": {"cluster"},
        # The recommenders of 2026: a generative recommender takes its own models and
        # the nodes it trains on; the tiers and streaming calculators take the DLRM
        # presets' tables (and nodes where they place them); dynamic tables take none
        # (a fixed table says nothing of how IDs arrive and expire).
        "generative_recommender": {"generative_model", "cluster"},
        "dynamic_tables": set(), "embedding_tiers": {"sparse_model", "cluster"},
        "streaming_training": {"sparse_model", "cluster"},
    }
    assert set(expected) == set(REGISTRY)  # every calculator is covered
    for calc_id, kinds in expected.items():
        offered = presets_for(REGISTRY[calc_id])
        assert {p.kind for p in offered} == kinds, calc_id
        # Where a kind is offered, all of its presets are (none silently missing), except
        # the illustrative 12T model, which publishes no data set for data_pipeline.
        missing = {p.id for p in PRESETS if p.kind in kinds} - {p.id for p in offered}
        assert missing == ({"dlrm_12t_class"} if calc_id == "data_pipeline" else set())


def test_models_and_clusters_compose() -> None:
    # A model preset then a cluster preset (or the reverse) give the same inputs: they
    # fill disjoint inputs. (Dense and sparse models are alternatives, not layers.)
    for calc in REGISTRY.values():
        offered = presets_for(calc)
        for cluster in (p for p in offered if p.kind == "cluster"):
            for model in (p for p in offered if p.kind != "cluster"):
                assert not set(preset_texts(calc, cluster)) & set(preset_texts(calc, model))


def test_input_sources_name_real_inputs() -> None:
    for calc_id, keys in presets.INPUT_SOURCES.items():
        if calc_id in REGISTRY:
            assert set(keys) <= {p.name for p in REGISTRY[calc_id].params}, calc_id


def test_params_override_left_blank_where_counted_from_the_architecture() -> None:
    gpt3 = get("gpt3_175b")
    assert "params" in preset_texts(REGISTRY["training_compute"], gpt3)
    for calc_id in ("model_memory", "mfu"):
        texts = preset_texts(REGISTRY[calc_id], gpt3)
        assert "params" not in texts
        assert "layers" in texts


def test_unknown_preset_is_a_validation_error_naming_preset() -> None:
    with pytest.raises(ValidationError) as caught:
        get("gpt5_10t")
    assert caught.value.input_name == "preset"
    assert "gpt5_10t" in caught.value.message
    assert "llama3_70b" in caught.value.message


# --- published figures, through the calculators ----------------------------------
# Each preset's published figures (GPT-3's 174.6B and 3.14e23 FLOP, Llama 2's and 3's
# checkpoint counts, Llama 3's 3.8e25 FLOP, Criteo's 91.10 GB) are published checks run
# with the preset's values (published_checks: dense, compute, sparse).


@pytest.mark.parametrize("preset", MODELS, ids=[p.id for p in MODELS])
def test_preset_params_agree_with_the_architecture(preset: preset_entries.Preset) -> None:
    # The N a preset gives training_compute is the N its architecture counts to within
    # the paper's rounding (Llama 3 405B: the paper's 405B against 405.85B).
    counted = compute_with("model_params", preset.id).value("params")
    assert isinstance(counted, float)
    assert preset.values["params"] == pytest.approx(counted, rel=3e-3)


@pytest.mark.parametrize("preset_id", ["criteo_kaggle_dlrm", "criteo_1tb_dlrm",
                                       "dlrm_12t_class"])
def test_sparse_training_gets_what_embedding_memory_computes(preset_id: str) -> None:
    memory = compute_with("embedding_memory", preset_id).value("total_bytes")
    texts = preset_texts(REGISTRY["sparse_training"], get(preset_id))
    assert REGISTRY["sparse_training"].param("embedding_bytes").parse(
        texts["embedding_bytes"]) == pytest.approx(memory, rel=1e-12)


def test_trillion_class_model_has_12t_parameters_and_clears_a_table_list() -> None:
    # Mudigere et al. 2022 (Neo/ZionEX), abstract: 12-trillion-parameter DLRMs.
    calc = REGISTRY["embedding_memory"]
    texts = preset_texts(calc, get("dlrm_12t_class"))
    assert calc.param("tables").parse(texts["tables"]) is None
    after_criteo = calc.compute({**preset_texts(calc, get("criteo_1tb_dlrm")), **texts})
    alone = published_checks.get("dlrm-12t-params")  # the preset alone gives 12.0T
    assert after_criteo.value("embedding_params") == alone.published


def test_dlrm_dense_parameters_from_the_published_layer_sizes() -> None:
    # dlrm_s_criteo_kaggle.sh: bottom 13-512-256-64-16; top 512-256-1 over the
    # 27 x 26 / 2 = 351 dot products plus the 16-wide dense vector (367 inputs).
    bottom = 13 * 512 + 512 + 512 * 256 + 256 + 256 * 64 + 64 + 64 * 16 + 16
    top = 367 * 512 + 512 + 512 * 256 + 256 + 256 + 1
    assert get("criteo_kaggle_dlrm").values["dense_params"] == bottom + top


@pytest.mark.parametrize(
    ("preset_id", "nvlink", "per_gpu_nic", "port"),
    [
        # DGX A100: NVLink 3 600 GB/s per GPU (300 each way), 8 x HDR 200 Gb/s = 25 GB/s.
        ("dgx_a100_8nic", 300e9, 25e9, 25e9),
        ("dgx_a100_4nic", 300e9, 12.5e9, 25e9),
        # DGX H100: NVLink 4 900 GB/s per GPU (450 each way), 8 x NDR 400 Gb/s = 50 GB/s.
        ("dgx_h100_8nic", 450e9, 50e9, 50e9),
        ("dgx_h100_4nic", 450e9, 25e9, 50e9),
    ],
)
def test_node_bandwidths_per_gpu_and_per_port(preset_id: str, nvlink: float,
                                              per_gpu_nic: float, port: float) -> None:
    coll = compute_with("collective_time", preset_id).inputs
    assert (coll["intra_node_bandwidth"], coll["inter_node_bandwidth"]) == (nvlink, per_gpu_nic)
    shard = compute_with("embedding_sharding", preset_id).inputs
    assert (shard["scale_up_bandwidth"], shard["nic_bandwidth"]) == (nvlink, per_gpu_nic)
    assert compute_with("incast", preset_id).inputs["sender_link_bandwidth"] == port
    assert compute_with("ecmp_collisions", preset_id).inputs["uplink_bandwidth"] == port


@pytest.mark.parametrize("preset_id", ["dgx_a100_4nic", "dgx_h100_8nic"])
def test_cluster_sizing_reads_nic_bandwidth_per_port(preset_id: str) -> None:
    # cluster_sizing's nic_bandwidth is per port (with nics_per_node); the sparse
    # calculators' is per GPU. Both must describe the same per-GPU share.
    if "cluster_sizing" not in REGISTRY:
        pytest.skip("no cluster_sizing calculator")
    preset = get(preset_id)
    sizing = compute_with("cluster_sizing", preset_id).inputs
    per_gpu = compute_with("sparse_training", preset_id).inputs["nic_bandwidth"]
    assert sizing["nic_bandwidth"] == preset.values["nic_port_bandwidth"]
    share = sizing.whole("nics_per_node") * sizing.num("nic_bandwidth")
    assert share / sizing.whole("gpus_per_node") == per_gpu


def test_a_moe_preset_gives_training_compute_its_active_and_total_counts() -> None:
    # DeepSeek-V3 Technical Report: 671B total, 37B activated per token, 14.8T tokens;
    # MLA's query/key heads are 128 + 64 wide (Sec. 2.1.1).
    calc = REGISTRY["training_compute"]
    preset = presets.get("deepseek_v3")
    texts = presets.preset_texts(calc, preset)
    assert texts["head_dim"] == str(preset.values["qk_nope_head_dim"]
                                    + preset.values["qk_rope_head_dim"])
    assert texts["v_head_dim"] == str(preset.values["v_head_dim"])
    result = calc.compute(texts)
    active = published_checks.get("deepseek-v3-active").published
    total = published_checks.get("deepseek-v3-total").published
    assert result.inputs["params"] == pytest.approx(active, rel=0.02)
    assert result.inputs["total_params"] == pytest.approx(total, rel=0.001)
    assert result.inputs["tokens"] == preset.values["tokens"]
    # N in 6N is what moe_params counts as the active matrix parameters.
    moe = calculators.compute("moe_params", **presets.preset_texts(
        REGISTRY["moe_params"], preset))
    assert result.value("flop_params") == moe.value("active_compute_params")
    # A dense preset afterwards clears the total and the separate value head size.
    dense = presets.preset_texts(calc, presets.get("llama3_70b"))
    assert dense["total_params"] == ""
    assert dense["v_head_dim"] == ""


def test_an_imported_moe_config_is_not_offered_where_only_counts_are_read() -> None:
    # A config.json states the architecture, not the active and total counts that
    # training_compute reads, so the import refuses rather than leave stale counts.
    moe_import = Preset("imported", "imported", "moe_model",
                        {"layers": 61, "hidden": 7168, "heads": 128}, "a config.json")
    assert presets.applicable(REGISTRY["training_compute"], (moe_import,)) == ()
    assert presets.applicable(REGISTRY["moe_params"], (moe_import,)) == (moe_import,)
