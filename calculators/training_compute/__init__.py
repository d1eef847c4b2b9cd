"""The ``training_compute`` calculator: C = model FLOPs per token x D (6ND, plus the
attention scores in the chosen count), GPU-hours, wall-clock days, cost, energy and
carbon, composed from formulas.model.flops."""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.core import units
from calculators.core.calculator import Calculator, Computed, Inputs
from calculators.core.i18n import _
from calculators.core.spec import FormerInput, ValidationError
from calculators.formulas.failures.checkpoints import checkpoint_bytes_per_param
from calculators.formulas.model.flops import (
    CHINCHILLA_NOTE_FACTOR,
    CHINCHILLA_TOKENS_PER_PARAM,
    HOURS_PER_DAY,
    SECONDS_PER_HOUR,
    FlopCount,
    attention_score_flops,
    co2_tonnes,
    energy_kwh,
    flop_count,
    gpu_seconds,
    model_flops_per_token,
)
from calculators.formulas.parallel.memory import state_bytes
from calculators.inputs.hardware import mfu_basis, peak_flops, peak_note
from calculators.inputs.layer_mix import documents, layer_mix
from calculators.inputs.reliability import estimate_basis, goodput_for
from calculators.training_compute.extension import extension_flops, extension_note, stages_of
from calculators.training_compute.params import OUTPUTS, PARAMS

#: What the goodput estimate assumes of a run this calculator does not describe: 8 GPUs
#: per node and a checkpoint of BF16 weights with AdamW state (14 B per parameter).
ESTIMATE_GPUS_PER_NODE = 8
ESTIMATE_STATE = ("bf16_mixed", "adamw")


def _goodput(inputs: Inputs, params: float, num_gpus: int, notes: list[str]) -> float:
    """The ``goodput`` input, or (blank) the goodput model's estimate for this run."""
    per_param = checkpoint_bytes_per_param(state_bytes(*ESTIMATE_STATE))
    used = goodput_for(inputs, num_gpus, ESTIMATE_GPUS_PER_NODE, params * per_param)
    if used.estimated:
        plan = used.plan
        notes.append(_(
            "Goodput {goodput:.1%} estimated ({basis}; 8 GPUs per node, {per_param:g} B per "
            "parameter checkpointed): an interruption every {hours:.3g} h, a checkpoint "
            "every {minutes:.3g} min. The goodput calculator shows the steps.").format(
                goodput=used.value, basis=estimate_basis(), per_param=per_param,
                hours=plan.mtbi_s / 3600, minutes=plan.interval_s / 60))
    return used.value


def _which_n(inputs: Inputs, params: float, notes: list[str]) -> float | None:
    """Say which N is in C. For a mixture of experts N is the ACTIVE count per token
    (only the experts a token visits multiply it; docs/moe.md): with ``total_params``
    given, ``params`` is read as that active count and its share is returned."""
    shown = units.format_value(params, "param", "count")
    total = inputs.opt("total_params")
    if total is None:
        notes.append(_("N = {params}, every parameter active for every token (a dense "
                       "model). For a mixture of experts, N is the active count per token: "
                       "enter it, and the total as total_params.").format(params=shown))
        return None
    if total < params:
        raise ValidationError("total_params", _(
            "{total:g} is less than N = {params:g}: N is the active part of a mixture of "
            "experts' total").format(total=total, params=params))
    notes.append(_("N is the active count per token, {params}: {share:.1%} of the {total} in "
                   "total (a mixture of experts). 6N with the total would be {ratio:.3g}x "
                   "larger.").format(params=shown, share=params / total,
                                     total=units.format_value(total, "param", "count"),
                                     ratio=total / params))
    return params / total


