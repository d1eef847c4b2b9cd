"""catalogues.kernel_speeds and catalogues.link_speeds: complete, in range, cited, and
wired into the speed model by calculators.inputs.machine as their docstrings say.

The fitted values themselves are checked against the measurements they came from in
published_checks.kernels; here that every accelerator and link has an entry, that every
share of a peak or a line rate is a share, and that every entry says where it comes
from, or that it is an assumption.
"""

from __future__ import annotations

import re

import pytest

from calculators.catalogues import hardware
from calculators.catalogues.kernel_speeds import (
    FLASH2,
    KERNEL_SPEEDS,
    FusedAttention,
    GemmFit,
    kernel_speed,
)
from calculators.catalogues.link_speeds import (
    LINK_SPEEDS,
    SCALE_UP_LINK,
    network_curve,
    scale_up_curve,
)
from calculators.formulas.collectives.achieved import LinkCurve
from calculators.formulas.model.recipes import FP8_RECIPES
from calculators.inputs.machine import (
    cluster_for,
    fabric_for,
    gemm_rate,
    machine_for,
)

ACCELERATORS = sorted(hardware.ACCELERATORS)
#: What a source must contain: a publication (an author's "et al.", a paper's figure,
#: table or section, a datasheet, a README, a GitHub issue, a conference talk, a blog,
#: a benchmark) or the word "Assumption".
CITATION = re.compile(
    r"et al\.|\bFigs?\. ?\d|\bTable \d|\bSec\. ?\d|datasheet|README|issue \d|\bGTC\b|"
    r"blog|benchmark|paper|report|docs/|nccl-tests|Bekman|[A-Za-z-]+/[A-Za-z-]+",
    re.IGNORECASE)


def _cited(source: str) -> bool:
    return bool(source.strip()) and ("assumption" in source.lower()
                                     or CITATION.search(source) is not None)


# --- completeness -----------------------------------------------------------------------

def test_every_accelerator_has_kernel_speeds_and_a_scale_up_curve() -> None:
    # The speed model prices every accelerator of the hardware catalogue: each needs its
    # kernels' speeds and its scale-up links' measured curve, and nothing else may be
    # listed (an entry for a device the catalogue does not have is a typo).
    assert set(KERNEL_SPEEDS) == set(hardware.ACCELERATORS)
    assert set(SCALE_UP_LINK) == set(hardware.ACCELERATORS)
    for gpu in ACCELERATORS:
        assert kernel_speed(gpu).accelerator == gpu
        assert isinstance(scale_up_curve(gpu), LinkCurve)


def test_every_port_of_the_hardware_catalogue_has_a_curve() -> None:
    # fabric_for takes any port of hardware.LINKS as the NIC: each needs its curve,
    # and each default NIC too.
    assert set(hardware.LINKS) <= set(LINK_SPEEDS)
    for gpu in ACCELERATORS:
        assert isinstance(network_curve(hardware.default_nic(gpu).id), LinkCurve)


def test_flash2_entries_are_for_catalogue_accelerators() -> None:
    assert set(FLASH2) <= set(KERNEL_SPEEDS)
    for gpu, kernel in FLASH2.items():
        assert "FlashAttention-2" in kernel.kernel
        assert kernel != KERNEL_SPEEDS[gpu].attention  # otherwise it would not be listed


@pytest.mark.parametrize("gpu", ACCELERATORS)
def test_fp8_fit_exactly_where_the_datasheet_has_fp8(gpu: str) -> None:
    # gemm_rate uses an FP8 fit only with an FP8 peak, and machine_for switches the
    # operands to 1 byte and charges the casts on the fit alone: a fit without a peak (or
    # a peak without a fit) would price an FP8 run inconsistently.
    has_fit = KERNEL_SPEEDS[gpu].gemm_fp8 is not None
    has_peak = hardware.get(gpu).peak_fp8_flops is not None
    assert has_fit == has_peak


# --- ranges -----------------------------------------------------------------------------

