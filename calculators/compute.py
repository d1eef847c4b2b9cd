"""Training compute: C = 6ND, GPU-hours, wall-clock days, cost, energy and carbon.

One small function per quantity; ``TRAINING_COMPUTE`` declares the calculator that
composes them for the page, the CLI and the tests.
"""

from __future__ import annotations

from calculators import hardware, units
from calculators.spec import Calculator, Computed, Inputs, Output, Param

SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0

#: Hoffmann et al. 2022 (Chinchilla), Table 3: compute-optimal training uses about
#: 20 tokens per parameter (e.g. 70B parameters on 1.4T tokens).
CHINCHILLA_TOKENS_PER_PARAM = 20.0
#: Beyond this factor either side of the Chinchilla ratio the page says so.
CHINCHILLA_NOTE_FACTOR = 2.0


def training_flops(params: float, tokens: float, flops_per_param_token: float = 6.0) -> float:
    """C = k N D. k = 6: forward 2 (multiply + add per weight), backward 4 (a
    multiply-add for the input gradient and one for the weight gradient); k = 8 adds
    one more forward pass under full activation recomputation (Narayanan et al. 2021,
    Sec. 5.1: time ~ 8TP/(nX)). Kaplan et al. 2020, Sec. 2.1."""
    return flops_per_param_token * params * tokens


def attention_flops(
    tokens: float, n_layers: int, seq_len: int, d_model: int, flops_per_param_token: float = 6.0
) -> float:
    """The attention-score term that C = kND leaves out.

    PaLM (Chowdhery et al. 2022, App. B) counts 12 L H Q T training FLOPs per token for
    QK^T and AV (forward 4 L d s, times 3 for forward + backward); with k/6 scaling the
    recompute case. Kaplan et al. (Eq. 2.2) count half of it (causal masking)."""
    per_token = 2.0 * flops_per_param_token * n_layers * seq_len * d_model
    return per_token * tokens


def gpu_seconds(total_flops: float, peak_flops: float, utilization: float) -> float:
    """Accelerator-seconds at ``utilization`` (MFU) of ``peak_flops``."""
    return total_flops / (peak_flops * utilization)


def energy_kwh(gpu_hours: float, power_watts: float, pue: float) -> float:
    """Meta's method (Touvron et al. 2023, LLaMA, Table 15 caption):
    energy = GPU-hours x GPU power x PUE."""
    return gpu_hours * power_watts / 1000.0 * pue


def co2_tonnes(energy: float, carbon_intensity: float) -> float:
    """tCO2e = kWh x kgCO2e/kWh / 1000 (LLaMA, Table 15 caption)."""
    return energy * carbon_intensity / 1000.0


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
        Param(
            "tokens",
            "Training tokens D",
            "float",
            300e9,
            unit="token",
            minimum=1,
            maximum=1e17,
            help="Tokens seen in training, all epochs. GPT-3: 300B (Brown et al. 2020).",
        ),
        Param(
            "flops_per_param_token",
            "FLOP per parameter per token",
            "float",
            6.0,
            minimum=1,
            maximum=24,
            help="6 = forward 2 + backward 4 (Kaplan et al. 2020, Sec. 2.1); 8 with full "
            "activation recomputation (Narayanan et al. 2021, Sec. 5.1).",
        ),
        Param(
            "gpu",
            "Accelerator",
            "choice",
            "a100_80gb_sxm",
            choices=hardware.accelerator_choices(),
            help="Peak dense BF16 throughput and power from each vendor's datasheet.",
        ),
        hardware.PEAK_FLOPS_PARAM,
        Param(
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
        ),
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
        Param(
            "price_per_gpu_hour",
            "Price per GPU-hour",
            "float",
            2.0,
            unit="USD/h",
            minimum=0,
            maximum=1000,
            help="An assumption, not a quote: $2.00 per GPU-hour. Cloud and contract "
            "prices vary several-fold; enter yours.",
        ),
        Param(
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
        ),
        Param(
            "pue",
            "Power usage effectiveness",
            "float",
            1.1,
            minimum=1,
            maximum=3,
            help="Data-centre overhead factor; 1.1 as used by Meta (LLaMA, Table 15).",
            advanced=True,
        ),
        Param(
            "carbon_intensity",
            "Grid carbon intensity",
            "float",
            0.385,
            unit="kgCO2e/kWh",
            minimum=0,
            maximum=2,
            help="0.385 kgCO2e/kWh, the US national average used by Meta (LLaMA, Table 15).",
            advanced=True,
        ),
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