def _flop_params(inputs: Inputs, params: float, notes: list[str]) -> float:
    """N in 6N: ``params`` less the input embedding table when the vocabulary and width
    are given and the output layer is untied (a lookup is not a multiply; a tied table
    is the output layer's matrix and counts once)."""
    vocab, hidden = inputs.opt("vocab"), inputs.opt("hidden")
    if vocab is None or hidden is None:
        return params
    if inputs.flag("tied_embeddings"):
        notes.append(_("The input embedding is tied to the output layer: its V x h weights "
                       "count once in N, as the output layer's matrix."))
        return params
    table = vocab * hidden
    if table >= params:
        raise ValidationError("vocab", _(
            "a {vocab:,.0f} x {hidden:,.0f} input table is not less than N = "
            "{params:g}").format(vocab=vocab, hidden=hidden, params=params))
    notes.append(_("N in 6N = {params}: the {table} of the input embedding table (V x h) are "
                   "taken out, a lookup and not a multiply; the untied output layer stays in "
                   "(torchtitan and Megatron-LM count so).").format(
        params=units.format_value(params - table, "param", "count"),
        table=units.format_value(table, "param", "count")))
    return params - table


def _attention(inputs: Inputs, length: int | None = None) -> float | None:
    """The attention scores' full training FLOPs per token, 6 L s n_h (d_qk + d_v), when
    the architecture gives them; heads x head size defaults to the width. ``length``:
    at another sequence length than the input's (a context-extension stage)."""
    layers, seq_len = inputs.opt("layers"), length or inputs.opt("seq_len")
    hidden, heads, head_dim = inputs.opt("hidden"), inputs.opt("heads"), inputs.opt("head_dim")
    if layers is None or seq_len is None:
        return None
    if heads is None:
        if head_dim is not None or inputs.opt("v_head_dim") is not None:
            raise ValidationError("heads", _("a head size needs the number of heads"))
        if hidden is None:
            return None
        heads, head_dim = 1, hidden  # heads x head size = the width: the same sum
    elif head_dim is None:
        if hidden is None:
            return None
        head_dim = hidden / heads
    v_head_dim = inputs.opt("v_head_dim") or head_dim
    full = attention_score_flops(layers=int(layers), seq_len=int(seq_len), heads=int(heads),
                                 qk_head_dim=head_dim, v_head_dim=v_head_dim)
    # Sliding windows and document masking charge fewer keys than the whole sequence
    # (formulas.model.layer_mix).
    keys = layer_mix(inputs).key_length_sum(int(layers), int(seq_len),
                                            documents(inputs, int(seq_len)))
    return full * keys / (int(layers) * int(seq_len))


def _count_note(count: FlopCount, k: float, full: float | None, per_token: float,
                seq_len: float | None) -> str:
    """Which convention C is counted in, and what the others would add."""
    said = _("C counted as {count}.").format(count=count.describe())
    if full is None:
        if count.attention_share == 0:
            return said
        return _("{said} Without layers, sequence length and heads or width, the attention "
                 "scores cannot be counted: C = kND alone, as 6N would count it.").format(
            said=said)
    counted = count.attention_share * full * k / 6.0
    base = per_token - counted
    if base <= 1e-9 * per_token:  # kN lost in the rounding of a far larger attention term
        return _("{said} At sequence length {seq_len:,.0f} the attention scores are all but "
                 "the whole of C: the weights' kN is below a billionth of it.").format(
            said=said, seq_len=seq_len)
    return _("{said} At sequence length {seq_len:,.0f} the whole score matrix adds "
             "{full:.1%} to {k:g}N and its causal half {half:.1%}; this count includes "
             "{counted:.1%}. GPU-hours, days, cost and energy follow C: an MFU is only "
             "meaningful in the count it was measured in.").format(
        said=said, seq_len=seq_len, full=full * k / 6.0 / base, k=k,
        half=full * k / 12.0 / base, counted=counted / base)