def _gemm_fits() -> list[tuple[str, GemmFit]]:
    fits = []
    for gpu, speed in sorted(KERNEL_SPEEDS.items()):
        fits.append((gpu, speed.gemm))
        if speed.gemm_fp8 is not None:
            fits.append((gpu + "-fp8", speed.gemm_fp8))
    return fits


def _attention_kernels() -> list[tuple[str, FusedAttention]]:
    kernels = [(gpu, speed.attention) for gpu, speed in sorted(KERNEL_SPEEDS.items())]
    return kernels + [(gpu + "-flash2", k) for gpu, k in sorted(FLASH2.items())]


@pytest.mark.parametrize(("name", "fit"), _gemm_fits(), ids=[n for n, _ in _gemm_fits()])
def test_gemm_fits_are_in_range(name: str, fit: GemmFit) -> None:
    # A share of the peak is in (0, 1]; the ramp's half point and the fixed cost are
    # positive or zero; the wave exponent is between none (0) and the full step (1).
    assert 0.0 < fit.max_efficiency <= 1.0
    assert fit.k_half >= 0.0
    assert 0.0 <= fit.overhead_s < 1e-3
    assert 0.0 <= fit.wave_exponent <= 1.0


@pytest.mark.parametrize(("name", "kernel"), _attention_kernels(),
                         ids=[n for n, _ in _attention_kernels()])
def test_attention_kernels_are_in_range(name: str, kernel: FusedAttention) -> None:
    # Plateaus are shares of the BF16 peak; the head-64 and causal factors are ratios
    # that slow the kernel down (smaller heads do less arithmetic per byte; the masked
    # diagonal costs something), and the causal ramp is slower (s_half larger).
    assert 0.0 < kernel.forward <= 1.0
    assert 0.0 < kernel.backward <= 1.0
    assert all(0.0 < h <= 1.0 for h in kernel.head_64)
    assert 0.0 < kernel.causal_plateau <= 1.0
    assert 0.0 < kernel.half_seq <= kernel.half_seq_causal
    # FlashAttention's backward runs at a lower share of peak than its forward (Dao
    # 2023, FlashAttention-2: up to 73% of the A100's peak forward, 63% backward).
    assert kernel.backward < kernel.forward
    assert kernel.kernel


@pytest.mark.parametrize("gpu", ACCELERATORS)
def test_kernel_speed_scalars_are_in_range(gpu: str) -> None:
    speed = KERNEL_SPEEDS[gpu]
    assert 0.0 < speed.hbm_efficiency <= 1.0
    assert 0.0 < speed.kernel_overhead_s < 1e-3
    assert speed.sms > 0


@pytest.mark.parametrize("gpu", [g for g in ACCELERATORS if KERNEL_SPEEDS[g].gemm_fp8])
def test_fp8_ceiling_is_above_bf16_but_below_twice(gpu: str) -> None:
    # FP8's achievable ceiling is above BF16's (twice the peak) and below twice it (the
    # measured FP8 ceilings are lower shares of a peak twice as high).
    speed, peaks = KERNEL_SPEEDS[gpu], hardware.get(gpu)
    assert speed.gemm_fp8 is not None and peaks.peak_fp8_flops is not None
    bf16 = speed.gemm.max_efficiency * peaks.peak_bf16_flops
    fp8 = speed.gemm_fp8.max_efficiency * peaks.peak_fp8_flops
    assert bf16 < fp8 < 2 * bf16


@pytest.mark.parametrize("link", sorted(LINK_SPEEDS))
def test_link_curves_are_in_range(link: str) -> None:
    # Plateaus are shares of the line rate, in (0, 1]; NVLink SHARP's factor is a ratio
    # of two bus bandwidths and may exceed 1 (the switch reduces, so each GPU sends
    # less), but never below 1 (where there is none it is 1); sizes and floors positive.
    curve = LINK_SPEEDS[link].curve
    assert LINK_SPEEDS[link].link == link
    assert 0.0 < curve.ring_efficiency <= 1.0
    assert 0.0 < curve.alltoall_efficiency <= 1.0
    assert 1.0 <= curve.in_network_allreduce < 2.0
    assert curve.half_bytes > 0.0
    assert curve.send_half_bytes > 0.0
    assert 0.0 < curve.steepness <= 1.0
    assert 0.0 < curve.floor_s < 1e-3
    assert 0.0 <= curve.send_floor_s < 1e-3
    assert curve.half_ranks >= 1
    assert curve.half_growth >= 0.0


