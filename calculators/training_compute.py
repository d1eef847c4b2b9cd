"""The ``training_compute`` calculator: C = 6ND, GPU-hours, wall-clock days, cost,
energy and carbon, composed from formulas.model.flops."""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.core import units
from calculators.core.calculator import Calculator, Computed, Inputs
from calculators.core.spec import Output, Param, ValidationError
from calculators.formulas.failures.goodput import checkpoint_bytes_per_param
from calculators.formulas.model.flops import (
    CHINCHILLA_NOTE_FACTOR,
    CHINCHILLA_TOKENS_PER_PARAM,
    HOURS_PER_DAY,
    SECONDS_PER_HOUR,
    attention_flops,
    co2_tonnes,
    energy_kwh,
    gpu_seconds,
    training_flops,
)
from calculators.formulas.parallel.memory import state_bytes
from calculators.inputs.hardware import (
    PEAK_FLOPS_PARAM,
    PEAK_PRECISION_PARAM,
    accelerator_choices,
    peak_flops,
    peak_note,
)
from calculators.inputs.reliability import ESTIMATE_BASIS, goodput_for
from calculators.inputs.training import (
    CARBON_INTENSITY_PARAM,
    FLOPS_PER_PARAM_TOKEN_PARAM,
    GOODPUT_PARAM,
    GPU_POWER_WATTS_PARAM,
    PRICE_PER_GPU_HOUR_PARAM,
    PUE_PARAM,
    TOKENS_PARAM,
    UTILIZATION_PARAM,
)

#: What the goodput estimate assumes of a run this calculator does not describe: 8 GPUs
#: per node and a checkpoint of BF16 weights with AdamW state (14 B per parameter).
ESTIMATE_GPUS_PER_NODE = 8
ESTIMATE_STATE = ("bf16_mixed", "adamw")


def _goodput(inputs: Inputs, params: float, num_gpus: int, notes: list[str]) -> float:
    """The ``goodput`` input, or (blank) the goodput model's estimate for this run."""
    checkpoint = params * checkpoint_bytes_per_param(state_bytes(*ESTIMATE_STATE))
    used = goodput_for(inputs, num_gpus, ESTIMATE_GPUS_PER_NODE, checkpoint)
    if used.estimated:
        plan = used.plan
        notes.append(
            f"Goodput {used.value:.1%} estimated ({ESTIMATE_BASIS}; 8 GPUs per node, "
            f"{checkpoint_bytes_per_param(state_bytes(*ESTIMATE_STATE)):g} B per parameter "
            f"checkpointed): an interruption every {plan.mtbi_s / 3600:.3g} h, a "
            f"checkpoint every {plan.interval_s / 60:.3g} min. The goodput calculator "
            "shows the steps.")
    return used.value


def _which_n(inputs: Inputs, params: float, notes: list[str]) -> float | None:
    """Say which N is in C. For a mixture of experts N is the ACTIVE count per token
    (only the experts a token visits multiply it; docs/moe.md): with ``total_params``
    given, ``params`` is read as that active count and its share is returned."""
    shown = units.format_value(params, "param", "count")
    total = inputs.opt("total_params")
    if total is None:
        notes.append(f"N = {shown}, every parameter active for every token (a dense "
                     "model). For a mixture of experts, N is the active count per token: "
                     "enter it, and the total as total_params.")
        return None
    if total < params:
        raise ValidationError("total_params", f"{total:g} is less than N = {params:g}: N "
                              "is the active part of a mixture of experts' total")
    notes.append(f"N is the active count per token, {shown}: {params / total:.1%} of the "
                 f"{units.format_value(total, 'param', 'count')} in total (a mixture of "
                 f"experts). C with the total would be {total / params:.3g}x larger.")
    return params / total


