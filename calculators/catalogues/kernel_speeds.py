"""How fast each accelerator's kernels really run: the speed model's parameters, one
cited entry per accelerator, next to its datasheet entry (catalogues.accelerators).

Each figure is measured on a kernel, not fitted to a training run: GEMM rates by shape,
fused-attention rates by sequence length and head size, the share of HBM bandwidth that
memory-bound kernels reach. ``published_checks.kernels`` holds the measured points the
GEMM and attention parameters were fitted to (``scripts/calibrate.py`` refits them), and
the unit tests check every entry against them. An accelerator with no published kernel
measurement borrows the parameters of the nearest one it is built like, and its source
says so: that is an assumption.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GemmFit:
    """formulas.kernels.gemm's parameters for one accelerator and precision."""

    max_efficiency: float  # fraction of the dense peak on the largest, best-shaped GEMMs
    k_half: float  # inner dimension at which the pipeline-fill factor is 1/2
    overhead_s: float  # fixed time per GEMM kernel
    wave_exponent: float  # how much of the tile-wave quantisation step shows (0-1)


@dataclass(frozen=True)
class FusedAttention:
    """A fused attention kernel's rate, as FlashAttention's papers count it (forward
    4 s^2 d per head, halved when causal; backward 2.5 x forward): the plateau as a
    fraction of the dense BF16 peak at head size 128, and the sequence length at which
    half of it is reached, ``rate = plateau x s / (s + s_half)``."""

    kernel: str
    forward: float
    backward: float
    half_seq: float  # non-causal
    half_seq_causal: float  # the causal mask's diagonal blocks cost more at short s
    #: The plateau at head size 64 over that at 128 (forward, backward): smaller heads
    #: do less arithmetic per byte of Q, K and V.
    head_64: tuple[float, float]
    #: The causal plateau over the non-causal one: the masked diagonal blocks cost
    #: something even at long sequences (the papers' causal fits).
    causal_plateau: float = 1.0


@dataclass(frozen=True)
class KernelSpeed:
    """What the speed model needs to know about one accelerator's kernels."""

    accelerator: str
    sms: int  # streaming multiprocessors / compute units (the GEMM tiles' waves)
    gemm: GemmFit  # BF16/FP16
    gemm_fp8: GemmFit | None  # FP8 (None: no FP8 tensor cores; FP8 runs as BF16)
    attention: FusedAttention
    hbm_efficiency: float  # share of the datasheet HBM bandwidth memory-bound kernels reach
    kernel_overhead_s: float  # fixed time per memory-bound kernel
    source: str


_A100_GEMM = GemmFit(max_efficiency=0.85, k_half=256.0, overhead_s=24e-6, wave_exponent=0.25)
_H100_GEMM = GemmFit(max_efficiency=0.80, k_half=384.0, overhead_s=0.0, wave_exponent=0.0)
#: FP8 on Hopper: Bekman's maximum achievable FP8 matmul 1,402.6 TFLOP/s on H100 SXM
#: (70.9% of 1,978.9), the same structure as BF16 (DeepGEMM's H800 table).
_H100_GEMM_FP8 = GemmFit(max_efficiency=0.71, k_half=384.0, overhead_s=0.0, wave_exponent=0.0)

#: Fitted (scripts/calibrate.py) to FlashAttention-2's A100 sweep (Dao 2023, Fig. 4:
#: forward + backward, head sizes 64 and 128, causal or not, 512 to 16K tokens; 1.0%
#: rms); forward and backward split as FA2 on H100 (the paper plots only their sum).
_FA2_A100 = FusedAttention(
    kernel="FlashAttention-2", forward=0.711, backward=0.629, half_seq=181.0,
    half_seq_causal=495.0, head_64=(0.886, 0.886), causal_plateau=0.965)
#: Fitted (scripts/calibrate.py) to cuDNN's bars in Shah et al. 2024, Figs. 5-6 (H100
#: SXM5: forward by head size 64/128/256, causal or not; backward without the mask; 512
#: to 16K tokens; 5.0% rms). One half length serves both passes: the forward reaches
#: its plateau sooner and the backward later (alone they fit 119 and 357 tokens), so
#: short sequences are priced within about 15%. The causal factors are the forward's,
#: assumed for the backward, which the paper measures without the mask only.
_CUDNN_H100 = FusedAttention(
    kernel="cuDNN fused attention (Transformer Engine's default on Hopper)",
    forward=0.658, backward=0.511, half_seq=228.0, half_seq_causal=389.0,
    head_64=(0.688, 0.847), causal_plateau=0.875)

#: FlashAttention-2 on Hopper (it has no Hopper-specific instructions): forward 370 and
#: forward + backward 338 TFLOP/s at head size 128 and 16K (Shah et al. 2024, Figs. 5-6;
#: Dao 2023, H100 figure), fitted as cuDNN's (scripts/calibrate.py, 3.6% rms).
_FA2_H100 = FusedAttention(
    kernel="FlashAttention-2", forward=0.393, backward=0.325, half_seq=179.0,
    half_seq_causal=456.0, head_64=(0.884, 0.887), causal_plateau=0.938)

