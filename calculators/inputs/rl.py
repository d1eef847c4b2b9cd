"""The post-training calculators' decoding engine (formulas.rl.decode), built from their
inputs (inputs.rl_params), and the engine's reload rate (formulas.rl.weight_sync).

The model is described by what decoding reads: the active and total parameters (a
mixture of experts reads its shared part every step and only the experts its tokens
pick), the attention's KV cache per token, and the width of the activations the engine's
GPUs exchange. Presets fill these (catalogues.presets; the attention kind of a dense
preset follows from its KV heads).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.catalogues.kernel_speeds import kernel_speed
from calculators.catalogues.weight_updates import FITTED
from calculators.core.i18n import _
from calculators.core.spec import ValidationError
from calculators.formulas.rl import kv_cache
from calculators.formulas.rl.decode import Engine
from calculators.formulas.rl.generation import mean_live_length
from calculators.formulas.rl.weight_sync import Reload, fit_reload, transfer_s
from calculators.inputs.machine import fabric_for, gemm_rate
from calculators.inputs.rl_params import BYTES, MAX_ENGINE_GPUS

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

@dataclass(frozen=True)
class Model:
    """The model's parts as decoding reads them, in parameters."""

    active: float
    total: float
    dense: float  # read every step: everything but the routed experts
    expert: float  # one routed expert over all MoE layers
    experts: int
    top_k: int
    moe_layers: int


def model_parts(inputs: Inputs) -> Model:
    """The active, total, shared and per-expert parameters (formulas: per expert =
    (total - active) / (E - k), shared = active - k x per expert)."""
    active = inputs.num("params")
    if inputs.text("model_kind") != "moe":
        return Model(active, active, active, 0.0, 0, 1, 0)
    total = inputs.opt("total_params")
    if total is None:
        raise ValidationError("total_params", _("a mixture of experts needs its total: every "
                                                "expert's parameters included"))
    experts, top_k = inputs.whole("routed_experts"), inputs.whole("experts_per_token")
    layers, dense_layers = inputs.whole("layers"), inputs.whole("dense_layers")
    if top_k >= experts:
        raise ValidationError("experts_per_token", _(
            "{k} is not allowed: it must be below the routed experts ({experts})").format(
            k=top_k, experts=experts))
    if total <= active:
        raise ValidationError("total_params", _("the total must exceed the active parameters: "
                                                "the experts a token skips are the difference"))
    if dense_layers >= layers:
        raise ValidationError("dense_layers", _(
            "{dense} is not allowed: at least one of the {layers} layers must have "
            "experts").format(dense=dense_layers, layers=layers))
    expert = (total - active) / (experts - top_k)
    return Model(active, total, active - top_k * expert, expert, experts, top_k,
                 layers - dense_layers)


@dataclass(frozen=True)
class Generator:
    """One generation engine and what its memory allows."""

    engine: Engine
    model: Model
    weight_bytes_per_gpu: float  # resident: the GPU's share of every weight
    kv_bytes_per_token: float  # whole model, one token
    kv_capacity_tokens: float  # tokens the engine's caches hold
    slots: int  # sequences decoded together
    limited_by: str  # "memory" or "the scheduler's cap", in the reader's language


def _kv(inputs: Inputs) -> tuple[float, float]:
    """KV-cache bytes per token (all layers) and attention FLOPs per cached token."""
    attention = inputs.text("attention")
    mla = attention == "mla"
    kv_heads = 0 if mla else inputs.whole("kv_heads")
    head_dim = 0 if mla else inputs.whole("head_dim")
    rank = inputs.whole("kv_lora_rank") if mla else 0
    rope = inputs.whole("qk_rope_head_dim") if mla else 0
    heads, layers = inputs.whole("heads"), inputs.whole("layers")
    if not mla and (kv_heads > heads or heads % kv_heads):
        raise ValidationError("kv_heads", _(
            "{kv_heads} is not allowed: it must divide the heads ({heads})").format(
            kv_heads=kv_heads, heads=heads))
    elements = kv_cache.elements_per_token_layer(attention, kv_heads=kv_heads,
                                                 head_dim=head_dim, kv_lora_rank=rank,
                                                 rope_dim=rope)
    flops = kv_cache.attention_flops_per_cached_token(
        attention, heads=heads, head_dim=head_dim, kv_lora_rank=rank, rope_dim=rope,
        layers=layers)
    return elements * layers * BYTES[inputs.text("kv_precision")], flops


