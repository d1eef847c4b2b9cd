"""The hardware catalogue against the datasheets its entries cite, one test per device.

Dense peaks are half the "with sparsity" headline figures (NVIDIA and AMD footnotes);
the tolerance is 0.1% (the catalogue stores the figures as published, so any larger gap
is a typo). Per-GPU NVL72 figures are the rack figures over 72.
"""

from __future__ import annotations

import pytest

import calculators
from calculators.catalogues import hardware
from calculators.catalogues.accelerators import PRECISIONS
from tests.unit.catalogues.entry_figures import check_figures

T, P, GB, TBPS = 1e12, 1e15, 1e9, 1e12
REL = 1e-3


def test_a100_80gb_datasheet() -> None:
    # NVIDIA A100 datasheet: BF16 624 TFLOPS with sparsity, 80GB HBM2e at 2,039 GB/s,
    # NVLink 600 GB/s bidirectional, 400 W; no FP8 tensor cores.
    check_figures("a100_80gb_sxm", bf16=624 * T / 2, fp8=None, fp4=None, memory=80 * GB,
                  bandwidth=2039 * GB, link_each_way=600 * GB / 2, power=400.0, domain=8)


def test_a100_40gb_datasheet() -> None:
    check_figures("a100_40gb_sxm", bf16=624 * T / 2, fp8=None, fp4=None, memory=40 * GB,
                  bandwidth=1555 * GB, link_each_way=600 * GB / 2, power=400.0, domain=8)


def test_h100_sxm_datasheet() -> None:
    # NVIDIA H100 SXM datasheet: BF16 1,979 and FP8 3,958 TFLOPS with sparsity; 80GB
    # HBM3 at 3.35 TB/s; NVLink 900 GB/s; up to 700 W. Whitepaper: 989.4 dense BF16.
    check_figures("h100_sxm", bf16=3958 * T / 4, fp8=3958 * T / 2, fp4=None, memory=80 * GB,
                  bandwidth=3.35 * TBPS, link_each_way=900 * GB / 2, power=700.0, domain=8)


def test_h800_as_h100_with_nvlink_cut() -> None:
    # The H100 SXM5's compute, memory and power; NVLink 400 GB/s bidirectional
    # (deepseek-ai/DeepSeek-V3 issue 28: "the bidirectional theoretical value").
    check_figures("h800", bf16=3958 * T / 4, fp8=3958 * T / 2, fp4=None, memory=80 * GB,
                  bandwidth=3.35 * TBPS, link_each_way=400 * GB / 2, power=700.0, domain=8)


def test_h200_datasheet() -> None:
    # NVIDIA H200: H100 compute; 141GB HBM3e at 4.8 TB/s; NVLink 900 GB/s; 700 W
    # (MLPerf Inference v4.1 system description "H200 TGP 700W").
    check_figures("h200", bf16=1979 * T / 2, fp8=3958 * T / 2, fp4=None, memory=141 * GB,
                  bandwidth=4.8 * TBPS, link_each_way=900 * GB / 2, power=700.0, domain=8)


def test_hgx_b200_datasheet() -> None:
    # NVIDIA HGX B200, 8 GPUs with sparsity: BF16 36, FP8 72, FP4 144 PFLOPS; 1.44 TB
    # HBM3e; NVLink 1.8 TB/s per GPU; 1,000 W (MLPerf v6.0 Nebius: "B200 TGP 1000W").
    check_figures("b200", bf16=36 * P / 8 / 2, fp8=72 * P / 8 / 2, fp4=144 * P / 8 / 2,
                  memory=1440 * GB / 8, bandwidth=8 * TBPS, link_each_way=1800 * GB / 2,
                  power=1000.0, domain=8)


