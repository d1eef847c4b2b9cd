"""Offload to host memory (formulas.parallel.offload, catalogues.host_links): what
leaves the GPU, what the host holds, what the copies and the CPU step cost, and the
planners choosing it when nothing fits without it."""

from __future__ import annotations

import pytest

import calculators
from calculators.catalogues.hardware import ACCELERATORS
from calculators.catalogues.host_links import HOST_SIDES, LINK_EFFICIENCY, host_side
from calculators.formulas.kernels.memory_bound import optimizer_step_bytes
from calculators.formulas.parallel.memory import state_bytes
from calculators.formulas.parallel.offload import (
    activation_offload_s,
    offload_when_needed,
    optimizer_offload,
    resident_layer_units,
)


def test_pcie_gen5_reaches_what_nvbandwidth_measures() -> None:
    # NVIDIA's nvbandwidth: host_to_device_memcpy_ce 55.63 GB/s on PCIe 5.0 x16, whose
    # line rate is 32 GT/s x 16 lanes x 128/130 / 8 = 63.0 GB/s.
    assert pytest.approx(63.0e9, rel=1e-3) == 32e9 * 16 * 128 / 130 / 8
    assert host_side("h100_sxm").achieved_link == pytest.approx(55.63e9)
    assert pytest.approx(0.883, abs=1e-3) == LINK_EFFICIENCY


def test_every_accelerator_has_a_host_side() -> None:
    unpublished = {"tpu_v5p", "tpu_v6e", "tpu_v7", "trainium2", "ascend_910c"}
    assert set(HOST_SIDES) | unpublished == set(ACCELERATORS)
    assert not set(HOST_SIDES) & unpublished
    for accelerator in unpublished:
        assert "assumed" in host_side(accelerator).source
    # Grace: NVLink-C2C 450 GB/s per direction per Grace, shared by two GPUs on GB200.
    assert host_side("gb200").link_bandwidth == 225e9


def test_optimizer_offload_prices_copies_and_the_cpu_step() -> None:
    host = host_side("h100_sxm")
    per_param = state_bytes("bf16_mixed", "adamw")
    params = 1e9
    cost = optimizer_offload(params, per_param, host, backward_s=0.0, overlap=0.8)
    assert cost.down_s == pytest.approx(2e9 / host.achieved_link)
    assert cost.up_s == pytest.approx(2e9 / host.achieved_link)
    assert cost.cpu_s == pytest.approx(optimizer_step_bytes(params, 2.0, 2.0, 12.0)
                                       / host.achieved_host_memory)
    assert cost.exposed_s == pytest.approx(cost.down_s + cost.cpu_s + cost.up_s)
    # A long backward hides the copy down at the overlap efficiency, nothing else.
    hidden = optimizer_offload(params, per_param, host, backward_s=10.0, overlap=0.8)
    assert hidden.exposed_s == pytest.approx(0.2 * cost.down_s + cost.cpu_s + cost.up_s)


def test_activation_copies_hide_behind_the_layers_compute() -> None:
    host = host_side("h100_sxm")
    copy = 1e9 / host.achieved_link
    assert activation_offload_s(1e9, 1.0, 1.0, host, overlap=1.0) == 0.0
    assert activation_offload_s(1e9, 0.0, 0.0, host, overlap=1.0) == pytest.approx(2 * copy)
    assert resident_layer_units(40) == 2.0
    assert resident_layer_units(1) == 1


def test_model_memory_moves_the_optimizer_and_activations_to_the_host() -> None:
    layout = {"params": 175e9, "dp": 64, "zero_stage": 3}
    plain = calculators.compute("model_memory", **layout)
    moved = calculators.compute("model_memory", **layout, offload="optimizer")
    both = calculators.compute("model_memory", **layout, offload="both")
    assert moved.value("optimizer_bytes") == 0.0
    assert moved.value("host_bytes") == pytest.approx(plain.value("optimizer_bytes"))
    acts = plain.value("activations_bytes")
    kept = both.value("activations_bytes")
    assert isinstance(acts, float)
    assert isinstance(kept, float)
    assert kept == pytest.approx(acts * 2 / 96)  # two of GPT-3's 96 layers stay
    assert both.value("host_bytes") == pytest.approx(
        plain.value("optimizer_bytes") + acts - kept)
    # 175B x 12 B on one GPU's share of a DGX A100 (1 TB / 8): far too much host memory.
    crowded = calculators.compute("model_memory", params=175e9, offload="optimizer")
    assert any("host memory per GPU" in w for w in crowded.computed.warnings)


def test_the_planner_offloads_only_when_nothing_else_fits() -> None:
    # GPT-3 175B on 32 A100s: nothing fits on the GPUs alone; with the optimizer on the
    # host, ZeRO-3 fits, and the plan says so and what the host holds.
    small = {"num_gpus": 32, "global_batch": 64}
    nothing = calculators.compute("parallel_plan", **small, offload="none")
    assert nothing.value("step_time") is None
    offloaded = calculators.compute("parallel_plan", **small)
    assert offloaded.value("offload") == "optimizer"
    host = offloaded.value("host_memory_bytes")
    assert isinstance(host, float)
    assert host > 0
    assert any(n.startswith("No layout fits") for n in offloaded.computed.notes)
    roomy = calculators.compute("parallel_plan", num_gpus=64, global_batch=64)
    assert roomy.value("offload") == "none"
    assert roomy.value("host_memory_bytes") == 0.0


def test_the_moe_planner_offloads_too() -> None:
    result = calculators.compute("moe_plan", num_gpus=64, global_batch=1024)
    assert result.value("offload") == "optimizer"
    assert calculators.compute("moe_plan", num_gpus=64, global_batch=1024,
                               offload="none").value("step_time") is None


@pytest.mark.parametrize(("name", "inputs"), [
    ("parallel_plan", {"num_gpus": 32, "global_batch": 64}),
    ("parallel_plan", {"num_gpus": 16, "global_batch": 64}),
    ("parallel_plan", {"num_gpus": 8, "global_batch": 64}),
    ("moe_plan", {"num_gpus": 64, "global_batch": 1024}),
    ("moe_plan", {"num_gpus": 32, "global_batch": 1024}),
    ("moe_plan", {"num_gpus": 16, "global_batch": 256}),
])
def test_offloading_both_fits_whenever_the_optimizer_alone_fits(
        name: str, inputs: dict[str, object]) -> None:
    # offload_when_needed tries "both" first and stops when it does not fit: that is
    # right only if "both" fits at least every layout "optimizer" fits.
    def fitting(mode: str) -> float:
        value = calculators.compute(name, **inputs, offload=mode).value("layouts_fitting")
        assert isinstance(value, float)
        return value
    assert fitting("both") >= fitting("optimizer") >= fitting("none")


def test_automatic_offload_searches_twice_when_nothing_fits_even_on_the_host() -> None:
    calls: list[str | None] = []

    def run(mode: str | None) -> str | None:
        calls.append(mode)
        return mode
    assert offload_when_needed(run, lambda _: False, auto=True) == (None, None)
    assert calls == [None, "both"]
    calls.clear()
    assert offload_when_needed(run, lambda mode: mode == "both", auto=True) == ("both", "both")
    assert calls == [None, "both", "optimizer"]
    calls.clear()
    assert offload_when_needed(run, lambda mode: mode is not None, auto=True) == (
        "optimizer", "optimizer")
    assert offload_when_needed(run, lambda _: False, auto=False) == (None, None)
