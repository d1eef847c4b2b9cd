"""The speed model's kernels against the measurements they stand on (docs/dense.md):
GEMMs by shape, fused and materialised attention, a transformer layer of Korthikanti
et al. 2022 (Table 4), the collectives' bus bandwidth by message size and the HBM
bandwidth memory-bound kernels reach. The catalogue's parameters
(catalogues.kernel_speeds, catalogues.link_speeds) were fitted to these points, the
training runs of published_checks.speed never; the tolerances are the fits' spread."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from calculators.catalogues import hardware
from calculators.catalogues.link_speeds import scale_up_curve
from calculators.formulas.collectives import achieved
from calculators.formulas.kernels.attention import AttentionShape, fused_attention_s
from calculators.formulas.kernels.dense_layer import layer_times
from calculators.formulas.kernels.gemm import achieved_flops
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.planner.layout import DEFAULT_OVERLAP
from calculators.inputs.machine import fabric_for, gemm_rate, machine_for
from published_checks import Check

T, GIB, MIB = 1e12, 2.0**30, 2.0**20
_KORTHIKANTI = "https://arxiv.org/abs/2205.05198"
_FA2 = "https://arxiv.org/abs/2307.08691"
_FA3 = "https://arxiv.org/abs/2407.08608"
_GEMM_TOL = ("the GEMM fit's spread over the A100 and H100 points it was fitted to "
             "(2-5% rms, scripts/calibrate.py)")


def _gemm(gpu: str, m: int, n: int, k: int, *, fp8: bool = False) -> float:
    rate = gemm_rate(gpu, fp8=fp8)
    return achieved_flops(m, n, k, rate, operand_bytes=1.0 if fp8 else 2.0)


def _attention(gpu: str, head_dim: int, seq: int, *, causal: bool) -> float:
    """FLOP/s of forward + backward as FlashAttention's papers count and time them:
    16K tokens per batch, hidden 2,048 (Dao 2023, Sec. 4.1)."""
    machine = machine_for(gpu)
    shape = AttentionShape(16384 // seq, 2048 // head_dim, seq, seq, head_dim, head_dim,
                           0.5 if causal else 1.0)
    fwd, bwd = fused_attention_s(shape, machine.speed.attention, machine.peak_bf16)
    return 3.5 * shape.forward_flops / (fwd + bwd)


def _attention_forward(gpu: str, head_dim: int, seq: int, *, causal: bool) -> float:
    machine = machine_for(gpu)
    shape = AttentionShape(16384 // seq, 2048 // head_dim, seq, seq, head_dim, head_dim,
                           0.5 if causal else 1.0)
    return shape.forward_flops / fused_attention_s(shape, machine.speed.attention,
                                                   machine.peak_bf16)[0]


#: Korthikanti et al. 2022, Table 3: the 22B model (48 layers, h = 6,144, 64 heads) on 8
#: A100s, TP 8, micro-batch 4, sequence 2,048, FP16, dropout, materialised attention.
_K22B = Architecture(layers=48, hidden=6144, heads=64, kv_heads=64, head_dim=96,
                     ffn_hidden=4 * 6144, vocab=51200, seq_len=2048)


def _k22b_layer(part: str) -> float:
    """Table 4's baseline layer (no sequence parallelism, no recomputation): forward with
    its two allreduces; backward with its two, behind the weight-gradient GEMMs
    (Sec. 6.2), at the default overlap efficiency; or what selective recomputation adds."""
    machine = machine_for("a100_80gb_sxm", precision="fp16_mixed")
    times = layer_times(_K22B, machine, tp=8, cp=1, micro_batch=4, sequence_parallel=False,
                        attention="materialised", dropout=True)
    if part == "selective":
        return times.recompute_s("selective")
    fabric = fabric_for("a100_80gb_sxm", domain=8)
    ar = achieved.collective_time_s("allreduce", times.activation_bytes, 8, 8, fabric)
    if part == "forward":
        return times.forward_s + 2 * ar
    hidden = [min(ar, w) for w in times.wgrad_windows_s]
    return times.backward_s + sum(ar - DEFAULT_OVERLAP * h for h in hidden)


def _busbw(gpu: str, size: float, *, in_network: bool = False) -> float:
    """nccl-tests' allreduce bus bandwidth on one 8-GPU node: with NVLink SHARP where
    the sample output used it, the ring's otherwise."""
    fabric = fabric_for(gpu, domain=8)
    if not in_network:
        fabric = replace(fabric, intra=replace(fabric.intra, in_network_allreduce=1.0))
    time = achieved.collective_time_s("allreduce", size, 8, 8, fabric)
    return 2.0 * 7 / 8 * size / time


