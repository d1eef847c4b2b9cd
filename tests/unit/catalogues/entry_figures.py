"""Checking an accelerator entry against the figures its source prints, shared by the
catalogue's tests."""

from __future__ import annotations

import pytest

from calculators.catalogues import hardware

REL = 1e-3


def check_figures(gpu_id: str, *, bf16: float, fp8: float | None, fp4: float | None,
           memory: float, bandwidth: float, link_each_way: float, power: float | None,
           domain: int) -> None:
    gpu = hardware.get(gpu_id)
    assert gpu.peak_bf16_flops == pytest.approx(bf16, rel=REL)
    assert gpu.peak_fp8_flops == (None if fp8 is None else pytest.approx(fp8, rel=REL))
    assert gpu.peak_fp4_flops == (None if fp4 is None else pytest.approx(fp4, rel=REL))
    assert gpu.memory_bytes == pytest.approx(memory, rel=REL)
    assert gpu.memory_bandwidth == pytest.approx(bandwidth, rel=REL)
    assert gpu.scale_up_bandwidth == pytest.approx(link_each_way, rel=REL)
    assert gpu.power_watts == power
    assert gpu.scale_up_domain == domain
