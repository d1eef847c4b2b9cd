"""The accelerator catalogue beyond NVIDIA (``accelerators`` explains the conventions and
assembles ``ACCELERATORS``): AMD Instinct, Google TPUs, AWS Trainium and Huawei Ascend.

Google, AWS and Huawei publish no board power for these parts: ``power_watts`` is None
and the energy calculators ask for it. Their scale-up domains are not all switches: a
TPU slice is a torus of direct links, a Trn2 UltraServer a torus of instances joined in
rings, and each entry says which domain it counts.
"""

from __future__ import annotations

from calculators.catalogues.accelerator_spec import GB, TFLOP, Accelerator

OTHERS: tuple[Accelerator, ...] = (
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
    Accelerator(
        id="tpu_v6e", name="Google TPU v6e (Trillium)",
        peak_bf16_flops=918 * TFLOP,
        memory_bytes=32 * GB, memory_bandwidth=1638 * GB,
        scale_up_bandwidth=400 * GB, power_watts=None, scale_up_domain=256,
        source=("Google Cloud TPU v6e documentation, key specifications: peak compute 918 "
                "TFLOPs (bf16) per chip (1,836 TOPs int8; the TPU7x page's comparison table "
                "gives FP8 918, the bf16 rate, so no faster FP8 is catalogued), 32 GB HBM at "
                "1,638 GBps, inter-chip interconnect (ICI) 800 GBps bidirectional per chip "
                "over 4 ports, 8 chips per host, 256 chips per pod in a 2D torus. Google "
                "publishes no per-chip power figure. The scale-up domain is the pod: all "
                "256 chips on ICI, through the torus rather than a switch."),
        memory_note="The v6e page says 32 GB per chip, the TPU7x comparison table 32 GiB.",
    ),
    Accelerator(
        id="tpu_v7", name="Google TPU7x (Ironwood)",
        peak_bf16_flops=2307 * TFLOP, peak_fp8_flops=4614 * TFLOP,
        memory_bytes=192 * GB, memory_bandwidth=7370 * GB,
        scale_up_bandwidth=600 * GB, power_watts=None, scale_up_domain=64,
        source=("Google Cloud TPU7x (Ironwood) documentation, specification table: peak "
                "compute per chip 2,307 TFLOPs BF16 and 4,614 FP8 (TPUs have no sparsity "
                "mode: dense), 192 GiB HBM per chip, 9,216 chips per pod. Google's Ironwood "
                "announcement (Google Cloud blog, 'Ironwood: The first Google TPU for the age "
                "of inference', April 2025): 7.37 TB/s HBM per chip, ICI 1.2 TBps "
                "bidirectional per chip (600 GB/s each way). No FP4 figure; no per-chip "
                "power figure. The scale-up domain is one 4x4x4 cube of 64 chips, as for "
                "v5p; a pod joins 144 cubes through optical circuit switches."),
        memory_note="Google's documentation lists 192 GiB per chip; the blog says 192 GB.",
    ),
    Accelerator(
        id="trainium2", name="AWS Trainium2 (Trn2 UltraServer)",
        peak_bf16_flops=667 * TFLOP, peak_fp8_flops=1299 * TFLOP,
        memory_bytes=96 * GB, memory_bandwidth=2900 * GB,
        scale_up_bandwidth=640 * GB, power_watts=None, scale_up_domain=64,
        source=("AWS Neuron documentation, Trainium2 architecture: 8 NeuronCore-v3 per "
                "chip, 667 BF16/FP16/TF32 and 1,299 FP8 TFLOPS (dense; 2,563 with "
                "structured sparsity), 96 GiB of HBM at 2.9 TB/s, NeuronLink-v3 1.28 TB/s "
                "per chip. Amazon EC2 Trn2 architecture: 16 chips per trn2.48xlarge in a 4x4 "
                "2D torus (1,024 GB/s per chip inside the instance), four instances per Trn2 "
                "UltraServer, 64 chips (256 GB/s per chip between instances, chips at the "
                "same coordinates in a ring), EFAv3 3,200 Gbps per instance. AWS does not say "
                "whether 1.28 TB/s counts both directions: read as bidirectional, 640 GB/s "
                "each way, as NVIDIA and Google quote theirs (assumption). The domain is the "
                "UltraServer: a 16-chip instance alone is nvlink_domain 16. AWS publishes no "
                "per-chip power figure."),
        memory_note="AWS gives 96 GiB per chip; the label 96 is read as GiB, as for the "
                    "other parts.",
    ),
    Accelerator(
        id="ascend_910c", name="Huawei Ascend 910C (CloudMatrix 384)",
        peak_bf16_flops=752 * TFLOP,
        memory_bytes=128 * GB, memory_bandwidth=3200 * GB,
        scale_up_bandwidth=392 * GB, power_watts=None, scale_up_domain=384,
        source=("Zuo et al. 2025, 'Serving Large Language Models on Huawei CloudMatrix384' "
                "(Huawei, arXiv 2506.12708), hardware section: the Ascend 910C is two dies "
                "in one package, about 752 TFLOPS dense BF16/FP16 per package, 128 GB of "
                "on-package HBM at 3.2 TB/s; the UB (Unified Bus) plane gives each 910C "
                "392 GB/s unidirectional to every other NPU of the supernode through two "
                "tiers of UB switches, non-blocking; 384 NPUs and 192 Kunpeng CPUs per "
                "CloudMatrix384 (48 nodes of 8 NPUs); an RDMA plane of up to 400 Gb/s per "
                "NPU (RoCE) between supernodes. No FP8 (the paper quantizes to INT8) and "
                "no FP4. Huawei's rounder supernode total, 300 PFLOPS (WAIC 2025; Huawei "
                "Connect 2025), is 781 TFLOPS per NPU, 4% above the paper's. Huawei "
                "publishes no per-chip power figure."),
        memory_note="128 GB on the package (64 GB per die), as the paper labels it; read "
                    "as GiB, as for the other parts.",
    ),
)
