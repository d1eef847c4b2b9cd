"""The speed model's view of a cluster, built from the catalogues: how fast each
accelerator's kernels run (catalogues.kernel_speeds) and how its links carry
collectives (catalogues.link_speeds), with the reader's overrides applied once here."""

from __future__ import annotations

from dataclasses import replace

from calculators.catalogues import hardware
from calculators.catalogues.kernel_speeds import FLASH2, kernel_speed
from calculators.catalogues.link_speeds import network_curve, scale_up_curve
from calculators.formulas.collectives.achieved import Fabric
from calculators.formulas.kernels.dense_layer import Machine
from calculators.formulas.kernels.gemm import GemmRate
from calculators.formulas.kernels.gemm import with_reserved_sms as reserve_gemm_sms
from calculators.formulas.model.recipes import Recipe, recipe_for
from calculators.formulas.planner.layout import DEFAULT_OVERLAP, Cluster


def gemm_rate(accelerator: str, *, fp8: bool, peak_bf16: float | None = None,
              fp4: bool = False) -> GemmRate:
    """The GEMM rate of an accelerator at 16 bits, or at FP8 where it has FP8 tensor
    cores (without them an FP8 run's GEMMs run at 16 bits). ``peak_bf16`` overrides the
    datasheet's dense BF16 peak (the narrower peaks scale with it). ``fp4``: at the FP4
    peak, with the FP8 fit's ceiling and shape parameters (our assumption: no published
    FP4 matmul sweep; Blackwell's FP8 ceilings are 72-76% of peak)."""
    gpu, speed = hardware.get(accelerator), kernel_speed(accelerator)
    bf16 = peak_bf16 or gpu.peak_bf16_flops
    bandwidth = gpu.memory_bandwidth * speed.hbm_efficiency
    fit, peak = speed.gemm, bf16
    if (fp8 or fp4) and speed.gemm_fp8 is not None and gpu.peak_fp8_flops is not None:
        fit, peak = speed.gemm_fp8, bf16 * gpu.peak_fp8_flops / gpu.peak_bf16_flops
        if fp4 and gpu.peak_fp4_flops is not None:
            peak = bf16 * gpu.peak_fp4_flops / gpu.peak_bf16_flops
    return GemmRate(peak_flops=peak, memory_bandwidth=bandwidth,
                    max_efficiency=fit.max_efficiency, k_half=fit.k_half,
                    overhead_s=fit.overhead_s, wave_exponent=fit.wave_exponent,
                    sms=speed.sms)


def recipe_support(accelerator: str, recipe: Recipe) -> str | None:
    """Why ``accelerator`` cannot run ``recipe``'s GEMMs, or None. FP8 without FP8
    tensor cores is allowed (the GEMMs run at 16 bits, as an A100 would); the MX formats
    need block-scaled tensor cores, which the catalogue marks by an FP4 rate (Blackwell,
    MI355X), and NVFP4 is NVIDIA's (Blackwell)."""
    gpu = hardware.get(accelerator)
    if recipe.needs in ("mx", "nvidia_mx") and gpu.peak_fp4_flops is None:
        return (f"{recipe.label} needs block-scaled (MX) tensor cores; {gpu.name} has "
                "none: choose per-tensor or blockwise FP8, or a Blackwell GPU.")
    if recipe.needs == "nvidia_mx" and not gpu.name.startswith("NVIDIA"):
        return f"{recipe.label} runs on NVIDIA Blackwell tensor cores, not on {gpu.name}."
    return None