def _training_compute(inputs: Inputs) -> Computed:
    params, tokens = inputs.num("params"), inputs.num("tokens")
    k = inputs.num("flops_per_param_token")
    gpu = hardware.get(inputs.text("gpu"))
    peak = peak_flops(inputs, gpu)
    utilization = inputs.num("utilization")
    num_gpus = inputs.whole("num_gpus")
    power = inputs.opt("gpu_power_watts") or gpu.power_watts
    warnings: list[str] = []
    notes = [note] if (note := peak_note(inputs, gpu)) else []

    total = training_flops(params, tokens, k)
    attention: float | None = None
    if all(inputs[name] is not None for name in ("seq_len", "layers", "hidden")):
        seq_len = inputs.whole("seq_len")
        attention = attention_flops(
            tokens, inputs.whole("layers"), seq_len, inputs.whole("hidden"), k
        )
        counted = inputs.flag("count_attention")
        notes.append(
            f"Attention scores add {attention / total:.1%} to C = {k:g}ND at sequence "
            f"length {seq_len}: negligible for short contexts, large for long ones. "
            + ("GPU-hours, days, cost and energy count them (an MFU in PaLM's sense)."
               if counted else "GPU-hours, days, cost and energy leave them out "
               "(count_attention is off): time from C alone.")
        )
    # The FLOPs the time is counted from: C, plus the attention scores when the
    # architecture is given and the reader counts them (PaLM, App. B, counts them in MFU).
    time_flops = total + (attention if attention is not None and inputs.flag(
        "count_attention") else 0.0)
    hours = gpu_seconds(time_flops, peak, utilization) / SECONDS_PER_HOUR
    goodput = _goodput(inputs, params, num_gpus, notes)
    hours /= goodput  # the GPUs are held for the wall-clock, failures included
    days = hours / num_gpus / HOURS_PER_DAY
    energy: float | None = None
    carbon: float | None = None
    if power is None:
        warnings.append(
            f"{gpu.name} has no published power figure: set gpu_power_watts to get energy and CO2."
        )
    else:
        energy = energy_kwh(hours, power, inputs.num("pue"))
        carbon = co2_tonnes(energy, inputs.num("carbon_intensity"))

    active_share = _which_n(inputs, params, notes)
    reported = inputs.opt("reported_gpu_hours")
    implied = None if reported is None else time_flops / (reported * SECONDS_PER_HOUR * peak)
    if implied is not None and implied > 1:
        warnings.append(f"The reported GPU-hours imply {implied:.0%} of peak, more than the "
                        "GPUs can do: is N the total of a mixture of experts?")
    optimal = CHINCHILLA_TOKENS_PER_PARAM * params
    ratio = tokens / optimal
    if ratio < 1 / CHINCHILLA_NOTE_FACTOR or ratio > CHINCHILLA_NOTE_FACTOR:
        side = "fewer" if ratio < 1 else "more"
        notes.append(
            f"D is {ratio:.2g}x the compute-optimal "
            f"{units.format_value(optimal, 'tokens', 'count')} "
            f"({tokens / params:.3g} tokens per parameter against Chinchilla's ~20): "
            f"{side} tokens than compute-optimal for this N."
        )
    return Computed(
        values={
            "total_flops": total,
            "attention_flops": attention,
            "time_flops": time_flops,
            "gpu_hours": hours,
            "goodput": goodput,
            "wall_clock_days": days,
            "cost_usd": hours * inputs.num("price_per_gpu_hour"),
            "energy_kwh": energy,
            "co2_tonnes": carbon,
            "chinchilla_tokens": optimal,
            "effective_flops_per_gpu": peak * utilization,
            "active_share": active_share,
            "implied_mfu": implied,
        },
        warnings=warnings,
        notes=notes,
    )


