"""The speed model's inputs that the planners share: how the run overlaps its traffic,
whether it uses sequence parallelism, which recomputation, the FP8 recipe, the network,
and the overrides of the measured kernel and link speeds. Each default says where it
comes from; the measured speeds themselves live in the catalogues."""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.core.spec import Choice, Param, When
from calculators.formulas.model.recipes import FP8_RECIPES, LOW_PRECISIONS

SEQUENCE_PARALLEL_PARAM = Param(
    "sequence_parallel", "Sequence parallelism", "bool", True,
    help="With tensor parallelism, run the norms, dropout and residual adds on 1/t of the "
         "tokens, the allreduces split into reduce-scatters and allgathers (Korthikanti "
         "et al. 2022, Sec. 4.2.2; Megatron-Core requires it for MoE with TP). Off: "
         "Megatron-LM's layout before 2022, every GPU runs them on all tokens.",
    advanced=True)

TP_OVERLAP_PARAM = Param(
    "tp_overlap", "Tensor-parallel overlap", "choice", "backward",
    choices=(Choice("none", "none"),
             Choice("backward", "backward (async allreduce)"),
             Choice("full", "forward and backward (userbuffers)")),
    help="What the TP collectives hide behind. Backward: each input gradient is reduced "
         "behind the weight-gradient GEMM (Megatron-LM since 2021; Korthikanti et al. "
         "2022, Sec. 6.2). Forward and backward: the forward's gathers and reductions are "
         "pipelined with its GEMMs too (Transformer Engine userbuffers, Megatron-Core "
         "--tp-comm-overlap). None: Megatron-LM in 2021 (Narayanan et al. 2021). What "
         "hides still slows compute by 1 - overlap of its length.",
    advanced=True)

DP_OVERLAP_PARAM = Param(
    "dp_overlap", "Data-parallel overlap", "bool", True,
    help="On: gradients are reduced in buckets during the last micro-batch's backward "
         "(PyTorch DDP, Li et al. 2020; Megatron-Core --overlap-grad-reduce) and ZeRO-3 "
         "gathers prefetched. Off: reduced after the backward pass (Megatron-LM's local "
         "DDP in 2021).",
    advanced=True)

PLANNER_RECOMPUTE_PARAM = Param(
    "recompute", "Activation recomputation", "choice", "search",
    choices=(Choice("search", "let the planner choose"), Choice("none", "none"),
             Choice("selective", "selective (attention core)"),
             Choice("light", "light (norms, activation, MLA up-projections)"),
             Choice("full", "full (keep layer inputs only)")),
    help="Search: the planner tries none, light, selective and full and keeps what fits "
         "fastest, so that a layout a little too large recomputes only what is cheap "
         "rather than every layer. A mode fixes it, as a published run states it "
         "(Korthikanti et al. 2022, Sec. 5: selective recomputes the attention core, full "
         "the whole layer; light the norms, the MLP's activation and MLA's "
         "up-projections, cheap to redo, as DeepSeek-V3 does, Sec. 3.3.3, and "
         "Megatron-Core's --recompute-modules offer).",
    advanced=True)

FP8_RECIPE_PARAM = Param(
    "fp8_recipe", "FP8 recipe", "choice", "tensorwise",
    choices=tuple(Choice(r.id, r.label) for r in FP8_RECIPES.values()),
    when=When("precision", ("fp8_mixed",)),
    help="How the FP8 GEMMs scale their inputs, which sets what they keep and what "
         "their casts cost (formulas.model.recipes). Per-tensor (Transformer Engine's "
         "delayed scaling): a 1 B FP8 weight copy, FP8 inputs saved, 9 B of HBM traffic "
         "per element cast (TE's GEMM benchmark on H200). Blockwise (DeepSeek-V3, Sec. "
         "3.3.2): FP32 scales per 1 x 128 tile and 128 x 128 block, the cast fused into "
         "the kernel before, 3 B (assumption). MXFP8 (Blackwell; OCP MX v1.0): 32-element "
         "blocks with E8M0 scales, row- and column-wise copies both kept. The GEMMs run "
         "at the measured FP8 ceiling (70.9% of the FP8 peak on H100), not twice BF16.",
    advanced=True)

NARROW_WEIGHTS_PARAM = Param(
    "fp8_weights", "Weights kept in FP8 only", "bool", False,
    when=When("precision", LOW_PRECISIONS),
    help="On: the model's weights exist only in the narrow format, the optimizer's FP32 "
         "master copy the only wide one, and ZeRO/FSDP gathers them in it (Megatron-Core "
         "--fp8-param-gather; Transformer Engine's weights 'stored directly in low "
         "precision'): FP8 weights take 1 B per parameter instead of 2 + 1, and the "
         "all-gather half the bytes. Off: the 16-bit weights stay and the recipe's copies "
         "come on top (Transformer Engine's default).",
    advanced=True)

