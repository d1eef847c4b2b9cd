"""The parts issue 34 adds to the hardware catalogue, each against the published figures
its source cites, and each usable wherever a calculator takes a ``gpu``.

Dense peaks are the published dense figures, or half a "with sparsity" one (the A800's
datasheet, as the A100's). Domain sizes are the vendors' own: an HGX node of 8, a TPU
v6e pod of 256, a TPU7x cube of 64, a Trn2 UltraServer of 64, a CloudMatrix384 of 384.
Parts with unpublished figures stay out of ``ACCELERATORS`` and are listed in
``ANNOUNCED`` with those figures as None.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import calculators
from bigmodel_guide.hardware_page import UNPUBLISHED, hardware_markdown
from calculators.catalogues import hardware
from calculators.catalogues.kernel_speeds import KERNEL_SPEEDS
from calculators.catalogues.link_speeds import LINK_SPEEDS, SCALE_UP_LINK
from calculators.core.spec import ValidationError
from tests.unit.catalogues.entry_figures import check_figures

T, P, E, GB, TB, TBPS = 1e12, 1e15, 1e18, 1e9, 1e12, 1e12
REL = 1e-3
NEW = ("a800", "h20", "tpu_v6e", "tpu_v7", "trainium2", "ascend_910c")


def test_a800_is_the_a100_80gb_with_nvlink_cut() -> None:
    # NVIDIA A800 datasheet: BF16 312 TFLOPS (624 with sparsity), 80GB HBM2e at 2,039 GB/s,
    # NVLink 400 GB/s bidirectional, 400 W; 8 GPUs per HGX board.
    check_figures("a800", bf16=624 * T / 2, fp8=None, fp4=None, memory=80 * GB,
                  bandwidth=2039 * GB, link_each_way=400 * GB / 2, power=400.0, domain=8)
    a100, a800 = hardware.get("a100_80gb_sxm"), hardware.get("a800")
    same = replace(a800, id=a100.id, name=a100.name, source=a100.source,
                   memory_note=a100.memory_note, scale_up_bandwidth=a100.scale_up_bandwidth)
    assert same == a100
    assert a800.scale_up_bandwidth / a100.scale_up_bandwidth == pytest.approx(8 / 12)


def test_h20_figures() -> None:
    # HGX H20 (Tom's Hardware, SemiAnalysis): 96 GB HBM3 at 4.0 TB/s, BF16 148 and FP8
    # 296 TFLOPS dense, NVLink 900 GB/s bidirectional, 400 W, 8 per HGX.
    check_figures("h20", bf16=148 * T, fp8=296 * T, fp4=None, memory=96 * GB,
                  bandwidth=4.0 * TBPS, link_each_way=900 * GB / 2, power=400.0, domain=8)
    h100, h20 = hardware.get("h100_sxm"), hardware.get("h20")
    assert h20.scale_up_bandwidth == h100.scale_up_bandwidth  # NVLink uncut
    assert h20.peak_bf16_flops / h100.peak_bf16_flops == pytest.approx(0.15, abs=0.005)


def test_tpu_v6e_docs() -> None:
    # Google Cloud TPU v6e: 918 TFLOPs bf16, 32 GB HBM at 1,638 GBps, ICI 800 GBps
    # bidirectional, 256 chips per pod; "BF16 peak compute per Pod 234.9 PFLOPs".
    check_figures("tpu_v6e", bf16=918 * T, fp8=None, fp4=None, memory=32 * GB,
                  bandwidth=1638 * GB, link_each_way=800 * GB / 2, power=None, domain=256)
    assert 256 * hardware.get("tpu_v6e").peak_bf16_flops == pytest.approx(234.9 * P, rel=1e-3)


def test_tpu7x_ironwood() -> None:
    # TPU7x docs: 2,307 BF16 and 4,614 FP8 TFLOPs, 192 GiB, 9,216 chips per pod; Google's
    # announcement: 7.37 TB/s, ICI 1.2 TBps bidirectional, 42.5 exaflops per pod (FP8).
    check_figures("tpu_v7", bf16=2307 * T, fp8=4614 * T, fp4=None, memory=192 * GB,
                  bandwidth=7.37 * TBPS, link_each_way=1200 * GB / 2, power=None, domain=64)
    assert 9216 * hardware.get("tpu_v7").peak_flops("fp8") == pytest.approx(42.5 * E, rel=2e-3)
    assert 9216 % hardware.get("tpu_v7").scale_up_domain == 0  # 144 cubes of 64


def test_trainium2_neuron_docs() -> None:
    # Trainium2: 667 BF16 and 1,299 FP8 TFLOPS dense, 96 GiB at 2.9 TB/s, NeuronLink-v3
    # 1.28 TB/s per chip (read as bidirectional); Trn2 UltraServer of 64 chips.
    check_figures("trainium2", bf16=667 * T, fp8=1299 * T, fp4=None, memory=96 * GB,
                  bandwidth=2.9 * TBPS, link_each_way=1280 * GB / 2, power=None, domain=64)
    chip = hardware.get("trainium2")
    # Trn2 instance table: 16 chips give 20.8 FP8 and 10.7 BF16 PFLOPS, 46.4 TB/s; the
    # UltraServer 83.2 FP8 PFLOPS; NeuronLink 1,024 GB/s inside + 256 between instances.
    assert 16 * chip.peak_flops("fp8") == pytest.approx(20.8 * P, rel=2e-3)
    assert 16 * chip.peak_bf16_flops == pytest.approx(10.7 * P, rel=3e-3)
    assert 16 * chip.memory_bandwidth == pytest.approx(46.4 * TBPS, rel=REL)
    assert 64 * chip.peak_flops("fp8") == pytest.approx(83.2 * P, rel=2e-3)
    assert 2 * chip.scale_up_bandwidth == pytest.approx((1024 + 256) * GB)


def test_ascend_910c_cloudmatrix384() -> None:
    # Zuo et al. 2025: 752 TFLOPS dense BF16 per 910C, 128 GB at 3.2 TB/s, UB 392 GB/s
    # unidirectional, 384 NPUs per CloudMatrix384. Huawei's supernode totals: 1,229 TB/s
    # of memory bandwidth, "300 PFLOPS" (4% above 384 x 752).
    check_figures("ascend_910c", bf16=752 * T, fp8=None, fp4=None, memory=128 * GB,
                  bandwidth=3.2 * TBPS, link_each_way=392 * GB, power=None, domain=384)
    npu = hardware.get("ascend_910c")
    assert 384 * npu.memory_bandwidth == pytest.approx(1229 * TBPS, rel=1e-3)
    assert 384 * npu.peak_bf16_flops == pytest.approx(300 * P, rel=0.04)


def test_announced_parts_say_what_is_unpublished() -> None:
    # Rubin: 288 GB HBM4 at 22 TB/s, NVLink 6 3.6 TB/s per GPU, 72 per rack (20.7 TB and
    # 260 TB/s per rack); no dense BF16/FP8 peak and no power published. Ascend 910B: no
    # per-chip datasheet, 8 NPUs per Atlas 800T A2.
    assert not set(hardware.ANNOUNCED) & set(hardware.ACCELERATORS)
    rubin = hardware.ANNOUNCED["rubin"]
    assert {"peak_bf16_flops", "peak_fp8_flops", "power_watts"} <= set(rubin.unpublished())
    assert rubin.memory_bytes is not None and rubin.scale_up_bandwidth is not None
    assert 72 * rubin.memory_bytes == pytest.approx(20.7 * TB, rel=2e-3)
    # NVIDIA's 260 TB/s is 72 x 3.6 = 259.2 rounded.
    assert 72 * 2 * rubin.scale_up_bandwidth == pytest.approx(260 * TBPS, rel=4e-3)
    assert rubin.scale_up_domain == 72
    ascend = hardware.ANNOUNCED["ascend_910b"]
    assert {"peak_bf16_flops", "memory_bytes", "memory_bandwidth"} <= set(ascend.unpublished())
    assert ascend.scale_up_domain == 8
    for part in hardware.ANNOUNCED.values():
        assert part.source and part.announced and part.status


def test_default_nics_of_the_new_parts() -> None:
    # H800: 400 Gb/s IB per GPU (DeepSeek-V3, Sec. 3.2.2, "IB (50 GB/s)"); A800 as DGX
    # A100 (HDR 200); H20 as HGX H100 (400); 910C: RoCE 400 Gb/s per NPU; TPU: DCN 50 Gbps
    # per chip (v5p docs); Trn2: 3,200 Gbps EFAv3 per 16 chips.
    assert hardware.default_nic("h800").bandwidth == 400e9 / 8
    assert hardware.default_nic("a800").bandwidth == 200e9 / 8
    assert hardware.default_nic("h20").bandwidth == 400e9 / 8
    assert hardware.default_nic("ascend_910c").bandwidth == 400e9 / 8
    for tpu in ("tpu_v5p", "tpu_v6e", "tpu_v7"):
        assert hardware.default_nic(tpu).bandwidth == 50e9 / 8
    assert 16 * hardware.default_nic("trainium2").bandwidth == 3200e9 / 8


def test_speed_parameters_borrowed_as_stated() -> None:
    # A800 as A100 (same silicon), H20 as H100 (same die, capped): their fits are the
    # relatives', and the sources say so; the H20 and H100 share the NVLink 4 curve.
    a800, a100 = KERNEL_SPEEDS["a800"], KERNEL_SPEEDS["a100_80gb_sxm"]
    assert (a800.gemm, a800.attention, a800.hbm_efficiency) == (
        a100.gemm, a100.attention, a100.hbm_efficiency)
    h20, h100 = KERNEL_SPEEDS["h20"], KERNEL_SPEEDS["h100_sxm"]
    assert (h20.gemm, h20.gemm_fp8, h20.attention) == (h100.gemm, h100.gemm_fp8, h100.attention)
    for gpu in NEW:
        assert "assumption" in KERNEL_SPEEDS[gpu].source.lower(), gpu
    assert SCALE_UP_LINK["h20"] == SCALE_UP_LINK["h100_sxm"]
    # 8 x A800: about 160 GB/s expected on links of 200 GB/s each way (nccl issue 412).
    ring = LINK_SPEEDS[SCALE_UP_LINK["a800"]].curve.ring_efficiency
    assert ring * hardware.get("a800").scale_up_bandwidth == pytest.approx(160e9)


def test_the_hardware_page_shows_both_tables() -> None:
    # The guide's Hardware page is generated from the catalogue: every offered part with
    # its source, every announced part with each unpublished figure written out.
    page = hardware_markdown()
    for gpu in hardware.ACCELERATORS.values():
        assert f"| `{gpu.id}` |" in page and gpu.source in page
    for part in hardware.ANNOUNCED.values():
        row = next(line for line in page.splitlines() if line.startswith(f"| {part.name} |"))
        assert row.count(UNPUBLISHED) == len(part.unpublished())
        assert part.source in page


GPU_CALCULATORS = [c.id for c in calculators.REGISTRY.values()
                   if any(p.name == "gpu" for p in c.params)]


@pytest.mark.parametrize("gpu", NEW)
@pytest.mark.parametrize("calc_id", GPU_CALCULATORS)
def test_every_gpu_calculator_computes_with_the_new_parts(calc_id: str, gpu: str) -> None:
    # At the calculator's defaults with only the GPU changed: a result, and no MFU above
    # 100%. moe_plan's search refuses 2,048 GPUs in scale-up domains above 8 (too many
    # layouts; as for the GB200 NVL72 before these parts): with pp fixed, it plans.
    try:
        result = calculators.compute(calc_id, gpu=gpu)
    except ValidationError as err:
        assert calc_id == "moe_plan" and "too many layouts" in str(err), err
        assert hardware.get(gpu).scale_up_domain > 8
        result = calculators.compute(calc_id, gpu=gpu, pp=16)
    outputs = result.to_dict()["outputs"]
    assert outputs
    for name, out in outputs.items():
        if "mfu" in name and isinstance(out["value"], float):
            assert 0.0 < out["value"] <= 1.0, (name, out["value"])
