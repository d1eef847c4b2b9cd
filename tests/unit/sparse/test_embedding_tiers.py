"""embedding_tiers: nested tiers, placement, utilisation as bytes over bandwidth, the
binding tier and the throughput it allows, warnings and bad input."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.formulas.sparse.tiers import (
    Storage,
    ios_per_row,
    place_rows,
    tier_hit_shares,
    tier_plan,
)
from calculators.formulas.sparse.zipf import Zipf

if TYPE_CHECKING:
    from calculators.core.calculator import Result

STORAGE = Storage(hbm_rows=1e6, dram_rows=1e7, ssd_rows=1e9, hbm_bandwidth=1e13,
                  link_bandwidth=1e11, dram_bandwidth=2e11, ssd_read_bandwidth=1e10,
                  ssd_read_iops=1e6, ssd_write_bandwidth=5e9)


def compute(**inputs: object) -> Result:
    return calculators.compute("embedding_tiers", **inputs)


def num(result: Result, name: str) -> float:
    value = result.value(name)
    assert isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value)


@settings(max_examples=40, deadline=None)
@given(ids=st.floats(10, 1e12), exponent=st.floats(0, 2), top=st.floats(0, 0.5),
       middle=st.floats(0, 0.5), policy=st.sampled_from(["lfu", "lru"]))
def test_tiers_nest_and_their_shares_add_up(ids: float, exponent: float, top: float,
                                            middle: float, policy: str) -> None:
    zipf = Zipf(ids, exponent)
    hbm, dram = float(int(top * ids)), float(int(middle * ids))
    h1, h2, h3 = tier_hit_shares(zipf, hbm, dram, policy)
    assert min(h1, h2, h3) >= 0.0
    assert h1 + h2 + h3 == pytest.approx(1.0)
    assert h1 == zipf.hit_ratio(hbm, policy)
    assert h1 + h2 == pytest.approx(max(h1, zipf.hit_ratio(hbm + dram, policy)))


def test_lfu_tiers_are_the_top_ranks() -> None:
    zipf = Zipf(1e9, 1.0)
    h1, h2, _ = tier_hit_shares(zipf, 1e6, 1e7, "lfu")
    assert h1 == zipf.top_share(1e6)
    assert h1 + h2 == pytest.approx(zipf.top_share(1.1e7))


def test_rows_are_placed_hottest_first_up_to_each_capacity() -> None:
    assert place_rows(5e5, STORAGE) == (5e5, 0.0, 0.0)
    assert place_rows(5e6, STORAGE) == (1e6, 4e6, 0.0)
    assert place_rows(2e9, STORAGE) == (1e6, 1e7, 1e9)  # the rest fits nowhere


def test_utilisation_is_bytes_over_bandwidth() -> None:
    row = 516.0
    plan = tier_plan(Zipf(1e9, 0.9), STORAGE, "lfu", 1e7, row)
    hbm, link, dram, ssd = plan.loads
    for load in plan.loads:
        assert load.utilisation == pytest.approx(load.bytes_per_s / load.bandwidth)
    assert hbm.bytes_per_s == pytest.approx(2 * 1e7 * row)
    assert link.bytes_per_s == pytest.approx((dram.lookup_share + ssd.lookup_share) * 1e7 * row)
    assert dram.bytes_per_s == pytest.approx(2 * link.bytes_per_s)
    # One 4 KiB read per row; reads bound by IOPS here, writes by bandwidth.
    ssd_rows_per_s = ssd.lookup_share * 1e7
    assert ssd.utilisation == pytest.approx(ssd_rows_per_s / 1e6 + ssd_rows_per_s * row / 5e9)
    assert plan.binding is max(plan.loads, key=lambda load: load.utilisation)
    assert plan.headroom == pytest.approx(1 / plan.binding.utilisation)


def test_ios_per_row_are_4_kib_pages() -> None:
    assert ios_per_row(516) == 1
    assert ios_per_row(4096) == 1
    assert ios_per_row(4097) == 2
    assert ios_per_row(2048 * 12) == 6  # dim 2048 in fp32 with Adam


def test_calculator_outputs_agree_with_its_table_and_workload() -> None:
    result = compute()
    shares = [num(result, f"{tier}_hit_share") for tier in ("hbm", "dram", "ssd")]
    assert sum(shares) == pytest.approx(1.0)
    assert num(result, "lookups_per_s") == pytest.approx(16 * 20_000 * 1000 * 0.5)
    assert num(result, "sustainable_samples_per_s_per_gpu") * num(
        result, "binding_utilisation") == pytest.approx(20_000)
    held = num(result, "hbm_bytes") + num(result, "dram_bytes") + num(result, "ssd_bytes")
    assert held == pytest.approx(num(result, "table_bytes"), rel=1e-6)
    assert result.value("fits") is True


def test_a_table_that_fits_in_hbm_never_leaves_it() -> None:
    result = compute(rows="1M")
    assert result.value("hbm_hit_share") == 1.0
    assert result.value("ssd_utilisation") == 0.0
    assert result.value("link_utilisation") == 0.0
    assert result.value("binding_tier") == "HBM"


def test_more_hbm_cache_moves_lookups_up() -> None:
    small, large = compute(hbm_cache_share=0.1), compute(hbm_cache_share=0.5)
    assert num(large, "hbm_hit_share") > num(small, "hbm_hit_share")
    assert num(large, "ssd_hit_share") <= num(small, "ssd_hit_share")
    assert num(large, "link_utilisation") < num(small, "link_utilisation")


def test_lru_serves_fewer_lookups_from_hbm_than_lfu() -> None:
    assert num(compute(cache_policy="lru"), "hbm_hit_share") < num(compute(), "hbm_hit_share")


def test_an_overloaded_ssd_is_named() -> None:
    result = compute(zipf_exponent=0.6, samples_per_s_per_gpu=100_000)
    assert result.value("keeps_up") is False
    assert result.value("binding_tier") == "SSD"
    assert any(w.startswith("SSD is") and "drives" in w for w in result.computed.warnings)


def test_a_table_larger_than_all_tiers_is_flagged() -> None:
    result = compute(rows="1T")
    assert result.value("fits") is False
    assert any("does not fit" in w for w in result.computed.warnings)


@pytest.mark.parametrize(("name", "value"), [
    ("zipf_exponent", 3), ("cache_policy", "fifo"), ("rows", 0), ("num_gpus", 0),
    ("hbm_cache_share", 1.0), ("unique_share", 0), ("ssd_drives_per_node", 0),
])
def test_bad_input_is_refused_by_name(name: str, value: object) -> None:
    with pytest.raises(calculators.ValidationError) as err:
        compute(**{name: value})
    assert err.value.input_name == name
