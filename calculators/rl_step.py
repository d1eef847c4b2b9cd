"""The ``rl_step`` calculator: one step of RL post-training (rollouts, scoring, policy
update, weight sync) on a cluster, in four placements, and the days of a whole phase.
Generation: the rollout calculator's model (formulas.rl.generation); training: the
trainer's FLOPs at an MFU (formulas.rl.step); the sync: formulas.rl.weight_sync.
"""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.catalogues.host_links import host_side
from calculators.core import charts
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import N_, _
from calculators.core.spec import Choice, Output, Param, ValidationError, When
from calculators.formulas.rl import step as rl
from calculators.formulas.rl.generation import Generation, generate
from calculators.formulas.rl.weight_sync import weight_sync
from calculators.inputs.rl import Generator, generator, reload_for
from calculators.inputs.rl_params import BYTES, GENERATOR_PARAMS, MODEL_PARAMS, WORKLOAD_PARAMS

DAY = 86_400.0
SEPARATE = When("placement", ("disaggregated", "one_step_off", "fully_async"))
_LABELS = {"colocated": N_("colocated"), "disaggregated": N_("disaggregated, in turn"),
           "one_step_off": N_("one step off (overlapped)"),
           "fully_async": N_("fully asynchronous (no tail)")}


def _generation(gen: Generator, inputs: Inputs, engines: int) -> Generation:
    return generate(gen.engine, slots=gen.slots, engines=engines,
                    prompts=inputs.whole("prompts"),
                    samples=inputs.whole("samples_per_prompt"),
                    prompt_tokens=inputs.whole("prompt_tokens"),
                    mean_length=inputs.num("mean_response"),
                    cap=inputs.whole("max_response"))


def _algorithm(inputs: Inputs) -> rl.Algorithm:
    ppo = inputs.text("algorithm") == "ppo"
    return rl.Algorithm(critic=ppo, reference=inputs.flag("reference_kl"),
                        reward_model=inputs.flag("reward_model"),
                        epochs=inputs.whole("epochs"))