def _chinchilla(inputs: Inputs, params: float, tokens: float, notes: list[str]) -> float | None:
    """Chinchilla's compute-optimal D for a dense N; none for a mixture of experts, for
    which the 20 tokens per parameter have no published basis."""
    if inputs.opt("total_params") is not None:
        notes.append(_("No compute-optimal D is given for a mixture of experts: Chinchilla's "
                       "20 tokens per parameter (Hoffmann et al. 2022) was fitted on dense "
                       "models, and neither the active nor the total count of an MoE is the "
                       "N of that fit."))
        return None
    optimal = CHINCHILLA_TOKENS_PER_PARAM * params
    ratio = tokens / optimal
    if ratio < 1 / CHINCHILLA_NOTE_FACTOR or ratio > CHINCHILLA_NOTE_FACTOR:
        said = (_("D is {ratio:.2g}x the compute-optimal {optimal} ({per_param:.3g} tokens "
                  "per parameter against Chinchilla's ~20): fewer tokens than "
                  "compute-optimal for this N.") if ratio < 1 else
                _("D is {ratio:.2g}x the compute-optimal {optimal} ({per_param:.3g} tokens "
                  "per parameter against Chinchilla's ~20): more tokens than "
                  "compute-optimal for this N."))
        notes.append(said.format(ratio=ratio,
                                 optimal=units.format_value(optimal, "tokens", "count"),
                                 per_param=tokens / params))
    return optimal


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

    count = flop_count(inputs.text("flop_count"))
    flop_params = _flop_params(inputs, params, notes)
    full = _attention(inputs)
    per_token = model_flops_per_token(flop_params, full or 0.0, count, k)
    stages = stages_of(inputs)
    extension, table = extension_flops(
        stages, lambda length: model_flops_per_token(
            flop_params, _attention(inputs, length) or 0.0, count, k), per_token)
    total = per_token * tokens + extension
    if stages:
        notes.append(extension_note(stages, extension, per_token * tokens))
    attention = None if full is None else count.attention_share * full * k / 6.0 * tokens
    notes.append(_count_note(count, k, full, per_token, inputs.opt("seq_len")))
    hours = gpu_seconds(total, peak, utilization) / SECONDS_PER_HOUR
    goodput = _goodput(inputs, params, num_gpus, notes)
    hours /= goodput  # the GPUs are held for the wall-clock, failures included
    days = hours / num_gpus / HOURS_PER_DAY
    energy: float | None = None
    carbon: float | None = None
    if power is None:
        warnings.append(_("{gpu} has no published power figure: set gpu_power_watts to get "
                          "energy and CO2.").format(gpu=gpu.name))
    else:
        energy = energy_kwh(hours, power, inputs.num("pue"))
        carbon = co2_tonnes(energy, inputs.num("carbon_intensity"))

    active_share = _which_n(inputs, params, notes)
    reported = inputs.opt("reported_gpu_hours")
    implied = None if reported is None else total / (reported * SECONDS_PER_HOUR * peak)
    if implied is not None and implied > 1:
        warnings.append(_("The reported GPU-hours imply {mfu:.0%} of peak, more than the "
                          "GPUs can do: is N the total of a mixture of experts?").format(
            mfu=implied))
    optimal = _chinchilla(inputs, params, tokens, notes)
    return Computed(
        values={
            "total_flops": total,
            "flop_params": flop_params,
            "attention_flops": attention,
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
            "mfu_basis": mfu_basis(inputs, gpu),
            "extension_flops": extension if stages else None,
        },
        warnings=warnings,
        notes=notes,
        table=table,
    )


TRAINING_COMPUTE = Calculator(
    id="training_compute",
    headline=("total_flops", "gpu_hours", "wall_clock_days", "cost_usd"),
    title="Training compute, GPU-hours, time, cost and carbon",
    summary="C = 6ND (plus the attention scores, in a named count), then GPU-hours = C / "
            "(peak FLOP/s x MFU), days, dollars, kWh, tCO2e.",
    chapter="compute.md",
    params=PARAMS,
    outputs=OUTPUTS,
    function=_training_compute,
    sources=(
        "Kaplan et al. 2020, Scaling Laws for Neural Language Models, Sec. 2.1",
        "Brown et al. 2020, GPT-3, App. D, Table D.1",
        "Hoffmann et al. 2022, Chinchilla, Table 3",
        "Narayanan et al. 2021, Megatron-LM (SC21), Sec. 5.1, Eqs. 3 and 4",
        "Chowdhery et al. 2022, PaLM, App. B",
        "Touvron et al. 2023, LLaMA, Table 15",
        "torchtitan, torchtitan/models/utils.py (get_dense_model_nparams_and_flops)",
        "Dubey et al. 2024, The Llama 3 Herd of Models, Sec. 3.4.2 (context extension)",
        "Megatron-LM, megatron/training/training.py (num_floating_point_operations)",
    ),
    # Before the FLOP counts were named (2025): a yes/no for the whole attention term.
    former_inputs=(FormerInput("count_attention", "flop_count", (
        ("true", "6N+attention"), ("false", "6N"))),),
)