def test_gb200_nvl72_datasheet() -> None:
    # NVIDIA GB200 NVL72, per GPU with sparsity: BF16 5, FP8 10, FP4 20 PFLOPS; rack:
    # 13.4 TB HBM3e at 576 TB/s, NVLink 130 TB/s for 72 GPUs; up to 1,200 W per GPU.
    check_figures("gb200", bf16=5 * P / 2, fp8=10 * P / 2, fp4=20 * P / 2,
                  memory=13.4e12 / 72, bandwidth=576 * TBPS / 72, link_each_way=1800 * GB / 2,
                  power=1200.0, domain=72)
    # The rack's 130 TB/s against 72 x 1.8 TB/s: published_checks.network.


def test_hgx_b300_datasheet() -> None:
    # NVIDIA HGX B300, 8 GPUs: BF16 36, FP8 72 PFLOPS with sparsity; FP4 144 with
    # sparsity, 105 dense; up to 2.3 TB HBM3e; 7.7 TB/s and 1,100 W per GPU (Verda's
    # table of NVIDIA's figures).
    check_figures("b300", bf16=36 * P / 8 / 2, fp8=72 * P / 8 / 2, fp4=105 * P / 8,
                  memory=288 * GB, bandwidth=7.7 * TBPS, link_each_way=1800 * GB / 2,
                  power=1100.0, domain=8)
    # "2.3 TB" is 8 x 288 GB rounded: published_checks.dense (b300-hbm-board).


def test_gb300_nvl72_datasheet() -> None:
    # NVIDIA GB300 NVL72, rack, dense: FP4 1,080, FP8 360, BF16 180 PFLOPS; 20 TB HBM3e
    # at 576 TB/s; NVLink 130 TB/s; 1.4 kW per GPU. Per-GPU memory 279 GB in NVIDIA's
    # table (20 TB / 72 = 278, the rack figure rounded).
    check_figures("gb300", bf16=180 * P / 72, fp8=360 * P / 72, fp4=1080 * P / 72,
                  memory=279 * GB, bandwidth=576 * TBPS / 72, link_each_way=1800 * GB / 2,
                  power=1400.0, domain=72)
    # 20 TB against 72 x 279 GB: published_checks.dense (gb300-hbm-rack).


def test_mi300x_datasheet() -> None:
    # AMD MI300X: BF16 2,614.9 and FP8 5,229.8 TFLOPS with sparsity; 192 GB HBM3 at
    # 5.3 TB/s; 7 Infinity Fabric links x 128 GB/s bidirectional; 750 W.
    check_figures("mi300x", bf16=2614.9 * T / 2, fp8=5229.8 * T / 2, fp4=None, memory=192 * GB,
                  bandwidth=5.3 * TBPS, link_each_way=7 * 128 * GB / 2, power=750.0, domain=8)


def test_mi325x_datasheet() -> None:
    # AMD MI325X: MI300X compute (FP16 1,307 TFLOPS dense), 256 GB HBM3e at 6 TB/s,
    # 1,000 W; the MI300X's seven Infinity Fabric links.
    check_figures("mi325x", bf16=1307.4 * T, fp8=2614.9 * T, fp4=None, memory=256 * GB,
                  bandwidth=6 * TBPS, link_each_way=7 * 128 * GB / 2, power=1000.0, domain=8)


def test_mi355x_figures() -> None:
    # AMD MI355X: 256 CUs x 8,192 FP8 FLOP/clock x 2.4 GHz = 5.03 PFLOP/s ("five
    # petaflops", ISSCC 2026); FP4 20 PFLOPS with sparsity; 288 GB HBM3E at 8 TB/s;
    # 1,400 W. BF16 = FP8 / 2 is the catalogue's derivation (CDNA ratio).
    fp8_from_clock = 256 * 8192 * 2.4e9
    assert fp8_from_clock == pytest.approx(5 * P, rel=0.01)
    check_figures("mi355x", bf16=5 * P / 2, fp8=5 * P, fp4=20 * P / 2, memory=288 * GB,
                  bandwidth=8 * TBPS, link_each_way=7 * 153.6 * GB / 2, power=1400.0, domain=8)


def test_tpu_v5p_docs() -> None:
    # Google Cloud TPU v5p: 459 TFLOPS bf16, 95 GB HBM2e at 2,765 GB/s, ICI 1,200 GB/s.
    check_figures("tpu_v5p", bf16=459 * T, fp8=None, fp4=None, memory=95 * GB,
                  bandwidth=2765 * GB, link_each_way=1200 * GB / 2, power=None, domain=64)


