"""The accelerators of the hardware catalogue: one cited entry per device, SI base units.

Peaks are dense tensor throughput (no 2:4 structured sparsity). NVIDIA's and AMD's
headline figures are "with sparsity", twice the dense ones; where a source gives only
the sparse figure it is halved, and the source line says so. A precision with no
published dense figure is ``None``: the device then runs it no faster than the next
wider precision it has (an A100 has no FP8 tensor cores, so FP8 there runs at best at
the BF16 rate; ``Accelerator.peak_flops``).

Memory: ``memory_bytes`` is the vendor's label as printed, read as decimal GB (80GB ->
80e9 B); it is kept so that each entry matches its datasheet. The HBM stacks are
binary-sized, so what the device holds is that label in GiB (7.4% more: an "80GB" H100
has five 16 GiB stacks), and AMD's ROCm specification table labels the column "VRAM
(GiB)"; nvidia-smi shows 81,559 MiB (85.5e9 B, 0.5% under 80 GiB) on an H100 SXM 80GB.
The memory calculators take the label in GiB as the capacity
(formulas.model.model_states.device_capacity_bytes) and keep an explicit share of it free for
what they do not count, the CUDA context, communication buffers and allocator
fragmentation (the ``memory_reserve`` input, 5% by default; the embedding calculators'
``gpu_reserve``, TorchRec's 15%). The decimal label is not a second margin.
``memory_note`` says what is known per device.

Link bandwidths are per GPU and per direction; datasheets quote the bidirectional
total (NVLink 4: 900 GB/s = 450 each way). ``scale_up_domain`` is how many GPUs share
that bandwidth through switches (8 in an HGX/DGX node, 72 in an NVL72 rack).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GB = 1e9
TFLOP = 1e12
PFLOP = 1e15

Precision = Literal["bf16", "fp8", "fp4"]
#: Narrowest last; a missing rate falls back to the next wider format (fp4 -> fp8 -> bf16).
PRECISIONS: tuple[Precision, ...] = ("bf16", "fp8", "fp4")


@dataclass(frozen=True)
class Accelerator:
    """One accelerator model with the figures the calculators need, each cited."""

    id: str
    name: str
    peak_bf16_flops: float  # FLOP/s, dense
    memory_bytes: float  # B, the vendor's label as decimal GB; the device holds it in GiB
    memory_bandwidth: float  # B/s, HBM
    scale_up_bandwidth: float  # B/s per direction per GPU (NVLink / Infinity Fabric / ICI)
    power_watts: float | None  # W, maximum board power (TDP); None when unpublished
    source: str
    memory_note: str = ""
    peak_fp8_flops: float | None = None  # FLOP/s, dense; None: no FP8 tensor cores
    peak_fp4_flops: float | None = None  # FLOP/s, dense; None: no FP4 tensor cores
    scale_up_domain: int = 8  # GPUs joined by the scale-up switches

    def _rate(self, precision: Precision) -> float | None:
        return {"bf16": self.peak_bf16_flops, "fp8": self.peak_fp8_flops,
                "fp4": self.peak_fp4_flops}[precision]

    def precision_used(self, precision: Precision) -> Precision:
        """The precision whose rate the device runs ``precision`` at: itself if the
        vendor publishes a dense figure for it, else the next wider one that it has."""
        wider_first = PRECISIONS[: PRECISIONS.index(precision) + 1]
        return next((p for p in reversed(wider_first) if self._rate(p) is not None), "bf16")

    def peak_flops(self, precision: Precision = "bf16") -> float:
        """Dense peak FLOP/s at ``precision`` (with the fallback of ``precision_used``)."""
        return self._rate(self.precision_used(precision)) or self.peak_bf16_flops


_A100 = ("NVIDIA A100 Tensor Core GPU datasheet (2021): BF16 Tensor Core 312 TFLOPS (624 "
         "with sparsity), NVLink 600 GB/s (bidirectional), max TDP 400 W; no FP8 or FP4 "
         "tensor cores (Ampere). DGX A100: 8 GPUs on NVSwitch.")
_HOPPER = ("NVIDIA H100 Tensor Core GPU datasheet (SXM): BF16 1,979 and FP8 3,958 TFLOPS "
           "with sparsity, i.e. 989.4 and 1,978.9 dense (H100 whitepaper, Table 1; "
           "the same figures as G. Lockwood's H100 table); NVLink 900 GB/s "
           "(bidirectional); max TDP up to 700 W. HGX/DGX H100: 8 GPUs on NVSwitch.")

_ENTRIES: tuple[Accelerator, ...] = (
    Accelerator(
        id="a100_40gb_sxm", name="NVIDIA A100 40GB SXM",
        peak_bf16_flops=312 * TFLOP, memory_bytes=40 * GB, memory_bandwidth=1555 * GB,
        scale_up_bandwidth=300 * GB, power_watts=400.0,
        source=_A100 + " 40GB HBM2 at 1,555 GB/s.",
        memory_note="The device holds 40 GiB (42.9e9 B); the datasheet says 40GB.",
    ),
    Accelerator(
        id="a100_80gb_sxm", name="NVIDIA A100 80GB SXM",
        peak_bf16_flops=312 * TFLOP, memory_bytes=80 * GB, memory_bandwidth=2039 * GB,
        scale_up_bandwidth=300 * GB, power_watts=400.0,
        source=_A100 + " 80GB HBM2e at 2,039 GB/s.",
        memory_note="The device holds 80 GiB (85.9e9 B); the datasheet says 80GB.",
    ),
    Accelerator(
        id="h100_sxm", name="NVIDIA H100 SXM5 80GB",
        peak_bf16_flops=989.4 * TFLOP, peak_fp8_flops=1978.9 * TFLOP,
        memory_bytes=80 * GB, memory_bandwidth=3350 * GB,
        scale_up_bandwidth=450 * GB, power_watts=700.0,
        source=_HOPPER + " 80GB HBM3 at 3.35 TB/s.",
        memory_note="Five 16 GiB HBM3 stacks: 80 GiB physical (85.9e9 B); nvidia-smi "
                    "reports 81,559 MiB (85.5e9 B) for the H100 SXM 80GB.",
    ),
    Accelerator(
        id="h800", name="NVIDIA H800 SXM5 80GB",
        peak_bf16_flops=989.4 * TFLOP, peak_fp8_flops=1978.9 * TFLOP,
        memory_bytes=80 * GB, memory_bandwidth=3350 * GB,
        scale_up_bandwidth=200 * GB, power_watts=700.0,
        source=("The H100 SXM5's compute, memory and power with NVLink cut to 400 GB/s "
                "bidirectional, 200 GB/s per direction (the export variant for China: "
                "DeepSeek-V3's training GPU; 'the 400GB/s ... is the bidirectional "
                "theoretical value', deepseek-ai/DeepSeek-V3 issue 28; DeepSeek-V3 report, "
                "Sec. 3.2.2, measures 160 GB/s NVLink and 50 GB/s InfiniBand per GPU). "
                "Dense peaks as the H100's: " + _HOPPER),
        memory_note="As the H100 SXM5 80GB: 80 GiB physical.",
    ),
    Accelerator(
        id="h200", name="NVIDIA H200 SXM 141GB",
        peak_bf16_flops=989.4 * TFLOP, peak_fp8_flops=1978.9 * TFLOP,
        memory_bytes=141 * GB, memory_bandwidth=4800 * GB,
        scale_up_bandwidth=450 * GB, power_watts=700.0,
        source=("NVIDIA H200 Tensor Core GPU datasheet: the H100's compute (BF16 1,979 and "
                "FP8 3,958 TFLOPS with sparsity), 141GB HBM3e at 4.8 TB/s, NVLink 900 GB/s "
                "(bidirectional), max TDP up to 700 W. NVIDIA's MLPerf Inference v4.1 system "
                "description (H200-SXM-141GBx8): '141 GB', '18x 4th Gen NVLink, 900GB/s', "
                "'H200 TGP 700W'."),
        memory_note="Six 24 GiB HBM3e stacks (144 GiB physical); the datasheet's 141GB is "
                    "what is enabled.",
    ),
    Accelerator(
        id="b200", name="NVIDIA B200 (HGX, 1,000 W)",
        peak_bf16_flops=2250 * TFLOP, peak_fp8_flops=4500 * TFLOP,
        peak_fp4_flops=9000 * TFLOP,
        memory_bytes=180 * GB, memory_bandwidth=8000 * GB,
        scale_up_bandwidth=900 * GB, power_watts=1000.0,
        source=("NVIDIA HGX B200 datasheet, for 8 GPUs with sparsity: FP16/BF16 36, FP8 72, "
                "FP4 144 PFLOPS, i.e. dense per GPU 2.25, 4.5 and 9 PFLOP/s (FP4's dense "
                "figure, 72 PF per 8 GPUs, is in the table); 1.44 TB HBM3e (180 GB per "
                "GPU) at 8 TB/s; NVLink 5, 1.8 TB/s per GPU (bidirectional), 14.4 TB/s per "
                "8; 1,000 W. MLPerf Inference v6.0 (Nebius, B200-SXM-180GB): 'B200 TGP "
                "1000W', '18x 5th Gen NVLink, 14.4 TB/s aggregated'."),
        memory_note="NVIDIA's later HGX B200 tables give 7.7 TB/s per GPU (62 TB/s per 8); "
                    "the catalogue keeps the datasheet's 8 TB/s.",
    ),
    Accelerator(
        id="gb200", name="NVIDIA B200 in GB200 NVL72 (1,200 W)",
        peak_bf16_flops=2500 * TFLOP, peak_fp8_flops=5000 * TFLOP,
        peak_fp4_flops=10000 * TFLOP,
        memory_bytes=186 * GB, memory_bandwidth=8000 * GB,
        scale_up_bandwidth=900 * GB, power_watts=1200.0, scale_up_domain=72,
        source=("NVIDIA GB200 NVL72 datasheet, per GPU with sparsity: FP16/BF16 5, FP8 10, "
                "FP4 20 PFLOPS, i.e. 2.5, 5 and 10 dense (G. Lockwood's B200 table: the "
                "same dense figures at 1,200 W); rack: 72 GPUs, up to 13.4 TB HBM3e "
                "(186 GB per GPU) at 576 TB/s (8 TB/s per GPU), NVLink Switch System "
                "130 TB/s (1.8 TB/s per GPU, bidirectional); GPU power configurable up to "
                "1,200 W."),
        memory_note="Eight 24 GB stacks (192 GB) on the package; 186 GB enabled per GPU.",
    ),
    Accelerator(
        id="b300", name="NVIDIA B300 (HGX, Blackwell Ultra)",
        peak_bf16_flops=2250 * TFLOP, peak_fp8_flops=4500 * TFLOP,
        peak_fp4_flops=13125 * TFLOP,
        memory_bytes=288 * GB, memory_bandwidth=7700 * GB,
        scale_up_bandwidth=900 * GB, power_watts=1100.0,
        source=("NVIDIA HGX B300 datasheet, for 8 GPUs: FP16/BF16 36 and FP8 72 PFLOPS "
                "with sparsity (2.25 and 4.5 dense per GPU), FP4 144 PFLOPS with sparsity "
                "and 105 dense (13.125 per GPU; G. Lockwood's B300 table has the same), "
                "up to 2.3 TB HBM3e (288 GB per GPU), NVLink 5 at 1.8 TB/s per GPU; "
                "7.7 TB/s per GPU and 1,100 W as tabulated from NVIDIA's figures by Verda "
                "(GB300 NVL72 architecture, 2025)."),
        memory_note="Marketed as 288 GB per GPU (2.3 TB per 8); Verda's table lists 270 GB "
                    "as usable.",
    ),
    Accelerator(
        id="gb300", name="NVIDIA B300 in GB300 NVL72 (1,400 W)",
        peak_bf16_flops=2500 * TFLOP, peak_fp8_flops=5000 * TFLOP,
        peak_fp4_flops=15000 * TFLOP,
        memory_bytes=279 * GB, memory_bandwidth=8000 * GB,
        scale_up_bandwidth=900 * GB, power_watts=1400.0, scale_up_domain=72,
        source=("NVIDIA GB300 NVL72 datasheet, rack of 72 GPUs, dense: FP4 1,080 PFLOPS "
                "(1,440 with sparsity), FP8 360, FP16/BF16 180, i.e. 15, 5 and 2.5 per GPU; "
                "20 TB HBM3e at 576 TB/s (279 GB and 8 TB/s per GPU), NVLink 130 TB/s "
                "(1.8 TB/s per GPU, bidirectional), 72 ConnectX-8 SuperNICs; 1.4 kW per "
                "GPU (per-GPU table as reproduced by Verda, 2025; rack figures also in "
                "G. Lockwood's B300 page)."),
        memory_note="Marketed as 288 GB per Blackwell Ultra GPU; NVIDIA's GB300 NVL72 table "
                    "gives 279 GB per GPU.",
    ),
    Accelerator(
        id="mi300x", name="AMD Instinct MI300X",
        peak_bf16_flops=1307.4 * TFLOP, peak_fp8_flops=2614.9 * TFLOP,
        memory_bytes=192 * GB, memory_bandwidth=5300 * GB,
        scale_up_bandwidth=448 * GB, power_watts=750.0,
        source=("AMD Instinct MI300X data sheet: peak BF16 1,307.4 TFLOPS dense (2,614.9 "
                "with sparsity), FP8 2,614.9 dense (5,229.8 with sparsity), 192 GB HBM3 "
                "at 5.3 TB/s, 7 Infinity Fabric links of 128 GB/s bidirectional (896 GB/s, "
                "i.e. 448 GB/s each way) in an 8-GPU mesh, 750 W TBP (AMD's MLPerf "
                "Inference v4.1 system 'MI300X-NPS1-SPX-192GB-750W')."),
        memory_note="AMD's ROCm GPU specification table lists 192 in its 'VRAM (GiB)' column.",
    ),
    Accelerator(
        id="mi325x", name="AMD Instinct MI325X",
        peak_bf16_flops=1307.4 * TFLOP, peak_fp8_flops=2614.9 * TFLOP,
        memory_bytes=256 * GB, memory_bandwidth=6000 * GB,
        scale_up_bandwidth=448 * GB, power_watts=1000.0,
        source=("AMD Instinct MI325X product page: the MI300X's compute (FP16/BF16 1,307.4, "
                "FP8 2,614.9 TFLOPS dense), 256 GB HBM3e at 6 TB/s, 1,000 W, seven Infinity "
                "Fabric links on the MI300X platform (the per-link 128 GB/s is assumed the "
                "same as MI300X's). Vultr's docs quote the same 256 GB, 6.0 TB/s and "
                "1,307 TFLOPS FP16 from that page."),
        memory_note="AMD's ROCm GPU specification table lists 256 in its 'VRAM (GiB)' column.",
    ),
    Accelerator(
        id="mi355x", name="AMD Instinct MI355X",
        peak_bf16_flops=2500 * TFLOP, peak_fp8_flops=5000 * TFLOP,
        peak_fp4_flops=10000 * TFLOP,
        memory_bytes=288 * GB, memory_bandwidth=8000 * GB,
        scale_up_bandwidth=537.6 * GB, power_watts=1400.0,
        source=("AMD Instinct MI355X (CDNA 4): 256 CUs at 2.4 GHz, 288 GB HBM3E at 8 TB/s, "
                "1,400 W TBP (AMD at Hot Chips 2025, reported by Wccftech; The Register, "
                "2025-06-12); FP8 5 PFLOP/s dense = 256 CUs x 8,192 FLOP/clock x 2.4 GHz "
                "(AMD at ISSCC 2026, as reported); FP4/FP6 20 PFLOPS with sparsity, 10 "
                "dense; BF16 2.5 PFLOP/s dense is derived as half the FP8 rate, the CDNA "
                "ratio (MI300X: 1,307.4 and 2,614.9). Infinity Fabric: 7 links of "
                "153.6 GB/s bidirectional (1,075 GB/s; 537.6 GB/s each way), as reported."),
        memory_note="AMD's ROCm GPU specification table lists 288 in its 'VRAM (GiB)' column.",
    ),
    Accelerator(
        id="tpu_v5p", name="Google TPU v5p",
        peak_bf16_flops=459 * TFLOP,
        memory_bytes=95 * GB, memory_bandwidth=2765 * GB,
        scale_up_bandwidth=600 * GB, power_watts=None, scale_up_domain=64,
        source=("Google Cloud TPU v5p documentation, key specifications: peak compute "
                "459 TFLOPS (bf16) per chip (918 TOPS int8; no FP8 figure), 95 GB HBM2e at "
                "2,765 GB/s, inter-chip interconnect 1,200 GB/s bidirectional per chip. "
                "Google publishes no per-chip power figure. The scale-up domain is a 3D "
                "torus, not a switch: 64 = one 4x4x4 cube, the unit slices are built from."),
        memory_note="Google's docs list 95 GiB usable of 96 GiB physical per chip.",
    ),
)

ACCELERATORS: dict[str, Accelerator] = {a.id: a for a in _ENTRIES}
