"""NVIDIA entries of the accelerator catalogue (``accelerators`` explains the conventions
and assembles ``ACCELERATORS``): Ampere, Hopper and Blackwell, with the export variants
for China (A800, H800, H20) next to the parts they are cut from."""

from __future__ import annotations

from calculators.catalogues.accelerator_spec import GB, TFLOP, Accelerator

_A100 = ("NVIDIA A100 Tensor Core GPU datasheet (2021): BF16 Tensor Core 312 TFLOPS (624 "
         "with sparsity), NVLink 600 GB/s (bidirectional), max TDP 400 W; no FP8 or FP4 "
         "tensor cores (Ampere). DGX A100: 8 GPUs on NVSwitch.")
_HOPPER = ("NVIDIA H100 Tensor Core GPU datasheet (SXM): BF16 1,979 and FP8 3,958 TFLOPS "
           "with sparsity, i.e. 989.4 and 1,978.9 dense (H100 whitepaper, Table 1; "
           "the same figures as G. Lockwood's H100 table); NVLink 900 GB/s "
           "(bidirectional); max TDP up to 700 W. HGX/DGX H100: 8 GPUs on NVSwitch.")


NVIDIA: tuple[Accelerator, ...] = (
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
        id="a800", name="NVIDIA A800 SXM4 80GB",
        peak_bf16_flops=312 * TFLOP, memory_bytes=80 * GB, memory_bandwidth=2039 * GB,
        scale_up_bandwidth=200 * GB, power_watts=400.0,
        source=("NVIDIA A800 Tensor Core GPU datasheet (2022; the A100's export variant for "
                "China): the A100 80GB SXM's compute, memory and power, BF16 312 TFLOPS "
                "dense (624 with sparsity), 80GB HBM2e at 2,039 GB/s, max TDP 400 W, with "
                "NVLink cut to 400 GB/s bidirectional, 200 GB/s each way (8 NVLinks instead "
                "of the A100's 12: '8 x A800 (8 NVLinks)', NVIDIA/nccl issue 412). HGX A800: "
                "8 GPUs on NVSwitch. Dense peak as the A100's: " + _A100),
        memory_note="As the A100 80GB SXM: 80 GiB physical (85.9e9 B); the datasheet says "
                    "80GB.",
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
        id="h20", name="NVIDIA H20 (HGX, 96GB)",
        peak_bf16_flops=148 * TFLOP, peak_fp8_flops=296 * TFLOP,
        memory_bytes=96 * GB, memory_bandwidth=4000 * GB,
        scale_up_bandwidth=450 * GB, power_watts=400.0,
        source=("NVIDIA HGX H20 specification (2024; the Hopper export variant for China "
                "after the October 2023 rules), as listed by NVIDIA's channel and reported by "
                "Tom's Hardware (2024-02) and SemiAnalysis (2023-11): 96 GB HBM3 at 4.0 TB/s, "
                "BF16/FP16 tensor 148, FP8 and INT8 296, TF32 74 TFLOPS, dense (no "
                "sparsity figures are quoted; the ratios are the H100's dense ones), NVLink "
                "900 GB/s (bidirectional, 450 each way: the H100's, uncut), 400 W, 8 GPUs "
                "per HGX board. NVIDIA publishes no public H20 datasheet. A later H20 with "
                "141 GB of HBM3e is not catalogued."),
        memory_note="No stack breakdown is published: the label is read as 96 GiB, as for "
                    "the other HBM parts.",
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
)
