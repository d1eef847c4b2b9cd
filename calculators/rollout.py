"""The ``rollout`` calculator: generating a batch of RL rollouts on training hardware.
Decoding priced on the roofline (formulas.rl.decode), the batch bounded by the KV cache
(formulas.rl.kv_cache), continuous batching with a long tail of response lengths
(formulas.rl.generation, formulas.rl.lengths).
"""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.core import charts
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import N_, _
from calculators.core.spec import Output, Param, ValidationError
from calculators.formulas.rl.generation import generate, mean_live_length
from calculators.formulas.rl.lengths import share_at_cap
from calculators.inputs.rl import Generator, generator
from calculators.inputs.rl_params import GENERATOR_PARAMS, MODEL_PARAMS, WORKLOAD_PARAMS


def engines_for(size: int, gpus: int) -> int:
    """Engines on ``gpus`` generation GPUs; they must come in whole engines."""
    if gpus % size:
        raise ValidationError("generation_gpus", _(
            "{gpus:,} is not allowed: generation GPUs come in whole engines of {size}").format(
            gpus=gpus, size=size))
    return gpus // size


def _parts(gen: Generator, batch: int, cached: float) -> list[tuple[str, float]]:
    """One decoding step's parts on one GPU, seconds (English names, the keys of
    ``_BOUND_WORDS``; shown through the catalogue)."""
    traffic, arithmetic, kernels = gen.engine.gemm_parts(batch)
    read, flops = gen.engine.attention_parts()
    return [
        (N_("weights read (GEMMs)"), traffic),
        (N_("GEMM arithmetic"), arithmetic),
        (N_("KV cache read (attention)"), read * cached),
        (N_("attention arithmetic"), flops * cached),
        (N_("communication (allreduce, dispatch, combine)"), gen.engine.communication_s(batch)),
        (N_("fixed cost of the kernels"), kernels),
    ]


_BOUND_WORDS = {"weights read (GEMMs)": N_("weights (HBM)"),
                "GEMM arithmetic": N_("GEMM compute"),
                "KV cache read (attention)": N_("KV cache (HBM)"),
                "attention arithmetic": N_("attention compute"),
                "communication (allreduce, dispatch, combine)": N_("communication"),
                "fixed cost of the kernels": N_("kernel launches")}


def _chart(gen: Generator, prompt: int, live: float) -> str:
    points, batch = [], 1
    while batch < gen.slots:
        points.append(batch)
        batch *= 2
    points.append(gen.slots)
    e = gen.engine
    per_gpu = tuple((float(b), b / e.step_s(b, b * (prompt + live)) / e.gpus)
                    for b in points)
    return charts.line_chart(
        _("Output tokens/s per GPU against the sequences decoded together"),
        [charts.Series(_("decoding throughput per GPU"), per_gpu)],
        _("sequences per engine"), _("tokens/s per GPU"), log_x=True,
        markers=(charts.Marker(float(gen.slots), _("batch {size:,}").format(size=gen.slots)),))


