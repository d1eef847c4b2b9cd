"""Low-precision training recipes: what each keeps in memory and what its casts cost.

A recipe runs the transformer layers' linear GEMMs in a narrow format and keeps
everything else wider: attention's own matrix products and softmax, the norms, the
embedding, the output layer and the router stay in BF16 (or FP32), and so do the
gradients the optimizer reads and its master weights. What a recipe changes is
(Transformer Engine, "Low precision training: performance considerations", Memory
usage; DeepSeek-V3 report, Sec. 3.3):

* the weights: the 16-bit weights stay (the optimizer updates them through its FP32
  master copy) and the GEMMs' quantized copies come on top, kept from the forward to the
  backward: one copy where the backward can transpose it (Hopper's FP8: TE's
  1,024 x 1,024 layer holds "2 MB (weight) + 1 MB (weight in FP8)"), two where the
  row-wise and column-wise copies are quantized along different axes (MX formats scale
  blocks along the reduction dimension, so the transpose of a row-wise copy is not a
  column-wise copy; TE, "Handling transposes");
* the GEMM inputs saved for the backward: in the narrow format plus its scales instead
  of 16 bits (TE saves "the columnwise quantized input"; DeepSeek-V3 caches them in FP8);
* the HBM traffic of the casts (formulas.kernels.dense_layer charges it per element).

Bytes per element of a quantized tensor are the data plus its scales: a scale of s bytes
shared by a block of n elements adds s / n. Per-tensor scaling adds nothing per element,
only a few numbers per tensor (TE's delayed scaling keeps an amax history, 1,024 FP32
values per tensor by default), counted by ``scaling_metadata_bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from calculators.core.i18n import N_

GemmFormat = Literal["bf16", "fp8", "fp4"]

#: Transformer Engine's DelayedScaling keeps ``amax_history_len`` = 1,024 FP32 amaxes per
#: FP8 tensor by default (transformer_engine.common.recipe.DelayedScaling), and one FP32
#: scale and its inverse: three tensors per GEMM (input, weight, output gradient).
AMAX_HISTORY = 1024
TENSORS_PER_GEMM = 3


@dataclass(frozen=True)
class Recipe:
    """One low-precision recipe. Bytes are per element (or per parameter of a GEMM
    weight); ``high_precision_share`` is the share of the layers' GEMM weights the recipe
    leaves in BF16 (NVFP4's selective high-precision layers)."""

    id: str
    label: str
    gemm_format: GemmFormat
    element_bytes: float  # data bytes of one quantized element
    activation_scale_bytes: float  # scale bytes per element of an activation
    weight_scale_bytes: float  # scale bytes per element of a weight
    weight_copies: int  # quantized copies of a GEMM weight kept forward to backward
    cast_bytes: float  # HBM bytes moved per element cast (read 16-bit, write narrow)
    amax_history: int = 0  # FP32 values of scaling history per tensor
    high_precision_share: float = 0.0
    needs: Literal["", "fp8", "mx", "nvidia_mx"] = ""  # the tensor cores it runs on
    source: str = ""

    @property
    def narrow(self) -> bool:
        """Whether the layers' GEMMs run narrower than 16 bits."""
        return self.gemm_format != "bf16"

    @property
    def saved_input_bytes(self) -> float:
        """Bytes per element of a GEMM input kept for the weight gradient: 2 at 16 bits;
        the quantized data and its scales otherwise (on the GEMMs the recipe quantizes;
        the share left in BF16 keeps 2)."""
        if not self.narrow:
            return 2.0
        low = self.element_bytes + self.activation_scale_bytes
        return self.high_precision_share * 2.0 + (1.0 - self.high_precision_share) * low

    @property
    def weight_cache_bytes(self) -> float:
        """Bytes per parameter of the quantized weight copies, on top of the 16-bit
        weights."""
        per_copy = self.element_bytes + self.weight_scale_bytes
        return self.weight_copies * per_copy * (1.0 - self.high_precision_share)

    @property
    def primary_weight_bytes(self) -> float:
        """Bytes per parameter of the weights when they are kept in the narrow format
        only (Megatron-Core's --fp8-param-gather, Transformer Engine's FP8 primary
        weights): one quantized copy, which the ZeRO all-gather moves, plus the share the
        recipe leaves in BF16."""
        one = self.element_bytes + self.weight_scale_bytes
        return (1.0 - self.high_precision_share) * one + 2.0 * self.high_precision_share

    def scaling_metadata_bytes(self, gemms: int) -> float:
        """Bytes of per-tensor scaling state for ``gemms`` GEMMs (amax histories and
        scales; TE's delayed scaling): negligible next to the weights, stated so. Block
        scales are per element, in ``saved_input_bytes`` and ``weight_cache_bytes``."""
        if not self.amax_history:
            return 0.0
        return gemms * TENSORS_PER_GEMM * (self.amax_history + 2) * 4.0


BF16 = Recipe("bf16", N_("BF16"), "bf16", 2.0, 0.0, 0.0, 0, 0.0,
              source="Mixed precision (Micikevicius et al. 2018): 16-bit GEMMs, no casts.")

#: Transformer Engine's delayed scaling on Hopper: one FP32 scale per tensor from an amax
#: history; the FP8 weight copy (1 B) kept from forward to backward and the FP8 input
#: saved (1 B), as TE's memory example counts them (performance considerations, "FP8
#: training with model weights in BF16": 2 + 1 + 1 + 2 MB for a 1,024 x 1,024 layer);
#: the column-wise (transposed) copies are made in the backward, one layer at a time.
#: Casts: 9 B per element (catalogues: TE's GEMM benchmark on H200, inputs.machine).
FP8_TENSORWISE = Recipe(
    "tensorwise", N_("FP8, per-tensor delayed scaling (Transformer Engine)"), "fp8",
    1.0, 0.0, 0.0, 1, 9.0, amax_history=AMAX_HISTORY, needs="fp8",
    source="Transformer Engine DelayedScaling (amax_history_len 1,024); TE docs, "
           "performance considerations, Memory usage (2 MB BF16 weight + 1 MB FP8 weight "
           "+ 1 MB FP8 input); casts 9 B per element, TE's GEMM benchmark on H200.")

#: DeepSeek-V3, Sec. 3.3.2: activations quantized in 1 x 128 tiles and weights in
#: 128 x 128 blocks, one FP32 scale each (4 / 128 and 4 / 16,384 B per element); FP8
#: activations cached for the backward (Sec. 3.3.3). Casts fused into the kernel before:
#: 2 B read + 1 B written, the minimum (our assumption, inputs.machine).
FP8_BLOCKWISE = Recipe(
    "blockwise", N_("FP8, 1 x 128 / 128 x 128 blocks (DeepSeek-V3)"), "fp8",
    1.0, 4.0 / 128, 4.0 / (128 * 128), 1, 3.0, needs="fp8",
    source="DeepSeek-V3 report (arXiv 2412.19437), Sec. 3.3.2 (tile- and block-wise "
           "scaling, FP32 scales, FP32 promotion of the accumulation every 128 elements) "
           "and 3.3.3 (activations cached in FP8).")

#: OCP Microscaling (MX) v1.0: blocks of 32 elements share one E8M0 scale (1 B), so
#: 1 + 1/32 B per element. Scales run along the reduction dimension, so the row-wise and
#: column-wise copies are two quantizations (TE, "Handling transposes"): both weight
#: copies are kept, and the input is saved column-wise. Casts: 2 B read and both copies
#: written, 2 + 2 x 1.03125 B (derivation: one fused kernel makes both usages).
MXFP8 = Recipe(
    "mxfp8", N_("MXFP8, 32-element blocks, E8M0 scales (Blackwell)"), "fp8",
    1.0, 1.0 / 32, 1.0 / 32, 2, 2.0 + 2.0 * (1.0 + 1.0 / 32), needs="mx",
    source="OCP Microscaling Formats (MX) v1.0 (32-element blocks, E8M0 scale); TE docs, "
           "Handling transposes (row-wise and column-wise copies differ); torchtitan "
           "docs/mxfp8.md.")

#: NVIDIA, "Pretraining Large Language Models with NVFP4" (arXiv 2509.25149): E2M1 data
#: (0.5 B) in 16-element blocks with an E4M3 scale (1 B per 16) and one FP32 scale per
#: tensor; weights scaled in 16 x 16 blocks (1 B per 256) so that forward and backward
#: see the same values; about 16% of the linear layers kept in BF16 (the selective
#: high-precision layers). Two weight copies (row- and column-wise, as MX) and the
#: column-wise input saved, after its random Hadamard transform. Casts: 2 B read and
#: both copies written, 2 + 2 x 0.5625 B (derivation).
NVFP4 = Recipe(
    "nvfp4", N_("NVFP4, 16-element blocks, E4M3 scales (Blackwell)"), "fp4",
    0.5, 1.0 / 16, 1.0 / 256, 2, 2.0 + 2.0 * (0.5 + 1.0 / 16),
    high_precision_share=0.16, needs="nvidia_mx",
    source="NVIDIA 2025, Pretraining LLMs with NVFP4 (arXiv 2509.25149): 16-element "
           "blocks, E4M3 block scales, FP32 tensor scale, 2D 16 x 16 weight scaling, "
           "random Hadamard transforms on the weight-gradient inputs, stochastic "
           "rounding of gradients, about 16% of linear layers in BF16.")

FP8_RECIPES: dict[str, Recipe] = {r.id: r for r in (FP8_TENSORWISE, FP8_BLOCKWISE, MXFP8)}
#: Every recipe by id, BF16 first (what a calculator with no precision input offers).
RECIPES: dict[str, Recipe] = {r.id: r for r in (BF16, *FP8_RECIPES.values(), NVFP4)}
#: The precision inputs whose GEMMs a recipe quantizes.
LOW_PRECISIONS = ("fp8_mixed", "fp4_mixed")


def recipe_for(precision: str, fp8_recipe: str = "tensorwise") -> Recipe:
    """The recipe a precision input and an FP8-recipe input name: FP8 mixed precision
    takes ``fp8_recipe``; FP4 mixed precision is NVFP4; the others run 16-bit GEMMs."""
    if precision == "fp8_mixed":
        if fp8_recipe not in FP8_RECIPES:
            raise ValueError(f"unknown FP8 recipe {fp8_recipe!r}; one of "
                             f"{', '.join(FP8_RECIPES)}")
        return FP8_RECIPES[fp8_recipe]
    if precision == "fp4_mixed":
        return NVFP4
    return BF16


def linear_memory_bytes(tokens: int, in_features: int, out_features: int,
                        recipe: Recipe, weight_bytes: float = 2.0) -> float:
    """Bytes one linear layer holds after its forward in training: its 16-bit weight,
    the recipe's quantized weight copies, the input saved for the backward and the
    16-bit output. The layer Transformer Engine's memory example measures (1,024 x
    1,024, 1,024 tokens): 6 MB in BF16 (2 + 2 + 2) and 6 MB in FP8 (2 + 1 + 1 + 2):
    FP8 does not halve training memory."""
    weights = in_features * out_features * (weight_bytes + recipe.weight_cache_bytes)
    saved = tokens * in_features * recipe.saved_input_bytes
    return weights + saved + tokens * out_features * 2.0
