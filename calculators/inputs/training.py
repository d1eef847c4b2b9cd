"""Training-setup inputs shared by the memory, utilisation, planner and sizing
calculators: precision, optimizer and activation recomputation, each with its source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.core.i18n import _
from calculators.core.spec import Choice, Param, ValidationError
from calculators.formulas.model.flops import DEFAULT_FLOP_COUNT, FLOP_COUNTS
from calculators.formulas.model.recipes import RECIPES, Recipe, recipe_for
from calculators.inputs.machine import recipe_support

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

PRECISION_PARAM = Param(
    "precision", "Precision", "choice", "bf16_mixed",
    choices=(Choice("bf16_mixed", "BF16 mixed (FP32 master weights)"),
             Choice("fp16_mixed", "FP16 mixed (FP32 master weights)"),
             Choice("fp8_mixed", "FP8 mixed (layers' GEMMs in FP8; recipe below)"),
             Choice("fp4_mixed", "NVFP4 mixed (Blackwell; 16% of GEMMs in BF16)"),
             Choice("fp32", "FP32")),
    help="Mixed precision: 2 B weights + 2 B gradients + 4 B FP32 master copy (ZeRO, "
         "Sec. 3.1). FP8 and NVFP4 keep all of that and add the GEMMs' quantized weight "
         "copies (1 B with Transformer Engine's FP8 on Hopper, 2 x 1.03 B with MXFP8, "
         "2 x 0.5 B with NVFP4) and save the GEMM inputs narrow; attention, norms, "
         "embedding, output layer and router stay 16-bit (formulas.model.recipes). FP32 "
         "doubles activations.")
OPTIMIZER_PARAM = Param(
    "optimizer", "Optimizer", "choice", "adamw",
    choices=(Choice("adamw", "AdamW (8 B states)"), Choice("sgd_momentum", "SGD + momentum"),
             Choice("adafactor", "Adafactor (factored, no momentum)"),
             Choice("adamw_8bit", "8-bit AdamW"),
             Choice("adamw_bf16", "AdamW, BF16 moments (DeepSeek-V3)"),
             Choice("muon", "Muon (one momentum buffer; Newton-Schulz per matrix)")),
    help="State bytes per parameter: AdamW 8 (K = 12 with the master copy, ZeRO); SGD "
         "momentum 4; Adafactor about 0 (Shazeer and Stern 2018); 8-bit Adam 2 (Dettmers "
         "et al. 2022); AdamW with BF16 moments 4 (DeepSeek-V3 report, Sec. 3.3.3); Muon "
         "4, one FP32 momentum (Liu et al. 2025, Sec. 2), plus five Newton-Schulz "
         "iterations on each whole weight matrix every step, which the planners cost.")
RECOMPUTE_PARAM = Param(
    "recompute", "Activation recomputation", "choice", "none",
    choices=(Choice("none", "none"), Choice("selective", "selective (attention scores)"),
             Choice("full", "full (keep layer inputs only)")),
    help="Korthikanti et al. 2022: selective recomputes the attention-score part "
         "(5as/h; a fused attention kernel stores no scores, so it has little left to "
         "save), full recomputes each layer from its input (+1 forward pass of FLOPs). "
         "Full recomputation still holds one layer's whole activation set while that "
         "layer is rebuilt: counted here as working memory, left out of the paper's "
         "Table 2.")


# --- the training run: inputs ``training_compute`` shares with the sizing -------------

TOKENS_PARAM = Param(
    "tokens",
    "Training tokens D",
    "float",
    300e9,
    unit="token",
    minimum=1,
    maximum=1e17,
    help="Tokens seen in training, all epochs. GPT-3: 300B (Brown et al. 2020).",
)

FLOPS_PER_PARAM_TOKEN_PARAM = Param(
    "flops_per_param_token",
    "FLOP per parameter per token",
    "float",
    6.0,
    minimum=1,
    maximum=24,
    help="6 = forward 2 + backward 4 (Kaplan et al. 2020, Sec. 2.1); 8 with full "
    "activation recomputation (Narayanan et al. 2021, Sec. 5.1, Eq. 4).",
)

FLOP_COUNT_PARAM = Param(
    "flop_count",
    "Model FLOPs counted as",
    "choice",
    DEFAULT_FLOP_COUNT.id,
    choices=tuple(Choice(c.id, c.label, former=c.former) for c in FLOP_COUNTS),
    help="The convention of the MFU: FLOPs per token = 6N, N the weights a token "
    "multiplies (the input embedding is a lookup and is left out; the output layer "
    "counts once), plus the attention scores, 6 L s n_h (d_qk + d_v): whole, as PaLM "
    "(App. B), Korthikanti et al. 2022 and torchtitan count them; their causal half, as "
    "Megatron-LM has counted since 2025; or none, Kaplan's C = 6ND. An MFU only compares "
    "with one counted the same way. Links with the former \"megatron\" get the first.",
)

UTILIZATION_PARAM = Param(
    "utilization",
    "Achieved fraction of peak (MFU)",
    "float",
    0.4,
    unit="1",
    # A floor far below any real run (0.1%), like the peak's: C / (peak x MFU)
    # stays finite at every corner of the bounds.
    minimum=1e-3,
    maximum=1,
    help="Default 0.40: Llama 3 405B reached 38-43% BF16 MFU on 8K-16K H100s "
    "(Dubey et al. 2024, Table 4). GPT-3 trained at 21.3% MFU (PaLM, "
    "Table 3).",
)

PRICE_PER_GPU_HOUR_PARAM = Param(
    "price_per_gpu_hour",
    "Price per GPU-hour",
    "float",
    2.0,
    unit="USD/h",
    minimum=0,
    maximum=1000,
    help="An assumption, not a quote: $2.00 per GPU-hour. Cloud and contract "
    "prices vary several-fold; enter yours.",
)

GPU_POWER_WATTS_PARAM = Param(
    "gpu_power_watts",
    "Power per accelerator",
    "float",
    None,
    unit="W",
    minimum=1,
    maximum=100_000,
    optional=True,
    placeholder="from the accelerator",
    help="Blank: the datasheet's maximum board power, as Meta's method uses "
    "(400 W for A100 in LLaMA, Table 15).",
    advanced=True,
)

PUE_PARAM = Param(
    "pue",
    "Power usage effectiveness",
    "float",
    1.1,
    minimum=1,
    maximum=3,
    help="Data-centre overhead factor; 1.1 as used by Meta (LLaMA, Table 15).",
    advanced=True,
)

CARBON_INTENSITY_PARAM = Param(
    "carbon_intensity",
    "Grid carbon intensity",
    "float",
    0.385,
    unit="kgCO2e/kWh",
    minimum=0,
    maximum=2,
    help="0.385 kgCO2e/kWh, the US national average used by Meta (LLaMA, Table 15).",
    advanced=True,
)

# --- goodput: the share of wall-clock that trains (inputs.reliability reads it) -------

GOODPUT_PARAM = Param(
    "goodput",
    "Goodput (share of wall-clock that trains)",
    "float",
    1.0,
    unit="1",
    # Below 1% a run of days would take years; the floor keeps days finite.
    minimum=0.01,
    maximum=1,
    optional=True,
    placeholder="estimated from Llama 3's failure rate",
    help="Time that advances training over elapsed time (Llama 3's effective training "
    "time: above 90% over 54 days on 16,384 H100s, Dubey et al. 2024, Sec. 3.3.4). MFU "
    "leaves restarts out (PaLM, App. B); this puts them back: days = ideal days / "
    "goodput. 1 (default) ignores failures and checkpoints, as published estimates such "
    "as Megatron's 34 days do; it is also right for an MFU read from a run's total "
    "GPU-hours (as DeepSeek-V3's), which already contains its failures. Blank: "
    "estimated by the goodput calculator's model from Llama 3's interruption rate per "
    "GPU, a synchronous checkpoint of the model state and a restart from its parts.",
)


def input_recipe(inputs: Inputs) -> Recipe:
    """The low-precision recipe the precision and FP8-recipe inputs name
    (formulas.model.recipes); a calculator without an FP8-recipe input takes Transformer
    Engine's per-tensor scaling."""
    return recipe_for(inputs.text("precision"), str(inputs.get("fp8_recipe", "tensorwise")))