class _Step:
    """What every placement shares: the generator, the trainer's work, the sync."""

    def __init__(self, inputs: Inputs) -> None:
        self.inputs = inputs
        self.gpus = inputs.whole("num_gpus")
        self.gen = generator(inputs, self.gpus)
        self.gpu = hardware.get(inputs.text("gpu"))
        self.engine_gpus = self.gen.engine.gpus
        tokens = inputs.whole("prompts") * inputs.whole("samples_per_prompt") * (
            inputs.whole("prompt_tokens") + inputs.num("mean_response"))
        self.tokens = tokens
        self.train_flops = _algorithm(inputs).flops_per_token(self.gen.model.active) * tokens
        self.rate = self.gpu.peak_bf16_flops * inputs.num("train_mfu")
        self.model_bytes = self.gen.model.total * BYTES[inputs.text("weight_precision")]
        self.reload = reload_for(self.gpu.id)
        self._generations: dict[int, Generation] = {}

    def generation(self, engines: int) -> Generation:
        if engines not in self._generations:
            self._generations[engines] = _generation(self.gen, self.inputs, engines)
        return self._generations[engines]

    def training_s(self, gpus: int) -> float:
        return self.train_flops / (gpus * self.rate)

    def colocated(self) -> rl.Placement:
        if self.gpus % self.engine_gpus:
            raise ValidationError("num_gpus", _(
                "{gpus:,} is not allowed: colocated, every GPU generates, in whole engines "
                "of {engine}").format(gpus=self.gpus, engine=self.engine_gpus))
        sync = weight_sync(self.model_bytes, engine_gpus=self.engine_gpus,
                           trainer_gpus=self.gpus, fabric=self.gen.engine.fabric,
                           colocated=True, reload=self.reload)
        swapped = rl.SWAPPED_BYTES_PER_PARAM * self.gen.model.total / self.gpus
        swap = 2.0 * swapped / host_side(self.gpu.id).achieved_link
        generation = self.generation(self.gpus // self.engine_gpus)
        return rl.colocated(self.gpus, generation.total_s, self.training_s(self.gpus),
                            sync, swap)

    def separate(self, name: str, engines: int) -> rl.Placement:
        generating = engines * self.engine_gpus
        training = self.gpus - generating
        sync = weight_sync(self.model_bytes, engine_gpus=self.engine_gpus,
                           trainer_gpus=training, fabric=self.gen.engine.fabric,
                           colocated=False, reload=self.reload)
        generation = self.generation(engines)
        seconds = generation.steady_s if name == "fully_async" else generation.total_s
        return rl.separate(name, generation_gpus=generating, training_gpus=training,
                           generation_s=seconds, training_s=self.training_s(training),
                           sync=sync)

    def split(self, name: str) -> rl.Placement:
        chosen = self.inputs.opt("generation_gpus")
        if chosen is None:
            if self.gpus <= self.engine_gpus:
                raise ValidationError("num_gpus", _(
                    "{gpus:,} GPUs leave no room for an engine of {engine} and a trainer")
                    .format(gpus=self.gpus, engine=self.engine_gpus))
            return rl.best_split(self.gpus, self.engine_gpus,
                                 lambda engines: self.separate(name, engines))
        count = int(chosen)
        if count % self.engine_gpus or count >= self.gpus:
            raise ValidationError("generation_gpus", _(
                "{count:,} is not allowed: whole engines of {engine}, fewer than the {gpus:,} "
                "GPUs").format(count=count, engine=self.engine_gpus, gpus=self.gpus))
        return self.separate(name, count // self.engine_gpus)


def _table(placements: dict[str, rl.Placement]) -> Table:
    rows = tuple(
        (_(_LABELS[name]), f"{p.generation_gpus:,} / {p.training_gpus:,}",
         f"{p.generation_s:,.0f} s", f"{p.training_s:,.0f} s",
         f"{p.sync_s + p.swap_s:,.1f} s", f"{p.step_s:,.0f} s", f"{p.idle_share:.0%}")
        for name, p in placements.items())
    return Table((_("placement"), _("GPUs generating / training"), _("generation"),
                  _("training"), _("sync (and swap)"), _("step"), _("GPU time idle")), rows,
                 caption=_("Each placement on the same GPUs; the separate pools at the split "
                           "given, or the fastest one found"))


def _chart(placements: dict[str, rl.Placement]) -> str:
    bars = [(_(_LABELS[name]), [(_("generation"), p.generation_s),
                                (_("training"), p.training_s),
                                (_("sync and swap"), p.sync_s + p.swap_s)])
            for name, p in placements.items()]
    return charts.stacked_bar_chart(_("Phases of one RL step by placement (seconds; the "
                                      "overlapped ones run generation and training at once)"),
                                    bars, _("seconds"))


def _rl_step(inputs: Inputs) -> Computed:
    step = _Step(inputs)
    placements: dict[str, rl.Placement] = {}
    if step.gpus % step.engine_gpus == 0:
        placements["colocated"] = step.colocated()
    for name in rl.PLACEMENTS[1:]:
        if step.gpus > step.engine_gpus:
            placements[name] = step.split(name)
    name = inputs.text("placement")
    if name not in placements:
        placements[name] = step.colocated() if name == "colocated" else step.split(name)
    chosen = placements[name]
    fastest = min(placements, key=lambda n: placements[n].step_s)
    days = chosen.step_s * inputs.whole("rl_steps") / DAY
    warnings = []
    states = rl.TRAINING_STATE_BYTES_PER_PARAM * step.gen.model.total / chosen.training_gpus
    if name != "colocated" and states > step.gpu.memory_bytes:
        warnings.append(_(
            "The {gpus:,} training GPUs would hold {states:,.0f} GB of training states each "
            "(16 B per parameter, fully sharded), more than their {memory:,.0f} GB: give the "
            "trainers more GPUs, or offload.").format(
            gpus=chosen.training_gpus, states=states / 1e9,
            memory=step.gpu.memory_bytes / 1e9))
    measured = (step.reload.accelerator in {step.gpu.id, "h800"}
                and step.gpu.id in {"h800", "h100_sxm", "h200", "h20"})
    sync_words = (
        _("Weight sync: {weights:,.0f} GB of weights; each generating GPU receives "
          "{received:,.1f} GB and loads it (reload: {fixed:.1f} s + {rate:.1f} GB/s per GPU, "
          "fitted to checkpoint-engine's {gpu} rows).") if measured else
        _("Weight sync: {weights:,.0f} GB of weights; each generating GPU receives "
          "{received:,.1f} GB and loads it (reload: {fixed:.1f} s + {rate:.1f} GB/s per GPU, "
          "fitted to checkpoint-engine's {gpu} rows; an assumption for this GPU)."))
    notes = [
        _("Training: {flops:.3g} FLOP per step ({tokens:.3g} tokens of prompt and response) "
          "at {mfu:.0%} MFU of the BF16 peak.").format(
            flops=step.train_flops, tokens=step.tokens, mfu=inputs.num("train_mfu")),
        sync_words.format(
            weights=step.model_bytes / 1e9,
            received=step.model_bytes / step.engine_gpus / 1e9, fixed=step.reload.fixed_s,
            rate=step.reload.bytes_per_s / 1e9,
            gpu=hardware.get(step.reload.accelerator).name),
    ]
    if fastest != name:
        notes.append(_("Fastest on these GPUs: {placement}, {step:,.0f} s per step.").format(
            placement=_(_LABELS[fastest]), step=placements[fastest].step_s))
    return Computed(
        values={
            "step_time": chosen.step_s,
            "phase_days": days,
            "gpu_hours": days * 24 * chosen.gpus,
            "generation_share": chosen.generation_s / (
                chosen.generation_s + chosen.training_s + chosen.sync_s + chosen.swap_s),
            "generation_s": chosen.generation_s,
            "training_s": chosen.training_s,
            "sync_s": chosen.sync_s,
            "swap_s": chosen.swap_s,
            "idle_share": chosen.idle_share,
            "generation_gpus": chosen.generation_gpus,
            "training_gpus": chosen.training_gpus,
            "engine_gpus_used": step.engine_gpus,
            "fastest": _(_LABELS[fastest]),
        },
        warnings=warnings, notes=notes, table=_table(placements), chart=_chart(placements))


RL_STEP = Calculator(
    id="rl_step",
    headline=("step_time", "phase_days", "generation_share", "idle_share"),
    advanced=("memory_utilization", "max_sequences", "overlap_communication",
              "kv_lora_rank", "qk_rope_head_dim", "dense_layers", "epochs"),
    title="An RL step: generation, training and the weight sync",
    summary="One step of RL post-training (GRPO or PPO) on a cluster: rollouts, scoring, "
            "the policy update and the weight sync, colocated or in separate pools, "
            "synchronous or overlapped, and the days of the whole phase.",
    chapter="post-training.md",
    params=(
        *GENERATOR_PARAMS[:1],
        Param("num_gpus", "GPUs", "int", 256, minimum=2, maximum=1_000_000,
              help="All the GPUs of the phase."),
        Param("placement", "Placement", "choice", "colocated",
              choices=tuple(Choice(n, _LABELS[n]) for n in rl.PLACEMENTS),
              help="Colocated: all GPUs generate, then all train. The others split them "
                   "into a generating pool and a training pool."),
        Param("generation_gpus", "Generating GPUs", "int", None, optional=True,
              minimum=1, maximum=1_000_000, placeholder="the fastest split",
              when=SEPARATE, help="Blank: the split with the shortest step."),
        Param("rl_steps", "RL steps in the phase", "int", 1000, minimum=1,
              maximum=10_000_000, help="DeepSeek-R1-Zero: 10,400 steps (R1 paper, GRPO "
              "training details)."),
        Param("algorithm", "Algorithm", "choice", "grpo",
              choices=(Choice("grpo", "GRPO (no critic)"), Choice("ppo", "PPO (critic)")),
              help="GRPO scores a response against its group's mean: no critic to run or "
                   "train (DeepSeekMath, Sec. 4.1.1)."),
        Param("reference_kl", "KL penalty (reference model)", "bool", True,
              help="A forward pass of the frozen reference model per token."),
        Param("reward_model", "Reward model", "bool", False,
              help="Off: rule-based rewards (answer checkers, tests), as in "
                   "DeepSeek-R1-Zero; on: a reward model the policy's size scores each "
                   "response."),
        Param("epochs", "Passes over each batch", "int", 1, minimum=1, maximum=100,
              help="PPO epochs; DAPO's 16 mini-batches are one pass."),
        Param("train_mfu", "Training MFU", "float", 0.38, unit="1", minimum=0.01,
              maximum=1.0,
              help="Of the BF16 peak. 0.38: the lower end of Llama 3 405B's pre-training "
                   "(Dubey et al. 2024, Table 4: 38-43% on 8K-16K H100). Our "
                   "assumption for RL; veRL measured 0.19 for DeepSeek-V3 GRPO on H20 "
                   "(docs/perf/dpsk.md). The planners give it for a layout."),
        *GENERATOR_PARAMS[1:],
        *WORKLOAD_PARAMS,
        *MODEL_PARAMS,
    ),
    outputs=(
        Output("step_time", "Step time", "s", "duration"),
        Output("phase_days", "Days for the phase", "", "fixed"),
        Output("gpu_hours", "GPU-hours for the phase", "GPU-h", "count"),
        Output("generation_share", "Generation's share of the phases", "1", "percent"),
        Output("idle_share", "GPU time idle", "1", "percent",
               help="Waiting for the other pool, the sync or the swap."),
        Output("generation_s", "Generation", "s", "duration"),
        Output("training_s", "Training (scoring and update)", "s", "duration"),
        Output("sync_s", "Weight sync", "s", "duration"),
        Output("swap_s", "Swap of training states", "s", "duration"),
        Output("generation_gpus", "GPUs generating", "", "count"),
        Output("training_gpus", "GPUs training", "", "count"),
        Output("engine_gpus_used", "GPUs per generation engine", "", "count"),
        Output("fastest", "Fastest placement here", "", "text"),
    ),
    function=_rl_step,
    sources=(
        "Sheng et al. 2024, HybridFlow (veRL), arXiv 2409.19256, Secs. 8.1-8.4",
        "Shao et al. 2024, DeepSeekMath, arXiv 2402.03300, Sec. 4.1.1 (GRPO)",
        "Fu et al. 2025, AReaL, arXiv 2505.24298 (asynchronous RL)",
        "MoonshotAI/checkpoint-engine README benchmark (weight update times)",
        "Dubey et al. 2024, The Llama 3 Herd of Models, Table 4 (MFU)",
    ),
)