def data_parallel_attention(inputs: Inputs) -> bool:
    """Whether the engine runs attention data-parallel (MoE only)."""
    return inputs.text("model_kind") == "moe" and inputs.text("attention_parallel") == "dp"


def _check_engine(inputs: Inputs, gpus: int, domain: int) -> None:
    heads = inputs.whole("heads")
    if not data_parallel_attention(inputs) and heads % gpus:
        raise ValidationError("engine_gpus", _(
            "{gpus} is not allowed: tensor-parallel attention splits the {heads} heads, so "
            "it must divide them").format(gpus=gpus, heads=heads))
    if inputs.text("model_kind") == "moe" and gpus > domain and gpus % domain:
        raise ValidationError("engine_gpus", _(
            "{gpus} is not allowed: an engine larger than a scale-up domain ({domain} GPUs) "
            "must fill whole ones").format(gpus=gpus, domain=domain))


def _generator(inputs: Inputs, gpus: int) -> Generator:
    """An engine of ``gpus`` GPUs, its memory and its batch."""
    gpu = hardware.get(inputs.text("gpu"))
    _check_engine(inputs, gpus, gpu.scale_up_domain)
    model = model_parts(inputs)
    dp = data_parallel_attention(inputs)
    weight = BYTES[inputs.text("weight_precision")]
    kv_token, attention_flops = _kv(inputs)
    split = gpus if dp else kv_cache.ways_split(
        inputs.text("attention"), 0 if inputs.text("attention") == "mla"
        else inputs.whole("kv_heads"), gpus)
    resident = (model.dense * weight / (1 if dp else gpus)
                + model.experts * model.expert * weight / gpus)
    free = gpu.memory_bytes * inputs.num("memory_utilization") - resident
    if free <= 0:
        raise ValidationError("engine_gpus", _(
            "{gpus} GPUs per engine hold {weights:,.1f} GB of weights each, more than the "
            "{usable:,.1f} GB they may use: use more GPUs per engine or FP8 weights").format(
            gpus=gpus, weights=resident / 1e9,
            usable=gpu.memory_bytes * inputs.num("memory_utilization") / 1e9))
    capacity = split * free / kv_token
    prompt, cap = inputs.whole("prompt_tokens"), inputs.whole("max_response")
    mean = inputs.num("mean_response")
    if mean > cap:
        raise ValidationError("mean_response", _(
            "{mean:,.0f} is not allowed: it must not exceed the longest response "
            "({cap:,})").format(mean=mean, cap=cap))
    if capacity < prompt + cap:
        raise ValidationError("max_response", _(
            "one sequence of {tokens:,} tokens needs more KV cache than the engine holds "
            "({capacity:,.0f} tokens): use more GPUs per engine, an FP8 cache or shorter "
            "responses").format(tokens=prompt + cap, capacity=capacity))
    by_memory = math.floor(capacity / (prompt + mean))
    # One scheduler per engine, or per GPU under data-parallel attention (vLLM and
    # SGLang run one per data-parallel rank).
    cap_sequences = inputs.whole("max_sequences") * (gpus if dp else 1)
    slots = min(by_memory, cap_sequences)
    speed = kernel_speed(gpu.id)
    engine = Engine(
        gpus=gpus, data_parallel_attention=dp, layers=inputs.whole("layers"),
        moe_layers=model.moe_layers, hidden=inputs.whole("hidden"),
        active_params=model.active, dense_weight_bytes=model.dense * weight,
        expert_weight_bytes=model.expert * weight, experts=model.experts,
        top_k=model.top_k, kv_bytes_per_token=kv_token, kv_split=split,
        attention_flops_per_cached_token=attention_flops,
        gemm=gemm_rate(gpu.id, fp8=weight == 1.0),
        attention_flops_rate=gpu.peak_bf16_flops * speed.attention.forward,
        kernel_overhead_s=speed.kernel_overhead_s,
        fabric=fabric_for(gpu.id, domain=gpu.scale_up_domain),
        overlap_communication=inputs.flag("overlap_communication"))
    return Generator(engine, model, resident, kv_token, capacity, slots,
                     _("memory") if by_memory < cap_sequences else _("the scheduler's cap"))


