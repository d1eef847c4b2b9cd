"""The accelerator catalogue: one cited entry per device, SI base units.

Peak figures are dense (no 2:4 structured sparsity) BF16 tensor throughput: NVIDIA's
headline numbers for Hopper and Blackwell are "with sparsity" and twice the dense
figure. Memory capacities are as the datasheet states them (decimal GB) and the
``memory_note`` says where that differs from what software reports. Link bandwidths
are per GPU and per direction (datasheets quote the bidirectional total).
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1e9
TFLOP = 1e12


@dataclass(frozen=True)
class Accelerator:
    """One accelerator model with the figures the calculators need, each cited."""

    id: str
    name: str
    peak_bf16_flops: float  # FLOP/s, dense
    memory_bytes: float  # B, as the datasheet states it
    memory_bandwidth: float  # B/s, HBM
    scale_up_bandwidth: float  # B/s per direction per GPU (NVLink / Infinity Fabric / ICI)
    power_watts: float | None  # W, maximum board power (TDP); None when unpublished
    source: str
    memory_note: str = ""


ACCELERATORS: dict[str, Accelerator] = {
    a.id: a
    for a in (
        Accelerator(
            id="a100_40gb_sxm",
            name="NVIDIA A100 40GB SXM",
            peak_bf16_flops=312 * TFLOP,
            memory_bytes=40 * GB,
            memory_bandwidth=1555 * GB,
            scale_up_bandwidth=300 * GB,
            power_watts=400.0,
            source=(
                "NVIDIA A100 Tensor Core GPU datasheet (2021): BF16 Tensor Core 312 TFLOPS "
                "(624 with sparsity), 40GB HBM2 at 1,555 GB/s, NVLink 600 GB/s "
                "(bidirectional), max TDP 400 W."
            ),
            memory_note="The device holds 40 GiB (42.9e9 B); the datasheet says 40GB.",
        ),
        Accelerator(
            id="a100_80gb_sxm",
            name="NVIDIA A100 80GB SXM",
            peak_bf16_flops=312 * TFLOP,
            memory_bytes=80 * GB,
            memory_bandwidth=2039 * GB,
            scale_up_bandwidth=300 * GB,
            power_watts=400.0,
            source=(
                "NVIDIA A100 Tensor Core GPU datasheet (2021): BF16 Tensor Core 312 TFLOPS "
                "(624 with sparsity), 80GB HBM2e at 2,039 GB/s, NVLink 600 GB/s "
                "(bidirectional), max TDP 400 W."
            ),
            memory_note="The device holds 80 GiB (85.9e9 B); the datasheet says 80GB.",
        ),
        Accelerator(
            id="h100_sxm",
            name="NVIDIA H100 SXM5 80GB",
            peak_bf16_flops=989.4 * TFLOP,
            memory_bytes=80 * GB,
            memory_bandwidth=3350 * GB,
            scale_up_bandwidth=450 * GB,
            power_watts=700.0,
            source=(
                "NVIDIA H100 Tensor Core GPU datasheet: BF16 Tensor Core 1,979 TFLOPS with "
                "sparsity, i.e. 989.4 dense (H100 whitepaper, Table 1); 80GB HBM3 at "
                "3.35 TB/s; NVLink 900 GB/s (bidirectional); max TDP up to 700 W."
            ),
            memory_note="nvidia-smi reports 81,559 MiB (85.5e9 B) for the H100 SXM 80GB.",
        ),
        Accelerator(
            id="h200",
            name="NVIDIA H200 SXM 141GB",
            peak_bf16_flops=989.4 * TFLOP,
            memory_bytes=141 * GB,
            memory_bandwidth=4800 * GB,
            scale_up_bandwidth=450 * GB,
            power_watts=700.0,
            source=(
                "NVIDIA H200 Tensor Core GPU datasheet: BF16 Tensor Core 1,979 TFLOPS with "
                "sparsity (989.4 dense, the H100's compute), 141GB HBM3e at 4.8 TB/s, "
                "NVLink 900 GB/s (bidirectional), max TDP up to 700 W."
            ),
        ),
        Accelerator(
            id="b200",
            name="NVIDIA B200 (HGX, 1,000 W)",
            peak_bf16_flops=2250 * TFLOP,
            memory_bytes=180 * GB,
            memory_bandwidth=8000 * GB,
            scale_up_bandwidth=900 * GB,
            power_watts=1000.0,
            source=(
                "NVIDIA HGX B200 datasheet: FP16/BF16 Tensor Core 36 PFLOPS with sparsity "
                "for 8 GPUs, i.e. 2.25 PFLOP/s dense per GPU; 1.44 TB HBM3e per 8 GPUs "
                "(180 GB each) at 8 TB/s; NVLink 5 1.8 TB/s (bidirectional); 1,000 W."
            ),
        ),
        Accelerator(
            id="mi300x",
            name="AMD Instinct MI300X",
            peak_bf16_flops=1307.4 * TFLOP,
            memory_bytes=192 * GB,
            memory_bandwidth=5300 * GB,
            scale_up_bandwidth=448 * GB,
            power_watts=750.0,
            source=(
                "AMD Instinct MI300X data sheet: peak BF16 1,307.4 TFLOPS dense (2,614.9 "
                "with sparsity), 192 GB HBM3 at 5.3 TB/s, 7 Infinity Fabric links of "
                "128 GB/s bidirectional (896 GB/s, i.e. 448 GB/s each way), 750 W TBP."
            ),
        ),
        Accelerator(
            id="tpu_v5p",
            name="Google TPU v5p",
            peak_bf16_flops=459 * TFLOP,
            memory_bytes=95 * GB,
            memory_bandwidth=2765 * GB,
            scale_up_bandwidth=600 * GB,
            power_watts=None,
            source=(
                "Google Cloud TPU v5p documentation, key specifications: peak compute "
                "459 TFLOPS (bf16) per chip, 95 GB HBM2e at 2,765 GB/s, inter-chip "
                "interconnect 1,200 GB/s bidirectional per chip. Google publishes no "
                "per-chip power figure."
            ),
            memory_note="Google's docs list 95 GiB usable of 96 GiB physical per chip.",
        ),
    )
}

DEFAULT_ACCELERATOR = "h100_sxm"


def get(accelerator_id: str) -> Accelerator:
    return ACCELERATORS[accelerator_id]


#: Default scale-out port per GPU when none is given: DGX A100 has one HDR 200 Gb/s
#: port per GPU, DGX H100/H200/B200 one NDR 400 Gb/s (NVIDIA DGX user guides).
DEFAULT_NIC = {"a100_40gb_sxm": "ib_hdr", "a100_80gb_sxm": "ib_hdr"}


def default_nic(accelerator_id: str) -> Link:
    """The scale-out port a node of this accelerator has by default (DEFAULT_NIC)."""
    return LINKS[DEFAULT_NIC.get(accelerator_id, "ib_ndr")]


@dataclass(frozen=True)
class Link:
    """A network port or scale-up link, with its line rate per direction."""

    id: str
    name: str
    bandwidth: float  # B/s per direction (line rate, not measured)
    source: str


LINKS: dict[str, Link] = {
    link.id: link
    for link in (
        Link(
            "ib_hdr",
            "InfiniBand HDR 200 Gb/s",
            200e9 / 8,
            "InfiniBand Trade Association roadmap: HDR 4x = 200 Gb/s per port, per direction.",
        ),
        Link(
            "ib_ndr",
            "InfiniBand NDR 400 Gb/s",
            400e9 / 8,
            "InfiniBand Trade Association roadmap: NDR 4x = 400 Gb/s per port, per direction.",
        ),
        Link(
            "ib_xdr",
            "InfiniBand XDR 800 Gb/s",
            800e9 / 8,
            "InfiniBand Trade Association roadmap: XDR 4x = 800 Gb/s per port, per direction.",
        ),
        Link(
            "roce_400g",
            "400 GbE RoCEv2",
            400e9 / 8,
            "IEEE 802.3bs 400GBASE: 400 Gb/s per port, per direction.",
        ),
        Link(
            "roce_100g",
            "100 GbE RoCEv2",
            100e9 / 8,
            "IEEE 802.3ba/bm 100GBASE: 100 Gb/s per port, per direction.",
        ),
        Link(
            "nvlink3",
            "NVLink 3 (A100), per GPU",
            300e9,
            "NVIDIA A100 datasheet: 600 GB/s NVLink per GPU, bidirectional.",
        ),
        Link(
            "nvlink4",
            "NVLink 4 (H100/H200), per GPU",
            450e9,
            "NVIDIA H100 datasheet: 900 GB/s NVLink per GPU, bidirectional.",
        ),
        Link(
            "nvlink5",
            "NVLink 5 (B200), per GPU",
            900e9,
            "NVIDIA HGX B200 datasheet: 1.8 TB/s NVLink per GPU, bidirectional.",
        ),
    )
}