def test_only_nvswitch_links_reduce_in_the_network() -> None:
    # NVLink SHARP needs NVSwitch 3 or later (H100 and after): not NVLink 3 (A100), not
    # Infinity Fabric, not ICI, not a NIC.
    sharp = {link for link, speed in LINK_SPEEDS.items()
             if speed.curve.in_network_allreduce > 1.0}
    assert sharp <= {"nvlink4", "nvlink_h800", "nvlink5"}
    assert LINK_SPEEDS["nvlink3"].curve.in_network_allreduce == 1.0


# --- sources ----------------------------------------------------------------------------

@pytest.mark.parametrize("gpu", ACCELERATORS)
def test_every_kernel_speed_is_cited(gpu: str) -> None:
    # Each entry says where its figures come from, or that they are an assumption.
    assert _cited(KERNEL_SPEEDS[gpu].source), KERNEL_SPEEDS[gpu].source


@pytest.mark.parametrize("link", sorted(LINK_SPEEDS))
def test_every_link_curve_is_cited(link: str) -> None:
    assert _cited(LINK_SPEEDS[link].source), LINK_SPEEDS[link].source


def test_the_citation_check_can_fail() -> None:
    # A bare figure or an empty string is not a source.
    assert not _cited("")
    assert not _cited("0.8 of the line rate")
    assert _cited("Assumption: as the H100's.")
    assert _cited("Dao 2023, Fig. 4")


def test_borrowed_entries_say_so() -> None:
    # An accelerator with no GEMM sweep of its own runs on the H100's shape parameters
    # and attention kernel: its source must say that this is an assumption.
    h100 = KERNEL_SPEEDS["h100_sxm"]
    for gpu, speed in KERNEL_SPEEDS.items():
        borrowed = (gpu != "h100_sxm" and speed.attention == h100.attention
                    and speed.gemm.k_half == h100.gemm.k_half)
        if borrowed and gpu != "h800":  # the H100's own silicon, its source says why
            assert "assumption" in speed.source.lower(), gpu


# --- the builders -----------------------------------------------------------------------

@pytest.mark.parametrize("gpu", ACCELERATORS)
def test_gemm_rate_reads_the_catalogues(gpu: str) -> None:
    # The GEMM rate: the datasheet's peak and HBM bandwidth x the achieved share, with
    # the fit's parameters; at FP8, the FP8 peak and fit where there are both.
    device, speed = hardware.get(gpu), KERNEL_SPEEDS[gpu]
    bf16 = gemm_rate(gpu, fp8=False)
    assert bf16.peak_flops == device.peak_bf16_flops
    assert bf16.memory_bandwidth == pytest.approx(device.memory_bandwidth
                                                  * speed.hbm_efficiency)
    assert bf16.max_efficiency == speed.gemm.max_efficiency
    assert bf16.sms == speed.sms
    fp8 = gemm_rate(gpu, fp8=True)
    if speed.gemm_fp8 is None:
        assert fp8 == bf16
    else:
        assert fp8.peak_flops == pytest.approx(device.peak_fp8_flops)
        assert fp8.max_efficiency == speed.gemm_fp8.max_efficiency


def test_peak_override_scales_the_fp8_peak() -> None:
    # A reader's own BF16 peak (a power-capped part, say) scales FP8's in proportion.
    device = hardware.get("h100_sxm")
    rate = gemm_rate("h100_sxm", fp8=True, peak_bf16=device.peak_bf16_flops / 2)
    assert device.peak_fp8_flops is not None
    assert rate.peak_flops == pytest.approx(device.peak_fp8_flops / 2)


