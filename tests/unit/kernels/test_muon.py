"""Muon's optimizer step (formulas.kernels.muon): the Newton-Schulz FLOPs of a matrix,
their spread over the ranks that share the matrices, and what the planners add."""

from __future__ import annotations

import pytest

import calculators
from calculators.formulas.kernels.muon import (
    dense_layer_matrices,
    muon_compute_s,
    newton_schulz_flops,
    newton_schulz_time_s,
)
from calculators.inputs.machine import gemm_rate


def test_newton_schulz_flops_per_iteration() -> None:
    # One quintic iteration on X (m x n, m <= n): X X^T (2m^2 n), A A (2m^3), B X (2m^2 n);
    # five iterations (Jordan et al. 2024). A square h x h matrix: 5 x 6h^3.
    assert newton_schulz_flops(4096, 4096) == 5 * 6 * 4096 ** 3
    assert newton_schulz_flops(8192, 28672) == newton_schulz_flops(28672, 8192) == 5 * (
        4 * 8192 ** 2 * 28672 + 2 * 8192 ** 3)


def test_layer_matrices_are_orthogonalised_one_by_one() -> None:
    assert dense_layer_matrices(8192, 8192, 1024, 28672, True) == (
        (8192, 8192), (8192, 1024), (8192, 1024), (8192, 8192),
        (8192, 28672), (8192, 28672), (28672, 8192))


def test_whole_matrices_bound_the_spread() -> None:
    rate = gemm_rate("h100_sxm", fp8=False)
    one = newton_schulz_time_s(8192, 28672, rate)
    # Six matrices over two ranks: three each; over sixty-four: never less than one.
    assert muon_compute_s([(8192, 28672, 6.0)], 2, rate) == pytest.approx(3 * one)
    assert muon_compute_s([(8192, 28672, 6.0)], 64, rate) == pytest.approx(one)
    # At the BF16 rate the iterations run near the GEMM ceiling: about 75% of 989 TF.
    assert newton_schulz_flops(8192, 28672) / one == pytest.approx(0.75 * 989.4e12, rel=0.1)


@pytest.mark.parametrize("calc", ["parallel_plan", "moe_plan"])
def test_muon_costs_a_little_more_step_and_less_memory(calc: str) -> None:
    adam = calculators.compute(calc, optimizer="adamw_bf16" if calc == "moe_plan" else "adamw")
    muon = calculators.compute(calc, optimizer="muon")
    step_adam, step_muon = adam.value("step_time"), muon.value("step_time")
    assert isinstance(step_adam, float)
    assert isinstance(step_muon, float)
    # The iterations and the alltoalls to each matrix's owner add a few percent.
    assert step_adam < step_muon < 1.1 * step_adam
