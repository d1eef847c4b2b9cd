"""The accelerators of the hardware catalogue: one cited entry per device, SI base units.
The entries live by vendor (``accelerators_nvidia``, ``accelerators_others``; the entry's
shape in ``accelerator_spec``); this module assembles them into ``ACCELERATORS``, the
choices every ``gpu`` input offers, and lists the parts that cannot be offered yet
(``ANNOUNCED``).

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
that bandwidth through switches (8 in an HGX/DGX node, 72 in an NVL72 rack, 384 in a
CloudMatrix384 supernode), or, for TPUs and Trainium, the torus each entry names.

A part enters ``ACCELERATORS`` only when every figure the calculators divide by (the
dense BF16 peak, memory, HBM and scale-up bandwidth) is published, or derived from
published figures with the derivation in its source. A part announced, or shipping
without a datasheet, is listed in ``ANNOUNCED`` with its unpublished figures as None;
the guide's hardware page shows both tables.
"""

from __future__ import annotations

from calculators.catalogues.accelerator_spec import (
    GB,
    PFLOP,
    PRECISIONS,
    TFLOP,
    Accelerator,
    AnnouncedPart,
    Precision,
)
from calculators.catalogues.accelerators_nvidia import NVIDIA
from calculators.catalogues.accelerators_others import OTHERS

__all__ = ["ACCELERATORS", "ANNOUNCED", "GB", "PFLOP", "PRECISIONS", "TFLOP", "Accelerator",
           "AnnouncedPart", "Precision"]

ACCELERATORS: dict[str, Accelerator] = {a.id: a for a in (*NVIDIA, *OTHERS)}

ANNOUNCED: dict[str, AnnouncedPart] = {p.id: p for p in (
    AnnouncedPart(
        id="rubin", name="NVIDIA Rubin in Vera Rubin NVL72", status="announced",
        peak_bf16_flops=None, peak_fp8_flops=None, peak_fp4_flops=None,
        memory_bytes=288 * GB, memory_bandwidth=22e12, scale_up_bandwidth=1800 * GB,
        scale_up_domain=72, power_watts=None,
        announced=("per GPU: NVFP4 50 PFLOPS for inference and 35 PFLOPS for training; per "
                   "rack: 3.6 EFLOPS NVFP4 inference, 2.5 EFLOPS NVFP4 training, 20.7 TB of "
                   "HBM4 at 1.6 PB/s, NVLink 6 at 260 TB/s (GTC 2025 named the same rack "
                   "NVL144, counting dies: 3.6 EFLOPS FP4 inference, 1.2 EFLOPS FP8 "
                   "training)"),
        source=("NVIDIA's Vera Rubin NVL72 announcement (CES, January 2026) and GTC 2025 "
                "keynote: 72 Rubin GPUs (two dies each) and 36 Vera CPUs per rack, 288 GB of "
                "HBM4 per GPU at 22 TB/s, NVLink 6 at 3.6 TB/s per GPU (bidirectional, "
                "1.8 TB/s each way; 72 x 3.6 = 259.2, NVIDIA's 260 TB/s per rack). NVIDIA has "
                "published no dense BF16 or FP8 peak per GPU, does not say whether the NVFP4 "
                "figures are dense, and gives no board power: no datasheet yet, so the "
                "calculators do not offer the part."),
    ),
    AnnouncedPart(
        id="ascend_910b", name="Huawei Ascend 910B (Atlas 800T A2)",
        status="shipping, no datasheet",
        peak_bf16_flops=None, peak_fp8_flops=None, peak_fp4_flops=None,
        memory_bytes=None, memory_bandwidth=None, scale_up_bandwidth=None,
        scale_up_domain=8, power_watts=None,
        announced=("Atlas 800T A2 training server: 8 Ascend 910B NPUs joined by HCCS, each "
                   "with its own network port on the parameter plane"),
        source=("Huawei Ascend documentation (MindCluster and Ascend Deployer guides for the "
                "Atlas 800T A2 and the Atlas 900 A2 PoD: eight NPUs and eight NPU network "
                "ports per training node, one per NPU, HCCS between the NPUs). Huawei "
                "publishes no per-chip 910B datasheet; the secondary figures disagree (FP16 "
                "280 to 376 TFLOPS, 32 or 64 GB of HBM2e, 0.4 to 1.6 TB/s, HCCS 392 GB/s, "
                "ports of 200GE), so none is catalogued. The Ascend 910C of CloudMatrix384 "
                "(in ACCELERATORS) is reported to package two dies of this class."),
    ),
)}