_A100_SOURCE = (
    "GEMM: fitted (scripts/calibrate.py) to cuBLAS measurements on A100: 8192^3 at 258 "
    "TFLOP/s with random inputs (H. He, 'Strangely, matrix multiplications on GPUs run "
    "faster when given predictable data'), transformer-layer GEMMs of h = 4,096 at 8,192 "
    "tokens, 235-255 TFLOP/s (EleutherAI cookbook, benchmarks/sizing sample results), "
    "Bekman's maximum achievable matmul 271.2 TFLOP/s (86.9%). Attention: FlashAttention-2 "
    "(Dao 2023, Fig. 4) forward + backward 203 TFLOP/s at head size 128 and 16K tokens, "
    "the sweep fitted (scripts/calibrate.py); forward / backward split as FA2 on H100. "
    "HBM: 84% of 2,039 GB/s "
    "(gpu-stream triad 1,759 GB/s, te42kyfo/gpu-benches; Liger-Kernel LayerNorm forward "
    "1,666 GB/s), 10 us per memory-bound kernel (Liger sweeps, fitted).")
_H100_SOURCE = (
    "GEMM: fitted (scripts/calibrate.py) to cuBLAS on H100 SXM: 716 TFLOP/s at 4096^3 and "
    "795 at 8192^3 (pranjalssh/fast.cu README), Bekman's maximum achievable matmul 794.5 "
    "(80.3%), and Transformer Engine's layer GEMMs (h = 4,096, 15,872 tokens, "
    "docs/examples/gemm_profiling) at their ratio to the peak; FP8: Bekman's 1,402.6 "
    "TFLOP/s (70.9% of the FP8 peak). Attention: cuDNN fused attention (FlashAttention-3 "
    "paper, Shah et al. 2024, Figs. 5-6, H100 SXM5): forward 595 TFLOP/s, backward 516 at "
    "head size 128 and 16K, plateau and s_half fitted. HBM: 91% of 3,350 GB/s (QuACK "
    "softmax 3.01 TB/s, Nsight; Liger LayerNorm 2,906 GB/s), 7 us per kernel.")

_HOPPER_HBM = 0.91


def _hopper(accelerator: str, note: str) -> KernelSpeed:
    return KernelSpeed(accelerator, 132, _H100_GEMM, _H100_GEMM_FP8, _CUDNN_H100,
                       _HOPPER_HBM, 7e-6, _H100_SOURCE + note)


def _borrowed(accelerator: str, sms: int, ceilings: tuple[float, float | None], *,
              hbm: float, note: str) -> KernelSpeed:
    """An accelerator with a measured GEMM ceiling but no shape sweep: Hopper's shape
    parameters and attention kernel, its own ceiling."""
    max_bf16, max_fp8 = ceilings
    fp8 = None if max_fp8 is None else GemmFit(max_fp8, _H100_GEMM_FP8.k_half, 0.0, 0.0)
    return KernelSpeed(accelerator, sms,
                       GemmFit(max_bf16, _H100_GEMM.k_half, 0.0, 0.0), fp8, _CUDNN_H100,
                       hbm, 7e-6, note)


_BORROWED = ("Assumption: the shape parameters, the attention kernel's rates as fractions "
             "of peak and 7 us per memory-bound kernel are the H100's (no published "
             "sweep). ")