def test_kernel_speed_scale_is_capped_at_the_peak() -> None:
    # kernel_speed_scale multiplies every GEMM and attention share, never past 1.
    base = machine_for("h100_sxm")
    faster = machine_for("h100_sxm", kernel_speed_scale=1.1)
    slower = machine_for("h100_sxm", kernel_speed_scale=0.5)
    assert faster.gemm.max_efficiency == pytest.approx(
        min(1.0, base.gemm.max_efficiency * 1.1))
    assert slower.gemm.max_efficiency == pytest.approx(base.gemm.max_efficiency * 0.5)
    assert slower.speed.attention.forward == pytest.approx(base.speed.attention.forward * 0.5)
    huge = machine_for("h100_sxm", kernel_speed_scale=10.0)
    assert huge.gemm.max_efficiency == 1.0
    assert huge.speed.attention.forward == huge.speed.attention.backward == 1.0


@pytest.mark.parametrize("gpu", sorted(FLASH2))
def test_flash2_option_swaps_the_attention_kernel(gpu: str) -> None:
    assert machine_for(gpu, attention_kernel="flash2").speed.attention == FLASH2[gpu]
    assert machine_for(gpu).speed.attention == KERNEL_SPEEDS[gpu].attention


def test_machine_precisions() -> None:
    # BF16: 2-byte operands, no casts, no loss scale; FP16: the loss scale; FP8 on
    # Hopper: 1-byte operands and the recipe's casts; FP32: 4-byte operands.
    bf16 = machine_for("h100_sxm")
    assert (bf16.layer_operand_bytes, bf16.quantise_bytes, bf16.loss_scaling) == (
        2.0, 0.0, False)
    assert machine_for("h100_sxm", precision="fp16_mixed").loss_scaling
    fp8 = machine_for("h100_sxm", precision="fp8_mixed")
    assert (fp8.layer_operand_bytes, fp8.quantise_bytes) == (
        1.0, FP8_RECIPES["tensorwise"].cast_bytes)
    assert fp8.gemm == bf16.gemm  # attention's and the output layer's GEMMs stay 16-bit
    assert machine_for("h100_sxm", precision="fp32").layer_operand_bytes == 4.0
    assert machine_for("h100_sxm", gradient_bytes=4.0).main_grad_bytes == 4.0


def test_fabric_for_reads_the_catalogues() -> None:
    # The scale-up line rate and curve of the accelerator, the default NIC's rate and
    # curve; overrides replace the rates, a named NIC its curve.
    fabric = fabric_for("a100_80gb_sxm", domain=8)
    assert fabric.intra_bandwidth == hardware.get("a100_80gb_sxm").scale_up_bandwidth
    assert fabric.inter_bandwidth == hardware.LINKS["ib_hdr"].bandwidth
    assert fabric.intra == scale_up_curve("a100_80gb_sxm")
    assert fabric.inter == network_curve("ib_hdr")
    roce = fabric_for("h100_sxm", domain=8, nic="roce_400g", inter_bandwidth=25e9)
    assert roce.inter == network_curve("roce_400g")
    assert roce.inter_bandwidth == 25e9
    override = fabric_for("h100_sxm", domain=8, link_efficiency=0.6)
    assert override.intra.in_network_allreduce == 1.0
    assert {override.intra.ring_efficiency, override.inter.alltoall_efficiency} == {0.6}


@pytest.mark.parametrize("gpu", ACCELERATORS)
def test_cluster_domain_defaults_to_the_accelerators(gpu: str) -> None:
    # An NVL72 rack is one scale-up domain of 72; an HGX node one of 8.
    cluster = cluster_for(gpu, 1024, memory_bytes=80e9)
    assert cluster.gpus_per_node == hardware.get(gpu).scale_up_domain
    assert cluster.fabric.domain == hardware.get(gpu).scale_up_domain

