"""How long one GEMM takes on one accelerator, by its shape.

A GEMM C[m x n] = A[m x k] B[k x n] runs 2mnk FLOPs. Its time is the roofline's
``max(compute, memory)`` (Williams et al. 2009; formulas.kernels.roofline) plus a fixed
cost per kernel, with the compute rate a shape-dependent fraction of the dense peak:

    efficiency = max_efficiency x wave_utilisation(m, n) ** wave_exponent x k / (k + k_half)

- ``max_efficiency``: what the largest, best-shaped GEMMs reach (Bekman's "maximum
  achievable matmul FLOPS", ml-engineering, compute/accelerator: A100 SXM 86.9%, H100
  SXM 80.3% of the dense BF16 peak).
- wave quantisation: the output is cut into tiles, one per thread block, and the tiles
  run in waves of one per streaming multiprocessor; a last wave that is partly empty
  idles the rest of the GPU (NVIDIA, "Matrix Multiplication Background User's Guide",
  wave quantization; Bekman, ml-engineering, training/performance "Tile and wave
  quantization"). The library picks among tile sizes and split-K, which softens the
  steps; ``wave_exponent`` (0: none, 1: full) says how much.
- ``k / (k + k_half)``: a short inner dimension leaves too few steps to hide the
  pipeline's fill and the epilogue (DeepGEMM's H800 table: K = 512 reaches two thirds of
  the rate of K = 1,536 at the same m and n).

The parameters of each accelerator are fitted to published GEMM measurements
(catalogues.kernel_speeds cites them; published_checks.kernels holds the points).
Backward GEMMs (the input gradient, m x k from m x n and n x k; the weight gradient,
k x n with inner dimension m) are the same three sizes in another order; Transformer
Engine's GEMM benchmark times them within 2% of the forward's on H200 (gemm_profiling,
"Dgrad within 2% of Fprop"), so a layer's backward is priced at twice its forward.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

#: cuBLAS's common tensor-core tile on Ampere and Hopper, output rows x columns (Bekman,
#: ml-engineering, "Tile and wave quantization", uses 128 x 256; 128 x 128 fits the
#: published measurements as well or better: scripts/calibrate.py).
TILE_ROWS, TILE_COLUMNS = 128, 128


@dataclass(frozen=True)
class GemmRate:
    """What one accelerator's GEMM time depends on besides the shape."""

    peak_flops: float  # FLOP/s, dense, at the operands' precision
    memory_bandwidth: float  # B/s actually reached (datasheet x HBM efficiency)
    max_efficiency: float  # fraction of peak on the largest, best-shaped GEMMs
    k_half: float  # inner dimension at which the pipeline-fill factor is one half
    overhead_s: float  # fixed time of one kernel (launch, fill, tail)
    wave_exponent: float  # 0: no wave quantisation, 1: the full step
    sms: int  # streaming multiprocessors (compute units) the tiles are spread over
    #: The device's multiprocessors when some are reserved for communication (0: none
    #: reserved, ``sms`` is all of them).
    all_sms: int = 0


def wave_utilisation(m: int, n: int, sms: int, batch: int = 1) -> float:
    """The share of the GPU's multiprocessors busy over a GEMM's waves of output tiles
    (``batch`` independent GEMMs of the same shape share the waves)."""
    tiles = batch * math.ceil(m / TILE_ROWS) * math.ceil(n / TILE_COLUMNS)
    waves = math.ceil(tiles / sms)
    return tiles / (waves * sms)


def gemm_efficiency(m: int, n: int, k: int, rate: GemmRate, batch: int = 1) -> float:
    """The fraction of the dense peak the arithmetic of this GEMM runs at.

    With multiprocessors reserved, the waves are counted over those left, but never
    fuller than the whole device's would be at its full peak: taking multiprocessors
    away cannot speed a GEMM up, though the fitted wave exponent (below 1, a smoothed
    step) would let a shape that fills the smaller device's waves exactly gain on one
    that leaves the whole device's last wave part empty (issue 36: a DualPipe layout
    whose reserved SMs "cost" -5 s)."""
    waves = math.pow(wave_utilisation(m, n, rate.sms, batch), rate.wave_exponent)
    if rate.all_sms > rate.sms:
        whole = math.pow(wave_utilisation(m, n, rate.all_sms, batch), rate.wave_exponent)
        waves = min(waves, whole * rate.all_sms / rate.sms)
    return rate.max_efficiency * waves * k / (k + rate.k_half)


def gemm_time_s(m: int, n: int, k: int, rate: GemmRate, *, operand_bytes: float = 2.0,
                output_bytes: float = 2.0, batch: int = 1) -> float:
    """Seconds for ``batch`` GEMMs (m x k) @ (k x n): the slower of the arithmetic at its
    shape's efficiency and the minimum memory traffic (each operand read once, the
    output written once), plus one kernel's fixed cost."""
    if min(m, n, k, batch) <= 0:
        return 0.0
    flops = 2.0 * m * n * k * batch
    arithmetic = flops / (rate.peak_flops * gemm_efficiency(m, n, k, rate, batch))
    traffic = batch * ((m * k + k * n) * operand_bytes + m * n * output_bytes)
    return max(arithmetic, traffic / rate.memory_bandwidth) + rate.overhead_s


def achieved_flops(m: int, n: int, k: int, rate: GemmRate, *,
                   operand_bytes: float = 2.0) -> float:
    """FLOP/s one GEMM of this shape reaches (what a GEMM benchmark reports)."""
    return 2.0 * m * n * k / gemm_time_s(m, n, k, rate, operand_bytes=operand_bytes)


def with_reserved_sms(rate: GemmRate, reserved: int) -> GemmRate:
    """The GEMM rate left when ``reserved`` multiprocessors drive communication instead.

    DeepSeek-V3 dedicates 20 of the H800's 132 SMs to its alltoall and pipeline
    kernels (report, arXiv:2412.19437, Sec. 3.2.1: 20 SMs in 10 communication channels;
    Sec. 3.5.1: "20 out of the 132 SMs available in the H800 GPU"). Our assumption: a
    GEMM's tiles then run on the rest at the same per-SM rate, so the peak scales by
    (SMs - reserved)/SMs and the waves are counted over the SMs left.
    """
    if reserved <= 0:
        return rate
    if reserved >= rate.sms:
        raise ValueError(f"cannot reserve {reserved} of {rate.sms} multiprocessors")
    left = rate.sms - reserved
    return replace(rate, peak_flops=rate.peak_flops * left / rate.sms, sms=left,
                   all_sms=rate.all_sms or rate.sms)
