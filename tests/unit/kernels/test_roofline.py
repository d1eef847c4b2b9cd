"""Rooflines against the jax-ml scaling-book (Part 1) and Narayanan et al. 2021."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculators.formulas.kernels.roofline import (
    embedding_lookup_bytes,
    embedding_lookups_per_s,
    gemm,
    gemm_flops,
    layer_gemms,
)

if TYPE_CHECKING:
    from collections.abc import Callable


def test_scaling_book_dot_product_intensity() -> None:
    # Scaling-book Part 1: a bf16 dot product of length N has intensity 1/2 as N grows.
    r = gemm(1, 10**6, 1, peak_flops=1.97e14, bandwidth=8.2e11)
    assert r.intensity == pytest.approx(0.5, rel=1e-5)
    assert not r.compute_bound


@pytest.mark.parametrize("batch", [64, 128, 256])
def test_scaling_book_matmul_intensity_is_about_batch(batch: int) -> None:
    # Scaling-book Part 1: bf16 (B x D) @ (D x F) has intensity ~ B when B << D, F; at
    # D = F = 16384 the exact value is B / (1 + 2B/D): within 4%.
    r = gemm(batch, 16384, 16384, peak_flops=1.97e14, bandwidth=8.2e11)
    assert r.intensity == pytest.approx(batch, rel=0.04)
    assert r.compute_bound == (r.intensity >= 240.2)


def test_narayanan_forward_flops_per_layer() -> None:
    # Narayanan et al. 2021, Sec. 5.1 / App.: the GEMMs of one layer's forward are
    # 24 B s h^2 FLOPs (the 4 B s^2 h of attention scores aside).
    b_s, h = 4 * 2048, 12288
    gemms = layer_gemms(b_s, h, 96, 96, 4 * h)
    assert sum(gemm_flops(g.m, g.k, g.n) for g in gemms) == pytest.approx(24 * b_s * h * h)


@given(st.sampled_from([1, 2, 4, 8]), st.booleans())
def test_tp_splits_flops_evenly(t: int, gated: bool) -> None:
    # Shoeybi et al. 2019, Sec. 3: column splits shrink n, row splits shrink k, by t.
    full = layer_gemms(2048, 8192, 64, 8, 28672, tp=1, gated_mlp=gated)
    split = layer_gemms(2048, 8192, 64, 8, 28672, tp=t, gated_mlp=gated)
    total = sum(gemm_flops(g.m, g.k, g.n) for g in full)
    assert sum(gemm_flops(g.m, g.k, g.n) for g in split) * t == pytest.approx(total)


@given(st.floats(1e12, 1e16), st.floats(1e11, 1e13), st.integers(1, 65536))
def test_attainable_never_above_either_roof(peak: float, bw: float, m: int) -> None:
    r = gemm(m, 4096, 4096, peak_flops=peak, bandwidth=bw)
    assert r.attainable_flops <= peak * (1 + 1e-12)
    assert r.attainable_flops <= r.intensity * bw * (1 + 1e-12)
    assert r.time_s >= r.flops / peak


def test_embedding_lookup_is_bandwidth_bound() -> None:
    # Derivation: a 128-wide FP32 row read + written, 1024 B; H100 SXM 3.35 TB/s
    # (datasheet) bounds lookups at about 3.27e9 per second (published_checks.sparse:
    # h100-embedding-lookups, through the roofline calculator).
    assert embedding_lookup_bytes(128, 4) == 2 * 128 * 4
    assert embedding_lookups_per_s(128, 3.35e12, 4) == pytest.approx(3.35e12 / (2 * 128 * 4))


@pytest.mark.parametrize(
    "call",
    [lambda: gemm(0, 1, 1, peak_flops=1.0, bandwidth=1.0),
     lambda: gemm(1, 1, 1, peak_flops=0.0, bandwidth=1.0),
     lambda: gemm(1, 1, 1, peak_flops=1.0, bandwidth=1.0, bytes_per_element=0),
     lambda: layer_gemms(1, 64, 8, 8, 256, tp=3), lambda: embedding_lookup_bytes(0),
     lambda: embedding_lookups_per_s(8, 0.0)])
def test_bad_inputs(call: Callable[[], object]) -> None:
    with pytest.raises(ValueError, match=r"."):
        call()