_ENTRIES: tuple[KernelSpeed, ...] = (
    KernelSpeed("a100_40gb_sxm", 108, _A100_GEMM, None, _FA2_A100, 0.94, 10e-6,
                _A100_SOURCE + " GEMM and attention measured on the 80GB part, the 40GB part "
                "assumed alike; its HBM: 94% of 1,555 GB/s (gpu-stream, te42kyfo/gpu-benches; "
                "fitted in scripts/calibrate.py)."),
    KernelSpeed("a100_80gb_sxm", 108, _A100_GEMM, None, _FA2_A100, 0.84, 10e-6,
                _A100_SOURCE),
    KernelSpeed("a800", 108, _A100_GEMM, None, _FA2_A100, 0.84, 10e-6,
                _A100_SOURCE + " Assumption: the A800 as the A100 80GB SXM, the same GA100 "
                "silicon and HBM2e with only its NVLink cut (no A800 kernel measurement)."),
    _hopper("h100_sxm", ""),
    _hopper("h800", " The H800 has the H100's compute and HBM (only its NVLink is cut): "
                    "DeepGEMM's FP8 GEMMs on H800 reach 1,426 TFLOP/s at 4096 x 7168 x "
                    "16384 (72% of 1,978.9), the H100's FP8 ceiling."),
    _borrowed("h20", 78, (0.80, 0.71), hbm=_HOPPER_HBM,
              note=_BORROWED + "H20 as H100: the same Hopper die with its tensor rate capped "
              "at 148 TFLOP/s BF16; ceilings (0.80, FP8 0.71) and HBM share (0.91 of 4.0 TB/s) "
              "the H100's, unmeasured on the H20. 78 SMs, as reported from a Geekbench 6 "
              "listing of the H20 (secondary)."),
    _hopper("h200", " Assumption: H200 kernels as H100's (same compute, faster HBM); "
                    "Bekman measures the same BF16 ceiling ('H200 is the same')."),
    _borrowed("b200", 148, (0.873, 0.858), hbm=0.90,
              note=_BORROWED + "Ceilings: Bekman's maximum achievable matmul on B200 SXM, "
              "1,745.0 TFLOP/s BF16 (77.6%) and 3,432.5 FP8 (76.3%), at the shape it was "
              "measured (k = 3,072): 0.873 and 0.858 reproduce them with Hopper's k_half "
              "(scripts/calibrate.py). HBM 90%: assumption."),
    _borrowed("gb200", 148, (0.865, 0.858), hbm=0.90,
              note=_BORROWED + "Ceilings: Bekman's GB200 1,822.0 TFLOP/s BF16 (72.9% of "
              "2,500) and 3,615.6 FP8 (72.3%): 0.865 reproduces the BF16 figure at its shape "
              "with Hopper's k_half (scripts/calibrate.py); FP8 takes the same correction, "
              "0.858 (the FP8 figure's shape gives 0.904, which would make large FP8 GEMMs "
              "more than twice as fast as BF16, against the measured 1.98). HBM 90%: "
              "assumption."),
    _borrowed("b300", 148, (0.786, 0.745), hbm=0.90,
              note=_BORROWED + "Ceilings: Bekman's B300 SXM 1,769.0 TFLOP/s BF16 (78.6%) and "
              "3,353.3 FP8 (74.5%). HBM 90%: assumption."),
    _borrowed("gb300", 148, (0.786, 0.745), hbm=0.90,
              note=_BORROWED + "Ceilings: assumption, the B300's (no GB300 measurement)."),
    _borrowed("mi300x", 304, (0.54, 0.49), hbm=0.85,
              note=_BORROWED + "Ceilings: AMD's max-achievable FLOPS on MI300X with hipBLASLt, "
              "708 TFLOP/s BF16 (54%) and 1,273 FP8 (49%) (ROCm blog 'Measuring max-"
              "achievable FLOPs, part 2', Table 1). HBM 85%: assumption."),
    _borrowed("mi325x", 304, (0.64, 0.58), hbm=0.85,
              note=_BORROWED + "Ceilings: the same AMD blog, MI325X 843 TFLOP/s BF16 (64%), "
              "1,519 FP8 (58%). HBM 85%: assumption."),
    _borrowed("mi355x", 256, (0.68, 0.60), hbm=0.85,
              note=_BORROWED + "Ceilings: Bekman's MI355X 1,565 TFLOP/s BF16 (68.0% of 2,300); "
              "FP8 60%: assumption (MI325X's FP8/BF16 ratio). HBM 85%: assumption."),
    _borrowed("tpu_v5p", 8, (0.80, None), hbm=0.90,
              note="Assumption throughout: no published matmul sweep or attention kernel "
              "measurement for TPU v5p; H100-like fractions of peak (0.80 on large "
              "matmuls), 8 units for the wave model (XLA tiles the MXUs differently)."),
    _borrowed("tpu_v6e", 8, (0.80, None), hbm=0.90,
              note="Assumption throughout, as TPU v5p's entry: no published matmul sweep or "
              "attention measurement for TPU v6e."),
    _borrowed("tpu_v7", 8, (0.80, 0.71), hbm=0.90,
              note=_BORROWED + "Assumption throughout for TPU7x: the H100's BF16 and FP8 "
              "ceilings (no published matmul sweep), 8 units for the wave model, HBM 90%."),
    _borrowed("trainium2", 8, (0.80, 0.71), hbm=0.90,
              note=_BORROWED + "Assumption throughout for Trainium2: the H100's BF16 and FP8 "
              "ceilings, 8 units (its NeuronCore-v3s) for the wave model, HBM 90%."),
    _borrowed("ascend_910c", 48, (0.80, None), hbm=0.90,
              note=_BORROWED + "Assumption throughout for the Ascend 910C: the H100's BF16 "
              "ceiling, 48 units for the wave model, HBM 90% (no published GEMM sweep)."),
)

KERNEL_SPEEDS: dict[str, KernelSpeed] = {k.accelerator: k for k in _ENTRIES}

#: FlashAttention-2 where it was measured apart from the accelerator's best kernel
#: (the ``attention_kernel`` input's "flash2"); elsewhere FA2 is the catalogue's kernel.
FLASH2: dict[str, FusedAttention] = {"h100_sxm": _FA2_H100, "h800": _FA2_H100,
                                     "h200": _FA2_H100}


def kernel_speed(accelerator: str) -> KernelSpeed:
    """The kernel speeds of an accelerator of the catalogue."""
    return KERNEL_SPEEDS[accelerator]
