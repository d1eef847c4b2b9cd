"""MoE formulas and catalogue against released checkpoints and papers; alltoall, capacity
and memory-split formulas against their definitions and DeepSeek-V3's stated facts."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators
import published_checks
from calculators.catalogues import moe_models
from calculators.catalogues.moe_models import (
    DEEPSEEK_V3,
    DEEPSEEK_V3_TRAINING,
    MIXTRAL_8X7B,
)
from calculators.formulas.moe import architecture as moe
from calculators.formulas.moe import expert_parallel as ep
from calculators.formulas.moe.shape import GroupedQueryAttention, LatentAttention, MoeArchitecture
from published_checks.moe import DEEPSEEK_V2, DEEPSEEK_V2_LITE

V3 = DEEPSEEK_V3.architecture
ENTRIES = list(moe_models.MOE_MODELS.values())

# Llama 2 7B (Touvron et al. 2023, Table 1; meta-llama/Llama-2-7b-hf config): 32 layers,
# 4,096 wide, 32 heads, SwiGLU 11,008, vocabulary 32,000, untied, RMSNorm, RoPE.
LLAMA2_7B_AS_MOE = MoeArchitecture(
    layers=32, hidden=4096, vocab=32000,
    attention=GroupedQueryAttention(heads=32, kv_heads=32, head_dim=128),
    routed_experts=1, experts_per_token=1, expert_ffn=11008,
)


# --- released checkpoints ---------------------------------------------------------------


@pytest.mark.parametrize(("arch", "key"), [(DEEPSEEK_V2, "deepseek-v2"),
                                         (DEEPSEEK_V2_LITE, "deepseek-v2-lite")])
def test_deepseek_v2_counts_and_their_active_convention(arch: MoeArchitecture, key: str) -> None:
    # DeepSeek-AI 2024, DeepSeek-V2: the totals and active counts to the printed digit are
    # published checks (published_checks.moe: deepseek-v2-*), computed by moe_params.
    # Active counts: V2-Lite's 2.4B is met without the input table (2.45B) and missed
    # with it (2.66B), the same convention as V3's 37B.
    total = published_checks.get(f"{key}-total").published
    active = published_checks.get(f"{key}-active").published
    assert moe.total_params(arch) == pytest.approx(total, rel=5e-3)
    assert abs(moe.active_params(arch) - active) > abs(moe.active_matmul_params(arch) - active)


@pytest.mark.parametrize("entry", ENTRIES, ids=list(moe_models.MOE_MODELS))
def test_catalogue_totals_match_their_own_published_figures(entry: moe_models.MoeModel) -> None:
    # Each entry's stated totals, to the precision they are printed (active: 3%, because
    # DeepSeek's "37B" is 1.5% under our 37.55B; see the DeepSeek test above).
    assert moe.total_params(entry.architecture) == pytest.approx(entry.published_total_params,
                                                                 rel=5e-3)
    if entry.name == "Qwen3-Next-80B-A3B":
        # "A3B" is a name, not a count: 3.25B without the tables, 3.87B with them.
        assert 3e9 < moe.active_matmul_params(entry.architecture) < 3.6e9
        return
    # Authors count active parameters with the input table (Mistral) or without it
    # (DeepSeek, gpt-oss): one of the two conventions gives the stated figure.
    counts = (moe.active_params(entry.architecture),
              moe.active_matmul_params(entry.architecture))
    assert any(n == pytest.approx(entry.published_active_params, rel=0.03) for n in counts)


# --- the dense case -------------------------------------------------------------------


def test_one_expert_of_one_is_llama2_7b_exactly() -> None:
    # Touvron et al. 2023 (Llama 2), Table 1: the 7B checkpoint's 6,738,415,616 is a
    # published check (published_checks.moe: llama2-7b-as-one-expert); as an expert or as
    # dense layers, every weight is active and the count is the same.
    total = moe.total_params(LLAMA2_7B_AS_MOE)
    assert total == published_checks.get("llama2-7b-as-one-expert").published
    assert moe.active_params(LLAMA2_7B_AS_MOE) == total
    as_dense_layers = replace(LLAMA2_7B_AS_MOE, dense_layers=32, dense_ffn=11008)
    assert moe.total_params(as_dense_layers) == total


@given(layers=st.integers(1, 64), heads=st.sampled_from([1, 2, 4, 8]),
       head_dim=st.integers(1, 64), ffn=st.integers(1, 512), vocab=st.integers(1, 5000),
       gated=st.booleans(), biases=st.booleans(), tied=st.booleans())
def test_dense_layers_and_one_of_one_experts_agree(
    *, layers: int, heads: int, head_dim: int, ffn: int, vocab: int, gated: bool,
    biases: bool, tied: bool,
) -> None:
    one_of_one = MoeArchitecture(
        layers=layers, hidden=heads * head_dim, vocab=vocab,
        attention=GroupedQueryAttention(heads, heads, head_dim), routed_experts=1,
        experts_per_token=1, expert_ffn=ffn, gated_mlp=gated, biases=biases,
        tied_embeddings=tied,
    )
    all_dense = replace(one_of_one, dense_layers=layers, dense_ffn=ffn)
    assert moe.total_params(one_of_one) == moe.total_params(all_dense)
    assert moe.active_params(one_of_one) == moe.total_params(one_of_one)


@given(experts=st.integers(2, 64), data=st.data())
def test_active_never_exceeds_total(experts: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(1, experts))
    arch = replace(MIXTRAL_8X7B.architecture, routed_experts=experts, experts_per_token=k)
    assert moe.active_params(arch) <= moe.total_params(arch)
    assert (moe.active_params(arch) == moe.total_params(arch)) == (k == experts)


# --- FLOPs ----------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES, ids=list(moe_models.MOE_MODELS))
def test_router_flops_are_under_half_a_percent(entry: moe_models.MoeModel) -> None:
    # Router: 2 h E forward per MoE layer against ~2 N_active: E is tiny next to 3 h f_e.
    arch = entry.architecture
    share = moe.router_flops_per_token(arch) / (2 * moe.active_matmul_params(arch))
    # E / (3 f_e (k + s)) of the FFN work: under 0.5% but for the finest-grained experts
    # (Qwen3-Next: 512 experts of 512, 1.4% of the whole).
    bound = arch.routed_experts / (3 * arch.expert_ffn * (arch.experts_per_token
                                                           + arch.shared_experts))
    assert 0 < share < max(0.005, bound)


def test_mtp_adds_its_block_and_a_second_head_pass() -> None:
    # DeepSeek-V3 Sec. 2.2: one extra block, M_k and the shared head run once more per token.
    extra = moe.training_flops_per_token(V3, include_mtp=True) - moe.training_flops_per_token(V3)
    block = moe.moe_layer_active_params(V3)
    assert extra == pytest.approx(6 * (block + 2 * V3.hidden**2 + V3.vocab * V3.hidden),
                                  rel=1e-4)
    # In every count of model FLOPs per token (the 4.4% it adds is the check
    # deepseek-v3-mtp-flops).
    assert moe.flop_params(V3) * 6 == moe.training_flops_per_token(V3, include_mtp=True)


def test_moe_params_counts_the_mtp_pass_in_training_flops() -> None:
    # Before issue 32 the calculator's 6 N_active left the MTP module out.
    result = calculators.compute("moe_params")  # DeepSeek-V3 by default
    assert result.value("training_flops_per_token") == pytest.approx(
        moe.training_flops_per_token(V3, include_mtp=True))
    assert any("4.4%" in note for note in result.computed.notes)


# --- alltoall ----------------------------------------------------------------------------


def test_deepseek_v3_ep_group_off_node_share_by_enumeration() -> None:
    # Sec. 4.2: each layer's routed experts sit on 64 GPUs of 8 nodes (8 GPUs per node).
    setup = DEEPSEEK_V3_TRAINING
    node_of = [gpu // setup.gpus_per_node for gpu in range(setup.expert_parallel)]
    off = sum(node_of[src] != node_of[dst] for src in range(64) for dst in range(64)) / 64**2
    assert ep.off_node_fraction(setup.expert_parallel, setup.gpus_per_node) == off == 7 / 8
    assert ep.off_node_fraction(8, 8) == 0.0


def test_deepseek_v3_config_matches_node_limited_routing() -> None:
    # config.json n_group 8 / topk_group 4 are the report's 8 nodes per EP group and M = 4.
    setup = DEEPSEEK_V3_TRAINING
    assert V3.expert_groups == setup.expert_parallel // setup.gpus_per_node
    assert V3.groups_per_token == setup.max_nodes_per_token


def test_node_limited_routing_bounds_ib_bytes() -> None:
    # FP8 dispatch (Sec. 3.3.3), h = 7,168, top-8, M = 4: at most 4 x 7,168 B leave a node
    # per token, against 8 x 7/8 copies without the limit and per-node deduplication.
    h, setup = V3.hidden, DEEPSEEK_V3_TRAINING
    bound = ep.node_limited_bytes_bound(h, setup.max_nodes_per_token, ep.FP8_BYTES)
    naive = ep.cross_node_bytes_per_token(h, 8, ep.FP8_BYTES, 64, 8)
    assert bound == 4 * 7168
    assert naive == 7 * 7168
    dedup = ep.deduplicated_cross_node_bytes_per_token(h, 256, 8, 8, ep.FP8_BYTES)
    assert bound < dedup < naive


def test_expected_nodes_per_token_against_sampling() -> None:
    # Uniform top-8 of 256 experts on 8 nodes, drawn 20,000 times: the closed form must
    # agree within 1% (sampling error about 0.3%).
    rng = random.Random(20241227)
    draws = [len({e // 32 for e in rng.sample(range(256), 8)}) for _ in range(20_000)]
    assert ep.expected_nodes_per_token(256, 8, 8) == pytest.approx(sum(draws) / len(draws),
                                                                   rel=0.01)


def test_four_alltoalls_per_step_and_fp8_dispatch_saving() -> None:
    # One MoE layer, one step, one token: top-8 x 7,168 x (1 + 2 + 1 + 2) bytes with FP8
    # dispatch and BF16 combine, a quarter less than BF16 throughout (4 x 2 bytes).
    assert ep.ALLTOALLS_PER_MOE_LAYER_PER_STEP == 4
    fp8 = ep.step_alltoall_bytes_per_token(7168, 8, DEEPSEEK_V3_TRAINING.precision)
    bf16 = ep.step_alltoall_bytes_per_token(7168, 8, ep.AlltoallPrecision())
    assert fp8 == 8 * 7168 * 6
    assert fp8 / bf16 == pytest.approx(0.75)
    assert ep.alltoall_bytes_per_token(7168, 8, ep.BF16_BYTES) == 2 * ep.alltoall_bytes_per_token(
        7168, 8, ep.FP8_BYTES)


# --- capacity and dropped tokens ------------------------------------------------------


def test_switch_capacity_definition() -> None:
    # Fedus et al. 2021, Sec. 2.2 / Fig. 3: 6 tokens, 3 experts: capacity 2 at factor 1.0,
    # 3 at factor 1.5; loads (3, 2, 1) at capacity 2 overflow one token of six.
    assert ep.expert_capacity_tokens(6, 3, 1.0) == 2
    assert ep.expert_capacity_tokens(6, 3, 1.5) == 3
    assert ep.dropped_fraction([3, 2, 1], 2) == pytest.approx(1 / 6)
    assert ep.expert_capacity_tokens(6, 3, 1.0, top_k=2) == 4


def _binomial_dropped_fraction(tokens: int, experts: int, factor: float) -> float:
    p, capacity, mean = 1 / experts, tokens / experts * factor, tokens / experts
    total = 0.0
    for x in range(math.ceil(capacity), tokens + 1):
        log_pmf = (math.lgamma(tokens + 1) - math.lgamma(x + 1) - math.lgamma(tokens - x + 1)
                   + x * math.log(p) + (tokens - x) * math.log1p(-p))
        total += math.exp(log_pmf) * (x - capacity)
    return total / mean


@pytest.mark.parametrize(("tokens", "experts"), [(4096, 64), (16384, 8), (1024, 128)])
def test_normal_drop_model_matches_exact_binomial_at_factor_one(tokens: int, experts: int) -> None:
    # Uniform routing: exact binomial expectation vs the normal model with the binomial cv.
    # At capacity factor 1 the two agree within 1.1% here; 2% tolerance.
    cv = ep.uniform_routing_load_cv(tokens, experts)
    exact = _binomial_dropped_fraction(tokens, experts, 1.0)
    assert ep.expected_dropped_fraction(1.0, cv) == pytest.approx(exact, rel=0.02)


@given(cv=st.floats(0.0, 2.0), low=st.floats(0.05, 3.0), high=st.floats(0.05, 3.0))
def test_drops_fall_as_capacity_grows(cv: float, low: float, high: float) -> None:
    low, high = min(low, high), max(low, high)
    d_low, d_high = (ep.expected_dropped_fraction(f, cv) for f in (low, high))
    assert 0.0 <= d_high <= d_low + 1e-12 <= 1.0 + 1e-12


# --- memory split ---------------------------------------------------------------------


def test_deepseek_v3_layout_groups() -> None:
    # Sec. 3.2: 2,048 GPUs, PP 16, EP 64, no TP: DP 128 for the rest, EDP 2 for experts.
    setup = DEEPSEEK_V3_TRAINING
    layout = ep.MoeParallelLayout(setup.gpus, pipeline_parallel=setup.pipeline_parallel,
                                  expert_parallel=setup.expert_parallel)
    assert (layout.data_parallel, layout.expert_data_parallel) == (
        setup.gpus // setup.pipeline_parallel,
        setup.gpus // (setup.pipeline_parallel * setup.expert_parallel))
    # 256 experts over EP 64: 4 per GPU per layer, as Sec. 4.2 deploys them.
    per_gpu = ep.expert_params_per_gpu(V3, layout) * setup.pipeline_parallel
    assert per_gpu == pytest.approx(V3.moe_layers * 4 * moe.expert_params(V3))


@given(tp=st.sampled_from([1, 2, 4]), pp=st.sampled_from([1, 2, 4]),
       ep_size=st.sampled_from([1, 2, 4, 8]), zero=st.sampled_from([0, 1, 2, 3]))
def test_model_states_are_conserved_over_the_cluster(tp: int, pp: int, ep_size: int,
                                                     zero: int) -> None:
    # Every parameter's optimizer state is held once per replica group: summed over all
    # GPUs, sharded states equal K x total parameters, unsharded ones K x copies.
    arch = MIXTRAL_8X7B.architecture
    layout = ep.MoeParallelLayout(64, tensor_parallel=tp, pipeline_parallel=pp,
                                  expert_parallel=ep_size)
    states = ep.model_state_bytes_per_gpu(arch, layout, zero_stage=zero)
    experts = moe.routed_expert_params_total(arch)
    rest = moe.total_params(arch) - experts
    copies = experts * layout.expert_data_parallel + rest * layout.data_parallel
    optimizer = moe.total_params(arch) if zero >= 1 else copies
    assert states.optimizer * 64 == pytest.approx(12 * optimizer, rel=1e-12)
    weights = moe.total_params(arch) if zero >= 3 else copies
    assert states.weights * 64 == pytest.approx(2 * weights, rel=1e-12)


def test_deepseek_v3_active_ffn_width_equals_its_dense_layers() -> None:
    # config.json: 8 routed + 1 shared experts of 2,048 = the dense layers' 18,432 (the
    # width itself is a published check, published_checks.moe).
    assert ep.active_ffn_width(V3) == V3.dense_ffn


# --- bad inputs -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: GroupedQueryAttention(heads=32, kv_heads=5, head_dim=128),
        lambda: replace(MIXTRAL_8X7B.architecture, experts_per_token=9),
        lambda: replace(MIXTRAL_8X7B.architecture, dense_layers=33, dense_ffn=1),
        lambda: replace(MIXTRAL_8X7B.architecture, dense_layers=2, dense_ffn=0),
        lambda: replace(V3, expert_groups=64, groups_per_token=1),  # 4 experts < top-8
        lambda: replace(V3, expert_groups=7),
        lambda: replace(V3, biases=True),
        lambda: LatentAttention(128, -1, 512, 128, 64, 128),
        lambda: ep.off_node_fraction(12, 8),
        lambda: ep.MoeParallelLayout(64, tensor_parallel=3),
        lambda: ep.expected_dropped_fraction(0.0, 0.1),
        lambda: ep.expected_nodes_per_token(256, 3, 8),
        lambda: ep.model_state_bytes_per_gpu(V3, ep.MoeParallelLayout(8), zero_stage=4),
        lambda: moe.attention_score_flops_per_token(V3, 0),
        lambda: moe_models.get("gpt-5"),
    ],
)
def test_impossible_arguments_raise_value_error(make: object) -> None:
    assert callable(make)
    with pytest.raises(ValueError):  # noqa: PT011 - one error type, messages vary
        make()
