"""The KV cache per token (DeepSeek-V2, Table 1) and the assumed response lengths."""

from __future__ import annotations

import math

import pytest

from calculators.formulas.rl import kv_cache, lengths


def test_kv_elements_follow_deepseek_v2_table_1() -> None:
    # MHA 2 n_h d_h; GQA 2 n_g d_h; MLA d_c + d_h^R.
    assert kv_cache.elements_per_token_layer("mha", kv_heads=64, head_dim=128,
                                             kv_lora_rank=0, rope_dim=0) == 2 * 64 * 128
    assert kv_cache.elements_per_token_layer("gqa", kv_heads=8, head_dim=128,
                                             kv_lora_rank=0, rope_dim=0) == 2048
    assert kv_cache.elements_per_token_layer("mla", kv_heads=0, head_dim=0,
                                             kv_lora_rank=512, rope_dim=64) == 576


@pytest.mark.parametrize(("attention", "kv_heads", "tp", "split"), [
    ("gqa", 8, 4, 4), ("gqa", 8, 8, 8), ("gqa", 8, 16, 8), ("mha", 64, 8, 8),
    ("mla", 1, 8, 1)])
def test_tensor_parallelism_splits_the_cache_at_most_by_its_kv_heads(
        attention: str, kv_heads: int, tp: int, split: int) -> None:
    assert kv_cache.ways_split(attention, kv_heads, tp) == split


def test_mla_decodes_in_the_absorbed_form() -> None:
    # DeepSeek-V3: 128 heads, scores over 576, values over 512, 61 layers.
    flops = kv_cache.attention_flops_per_cached_token(
        "mla", heads=128, head_dim=0, kv_lora_rank=512, rope_dim=64, layers=61)
    assert flops == 2 * 128 * (576 + 512) * 61
    assert kv_cache.attention_flops_per_cached_token(
        "gqa", heads=64, head_dim=128, kv_lora_rank=0, rope_dim=0, layers=80) == 4 * 64 * 128 * 80


@pytest.mark.parametrize(("mean", "cap"), [(701, 1536), (5698, 8192), (3203, 4096),
                                           (31599, 131072), (1000, 1000)])
def test_lengths_have_the_given_mean_and_stay_under_the_cap(mean: float, cap: int) -> None:
    sample = lengths.quantile_lengths(20_000, mean, cap)
    assert max(sample) <= cap
    assert min(sample) >= 1
    assert math.fsum(sample) / len(sample) == pytest.approx(mean, rel=0.01)
    assert sample == sorted(sample)


def test_a_mean_at_the_cap_puts_every_response_at_the_cap() -> None:
    assert set(lengths.quantile_lengths(100, 512, 512)) == {512}
    assert lengths.share_at_cap(512, 512) == 1.0


def test_a_small_mean_leaves_a_long_tail() -> None:
    # The SWE agent's 0.24 of the cap: few responses near the cap, many short ones.
    assert lengths.share_at_cap(31599, 131072) < 0.02
    assert lengths.share_at_cap(5698, 8192) > 0.1


def test_a_mean_above_the_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="mean length"):
        lengths.shape_exponent(2000, 1000)
