"""The ``training_compute`` calculator: C = 6ND, GPU-hours, wall-clock days, cost,
energy and carbon, composed from formulas.flops."""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.core import units
from calculators.core.spec import Calculator, Computed, Inputs, Output, Param
from calculators.formulas.flops import (
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
from calculators.inputs.hardware import PEAK_FLOPS_PARAM, accelerator_choices
from calculators.inputs.training import (
    CARBON_INTENSITY_PARAM,
    FLOPS_PER_PARAM_TOKEN_PARAM,
    GPU_POWER_WATTS_PARAM,
    PRICE_PER_GPU_HOUR_PARAM,
    PUE_PARAM,
    TOKENS_PARAM,
    UTILIZATION_PARAM,
)


def _training_compute(inputs: Inputs) -> Computed:
    params, tokens = inputs.num("params"), inputs.num("tokens")
    k = inputs.num("flops_per_param_token")
    gpu = hardware.get(inputs.text("gpu"))
    peak = inputs.opt("peak_flops") or gpu.peak_bf16_flops
    utilization = inputs.num("utilization")
    num_gpus = inputs.whole("num_gpus")
    power = inputs.opt("gpu_power_watts") or gpu.power_watts
    warnings: list[str] = []
    notes: list[str] = []

    total = training_flops(params, tokens, k)
    attention: float | None = None
    if all(inputs[name] is not None for name in ("seq_len", "layers", "hidden")):
        seq_len = inputs.whole("seq_len")
        attention = attention_flops(
            tokens, inputs.whole("layers"), seq_len, inputs.whole("hidden"), k
        )
        notes.append(
            f"Attention scores add {attention / total:.1%} to C = {k:g}ND at sequence "
            f"length {seq_len}: negligible for short contexts, large for long ones."
        )
    hours = gpu_seconds(total, peak, utilization) / SECONDS_PER_HOUR
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
            "gpu_hours": hours,
            "wall_clock_days": days,
            "cost_usd": hours * inputs.num("price_per_gpu_hour"),
            "energy_kwh": energy,
            "co2_tonnes": carbon,
            "chinchilla_tokens": optimal,
            "effective_flops_per_gpu": peak * utilization,
        },
        warnings=warnings,
        notes=notes,
    )


TRAINING_COMPUTE = Calculator(
    id="training_compute",
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
            help="Trainable parameters (Kaplan et al. use non-embedding N). GPT-3: 175B.",
        ),
        TOKENS_PARAM,
        FLOPS_PER_PARAM_TOKEN_PARAM,
        Param(
            "gpu",
            "Accelerator",
            "choice",
            "a100_80gb_sxm",
            choices=accelerator_choices(),
            help="Peak dense BF16 throughput and power from each vendor's datasheet.",
        ),
        PEAK_FLOPS_PARAM,
        UTILIZATION_PARAM,
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
            help="With layers and width: adds the attention-score FLOPs C leaves out.",
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
    ),
    outputs=(
        Output("total_flops", "Training compute C", "FLOP", "sci"),
        Output("attention_flops", "Attention-score FLOPs (not in C)", "FLOP", "sci"),
        Output("gpu_hours", "GPU-hours", "GPU-h", "count"),
        Output("wall_clock_days", "Wall-clock time", "days", "fixed"),
        Output("cost_usd", "Cost", "USD", "usd"),
        Output("energy_kwh", "Energy", "kWh", "count"),
        Output("co2_tonnes", "Emissions", "tCO2e", "count"),
        Output("chinchilla_tokens", "Compute-optimal tokens (20 N)", "tokens", "count"),
        Output("effective_flops_per_gpu", "Achieved FLOP/s per GPU", "FLOP/s", "si"),
    ),
    function=_training_compute,
    sources=(
        "Kaplan et al. 2020, Scaling Laws for Neural Language Models, Sec. 2.1",
        "Brown et al. 2020, GPT-3, App. D, Table D.1",
        "Hoffmann et al. 2022, Chinchilla, Table 3",
        "Narayanan et al. 2021, Megatron-LM (SC21), Sec. 5.1",
        "Chowdhery et al. 2022, PaLM, App. B",
        "Touvron et al. 2023, LLaMA, Table 15",
    ),
)