TRAINING_COMPUTE = Calculator(
    id="training_compute",
    headline=("total_flops", "gpu_hours", "wall_clock_days", "cost_usd"),
    title="Training compute, GPU-hours, time, cost and carbon",
    summary="C = 6ND, then GPU-hours = C / (peak FLOP/s x MFU), days, dollars, kWh, tCO2e.",
    chapter="compute.md",
    params=(
        Param(
            "params",
            "Parameters N",
            "float",
            175e9,
            unit="param",
            minimum=1,
            maximum=1e16,
            help="Trainable parameters (Kaplan et al. use non-embedding N). GPT-3: 175B. "
            "For a mixture of experts, the ACTIVE parameters per token (DeepSeek-V3: 37B "
            "of 671B): only the experts a token visits multiply it.",
        ),
        Param(
            "total_params",
            "Total parameters (mixture of experts)",
            "float",
            None,
            unit="param",
            minimum=1,
            maximum=1e16,
            optional=True,
            placeholder="dense: = N",
            help="Blank: a dense model, N is all of it. Given: N above is read as the "
            "active count of a mixture of experts with this total (DeepSeek-V3: 671B, "
            "report Sec. 1); the result says the active share.",
            advanced=True,
        ),
        TOKENS_PARAM,
        FLOPS_PER_PARAM_TOKEN_PARAM,
        Param(
            "gpu",
            "Accelerator",
            "choice",
            "a100_80gb_sxm",
            choices=accelerator_choices(),
            help="Dense peak throughput and power from each vendor's datasheet.",
        ),
        PEAK_PRECISION_PARAM,
        PEAK_FLOPS_PARAM,
        UTILIZATION_PARAM,
        GOODPUT_PARAM,
        Param(
            "num_gpus",
            "Number of accelerators",
            "int",
            1024,
            unit="GPU",
            minimum=1,
            maximum=10_000_000,
            help="Accelerators running in parallel.",
        ),
        PRICE_PER_GPU_HOUR_PARAM,
        GPU_POWER_WATTS_PARAM,
        PUE_PARAM,
        CARBON_INTENSITY_PARAM,
        Param(
            "seq_len",
            "Sequence length (optional)",
            "int",
            None,
            unit="token",
            minimum=1,
            maximum=100_000_000,
            optional=True,
            help="With layers and width: the attention-score FLOPs that C = kND leaves "
            "out (attention_flops); GPU-hours, days, cost and energy count them too "
            "unless count_attention is off.",
            advanced=True,
        ),
        Param(
            "layers",
            "Layers (optional)",
            "int",
            None,
            minimum=1,
            maximum=100_000,
            optional=True,
            help="Transformer layers, for the attention correction.",
            advanced=True,
        ),
        Param(
            "hidden",
            "Model width (optional)",
            "int",
            None,
            minimum=1,
            maximum=10_000_000,
            optional=True,
            help="Hidden size (d_model), for the attention correction.",
            advanced=True,
        ),
        Param(
            "count_attention",
            "Count attention scores in GPU-hours",
            "bool",
            True,
            help="On: with seq_len, layers and hidden given, the time is counted from C "
            "plus the attention-score FLOPs, as PaLM's MFU counts them (Chowdhery et al. "
            "2022, App. B). Off: from C alone, Kaplan et al.'s 6ND, whose MFU leaves them "
            "out. Without the architecture, C alone either way.",
            advanced=True,
        ),
        Param(
            "reported_gpu_hours",
            "Reported GPU-hours (optional)",
            "float",
            None,
            unit="GPU-h",
            minimum=1,
            maximum=1e12,
            optional=True,
            help="A run's published GPU-hours, to read back the MFU they imply against "
            "the chosen peak (DeepSeek-V3 pre-training: 2,664K H800 GPU-hours, report "
            "Table 1).",
            advanced=True,
        ),
    ),
    outputs=(
        Output("total_flops", "Training compute C", "FLOP", "sci"),
        Output("attention_flops", "Attention-score FLOPs (not in C)", "FLOP", "sci"),
        Output("time_flops", "FLOPs the time is counted from", "FLOP", "sci",
               help="C, plus the attention scores when the architecture is given and "
               "count_attention is on; GPU-hours = this / (peak x MFU)."),
        Output("gpu_hours", "GPU-hours", "GPU-h", "count",
               help="GPUs x wall-clock hours: C / (peak x MFU) / goodput."),
        Output("goodput", "Goodput (share of wall-clock that trains)", "1", "percent"),
        Output("wall_clock_days", "Wall-clock time", "days", "fixed"),
        Output("cost_usd", "Cost", "USD", "usd"),
        Output("energy_kwh", "Energy", "kWh", "count"),
        Output("co2_tonnes", "Emissions", "tCO2e", "count"),
        Output("chinchilla_tokens", "Compute-optimal tokens (20 N)", "tokens", "count"),
        Output("effective_flops_per_gpu", "Achieved FLOP/s per GPU", "FLOP/s", "si"),
        Output("active_share", "N as a share of the total (mixture of experts)", "1",
               "percent", help="N / total_params, when the total is given."),
        Output("implied_mfu", "MFU the reported GPU-hours imply", "1", "percent",
               help="FLOPs the time is counted from / (reported GPU-hours x peak), as if "
               "every reported hour trained."),
    ),
    function=_training_compute,
    sources=(
        "Kaplan et al. 2020, Scaling Laws for Neural Language Models, Sec. 2.1",
        "Brown et al. 2020, GPT-3, App. D, Table D.1",
        "Hoffmann et al. 2022, Chinchilla, Table 3",
        "Narayanan et al. 2021, Megatron-LM (SC21), Sec. 5.1, Eqs. 3 and 4",
        "Chowdhery et al. 2022, PaLM, App. B",
        "Touvron et al. 2023, LLaMA, Table 15",
    ),
)