def test_every_entry_is_tested_and_ids_are_stable() -> None:
    # Presets, docs fences and share links name these ids: they must not change.
    tested = {"a100_40gb_sxm", "a100_80gb_sxm", "h100_sxm", "h800", "h200", "b200", "gb200",
              "b300", "gb300", "mi300x", "mi325x", "mi355x", "tpu_v5p"}
    # The parts of issue 34, each against its source in test_accelerators_2026.
    tested |= {"a800", "h20", "tpu_v6e", "tpu_v7", "trainium2", "ascend_910c"}
    assert set(hardware.ACCELERATORS) == tested


@pytest.mark.parametrize("gpu", list(hardware.ACCELERATORS.values()), ids=lambda g: g.id)
def test_narrower_precisions_are_never_slower(gpu: hardware.Accelerator) -> None:
    rates = [gpu.peak_flops(p) for p in PRECISIONS]
    assert rates == sorted(rates)
    assert gpu.source and gpu.memory_note  # every figure cited, every capacity explained


def test_missing_precision_falls_back_to_the_next_wider() -> None:
    a100, h100 = hardware.get("a100_80gb_sxm"), hardware.get("h100_sxm")
    assert a100.precision_used("fp8") == "bf16"
    assert a100.peak_flops("fp8") == a100.peak_bf16_flops
    assert h100.precision_used("fp4") == "fp8"
    assert h100.peak_flops("fp4") == pytest.approx(1978.9e12)


def test_80gb_label_is_80_gib_of_hbm() -> None:
    # Five 16 GiB stacks: the "80GB" H100 holds 80 GiB, 7.4% more than the label read
    # as decimal GB (the catalogue's memory_bytes). The memory calculators take the GiB
    # (model_states.device_capacity_bytes) and keep memory_reserve (5%) free.
    physical = 5 * 16 * 2**30
    assert physical / hardware.get("h100_sxm").memory_bytes == pytest.approx(1.0737, rel=1e-3)
    assert "81,559 MiB" in hardware.get("h100_sxm").memory_note


def test_nics_400_and_800() -> None:
    # ConnectX-7: 400 Gb/s (NDR); ConnectX-8 SuperNIC: 800 Gb/s (XDR), release notes.
    assert hardware.LINKS["connectx7_400g"].bandwidth == 50e9
    assert hardware.LINKS["connectx8_800g"].bandwidth == 100e9
    assert hardware.default_nic("gb300").bandwidth == 100e9
    assert hardware.default_nic("b300").bandwidth == 100e9
    assert hardware.default_nic("gb200").bandwidth == 50e9
    assert hardware.default_nic("a100_80gb_sxm").bandwidth == 25e9


def test_fp8_peak_reaches_training_compute_and_mfu() -> None:
    # The same run against H100's FP8 peak needs half the GPU-hours at the same MFU,
    # and shows half the MFU for the same step time.
    bf16 = calculators.compute("training_compute", gpu="h100_sxm")
    fp8 = calculators.compute("training_compute", gpu="h100_sxm", peak_precision="fp8")
    assert fp8.value("gpu_hours") == pytest.approx(
        bf16.value("gpu_hours") * 989.4 / 1978.9)  # type: ignore[operator]
    mfu_bf16 = calculators.compute("mfu", gpu="h100_sxm")
    mfu_fp8 = calculators.compute("mfu", gpu="h100_sxm", peak_precision="fp8")
    assert mfu_fp8.value("mfu") == pytest.approx(
        mfu_bf16.value("mfu") * 989.4 / 1978.9)  # type: ignore[operator]


def test_a100_fp8_is_not_an_error_and_says_why() -> None:
    result = calculators.compute("mfu", gpu="a100_80gb_sxm", peak_precision="fp8")
    assert result.value("mfu") == calculators.compute("mfu").value("mfu")
    assert any("no dense FP8" in note for note in result.computed.notes)