def _hbm(gpu: str) -> float:
    return hardware.get(gpu).memory_bandwidth * machine_for(gpu).speed.hbm_efficiency


def _gemm_check(check_id: str, claim: str, source: str, published: float, formula: partial[
        float], *, rel_tol: float = 0.06, url: str = "") -> Check:
    return Check(id=check_id, chapter="dense.md", claim=claim, source=source, url=url,
                 formula=formula, formula_name="formulas.kernels.gemm.achieved_flops",
                 published=published, rel_tol=rel_tol, why_tolerance=_GEMM_TOL,
                 unit="FLOP/s")


def _attention_check(check_id: str, claim: str, source: str, published: float,
                     formula: partial[float], *, url: str = _FA2) -> Check:
    return Check(id=check_id, chapter="dense.md", claim=claim, source=source, url=url,
                 formula=formula, formula_name="formulas.kernels.attention.fused_attention_s",
                 published=published, rel_tol=0.08, unit="FLOP/s",
                 why_tolerance="the plateau-and-half-length fit to the paper's sweep (1-5% "
                               "rms, scripts/calibrate.py)")


CHECKS: tuple[Check, ...] = (
    _gemm_check("gemm-a100-8192", "A100: an 8,192^3 BF16 GEMM with random inputs",
                "H. He, 'Strangely, matrix multiplications on GPUs run faster when given "
                "predictable data' (thonking.ai): 258 TFLOP/s with randn inputs",
                258 * T, partial(_gemm, "a100_80gb_sxm", 8192, 8192, 8192)),
    _gemm_check("gemm-a100-qkv", "A100: the QKV GEMM of an h = 4,096 layer at 8,192 tokens",
                "EleutherAI cookbook, benchmarks/sizing sample results (FP16, 8,192 x "
                "12,288 x 4,096): 241.6 TFLOP/s", 241.6 * T,
                partial(_gemm, "a100_80gb_sxm", 8192, 12288, 4096)),
    _gemm_check("gemm-a100-mlp-down", "A100: the second MLP GEMM of that layer",
                "EleutherAI cookbook sample results (8,192 x 4,096 x 16,384): 252.8 TFLOP/s",
                252.8 * T, partial(_gemm, "a100_80gb_sxm", 8192, 4096, 16384)),
    _gemm_check("gemm-a100-1024", "A100: a small GEMM (1,024^3), a few waves of tiles",
                "EleutherAI cookbook sample results (1,024^3): 59.9 TFLOP/s", 59.9 * T,
                partial(_gemm, "a100_80gb_sxm", 1024, 1024, 1024), rel_tol=0.1),
    _gemm_check("gemm-h100-4096", "H100 SXM: cuBLAS BF16 at 4,096^3",
                "pranjalssh/fast.cu README (cuBLAS baseline): 716 TFLOP/s", 716 * T,
                partial(_gemm, "h100_sxm", 4096, 4096, 4096)),
    _gemm_check("gemm-h100-8192", "H100 SXM: cuBLAS BF16 at 8,192^3",
                "pranjalssh/fast.cu README (cuBLAS baseline): 795 TFLOP/s", 795 * T,
                partial(_gemm, "h100_sxm", 8192, 8192, 8192)),
    _gemm_check("gemm-h800-fp8", "H800: DeepGEMM's blockwise FP8 GEMM, 4,096 x 7,168 x "
                "16,384", "deepseek-ai/DeepGEMM README, performance table (March 2025): "
                "1,426 TFLOP/s", 1426 * T,
                partial(_gemm, "h800", 4096, 7168, 16384, fp8=True), rel_tol=0.1),
    _attention_check("fa2-a100-causal-16k", "A100: FlashAttention-2 forward + backward, head "
                     "size 128, causal, 16K", "Dao 2023, FlashAttention-2, Fig. 4: 189 TFLOP/s",
                     189 * T, partial(_attention, "a100_80gb_sxm", 128, 16384, causal=True)),
    _attention_check("fa2-a100-2k", "A100: FlashAttention-2 forward + backward, head size "
                     "128, 2K, no mask", "Dao 2023, FlashAttention-2, Fig. 4: 187 TFLOP/s",
                     187 * T, partial(_attention, "a100_80gb_sxm", 128, 2048, causal=False)),
    _attention_check("cudnn-h100-causal-8k", "H100: cuDNN fused attention forward, head size "
                     "128, causal, 8K", "Shah et al. 2024, FlashAttention-3, Fig. 5 (cuDNN "
                     "bars): 529 TFLOP/s", 529 * T,
                     partial(_attention_forward, "h100_sxm", 128, 8192, causal=True), url=_FA3),
    Check(id="k22b-layer-forward", chapter="dense.md",
          claim="22B layer on 8 A100s (TP 8, micro-batch 4): forward with its allreduces",
          source="Korthikanti et al. 2022, Table 4, baseline: 7.7 ms", url=_KORTHIKANTI,
          formula=partial(_k22b_layer, "forward"),
          formula_name="formulas.kernels.dense_layer.layer_times", unit="s",
          published=7.7e-3, rel_tol=0.08,
          why_tolerance="a layer priced from kernel and link measurements, never fitted "
                        "to it: the model's own error at layer level"),
    Check(id="k22b-layer-backward", chapter="dense.md",
          claim="The same layer's backward, its allreduces behind the weight gradients",
          source="Korthikanti et al. 2022, Table 4, baseline: 11.9 ms", url=_KORTHIKANTI,
          formula=partial(_k22b_layer, "backward"),
          formula_name="formulas.kernels.dense_layer.layer_times", unit="s",
          published=11.9e-3, rel_tol=0.1,
          why_tolerance="as the forward; the backward comes out 5% short, the largest "
                        "miss of the layer-level checks"),
    Check(id="k22b-selective-recompute", chapter="dense.md",
          claim="What selective recomputation adds to that layer's backward (the "
                "materialised attention's forward again)",
          source="Korthikanti et al. 2022, Table 4: 13.2 - 11.9 = 1.3 ms", url=_KORTHIKANTI,
          formula=partial(_k22b_layer, "selective"),
          formula_name="formulas.kernels.attention.materialised_attention_s", unit="s",
          published=1.3e-3, rel_tol=0.1,
          why_tolerance="a difference of two measured times printed to 0.1 ms (8%)"),
    Check(id="nccl-a100-64mib", chapter="dense.md",
          claim="8 A100s on NVLink 3: allreduce bus bandwidth at 64 MiB",
          source="stas00/ml-engineering, network/README.md, nccl-tests all_reduce on 8 "
                 "A100s: 171.5 GB/s",
          formula=partial(_busbw, "a100_80gb_sxm", 64 * MIB),
          formula_name="formulas.collectives.achieved.collective_time_s", unit="B/s",
          published=171.5e9, rel_tol=0.08,
          why_tolerance="the Hill curve's fit to that nccl-tests curve (3.5% rms)"),
    Check(id="nccl-a100-1gib", chapter="dense.md",
          claim="8 A100s on NVLink 3: allreduce bus bandwidth at 1 GiB",
          source="the same nccl-tests table: 229.0 GB/s",
          formula=partial(_busbw, "a100_80gb_sxm", GIB),
          formula_name="formulas.collectives.achieved.collective_time_s", unit="B/s",
          published=229.0e9, rel_tol=0.05,
          why_tolerance="the Hill curve's fit to that nccl-tests curve (3.5% rms)"),
    Check(id="nccl-h100-nvls-256mib", chapter="dense.md",
          claim="8 H100s on NVLink 4: NVLink SHARP allreduce bus bandwidth at 256 MiB",
          source="NVIDIA/dgxc-benchmarking, nccl README sample output: 422.3 GB/s",
          formula=partial(_busbw, "h100_sxm", 256 * MIB, in_network=True),
          formula_name="formulas.collectives.achieved.collective_time_s", unit="B/s",
          published=422.25e9, rel_tol=0.05,
          why_tolerance="the Hill curve's fit to that nccl-tests curve (1.5% rms)"),
    Check(id="hbm-h100", chapter="dense.md",
          claim="H100 SXM: the HBM bandwidth memory-bound kernels reach",
          source="Dao-AILab/quack, 'membound-sol' (softmax, Nsight DRAM throughput): "
                 "3.01 TB/s", formula=partial(_hbm, "h100_sxm"),
          formula_name="catalogues.kernel_speeds (hbm_efficiency)", unit="B/s",
          published=3.01e12, rel_tol=0.03,
          why_tolerance="QuACK's 3.01 and Liger's 2.91-3.09 TB/s fits bracket it"),
)

#: Every scale-up link curve the checks above stand on.
CURVES = {gpu: scale_up_curve(gpu) for gpu in ("a100_80gb_sxm", "h100_sxm")}