def checked_recipe(inputs: Inputs, accelerator: str) -> Recipe:
    """``input_recipe``, refused with the reason where the accelerator cannot run it
    (MXFP8 and NVFP4 need Blackwell's block-scaled tensor cores)."""
    recipe = input_recipe(inputs)
    return _supported(recipe, accelerator,
                      "fp8_recipe" if recipe.gemm_format == "fp8" else "precision")


def _supported(recipe: Recipe, accelerator: str, blame: str) -> Recipe:
    """``recipe``, or a ValidationError on the input ``blame`` naming why the accelerator
    cannot run it (inputs.machine.recipe_support)."""
    if recipe_support(accelerator, recipe):
        # recipe_support's English, in the reader's language (inputs.machine is hashed
        # with the speed model's code by scripts/calibrate.py, so it stays as it is).
        gpu = hardware.get(accelerator)
        said = (_("{recipe} needs block-scaled (MX) tensor cores; {gpu} has none: choose "
                  "per-tensor or blockwise FP8, or a Blackwell GPU.")
                if recipe.needs in ("mx", "nvidia_mx") and gpu.peak_fp4_flops is None else
                _("{recipe} runs on NVIDIA Blackwell tensor cores, not on {gpu}."))
        raise ValidationError(blame, said.format(recipe=_(recipe.label), gpu=gpu.name))
    return recipe