ZERO_STAGE_PARAM = Param(
    "zero_stage", "Fix ZeRO stage", "int", None, minimum=0, maximum=3, optional=True,
    placeholder="search",
    help="Blank: the planner tries ZeRO 1-3 over the data-parallel group (and hybrid "
         "sharding). 0: plain data parallelism, every state replicated (Megatron-LM's DDP "
         "in 2021); 1: optimizer states sharded (Megatron's distributed optimizer); 2: "
         "gradients too (FSDP without resharding parameters, as Llama 3 ran, Sec. 3.3.2); "
         "3: parameters too (Rajbhandari et al. 2020).",
    advanced=True)

LEAN_NORMS_PARAM = Param(
    "lean_norms", "Norms keep their output, not their input", "bool", False,
    help="Each normalisation computes its backward from its output, which the next GEMM "
         "keeps anyway, so its input is freed: 4 bytes per token and hidden unit less per "
         "layer (Apex's memory-efficient LayerNorm, Megatron-LM --memory-efficient-layer-"
         "norm; Llama 3 frees every pipeline stage's input tensors to train 405B at 8K "
         "without recomputation, Sec. 3.3.2). Off: Korthikanti et al.'s count.",
    advanced=True)

ATTENTION_KERNEL_PARAM = Param(
    "attention_kernel", "Fused attention kernel", "choice", "best",
    choices=(Choice("best", "the GPU's fastest measured (cuDNN on Hopper, FA2 on Ampere)"),
             Choice("flash2", "FlashAttention-2")),
    when=When("attention", ("fused",)),
    help="Best: Transformer Engine's cuDNN fused attention on Hopper and later, 55-63% of "
         "the BF16 peak at long sequences (Shah et al. 2024, Figs. 5-6); FlashAttention-2 "
         "on Ampere, 65% (Dao 2023, Fig. 4). FlashAttention-2 on Hopper reaches 34-38% "
         "(PyTorch's SDPA flash backend, frameworks before FlashAttention-3). On Ampere "
         "both are FlashAttention-2.",
    advanced=True)

KERNEL_SPEED_PARAM = Param(
    "kernel_speed", "Kernel speed against the catalogue", "float", 1.0, unit="1",
    minimum=0.1, maximum=1.5,
    help="1: every GEMM and attention kernel at the speed measured for this accelerator "
         "(catalogues.kernel_speeds, by shape). 0.9: 10% slower kernels, a what-if; no "
         "kernel exceeds its dense peak.",
    advanced=True)

NETWORK_PARAM = Param(
    "network", "Network (one NIC per GPU)", "choice", "default",
    choices=(Choice("default", "the GPU's usual NIC"),
             *(Choice(link.id, link.name) for link in hardware.LINKS.values()
               if not link.id.startswith(("nvlink",)))),
    help="The NIC's line rate and how NCCL's collectives reach it: InfiniBand rings reach "
         "0.95 of the NICs' rate, RoCE 0.80 (nccl-tests; catalogues.link_speeds). Default: "
         "HDR 200 Gb/s for A100 and A800, ConnectX-8 800 Gb/s for Blackwell Ultra, NDR "
         "400 Gb/s otherwise (the DGX/HGX designs); RoCE 400 Gb/s for the Ascend 910C, "
         "Google's data-center network (50 Gb/s per chip) for TPUs, EFAv3 (200 Gb/s per "
         "chip) for Trainium2 (catalogues.hardware.DEFAULT_NIC).",
    advanced=True)

COMM_EFFICIENCY_PARAM = Param(
    "comm_efficiency", "Achieved fraction of link bandwidth", "float", None, unit="1",
    minimum=0.01, maximum=1, optional=True, placeholder="measured, by link",
    help="Blank: what nccl-tests measures on each link (ring collectives: A100 NVLink "
         "0.78, H100 0.82 of the line rate; InfiniBand 0.95, RoCE 0.80), less for small "
         "messages (catalogues.link_speeds). A number replaces those plateaus.",
    advanced=True)

SPEED_PARAMS: tuple[Param, ...] = (
    SEQUENCE_PARALLEL_PARAM, TP_OVERLAP_PARAM, DP_OVERLAP_PARAM, PLANNER_RECOMPUTE_PARAM,
    ZERO_STAGE_PARAM, LEAN_NORMS_PARAM, FP8_RECIPE_PARAM, NARROW_WEIGHTS_PARAM,
    ATTENTION_KERNEL_PARAM,
    KERNEL_SPEED_PARAM, NETWORK_PARAM)

__all__ = ["COMM_EFFICIENCY_PARAM", "FP8_RECIPES", "SPEED_PARAMS"]
