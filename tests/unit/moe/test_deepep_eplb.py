"""DeepEP's kernels as formulas.moe.deepep prices them, and redundant experts as
formulas.moe.eplb flattens them: invariants (the published figures themselves are
published_checks.expert_kernels) and the chapter's kernel table."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

import calculators
from calculators.catalogues import deepep as published
from calculators.formulas.moe import deepep, eplb
from calculators.formulas.moe.step_costs import busiest_load_factor, gpu_load_cv

CHAPTER = Path(__file__).resolve().parents[3] / "docs" / "moe.md"


def test_the_link_shares_are_shares() -> None:
    c = deepep.calibrate()
    assert 0 < c.nvlink_share < 1 and 0 < c.rdma_share < 1
    assert c.dispatch_latency_s > 0 and c.combine_latency_s > 0


def test_the_calibration_row_is_network_bound_and_ep16_is_nvlink_bound() -> None:
    # The RDMA share is read off the EP 64 row: the model must find that row NIC-bound.
    s, c = published.NORMAL_SETTING, deepep.calibrate()
    for ep, nic_bound in ((64, True), (32, True), (16, False)):
        copies = deepep.normal_copies(s, ep)
        nvlink = copies.intra_node / (c.nvlink_share * s.nvlink_bytes_per_s)
        rdma = copies.inter_node / (c.rdma_share * s.nic_bytes_per_s)
        assert (rdma > nvlink) == nic_bound, ep


def test_low_latency_time_grows_with_the_ep_size() -> None:
    times = [deepep.low_latency_time_s(r.ep, "dispatch") for r in published.LOW_LATENCY]
    assert times == sorted(times)


def test_no_copies_is_the_unpacked_spread() -> None:
    assert eplb.busiest_gpu_factor(0.3, 256, 64) == busiest_load_factor(
        gpu_load_cv(0.3, 4), 64)


@pytest.mark.parametrize("cv", [0.1, 0.3, 0.6])
def test_more_copies_never_make_the_busiest_gpu_busier(cv: float) -> None:
    factors = [eplb.busiest_gpu_factor(cv, 256, 32, r) for r in (0, 8, 32, 64, 256)]
    assert all(a >= b for a, b in itertools.pairwise(factors))
    assert factors[-1] >= 1.0


def test_greedy_copies_halve_the_hottest_expert_first() -> None:
    one = eplb.largest_load_per_copy(0.5, 256, 0)
    assert eplb.largest_load_per_copy(0.5, 256, 1) < one
    assert eplb.copies_per_gpu(32, 32) == 1 and eplb.copies_per_gpu(33, 32) == 2


def test_copies_cost_memory_in_moe_step() -> None:
    plain = calculators.compute("moe_step", load_cv=0.3)
    copied = calculators.compute("moe_step", load_cv=0.3, redundant_experts=64)
    assert plain.value("redundant_expert_bytes") == 0
    extra = copied.value("redundant_expert_bytes")
    assert extra > 0
    assert copied.value("total_bytes") == pytest.approx(plain.value("total_bytes") + extra)
    assert copied.value("busiest_gpu_load") < plain.value("busiest_gpu_load")


def test_the_chapter_kernel_table_is_the_model() -> None:
    text = CHAPTER.read_text("utf-8")
    for row in published.NORMAL:
        model = deepep.normal_bottleneck_bandwidth(row.ep, "dispatch") / 1e9
        line = re.search(rf"^\| {row.ep} \| {row.link} \|.*$", text, re.MULTILINE)
        assert line is not None, row.ep
        assert f"| {model:.1f} GB/s" in line.group(0), line.group(0)


def test_the_chapter_on_redundant_experts() -> None:
    text = " ".join(CHAPTER.read_text("utf-8").split())
    before = calculators.compute("expert_load", ep=32, load_cv=0.3)
    after = calculators.compute("expert_load", ep=32, load_cv=0.3, redundant_experts=32)
    assert (f"falls from {before.value('busiest_gpu_load'):.2f} to "
            f"{after.value('busiest_gpu_load'):.2f} times the mean") in text
    plain = calculators.compute("moe_step", load_cv=0.3)
    copied = calculators.compute("moe_step", load_cv=0.3, redundant_experts=64)
    assert (f"{copied.value('redundant_expert_bytes') / 1e9:.1f} GB more per GPU buys a "
            f"busiest GPU at {copied.value('busiest_gpu_load'):.2f} instead of "
            f"{plain.value('busiest_gpu_load'):.2f}") in text
    assert (f"{plain.value('step_time') - copied.value('step_time'):.1f} s of the "
            f"{plain.value('step_time'):.1f} s step") in text