def recipe_note(recipe: Recipe, layers: int, gemms_per_layer: int = 4, *,
                narrow_weights: bool = False) -> str:
    """What a low-precision recipe changed in the memory count, in words: the weight
    copies per parameter (or, with ``narrow_weights``, the narrow weights that replace
    the 16-bit ones), the bytes of a saved GEMM input, what stays 16-bit and the scaling
    state (``gemms_per_layer`` quantized GEMMs per layer: QKV, the attention output and
    two MLP matrices, Megatron-LM's fused layout)."""
    metadata = recipe.scaling_metadata_bytes(layers * gemms_per_layer)
    kept = (_("The share the recipe leaves in BF16 ({share:.0%} of the linear layers) keeps "
              "2 B.").format(share=recipe.high_precision_share)
            if recipe.high_precision_share else "")
    state = (_("Scaling state: {mib:,.1f} MiB of amax histories.").format(mib=metadata / 2**20)
             if metadata else _("Scales: counted per element above."))
    weights = ((_("the weights are kept in it only, {bytes:.3g} B per parameter, updated "
                  "through the optimizer's FP32 master copy (the other orientation remade "
                  "each step)") if recipe.weight_copies > 1 else
                _("the weights are kept in it only, {bytes:.3g} B per parameter, updated "
                  "through the optimizer's FP32 master copy")) if narrow_weights else
               _("the 16-bit weights stay (the optimizer updates them) and {cache:.3g} B per "
                 "parameter of quantized copies come on top ({copies} kept from forward to "
                 "backward)")).format(bytes=recipe.primary_weight_bytes,
                                      cache=recipe.weight_cache_bytes,
                                      copies=recipe.weight_copies)
    text = _("{recipe}: {weights}; the GEMMs' saved inputs take {saved:.3g} B per element "
             "instead of 2.").format(recipe=_(recipe.label), weights=weights,
                                     saved=recipe.saved_input_bytes)
    for more in (kept, _("Attention, norms, embedding, output layer and router stay 16-bit, "
                         "gradients and master weights as chosen."), state):
        if more:
            text = _("{first} {second}").format(first=text, second=more)
    return text


def gemm_recipe_param(default: str) -> Param:
    """The recipe of a calculator with no precision input (moe_step): BF16 GEMMs or one of
    formulas.model.recipes, by id."""
    return Param("gemm_recipe", "GEMM precision recipe", "choice", default,
                 choices=tuple(Choice(r.id, r.label) for r in RECIPES.values()),
                 help="The layers' matrix multiplies and what they keep: BF16; FP8 per-tensor "
                      "(Transformer Engine); FP8 blockwise (DeepSeek-V3, Sec. 3.3.2); MXFP8 "
                      "or NVFP4 on Blackwell. The narrow ones add quantized weight copies on "
                      "top of the 16-bit weights (formulas.model.recipes).")


def recipe_by_id(recipe_id: str, accelerator: str) -> Recipe:
    """``gemm_recipe_param``'s recipe, refused where the accelerator cannot run it."""
    return _supported(RECIPES[recipe_id], accelerator, "gemm_recipe")