def _candidate_sizes(inputs: Inputs, pool: int) -> list[int]:
    """Engine sizes worth trying: powers of two, whole scale-up domains, the divisors of
    the heads (tensor-parallel attention needs one), each dividing ``pool``."""
    domain = hardware.get(inputs.text("gpu")).scale_up_domain
    heads = inputs.whole("heads")
    sizes = {2 ** i for i in range(13)} | {domain * 2 ** i for i in range(13)}
    sizes |= {d for d in range(1, min(heads, MAX_ENGINE_GPUS) + 1) if heads % d == 0}
    return sorted(g for g in sizes if g <= min(pool, MAX_ENGINE_GPUS) and pool % g == 0)


def full_batch_rate(gen: Generator, inputs: Inputs) -> float:
    """Output tokens/s per GPU with every slot busy at the average length decoding
    reaches (formulas.rl.generation.mean_live_length)."""
    live = mean_live_length(inputs.num("mean_response"), inputs.whole("max_response"))
    batch = gen.slots
    step = gen.engine.step_s(batch, batch * (inputs.whole("prompt_tokens") + live))
    return batch / step / gen.engine.gpus


def generator(inputs: Inputs, pool: int) -> Generator:
    """The engine the inputs give, or, with ``engine_gpus`` blank, the size among
    ``_candidate_sizes`` with the most tokens/s per GPU at a full batch (the smaller on
    a tie); ``pool``: the GPUs the engines share."""
    chosen = inputs.opt("engine_gpus")
    if chosen is not None:
        return _generator(inputs, int(chosen))
    best: tuple[float, Generator] | None = None
    refusal: ValidationError | None = None
    for size in _candidate_sizes(inputs, pool):
        try:
            gen = _generator(inputs, size)
        except ValidationError as error:
            if error.input_name in {"engine_gpus", "max_response"}:
                refusal = error
                continue
            raise
        rate = full_batch_rate(gen, inputs)
        if best is None or rate > best[0] * (1 + 1e-9):
            best = (rate, gen)
    if best is None:
        said = (_("no engine that divides the {pool:,} GPUs holds the model and one longest "
                  "sequence ({why}): use FP8 weights, an FP8 cache, shorter responses or "
                  "more GPUs") if refusal else
                _("no engine that divides the {pool:,} GPUs holds the model and one longest "
                  "sequence: use FP8 weights, an FP8 cache, shorter responses or more GPUs"))
        raise ValidationError("engine_gpus", said.format(
            pool=pool, why=refusal.message if refusal else ""))
    return best[1]


#: Which accelerator's measured weight updates set another's reload rate
#: (formulas.rl.weight_sync): the H20 has its own rows; the rest take the H800's.
RELOAD_FITTED_ON = {"h20": "h20"}
RELOAD_DEFAULT = "h800"


@cache
def reload_for(accelerator: str) -> Reload:
    """The engine's reload rate on ``accelerator``: fitted to its own single-engine rows
    of catalogues.weight_updates, or the H800's."""
    fitted_on = RELOAD_FITTED_ON.get(accelerator, RELOAD_DEFAULT)
    fabric = fabric_for(fitted_on, domain=hardware.get(fitted_on).scale_up_domain)
    points = [(row.model_bytes / row.engine_gpus,
               row.seconds - transfer_s(row.model_bytes, engine_gpus=row.engine_gpus,
                                        trainer_gpus=row.engine_gpus, fabric=fabric,
                                        colocated=True))
              for row in FITTED if row.accelerator == fitted_on]
    return fit_reload(points, fitted_on)
