"""Model states per parameter (weights, gradients, optimizer), how ZeRO partitions them,
and what a GPU holds: the parts of the memory model that do not depend on the layers.
formulas.parallel.memory re-exports them."""

from __future__ import annotations

from dataclasses import dataclass

from calculators.formulas.model.recipes import recipe_for

GIB = float(1 << 30)

#: Bytes per parameter of (weights, gradients) by precision, before a low-precision
#: recipe's quantized weight copies. Mixed precision keeps 16-bit weights and gradients
#: (Rajbhandari et al. 2020, ZeRO, Sec. 3.1); FP8 and FP4 training keep the 16-bit
#: weights too, and add the recipe's copies (formulas.model.recipes: 1 B for Transformer
#: Engine's FP8 on Hopper, 2 x 1.03 B for MXFP8, 2 x 0.5 B on 84% of the weights for
#: NVFP4).
PRECISION_BYTES: dict[str, tuple[float, float]] = {
    "bf16_mixed": (2.0, 2.0), "fp16_mixed": (2.0, 2.0), "fp8_mixed": (2.0, 2.0),
    "fp4_mixed": (2.0, 2.0), "fp32": (4.0, 4.0),
}
#: Gradient precision: "16bit" as the ZeRO paper counts (2 + 2 + 12 = 16 B/param);
#: "fp32" main gradients as Megatron-LM keeps them for BF16 (2 + 4 + 12 = 18 B/param,
#: Megatron-Core distributed-optimizer docs; Llama 3 also accumulates and
#: reduce-scatters gradients in FP32, Dubey et al. 2024, Sec. 3.3.2).
GRADIENT_PRECISIONS = ("16bit", "fp32")
#: Optimizer state bytes per parameter, not counting an FP32 master copy (4 B, added
#: for every mixed-precision mode): Adam(W) momentum + variance 8 B (ZeRO Sec. 3.1:
#: K = 4 + 8 = 12); SGD momentum 4 B; Adafactor without momentum keeps factored row and
#: column statistics, O(n + m) per n x m matrix, taken here as 0 B per parameter
#: (Shazeer and Stern 2018, Sec. 3-4); 8-bit Adam keeps both moments in 1 B each
#: (Dettmers et al. 2022, 8-bit Optimizers via Block-wise Quantization); AdamW with
#: BF16 moments, 2 B each, as DeepSeek-V3 trained (report, Sec. 3.3.3); Muon, one FP32
#: momentum buffer, 4 B (Jordan et al. 2024; Liu et al. 2025, "Muon is Scalable for LLM
#: Training", Sec. 2: Muon keeps only momentum where AdamW keeps two moments; the
#: embedding, output layer and norms, which Muon leaves to AdamW, are counted at Muon's
#: 4 B too, our simplification: a model whose embedding and output layer hold a share e
#: of its parameters needs 4e B per parameter more).
OPTIMIZER_STATE_BYTES: dict[str, float] = {
    "adamw": 8.0, "sgd_momentum": 4.0, "adafactor": 0.0, "adamw_8bit": 2.0,
    "adamw_bf16": 4.0, "muon": 4.0,
}
MASTER_WEIGHT_BYTES = 4.0


@dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter of each model state, before any partitioning."""

    weights: float
    gradients: float
    optimizer: float
    #: Of ``weights``: a low-precision recipe's quantized copies, remade from the 16-bit
    #: weights every step (so not checkpointed).
    quantized: float = 0.0

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer

    @property
    def wide_weights(self) -> float:
        """The 16-bit (or FP32) weights alone: what a ZeRO all-gather moves and the
        optimizer writes; the recipe's quantized copies are made from them after."""
        return self.weights - self.quantized


def state_bytes(precision: str, optimizer: str, gradients: str = "16bit",
                fp8_recipe: str = "tensorwise", narrow_weights: bool = False) -> StateBytes:
    """2 + 2 + 12 = 16 B/param for BF16/FP16 mixed precision with AdamW (ZeRO Sec. 3.1);
    18 with FP32 main gradients (Megatron-LM's BF16 default); FP8 and FP4 add their
    recipe's quantized weight copies (3 + 2 + 12 = 17 with Transformer Engine's FP8).
    ``narrow_weights``: the weights are kept in the narrow format only, the optimizer's
    FP32 master copy the only wide one (Megatron-Core --fp8-param-gather; TE's
    "model weights stored directly in low precision"): 1 + 2 + 12 = 15 with FP8, and the
    ZeRO all-gather moves 1 B per parameter."""
    weights, grads = PRECISION_BYTES[precision]
    recipe = recipe_for(precision, fp8_recipe)
    quantized = recipe.weight_cache_bytes
    if narrow_weights and recipe.narrow:
        # One quantized copy is the weights; the other orientation is remade each step.
        weights = recipe.primary_weight_bytes
        quantized -= weights - 2.0 * recipe.high_precision_share
    if gradients == "fp32":
        grads = 4.0
    master = 0.0 if precision == "fp32" else MASTER_WEIGHT_BYTES
    return StateBytes(weights + quantized, grads, master + OPTIMIZER_STATE_BYTES[optimizer],
                      quantized)


def model_state_bytes(params: float, per_param: StateBytes, zero_stage: int,
                      dp: int) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes on one GPU under ZeRO stage 0-3.

    Rajbhandari et al. 2020, Sec. 5 and Fig. 1: stage 1 partitions optimizer states
    over the Nd data-parallel ranks, stage 2 also gradients, stage 3 also weights.
    Under hybrid sharding (FSDP's HYBRID_SHARD, Zhao et al. 2023, Sec. 3.2.2) ``dp`` is
    the shard group, not the whole data-parallel size.
    """
    weights = params * per_param.weights / (dp if zero_stage >= 3 else 1)
    gradients = params * per_param.gradients / (dp if zero_stage >= 2 else 1)
    optimizer = params * per_param.optimizer / (dp if zero_stage >= 1 else 1)
    return weights, gradients, optimizer


def device_capacity_bytes(label_bytes: float) -> float:
    """What a device holds, from the catalogue's label (decimal GB): HBM stacks are
    binary-sized, so an "80GB" A100 or H100 holds 80 GiB, 85.9e9 B (nvidia-smi shows
    81,559 MiB, 85.5e9 B, on an H100 SXM; catalogues.accelerators)."""
    return label_bytes / 1e9 * GIB


def usable_bytes(capacity: float, reserve: float) -> float:
    """What a layout may fill: the capacity less a reserved share for the CUDA context,
    the communication libraries' buffers and the allocator's fragmentation, none of
    which the memory model counts (the reserve is an input)."""
    return capacity * (1.0 - reserve)