def machine_for(accelerator: str, *, precision: str = "bf16_mixed",
                fp8_recipe: str = "tensorwise", peak_bf16: float | None = None,
                kernel_speed_scale: float = 1.0, attention_kernel: str = "best",
                gradient_bytes: float = 2.0) -> Machine:
    """The kernels of ``accelerator`` at a training precision and its recipe
    (formulas.model.recipes). ``kernel_speed_scale`` scales every GEMM's and attention
    kernel's efficiency (1 = the catalogue's); ``attention_kernel`` "flash2" takes
    FlashAttention-2's rates where the catalogue's kernel is another;
    ``gradient_bytes`` is the main gradients' precision. A recipe the accelerator
    cannot run (recipe_support) raises ValueError."""
    gpu, speed = hardware.get(accelerator), kernel_speed(accelerator)
    recipe = recipe_for(precision, fp8_recipe)
    refusal = recipe_support(accelerator, recipe)
    if refusal:
        raise ValueError(refusal)
    if attention_kernel == "flash2" and accelerator in FLASH2:
        speed = replace(speed, attention=FLASH2[accelerator])
    narrow = recipe.narrow and speed.gemm_fp8 is not None
    sixteen = gemm_rate(accelerator, fp8=False, peak_bf16=peak_bf16)
    layer = gemm_rate(accelerator, fp8=narrow, fp4=narrow and recipe.gemm_format == "fp4",
                      peak_bf16=peak_bf16)
    if kernel_speed_scale != 1.0:
        sixteen = _scaled(sixteen, kernel_speed_scale)
        layer = _scaled(layer, kernel_speed_scale)
        speed = replace(speed, attention=replace(
            speed.attention, forward=min(1.0, speed.attention.forward * kernel_speed_scale),
            backward=min(1.0, speed.attention.backward * kernel_speed_scale)))
    word = 4.0 if precision == "fp32" else 2.0
    operand = recipe.element_bytes + recipe.activation_scale_bytes if narrow else word
    return Machine(gemm=sixteen, layer_gemm=layer, layer_operand_bytes=operand,
                   quantise_bytes=recipe.cast_bytes if narrow else 0.0,
                   memory_bandwidth=gpu.memory_bandwidth * speed.hbm_efficiency,
                   kernel_overhead_s=speed.kernel_overhead_s,
                   peak_bf16=peak_bf16 or gpu.peak_bf16_flops, speed=speed,
                   main_grad_bytes=gradient_bytes, loss_scaling=precision == "fp16_mixed",
                   layer_bf16_share=recipe.high_precision_share if narrow else 0.0)


def _scaled(rate: GemmRate, scale: float) -> GemmRate:
    return replace(rate, max_efficiency=min(1.0, rate.max_efficiency * scale))


def fabric_for(accelerator: str, *, domain: int, intra_bandwidth: float | None = None,
               inter_bandwidth: float | None = None, nic: str | None = None,
               link_efficiency: float | None = None) -> Fabric:
    """The links of a node of ``accelerator``: its scale-up links and a NIC per GPU (the
    catalogue's default NIC, or ``nic``), at their line rates unless overridden, each
    with its measured curve; ``link_efficiency`` replaces the curves' plateaus."""
    gpu = hardware.get(accelerator)
    port = hardware.LINKS[nic] if nic is not None else hardware.default_nic(accelerator)
    intra, inter = scale_up_curve(accelerator), network_curve(port.id)
    if link_efficiency is not None:
        intra = replace(intra, ring_efficiency=link_efficiency,
                        alltoall_efficiency=link_efficiency, in_network_allreduce=1.0)
        inter = replace(inter, ring_efficiency=link_efficiency,
                        alltoall_efficiency=link_efficiency)
    return Fabric(domain=domain, intra_bandwidth=intra_bandwidth or gpu.scale_up_bandwidth,
                  inter_bandwidth=inter_bandwidth or port.bandwidth, intra=intra, inter=inter)


def cluster_for(accelerator: str, num_gpus: int, *, memory_bytes: float,
                domain: int | None = None, intra_bandwidth: float | None = None,
                inter_bandwidth: float | None = None, latency: float = 5e-6,
                overlap: float = DEFAULT_OVERLAP, precision: str = "bf16_mixed",
                nic: str | None = None, gradient_bytes: float = 2.0) -> Cluster:
    """A planner cluster of ``num_gpus`` of ``accelerator`` with the catalogue's kernels
    and links (line rates unless given), ``memory_bytes`` usable per GPU."""
    gpu = hardware.get(accelerator)
    size = gpu.scale_up_domain if domain is None else domain
    return Cluster(num_gpus=num_gpus, gpus_per_node=size, peak_flops=gpu.peak_bf16_flops,
                   machine=machine_for(accelerator, precision=precision,
                                       gradient_bytes=gradient_bytes),
                   fabric=fabric_for(accelerator, domain=size, intra_bandwidth=intra_bandwidth,
                                     inter_bandwidth=inter_bandwidth, nic=nic),
                   latency=latency, memory_bytes=memory_bytes, overlap=overlap)


def with_reserved_sms(machine: Machine, reserved: int) -> Machine:
    """``machine`` with ``reserved`` SMs taken from compute for communication
    (formulas.kernels.gemm.with_reserved_sms): every GEMM, and the fused attention
    kernel, at (SMs - reserved)/SMs of its speed. Memory-bound kernels keep their
    speed: an assumption, that the SMs left still saturate HBM."""
    if reserved <= 0:
        return machine
    share = (machine.speed.sms - reserved) / machine.speed.sms
    speed = replace(machine.speed, attention=replace(
        machine.speed.attention, forward=machine.speed.attention.forward * share,
        backward=machine.speed.attention.backward * share))
    return replace(machine, gemm=reserve_gemm_sms(machine.gemm, reserved),
                   layer_gemm=reserve_gemm_sms(machine.layer_gemm, reserved), speed=speed)
