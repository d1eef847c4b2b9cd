"""The ``mfu`` calculator: utilisation from a measured step time or throughput, as
MFU (model FLOPs) and HFU (hardware FLOPs, with what recomputation repeats), after
Chowdhery et al. 2022 (PaLM), Sec. 4.1 and App. B; Korthikanti et al. 2022, Sec. 6.
The FLOPs per token are formulas.model.flops, which the planner uses too."""

from __future__ import annotations

from dataclasses import replace

from calculators.catalogues import hardware
from calculators.core import units
from calculators.core.calculator import Calculator, Computed, Inputs
from calculators.core.i18n import _
from calculators.core.spec import Output, Param, ValidationError
from calculators.formulas.model.architecture import matmul_params
from calculators.formulas.model.flops import (
    counted_mixing_flops,
    dense_model_flops_per_token,
    flop_count,
    recompute_flops_per_token,
)
from calculators.inputs.architecture import ARCHITECTURE_DETAIL, ARCHITECTURE_PARAMS, architecture
from calculators.inputs.hardware import (
    MFU_BASIS_HELP,
    PEAK_FLOPS_PARAM,
    PEAK_PRECISION_PARAM,
    accelerator_choices,
    mfu_basis,
    peak_flops,
    peak_note,
)
from calculators.inputs.layer_mix import DOCUMENT_DETAIL, DOCUMENT_PARAMS
from calculators.inputs.training import FLOP_COUNT_PARAM, RECOMPUTE_PARAM

_MATMULS_ONLY = "Not counted here: 6N counts only the weights of matrix multiplies, and "
#: Architecture inputs that change the parameter count but not the FLOPs counted here
#: (formulas.model.architecture.matmul_params), and why: said beside each field.
_NOT_COUNTED = {
    "biases": _MATMULS_ONLY + "biases are additions.",
    "qk_norm": _MATMULS_ONLY + "norms are elementwise.",
    "norms_per_layer": _MATMULS_ONLY + "norms are elementwise.",
    "position_embedding": "Not counted here: a learned position is a lookup, not a multiply.",
    "tied_embeddings": "Not counted here: the output layer multiplies once either way, and "
                       "the input table is a lookup.",
}
_ARCHITECTURE = tuple(replace(p, help=f"{p.help} {_NOT_COUNTED[p.name]}")
                      if p.name in _NOT_COUNTED else p for p in ARCHITECTURE_PARAMS)


def _mfu(inputs: Inputs) -> Computed:
    arch = architecture(inputs)
    params = inputs.opt("params") or float(matmul_params(arch))
    gpu = hardware.get(inputs.text("gpu"))
    peak = peak_flops(inputs, gpu)
    num_gpus = inputs.whole("num_gpus")
    tokens_per_step = inputs.num("global_batch") * arch.seq_len
    step_time, rate = inputs.opt("step_time"), inputs.opt("tokens_per_second")
    notes = [note] if (note := peak_note(inputs, gpu)) else []
    if rate is None:
        if step_time is None:
            raise ValidationError("step_time", _("give the step time or tokens_per_second"))
        rate = tokens_per_step / step_time
    elif step_time is not None:
        notes.append(_("Both step_time and tokens_per_second given: tokens_per_second used."))
    count = flop_count(inputs.text("flop_count"))
    model = dense_model_flops_per_token(arch, count, params)
    hardware_flops = model + recompute_flops_per_token(arch, inputs.text("recompute"), count)
    attention = counted_mixing_flops(arch, count)
    said = (_("Model FLOPs per token counted as {count}. N = {n} (given); attention scores "
              "are {share:.1%} of the count. The same run counted otherwise has another MFU: "
              "quote the count with the figure.") if inputs["params"] is not None else
            _("Model FLOPs per token counted as {count}. N = {n} (the weights a token "
              "multiplies); attention scores are {share:.1%} of the count. The same run "
              "counted otherwise has another MFU: quote the count with the figure."))
    notes.append(said.format(count=count.describe(), share=attention / model,
                             n=units.format_value(params, "param", "count")))
    achieved = model * rate / num_gpus
    mfu = achieved / peak
    hfu = hardware_flops * rate / num_gpus / peak
    warnings = []
    if hfu > 1:
        warnings.append(_("HFU above 100% ({hfu:.0%}): the inputs claim more FLOP/s than "
                          "the GPUs' peak; check the step time, batch or GPU count.").format(
            hfu=hfu))
    return Computed(
        values={
            "flop_params": params,
            "model_flops_per_token": model,
            "hardware_flops_per_token": hardware_flops,
            "achieved_flops_per_gpu": achieved,
            "mfu": mfu,
            "mfu_basis": mfu_basis(inputs, gpu),
            "hfu": hfu,
            "tokens_per_second": rate,
            "step_time": tokens_per_step / rate,
        },
        warnings=warnings,
        notes=notes,
    )


