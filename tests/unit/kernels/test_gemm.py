"""formulas.kernels.gemm: the shape-dependent GEMM time, by its derivation.

The published GEMM rates themselves are checked once, in published_checks.kernels
(tests/unit/test_published.py runs them); here the model's structure: 2mnk FLOPs, the
roofline's max(compute, memory) plus a kernel's fixed cost, wave quantisation, the
inner-dimension ramp, and bounds that must hold for every shape and accelerator.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculators.catalogues.kernel_speeds import KERNEL_SPEEDS
from calculators.formulas.kernels.dense_layer import linear_times
from calculators.formulas.kernels.gemm import (
    TILE_COLUMNS,
    TILE_ROWS,
    GemmRate,
    achieved_flops,
    gemm_efficiency,
    gemm_time_s,
    wave_utilisation,
)
from calculators.inputs.machine import gemm_rate

#: A made-up accelerator with round numbers, so that each derivation below can be done
#: by hand and does not move when the catalogue's fits are refitted.
RATE = GemmRate(peak_flops=1e15, memory_bandwidth=3e12, max_efficiency=0.8, k_half=256.0,
                overhead_s=5e-6, wave_exponent=1.0, sms=100)

ACCELERATORS = sorted(KERNEL_SPEEDS)
#: Every (accelerator, FP8?) rate of the catalogue; FP8 where the accelerator has it.
RATES = [(gpu, fp8) for gpu in ACCELERATORS for fp8 in (False, True)
         if not fp8 or KERNEL_SPEEDS[gpu].gemm_fp8 is not None]
SIZES = [1, 7, 64, 128, 129, 1000, 4096, 12288, 65536]


def _traffic(m: int, n: int, k: int, operand: float = 2.0, output: float = 2.0) -> float:
    """Each operand read once, the output written once."""
    return (m * k + k * n) * operand + m * n * output


# --- FLOPs and the roofline -------------------------------------------------------------

def test_compute_bound_time_is_2mnk_over_the_shape_rate() -> None:
    # A GEMM C[m x n] = A[m x k] B[k x n] does m n k multiply-adds, 2mnk FLOPs; a large
    # one is compute-bound, so its time is 2mnk over peak x efficiency, plus the kernel's
    # fixed cost. Efficiency by hand: 4096 x 4096 is 32 x 32 = 1,024 tiles of 128 x 128,
    # 11 waves on 100 SMs, the last holding 24: 1,024 / 1,100 of the GPU busy.
    m = n = k = 4096
    efficiency = 0.8 * (1024 / 1100) * k / (k + 256)
    assert gemm_efficiency(m, n, k, RATE) == pytest.approx(efficiency)
    expected = 2 * m * n * k / (1e15 * efficiency) + 5e-6
    assert gemm_time_s(m, n, k, RATE) == pytest.approx(expected)
    assert 2 * m * n * k / 1e15 > _traffic(m, n, k) / 3e12  # it is compute-bound


@pytest.mark.parametrize("m", range(1, 17))
def test_skinny_gemm_is_bandwidth_bound(m: int) -> None:
    # A GEMM with m = 1..16 rows (decode, a small micro-batch's router) has arithmetic
    # intensity about m FLOP/B (2mnk FLOPs over ~2nk bytes of weights): far below the
    # ridge point (peak / bandwidth: 333 FLOP/B here, over 100 on every GPU of the
    # catalogue), so the roofline's memory side sets the time: bytes / bandwidth + the
    # kernel's fixed cost.
    n, k = 8192, 8192
    expected = _traffic(m, n, k) / 3e12 + 5e-6
    assert gemm_time_s(m, n, k, RATE) == pytest.approx(expected)


@pytest.mark.parametrize(("gpu", "fp8"), RATES)
def test_skinny_gemm_is_bandwidth_bound_on_every_accelerator(gpu: str, fp8: bool) -> None:
    # The same on the catalogue's rates: at m = 8 the time is the minimum traffic over
    # the achieved HBM bandwidth, plus the fixed cost; with FP8 operands (1 B) the weight
    # read, and the time, nearly halve.
    rate = gemm_rate(gpu, fp8=fp8)
    operand = 1.0 if fp8 else 2.0
    time = gemm_time_s(8, 16384, 8192, rate, operand_bytes=operand)
    expected = _traffic(8, 16384, 8192, operand) / rate.memory_bandwidth + rate.overhead_s
    assert time == pytest.approx(expected)
    if fp8:
        sixteen = gemm_time_s(8, 16384, 8192, rate, operand_bytes=2.0)
        assert (time - rate.overhead_s) / (sixteen - rate.overhead_s) < 0.51


def test_roofline_takes_the_larger_of_compute_and_memory() -> None:
    # max(compute, memory): slowing the memory until it dominates changes the time, and
    # the time never falls below either side.
    slow_memory = replace(RATE, memory_bandwidth=1e9)
    for m, n, k in [(4096, 4096, 4096), (16, 8192, 8192), (65536, 128, 64)]:
        compute = 2 * m * n * k / (1e15 * gemm_efficiency(m, n, k, RATE))
        assert gemm_time_s(m, n, k, RATE) == pytest.approx(
            max(compute, _traffic(m, n, k) / 3e12) + 5e-6)
        assert gemm_time_s(m, n, k, slow_memory) == pytest.approx(
            _traffic(m, n, k) / 1e9 + 5e-6)


@pytest.mark.parametrize("shape", [(0, 10, 10), (10, 0, 10), (10, 10, 0)])
def test_empty_gemm_takes_no_time(shape: tuple[int, int, int]) -> None:
    # A GEMM with an empty dimension is not launched (an expert that got no tokens).
    assert gemm_time_s(*shape, RATE) == 0.0


def test_batch_of_gemms_is_priced_together() -> None:
    # batch independent GEMMs of one shape: batch x the FLOPs and traffic, one kernel's
    # fixed cost, and tiles that share the waves: 8 x 1 tile fill 8 of 100 SMs.
    assert wave_utilisation(128, 128, 100, batch=8) == pytest.approx(8 / 100)
    one = gemm_time_s(16, 4096, 4096, RATE)
    eight = gemm_time_s(16, 4096, 4096, RATE, batch=8)
    assert eight - 5e-6 == pytest.approx(8 * (one - 5e-6))


# --- wave quantisation ------------------------------------------------------------------

@pytest.mark.parametrize("sms", [8, 100, 108, 132, 148, 304])
def test_one_tile_too_many_leaves_the_last_wave_nearly_empty(sms: int) -> None:
    # tiles = sms + 1: two waves, the second with one tile, so (sms + 1) / (2 sms) of the
    # GPU is busy over the GEMM: just over a half (NVIDIA, Matrix Multiplication
    # Background User's Guide, wave quantization).
    m, n = TILE_ROWS * (sms + 1), TILE_COLUMNS
    utilisation = wave_utilisation(m, n, sms)
    assert utilisation == pytest.approx((sms + 1) / (2 * sms))
    assert 0.5 < utilisation < 0.5 + 1 / sms


@pytest.mark.parametrize("sms", [8, 100, 108, 132, 148, 304])
@pytest.mark.parametrize("waves", [1, 2, 3, 7])
def test_whole_waves_use_the_whole_gpu(sms: int, waves: int) -> None:
    # tiles = k x sms: every wave full.
    assert wave_utilisation(TILE_ROWS * waves, TILE_COLUMNS * sms, sms) == 1.0


def test_a_partial_tile_counts_as_a_tile() -> None:
    # 129 rows need two 128-row tiles: on 2 SMs, 2 x 1 tiles are one full wave, the same
    # as 256 rows; 128 rows fill one SM of two.
    assert wave_utilisation(129, 128, 2) == wave_utilisation(256, 128, 2) == 1.0
    assert wave_utilisation(128, 128, 2) == 0.5


def test_wave_exponent_sets_how_much_of_the_step_shows() -> None:
    # efficiency = max x utilisation^exponent x k/(k + k_half): exponent 0 ignores the
    # waves (the library's tile choice and split-K hide them), 1 shows the full step.
    m, n, k = TILE_ROWS * 101, TILE_COLUMNS, 4096  # 101 tiles on 100 SMs
    ramp = k / (k + 256)
    full = gemm_efficiency(m, n, k, RATE)
    none = gemm_efficiency(m, n, k, replace(RATE, wave_exponent=0.0))
    half = gemm_efficiency(m, n, k, replace(RATE, wave_exponent=0.5))
    assert full == pytest.approx(0.8 * (101 / 200) * ramp)
    assert none == pytest.approx(0.8 * ramp)
    assert half == pytest.approx(0.8 * math.sqrt(101 / 200) * ramp)


# --- the inner dimension's ramp and the ceiling -----------------------------------------

def test_efficiency_is_half_the_ceiling_at_k_half() -> None:
    # k / (k + k_half) = 1/2 at k = k_half (full waves, so only the ramp shows).
    m, n = TILE_ROWS * 10, TILE_COLUMNS * 10  # 100 tiles, one full wave
    assert gemm_efficiency(m, n, 256, RATE) == pytest.approx(0.8 / 2)


@pytest.mark.parametrize(("gpu", "fp8"), RATES)
def test_efficiency_rises_with_k_toward_the_ceiling(gpu: str, fp8: bool) -> None:
    # A longer inner dimension hides the pipeline's fill and epilogue better (DeepGEMM's
    # H800 table: K = 512 well below K = 1,536): the efficiency rises with k, tends to
    # max_efficiency and never exceeds it.
    rate = gemm_rate(gpu, fp8=fp8)
    m = n = 8192
    ks = [64, 256, 1024, 4096, 16384, 65536, 2**20]
    efficiencies = [gemm_efficiency(m, n, k, rate) for k in ks]
    assert efficiencies == sorted(efficiencies)
    assert len(set(efficiencies)) == len(ks)  # strictly
    assert all(e <= rate.max_efficiency for e in efficiencies)
    at_full_waves = rate.max_efficiency * wave_utilisation(m, n, rate.sms) ** rate.wave_exponent
    assert efficiencies[-1] == pytest.approx(at_full_waves, rel=1e-3)


@pytest.mark.parametrize(("gpu", "fp8"), RATES)
def test_achieved_flops_never_exceed_the_peak(gpu: str, fp8: bool) -> None:
    # A GEMM can run no faster than the tensor cores' dense peak at its precision, nor
    # than its ceiling max_efficiency x peak, whatever its shape (every size from 1 to
    # 65,536 in each dimension, tile-aligned or not).
    rate = gemm_rate(gpu, fp8=fp8)
    operand = 1.0 if fp8 else 2.0
    ceiling = rate.max_efficiency * rate.peak_flops
    for m in SIZES:
        for n in SIZES:
            for k in SIZES:
                flops = achieved_flops(m, n, k, rate, operand_bytes=operand)
                assert 0 < flops <= ceiling * (1 + 1e-12), (m, n, k)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2**17), st.integers(1, 2**17), st.integers(1, 2**17),
       st.sampled_from(RATES))
def test_achieved_flops_below_both_roofs(m: int, n: int, k: int,
                                         gpu_fp8: tuple[str, bool]) -> None:
    # The roofline's two roofs: FLOP/s <= peak, and FLOP/s <= intensity x bandwidth
    # (2mnk FLOPs over the minimum traffic).
    gpu, fp8 = gpu_fp8
    rate = gemm_rate(gpu, fp8=fp8)
    operand = 1.0 if fp8 else 2.0
    flops = achieved_flops(m, n, k, rate, operand_bytes=operand)
    intensity = 2 * m * n * k / _traffic(m, n, k, operand)
    assert flops <= rate.peak_flops * (1 + 1e-12)
    assert flops <= intensity * rate.memory_bandwidth * (1 + 1e-12)


@pytest.mark.parametrize("gpu", [g for g, fp8 in RATES if fp8])
def test_fp8_gemm_beats_bf16_at_large_shapes(gpu: str) -> None:
    # FP8 tensor cores have twice the dense peak, and the measured FP8 ceilings are
    # 1.7-2x the BF16 ones (Bekman's achievable matmul FLOPS; AMD's MI300X blog): a large
    # GEMM is faster at FP8, by less than the datasheet's 2x.
    bf16, fp8 = gemm_rate(gpu, fp8=False), gemm_rate(gpu, fp8=True)
    speedup = (gemm_time_s(8192, 8192, 8192, bf16)
               / gemm_time_s(8192, 8192, 8192, fp8, operand_bytes=1.0))
    assert 1.0 < speedup < 2.0


# --- backward GEMMs ---------------------------------------------------------------------

def test_backward_gemms_are_the_forward_shapes_reordered() -> None:
    # Y = X W with X tokens x inner, W inner x out. Input gradient dX = dY W^T: m = tokens,
    # n = inner, k = out. Weight gradient dW = X^T dY: m = inner, n = out, k = tokens.
    tokens, out, inner = 8192, 12288, 4096
    forward, dgrad, wgrad = linear_times(tokens, out, inner, RATE, 2.0)
    assert forward == gemm_time_s(tokens, out, inner, RATE)
    assert dgrad == gemm_time_s(tokens, inner, out, RATE)
    assert wgrad == gemm_time_s(inner, out, tokens, RATE)


@pytest.mark.parametrize("gpu", ACCELERATORS)
@pytest.mark.parametrize("shape", [(8192, 12288, 4096), (8192, 4096, 16384),
                                   (16384, 8192, 8192), (4096, 28672, 8192)])
def test_backward_of_a_large_linear_is_about_twice_its_forward(
        gpu: str, shape: tuple[int, int, int]) -> None:
    # The three GEMMs have the same 2mnk FLOPs; at large shapes their efficiencies differ
    # only through the waves and the inner dimension's ramp, so each backward GEMM takes
    # about the forward's time (Transformer Engine's GEMM benchmark on H200: "Dgrad
    # within 2% of Fprop") and the backward about twice the forward.
    forward, dgrad, wgrad = linear_times(*shape, gemm_rate(gpu, fp8=False), 2.0)
    assert dgrad / forward == pytest.approx(1.0, abs=0.1)
    assert wgrad / forward == pytest.approx(1.0, abs=0.1)
