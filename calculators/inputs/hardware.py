"""Accelerator inputs shared by several calculators: the catalogue as a choice, and
the overrides of its peak and memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues.hardware import ACCELERATORS, PRECISIONS, Accelerator, Precision
from calculators.core.i18n import _
from calculators.core.spec import Choice, Param
from calculators.formulas.model.recipes import recipe_for

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs


def accelerator_choices() -> tuple[Choice, ...]:
    """The catalogue as choices for a ``gpu`` input."""
    return tuple(Choice(a.id, a.name) for a in ACCELERATORS.values())


#: Which of the catalogue's dense peaks a calculator divides by. MFU is conventionally
#: quoted against the BF16 peak even for runs whose GEMMs are FP8 (Llama 3 reports BF16
#: MFU; the dense chapter discusses DeepSeek-V3's FP8 run against both).
PEAK_PRECISION_PARAM = Param(
    "peak_precision",
    "Peak at precision",
    "choice",
    "bf16",
    choices=(Choice("bf16", "BF16 (dense)"), Choice("fp8", "FP8 (dense)"),
             Choice("fp4", "FP4 (dense)")),
    help="The datasheet's dense tensor peak at this precision. A device without that "
    "precision runs it at its next wider one (A100: FP8 at the BF16 rate); the result "
    "says which rate was used.",
)


def peak_precision(inputs: Inputs) -> Precision:
    """The validated ``peak_precision`` input, typed."""
    value = inputs.text("peak_precision")
    if value not in PRECISIONS:  # validation has already refused it; this narrows the type
        raise ValueError(f"unknown precision {value!r}")
    return value


def peak_flops(inputs: Inputs, gpu: Accelerator) -> float:
    """``peak_flops`` if given, else the catalogue's dense peak at ``peak_precision``."""
    return inputs.opt("peak_flops") or gpu.peak_flops(peak_precision(inputs))


def peak_note(inputs: Inputs, gpu: Accelerator) -> str | None:
    """A note when the chosen precision fell back to a wider one, or when an override
    of the peak makes a precision other than the default moot."""
    wanted = peak_precision(inputs)
    override = inputs.opt("peak_flops")
    if override is not None:
        if wanted == PEAK_PRECISION_PARAM.default:
            return None
        return _("The peak FLOP/s override ({peak:,.1f} TFLOP/s) is the denominator: the "
                 "{precision} peak of the datasheet is not used.").format(
            peak=override / 1e12, precision=wanted.upper())
    used = gpu.precision_used(wanted)
    if used == wanted:
        return None
    return _("{gpu} has no dense {wanted} tensor rate in its datasheet: the {used} peak "
             "({peak:,.1f} TFLOP/s) is used.").format(
        gpu=gpu.name, wanted=wanted.upper(), used=used.upper(),
        peak=gpu.peak_flops(used) / 1e12)


#: The override of the catalogue's peak, shared by every calculator that divides by it.
PEAK_FLOPS_PARAM = Param(
    "peak_flops",
    "Peak FLOP/s override",
    "float",
    None,
    unit="FLOP/s",
    # A floor far below any real accelerator (1 GFLOP/s) keeps everything divided by
    # the peak finite at every corner of the bounds (tests/unit/core/test_extremes.py).
    minimum=1e9,
    maximum=1e17,
    optional=True,
    placeholder="from the accelerator",
    help="Blank: the catalogue's dense peak for the chosen accelerator and precision.",
    advanced=True,
)

GPU_MEMORY_PARAM = Param(
    "gpu_memory",
    "GPU memory override",
    "float",
    None,
    unit="B",
    minimum=0,
    exclusive_minimum=True,
    maximum=1e14,
    optional=True,
    placeholder="from the GPU",
    help="What the device holds, before the memory_reserve share is kept free. Blank: "
    "the datasheet's label read as GiB (an \"80GB\" A100 or H100 holds 80 GiB, "
    "85.9e9 B). To enter what your framework leaves usable instead, set memory_reserve "
    "to 0, or the reserve is taken twice.",
)


def mfu_basis(inputs: Inputs, gpu: Accelerator) -> str:
    """The denominator of an MFU in words: whose peak, at which precision, how many
    FLOP/s. An FP8 run's MFU against the BF16 peak reads twice its MFU against the FP8
    peak on Hopper, so a figure is only comparable with its basis."""
    return peak_words(gpu, peak_precision(inputs), inputs.opt("peak_flops"))


def peak_words(gpu: Accelerator, precision: Precision = "bf16",
               override: float | None = None) -> str:
    """``mfu_basis`` for a calculator that fixes the precision (or has an override)."""
    if override:
        return _("the given peak, {peak:,.1f} TFLOP/s per GPU").format(peak=override / 1e12)
    used = gpu.precision_used(precision)
    return _("{gpu}'s dense {precision} peak, {peak:,.1f} TFLOP/s per GPU").format(
        gpu=gpu.name, precision=used.upper(), peak=gpu.peak_flops(used) / 1e12)


MFU_BASIS_HELP = ("The peak the MFU divides by: the datasheet's dense rate at the 'Peak "
                  "at precision' input, or the given peak. An FP8 run's MFU against the "
                  "BF16 peak is twice its MFU against the FP8 peak on Hopper and "
                  "Blackwell; quote the basis with the figure.")


#: The planners' MFU: model FLOPs over the attention the step's kernel computes
#: (formulas.model.flops.computed_count).
PLANNER_MFU_HELP = (
    "Model FLOPs: 6 per weight a token multiplies (input embedding left out, output layer "
    "once, MTP modules in) plus the attention scores the kernel computes: with a fused "
    "causal kernel (FlashAttention) the unmasked half, as Megatron-LM counts since 2025; "
    "materialised, the whole matrix, as PaLM, Korthikanti et al. and torchtitan count. Over "
    "the step time and the GPUs' peak. PaLM's count would add scores no kernel computes: "
    "at long sequences it passes the kernels' efficiency, and 100% near 1M tokens.")


#: parallel_plan's model FLOP/s per GPU, in the count published figures use.
PALM_FLOPS_HELP = (
    "6N plus the whole attention-score matrix, as PaLM counts and as published TFLOP/s per "
    "GPU are counted (Llama 3, Table 4), over the step: comparable with those figures. "
    "Under a causal kernel it counts scores no kernel computes: not the MFU's numerator.")


def narrow_mfu_note(inputs: Inputs, gpu: Accelerator, mfu: float) -> str | None:
    """Where the layers' GEMMs run narrower than the peak the MFU divides by (an FP8 or
    NVFP4 run against the BF16 peak): the same run's MFU against the narrow peak, so
    that a figure near or above 100% reads as the convention it is."""
    narrow = recipe_for(inputs.text("precision")).gemm_format
    if narrow == "bf16" or inputs.opt("peak_flops"):
        return None
    basis = gpu.precision_used(peak_precision(inputs))
    used = gpu.precision_used(narrow)
    if PRECISIONS.index(used) <= PRECISIONS.index(basis):
        return None
    against = mfu * gpu.peak_flops(basis) / gpu.peak_flops(used)
    said = (_("This MFU is against the {basis} peak (above 100%: the GEMMs run faster than "
              "that peak), the basis that compares the run with {basis} runs; against the "
              "{used} peak the layers' GEMMs run at, the same step is {against:.1%}.")
            if mfu > 1 else
            _("This MFU is against the {basis} peak, the basis that compares the run with "
              "{basis} runs; against the {used} peak the layers' GEMMs run at, the same "
              "step is {against:.1%}."))
    return said.format(basis=basis.upper(), used=used.upper(), against=against)