def _rollout(inputs: Inputs) -> Computed:
    gpus = inputs.whole("generation_gpus")
    gen = generator(inputs, gpus)
    engines = engines_for(gen.engine.gpus, gpus)
    prompt, mean, cap = (inputs.whole("prompt_tokens"), inputs.num("mean_response"),
                         inputs.whole("max_response"))
    result = generate(gen.engine, slots=gen.slots, engines=engines,
                      prompts=inputs.whole("prompts"),
                      samples=inputs.whole("samples_per_prompt"), prompt_tokens=prompt,
                      mean_length=mean, cap=cap)
    live = mean_live_length(mean, cap)
    batch = gen.slots
    parts = _parts(gen, batch, batch * (prompt + live))
    step = gen.engine.step_s(batch, batch * (prompt + live))
    tokens = inputs.whole("prompts") * inputs.whole("samples_per_prompt") * mean
    total = result.total_s
    gpu = hardware.get(inputs.text("gpu"))
    rows = tuple((_(name), f"{seconds * 1e3:,.2f} ms") for name, seconds in parts)
    notes = [
        _("Each engine decodes up to {slots:,} sequences together (limited by {limit}): its "
          "KV cache holds {capacity:,.0f} tokens at {per_token:,.1f} kB per token, sized for "
          "a prompt plus a mean response each (a paged cache holds only the tokens written "
          "so far; vLLM preempts and recomputes a sequence when the cache overflows).").format(
            slots=gen.slots, limit=gen.limited_by, capacity=gen.kv_capacity_tokens,
            per_token=gen.kv_bytes_per_token / 1e3),
        _("Response lengths: mean {mean:,.0f}, cap {cap:,}; by our assumed shape "
          "(formulas.rl.lengths) {share:.0%} of the responses are within 5% of the cap. The "
          "last {tail:,.0f} s of decoding run with no response waiting: the batch shrinks to "
          "its longest responses.").format(
            mean=mean, cap=cap, share=share_at_cap(mean, cap), tail=result.rollout.tail_s),
        _("Rates come from the speed model's kernel parameters (GEMM efficiency by shape, the "
          "HBM bandwidth kernels reach on {gpu}: {bandwidth:.2f} TB/s) and collective model; "
          "decoding-specific kernels (FlashDecoding, FlashMLA) are assumed to reach the same "
          "shares. Per-step scheduling on the host is not counted.").format(
            gpu=gpu.name, bandwidth=gen.engine.gemm.memory_bandwidth / 1e12),
    ]
    return Computed(
        values={
            "generation_time": total,
            "tokens_per_gpu_s": tokens / total / gpus,
            "tail_share": 1.0 - result.steady_s / total if total > 0 else 0.0,
            "steady_time": result.steady_s,
            "slots": batch,
            "step_time": step,
            "bound": _(_BOUND_WORDS[max(parts, key=lambda p: p[1])[0]]),
            "kv_bytes_per_token": gen.kv_bytes_per_token,
            "kv_capacity_tokens": gen.kv_capacity_tokens,
            "weight_bytes_per_gpu": gen.weight_bytes_per_gpu,
            "engines": engines,
            "engine_gpus_used": gen.engine.gpus,
            "prefill_time": result.prefill_s,
            "output_tokens": tokens,
        },
        notes=notes,
        table=Table((_("part of one decoding step, one GPU"), _("time")), rows,
                    caption=_("A full batch of {batch:,} sequences at the average length "
                              "decoding reaches; the step is the GEMMs' longer part plus "
                              "attention's plus communication (or the longer of work and "
                              "communication when they overlap)").format(batch=batch)),
        chart=_chart(gen, prompt, live),
    )


ROLLOUT = Calculator(
    id="rollout",
    headline=("generation_time", "tokens_per_gpu_s", "tail_share"),
    advanced=("memory_utilization", "max_sequences", "overlap_communication",
              "kv_lora_rank", "qk_rope_head_dim", "dense_layers"),
    title="Rollout: generating a batch of responses",
    summary="How long a batch of RL rollouts takes on training GPUs: decoding on the "
            "roofline (weights and KV cache against HBM bandwidth), the batch the KV "
            "cache allows, and the long tail of response lengths.",
    chapter="post-training.md",
    params=(
        *GENERATOR_PARAMS[:2],
        Param("generation_gpus", "Generation GPUs", "int", 64, minimum=1,
              maximum=1_000_000, help="All GPUs generating, in whole engines."),
        *GENERATOR_PARAMS[2:],
        *WORKLOAD_PARAMS,
        *MODEL_PARAMS,
    ),
    outputs=(
        Output("generation_time", "Generation time for the batch", "s", "duration"),
        Output("tokens_per_gpu_s", "Output tokens/s per GPU", "token/s", "count"),
        Output("tail_share", "Share of the time lost to the tail", "1", "percent",
               help="1 - the time with the slots kept full / the time: what the batch "
                    "loses while it shrinks to its longest responses."),
        Output("steady_time", "Generation time with the slots kept full", "s", "duration",
               help="What a fully asynchronous pipeline pays: no tail."),
        Output("slots", "Sequences decoded together, per engine", "", "count"),
        Output("step_time", "One decoding step at the full batch", "s"),
        Output("bound", "The step's largest part", "", "text"),
        Output("kv_bytes_per_token", "KV cache per token", "B"),
        Output("kv_capacity_tokens", "KV cache capacity per engine", "token", "count"),
        Output("weight_bytes_per_gpu", "Weights held per GPU", "B"),
        Output("engines", "Engines", "", "count"),
        Output("engine_gpus_used", "GPUs per engine", "", "count"),
        Output("prefill_time", "Of which prefill", "s", "duration"),
        Output("output_tokens", "Tokens generated", "token", "sci"),
    ),
    function=_rollout,
    sources=(
        "Williams, Waterman and Patterson 2009 (roofline); the guide's speed model "
        "(catalogues.kernel_speeds, catalogues.link_speeds, catalogues.deepep)",
        "DeepSeek-AI 2024, DeepSeek-V2, arXiv 2405.04434, Sec. 2.1, Table 1 (KV cache "
        "per token: MHA, GQA, MLA)",
        "Kwon et al. 2023, PagedAttention (vLLM), SOSP; Yu et al. 2022, Orca, OSDI "
        "(continuous batching)",
        "NVIDIA NeMo-RL performance summary (mean and cap of response lengths); DAPO, "
        "arXiv 2503.14476, Sec. 4.1 (512 prompts x 16 responses)",
    ),
)