MFU = Calculator(
    id="mfu",
    headline=("mfu", "hfu", "tokens_per_second"),
    advanced=(
        *ARCHITECTURE_DETAIL,
        *DOCUMENT_DETAIL,
        "params",
        "tokens_per_second",
    ),
    title="Model and hardware FLOPs utilisation of a run",
    summary="MFU = tokens/s x model FLOPs per token / (GPUs x peak); HFU also counts "
    "recomputation.",
    chapter="dense.md",
    params=(
        *_ARCHITECTURE,
        *DOCUMENT_PARAMS,
        Param(
            "params",
            "Parameters N (override)",
            "float",
            None,
            unit="param",
            minimum=0,
            exclusive_minimum=True,
            maximum=1e16,
            optional=True,
            placeholder="from the architecture",
            help="N in 6N, the weights a token multiplies; blank: the architecture's "
            "matrices and its output layer once (the input embedding is a lookup, left "
            "out, as torchtitan and Megatron-LM count).",
        ),
        Param(
            "global_batch",
            "Global batch",
            "int",
            1536,
            unit="sequence",
            minimum=1,
            maximum=100_000_000,
            help="Sequences per optimizer step, all replicas.",
        ),
        Param(
            "step_time",
            "Step time",
            "float",
            31.5,
            unit="s",
            minimum=1e-6,
            maximum=1e7,
            optional=True,
            help="Measured seconds per optimizer step. Default 31.5 s: what 140 TFLOP/s "
            "per GPU on 1,024 A100s implies for GPT-3 at batch 1,536 with full "
            "recomputation (Narayanan et al. 2021, Sec. 5.1, Eq. 3).",
        ),
        Param(
            "tokens_per_second",
            "Tokens per second (instead)",
            "float",
            None,
            unit="token/s",
            minimum=1e-3,
            maximum=1e15,
            optional=True,
            help="Measured throughput; if set, the step time is ignored.",
        ),
        Param(
            "num_gpus",
            "GPUs",
            "int",
            1024,
            unit="GPU",
            minimum=1,
            maximum=10_000_000,
            help="Accelerators in the run.",
        ),
        Param(
            "gpu",
            "GPU",
            "choice",
            "a100_80gb_sxm",
            choices=accelerator_choices(),
            help="Dense peak from the datasheet, at the precision below.",
        ),
        replace(PEAK_PRECISION_PARAM, help="MFU's denominator. Convention: the BF16 "
                "peak, even for FP8 runs (Llama 3 reports BF16 MFU); FP8 gives the "
                "share of the FP8 tensor cores' peak instead, half as large."),
        replace(PEAK_FLOPS_PARAM, help="Blank: the catalogue's dense peak at the "
                "precision above. E.g. 275 TFLOP/s for TPU v4 (PaLM)."),
        FLOP_COUNT_PARAM,
        # The shared declaration; a measured Megatron run recomputes fully by default.
        replace(RECOMPUTE_PARAM, default="full"),
    ),
    outputs=(
        Output("flop_params", "N in 6N", "param", "count",
               help="The weights a token multiplies: the architecture's matrices and its "
                    "output layer once, not the input embedding (a lookup), unless given."),
        Output("model_flops_per_token", "Model FLOPs per token", "FLOP", "sci",
               help="6N plus the attention scores in the chosen count (flop_count)."),
        Output("hardware_flops_per_token", "Hardware FLOPs per token", "FLOP", "sci"),
        Output("achieved_flops_per_gpu", "Achieved model FLOP/s per GPU", "FLOP/s"),
        Output("mfu", "MFU", "1", "percent"),
        Output("mfu_basis", "MFU against", "", "text", help=MFU_BASIS_HELP),
        Output("hfu", "HFU", "1", "percent"),
        Output("tokens_per_second", "Tokens per second", "token/s", "count"),
        Output("step_time", "Step time", "s", "fixed"),
    ),
    function=_mfu,
    sources=(
        "Chowdhery et al. 2022, PaLM, Sec. 4.1, Table 3 and App. B",
        "Korthikanti et al. 2022, Reducing Activation Recomputation, Sec. 6",
        "Narayanan et al. 2021, Megatron-LM (SC21), Eq. 3 and Sec. 5.1",
        "Kaplan et al. 2020, Scaling Laws, Sec. 2.1",
    ),
)
