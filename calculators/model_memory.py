"""The ``model_memory`` calculator: training memory per GPU, whether it fits, and the
smallest GPU count that fits at the given strategy. The formulas are formulas.parallel.memory."""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.core import charts
from calculators.core.calculator import Calculator, Computed, Inputs
from calculators.core.i18n import _
from calculators.core.spec import Output, Param, ValidationError
from calculators.formulas.parallel.memory import Breakdown, Strategy, memory_per_gpu, state_bytes
from calculators.formulas.parallel.sharded_states import gathered_weight_bytes, min_dp_to_fit
from calculators.formulas.parallel.stages import schedule_layout
from calculators.inputs.architecture import ARCHITECTURE_DETAIL as DETAIL
from calculators.inputs.architecture import ARCHITECTURE_PARAMS, architecture, check_layout
from calculators.inputs.hardware import GPU_MEMORY_PARAM, accelerator_choices
from calculators.inputs.memory import (
    ATTENTION_PARAM,
    DROPOUT_PARAM,
    GRADIENTS_PARAM,
    MEMORY_RESERVE_PARAM,
    OFFLOAD_PARAM,
    gpu_capacity,
    gpu_usable,
    host_memory_warning,
)
from calculators.inputs.parallel import CP_METHOD_PARAM, SCHEDULE_PARAM, VIRTUAL_STAGES_PARAM
from calculators.inputs.speed import FP8_RECIPE_PARAM, NARROW_WEIGHTS_PARAM
from calculators.inputs.training import (
    OPTIMIZER_PARAM,
    PRECISION_PARAM,
    RECOMPUTE_PARAM,
    checked_recipe,
    recipe_note,
)

GB = 1e9


def _where(breakdown: Breakdown, pp: int) -> str:
    if pp == 1:
        return _("The peak is on the only pipeline stage.")
    if breakdown.rank == 0:
        return _("The peak is on the first pipeline stage.")
    if breakdown.rank == pp - 1:
        return _("The peak is on the last pipeline stage.")
    return _("The peak is on pipeline stage {stage}, which holds more layers than the "
             "first.").format(stage=breakdown.rank + 1)


def _strategy(inputs: Inputs, zero: int, input_bytes: float = 2.0) -> Strategy:
    tp, cp = inputs.whole("tp"), inputs.whole("cp")
    arch_seq = inputs.whole("seq_len")
    if cp > 1 and arch_seq % (2 * cp):
        raise ValidationError("cp", _("context parallel size {cp} must split the {seq}-token "
                                      "sequence into 2 x cp equal chunks").format(
                                          cp=cp, seq=arch_seq))
    schedule = inputs.text("schedule")
    pp = inputs.whole("pp")
    return Strategy(
        tp=tp, pp=pp, dp=inputs.whole("dp"), zero_stage=zero,
        micro_batch=inputs.whole("micro_batch"),
        sequence_parallel=inputs.flag("sequence_parallel"), recompute=inputs.text("recompute"),
        cp=cp, attention=inputs.text("attention"), dropout=inputs.flag("dropout"),
        schedule=schedule if pp > 1 else "1f1b",
        virtual_stages=inputs.whole("virtual_stages") if schedule == "interleaved" and pp > 1
        else 1,
        shard_group=inputs.whole("dp") * cp, cp_method=inputs.text("cp_method"),
        input_bytes=input_bytes, offload=inputs.text("offload"))


def _model_memory(inputs: Inputs) -> Computed:
    arch = architecture(inputs)
    zero = inputs.whole("zero_stage")
    gpu = hardware.get(inputs.text("gpu"))
    recipe = checked_recipe(inputs, gpu.id)
    strategy = _strategy(inputs, zero, recipe.saved_input_bytes)
    tp, pp, dp, cp = strategy.tp, strategy.pp, strategy.dp, strategy.cp
    check_layout(arch, tp, pp, *schedule_layout(strategy.schedule, pp, strategy.virtual_stages))
    if strategy.cp_method == "ulysses" and ((arch.heads // tp) % cp or (arch.kv_heads // tp) % cp):
        raise ValidationError("cp", _("Ulysses needs the {heads} heads and {kv} KV heads per TP "
                                      "rank to divide by cp = {cp}").format(
                                          heads=arch.heads // tp, kv=arch.kv_heads // tp, cp=cp))
    precision = inputs.text("precision")
    per_param = state_bytes(precision, inputs.text("optimizer"), inputs.text("gradients"),
                            recipe.id, narrow_weights=inputs.flag("fp8_weights"))
    scale = 2.0 if precision == "fp32" else 1.0
    capacity, usable = gpu_capacity(inputs, gpu), gpu_usable(inputs, gpu)
    params = inputs.opt("params")
    warnings: list[str] = []
    notes: list[str] = []

    def at(stage: int) -> Breakdown:
        st = strategy if stage == zero else _strategy(inputs, stage, recipe.saved_input_bytes)
        return memory_per_gpu(arch, st, per_param, params, scale)

    breakdown = at(zero)
    fits = breakdown.total <= usable
    if words := host_memory_warning(breakdown.host, gpu.id):
        warnings.append(words)
    if not fits:
        warnings.append(_(
            "Does not fit: {need:,.1f} GB needed against the {usable:,.1f} GB usable of "
            "{gpu}'s {capacity:,.1f} GB (after the {reserve:.0%} reserve), short by "
            "{short:,.1f} GB.").format(
            need=breakdown.total / GB, usable=usable / GB, gpu=gpu.name, capacity=capacity / GB,
            reserve=inputs.num("memory_reserve"), short=(breakdown.total - usable) / GB))
    gathered = gathered_weight_bytes(arch, tp, per_param, 1 << 62, with_output=pp == 1,
                                     params=params) if zero >= 3 else 0.0
    shard_min = min_dp_to_fit(breakdown, zero, dp * cp, usable, gathered)
    dp_min = None if shard_min is None else -(-shard_min // cp)
    min_gpus = None if dp_min is None else dp_min * tp * pp * cp
    if dp_min is None:
        notes.append(_("No data-parallel size makes this fit at this tp, cp, pp and ZeRO "
                       "stage: what ZeRO does not partition already exceeds the GPU's usable "
                       "memory."))
    notes.append(_("{first} {second}").format(first=_where(breakdown, pp), second=_(
        "The first stage holds the embedding and the most micro-batches in flight; the last "
        "the output layer and its FP32 logits, for one micro-batch at a time.")))
    if zero >= 2 and pp > 1:
        notes.append(_("ZeRO-2 and 3 with a pipeline repeat their collectives every "
                       "micro-batch (gradient reduce-scatters; weight gathers for stage 3): "
                       "the planner costs that traffic."))
    if strategy.sequence_parallel and tp == 1:
        notes.append(_("Sequence parallelism needs tensor parallelism (tp > 1) to split "
                       "anything; it has no effect at tp = 1."))
    if recipe.narrow:
        notes.append(recipe_note(recipe, arch.layers,
                                 narrow_weights=inputs.flag("fp8_weights")))
    if gpu.memory_note and inputs["gpu_memory"] is None:
        notes.append(_(gpu.memory_note))
    notes.append(_(
        "Counted besides the model states and the layers' activations: the embedding's "
        "input, the output layer's input and FP32 logits, and working buffers (a layer "
        "being recomputed, ZeRO-3's gathered weights, context parallelism's K and V). "
        "Not counted: the CUDA context, communication buffers and fragmentation, which "
        "the reserve stands for."))
    bars = []
    for stage in range(4):
        b = at(stage)
        bars.append((
            _("ZeRO {stage} (this)").format(stage=stage) if stage == zero else f"ZeRO {stage}",
            [(_("weights"), b.weights / GB), (_("gradients"), b.gradients / GB),
             (_("optimizer"), b.optimizer / GB), (_("activations"), b.activations / GB),
             (_("embedding + output"), b.outer / GB), (_("working"), b.working / GB)]))
    chart = charts.stacked_bar_chart(
        _("Memory per GPU at tp={tp}, cp={cp}, pp={pp}, dp={dp}, by ZeRO stage").format(
            tp=tp, cp=cp, pp=pp, dp=dp),
        bars, _("GB per GPU"), limit=usable / GB,
        limit_label=_("{gpu}: {usable:,.1f} GB usable").format(gpu=gpu.name, usable=usable / GB),
        legend_right=True)
    return Computed(
        values={
            "weights_bytes": breakdown.weights,
            "gradients_bytes": breakdown.gradients,
            "optimizer_bytes": breakdown.optimizer,
            "activations_bytes": breakdown.activations,
            "outer_bytes": breakdown.outer,
            "working_bytes": breakdown.working,
            "total_bytes": breakdown.total,
            "gpu_memory_bytes": capacity,
            "usable_bytes": usable,
            "fits": fits,
            "min_gpus": None if min_gpus is None else float(min_gpus),
            "bytes_per_param": per_param.total,
            "host_bytes": breakdown.host,
        },
        warnings=warnings,
        notes=notes,
        chart=chart,
    )


def _int(name: str, label: str, default: int, maximum: int, help_text: str) -> Param:
    return Param(name, label, "int", default, minimum=1, maximum=maximum, help=help_text)


MODEL_MEMORY = Calculator(
    id="model_memory",
    headline=("total_bytes", "fits", "gpu_memory_bytes"),
    advanced=(
        *DETAIL,
        "params",
        "gpu_memory",
        "cp_method",
        "virtual_stages",
        "dropout",
        "gradients",
        "memory_reserve",
    ),
    title="Training memory per GPU",
    summary="Weights, gradients, optimizer states and activations per GPU, under "
    "TP x CP x PP x DP, ZeRO, sequence parallelism, the pipeline schedule and "
    "recomputation.",
    chapter="dense.md",
    params=(
        *ARCHITECTURE_PARAMS,
        Param(
            "params",
            "Parameters (override)",
            "float",
            None,
            unit="param",
            minimum=0,
            exclusive_minimum=True,
            maximum=1e16,
            optional=True,
            placeholder="from the architecture",
            help="Blank: counted from the architecture. Set to size model states for a "
            "given N (spread evenly over tp x pp); activations still use the "
            "architecture.",
        ),
        _int(
            "micro_batch",
            "Micro-batch size b",
            1,
            100_000,
            "Sequences per GPU per forward/backward pass.",
        ),
        PRECISION_PARAM,
        FP8_RECIPE_PARAM,
        NARROW_WEIGHTS_PARAM,
        GRADIENTS_PARAM,
        OPTIMIZER_PARAM,
        Param(
            "zero_stage",
            "ZeRO stage",
            "int",
            0,
            minimum=0,
            maximum=3,
            help="0: replicated; 1: optimizer states, 2: + gradients, 3: + weights "
            "partitioned over the dp x cp ranks that hold the same weights (Rajbhandari et "
            "al. 2020, Sec. 5; Megatron-Core shards over data and context parallelism). "
            "Partitions nothing while dp x cp = 1.",
        ),
        _int("dp", "Data-parallel size", 1, 10_000_000, "Model replicas (ZeRO divides by it). "
             "At ZeRO stage 0 each holds everything: dp changes nothing per GPU."),
        _int(
            "tp",
            "Tensor-parallel size",
            1,
            100_000,
            "GPUs splitting each layer's matrices; must divide the heads and the KV "
            "heads.",
        ),
        _int(
            "cp",
            "Context-parallel size",
            1,
            100_000,
            "GPUs splitting each sequence; every activation is divided by it "
            "(Megatron-Core context-parallel docs).",
        ),
        _int(
            "pp",
            "Pipeline-parallel size",
            1,
            100_000,
            "Pipeline stages: the layers split evenly, or with one layer fewer on the "
            "first and last stage (Llama 3).",
        ),
        SCHEDULE_PARAM,
        VIRTUAL_STAGES_PARAM,
        Param(
            "sequence_parallel",
            "Sequence parallelism",
            "bool",
            False,
            help="Split the norms' and dropouts' activations along the sequence over the "
            "tp ranks (Korthikanti et al. 2022, Sec. 4.2.2).",
        ),
        RECOMPUTE_PARAM,
        ATTENTION_PARAM,
        DROPOUT_PARAM,
        CP_METHOD_PARAM,
        Param(
            "gpu",
            "GPU",
            "choice",
            "a100_80gb_sxm",
            choices=accelerator_choices(),
            help="Capacity: the datasheet's \"80GB\" read as what the device holds, 80 GiB "
            "(85.9e9 B).",
        ),
        GPU_MEMORY_PARAM,
        MEMORY_RESERVE_PARAM,
        OFFLOAD_PARAM,
    ),
    outputs=(
        Output("weights_bytes", "Weights", "B"),
        Output("gradients_bytes", "Gradients", "B"),
        Output("optimizer_bytes", "Optimizer states (incl. master weights)", "B"),
        Output("activations_bytes", "Layers' activations", "B"),
        Output("outer_bytes", "Embedding and output layer (logits)", "B"),
        Output("working_bytes", "Working buffers", "B"),
        Output("total_bytes", "Total per GPU", "B"),
        Output("gpu_memory_bytes", "GPU memory", "B"),
        Output("usable_bytes", "Usable (less the reserve)", "B"),
        Output("fits", "Fits", "", "bool"),
        Output("min_gpus", "Smallest GPU count that fits (this tp, cp, pp, ZeRO)", "GPU",
               "count"),
        Output("bytes_per_param", "Model-state bytes per parameter (unpartitioned)", "B"),
        Output("host_bytes", "Offloaded to host memory, per GPU", "B"),
    ),
    function=_model_memory,
    sources=(
        "Rajbhandari et al. 2020, ZeRO: Memory Optimizations Toward Training Trillion "
        "Parameter Models, Sec. 3.1, Sec. 5, Fig. 1",
        "Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer "
        "Models, Sec. 4, Table 2",
        "Narayanan et al. 2021, Megatron-LM (SC21), Sec. 2.2",
        "Qi et al. 2024, Zero Bubble Pipeline Parallelism, Sec. 2; Dubey et al. 2024, "
        "Llama 3, Sec. 3.3.2",
        "Dao et al. 2022, FlashAttention, Sec. 3.1",
        "Shazeer and Stern 2018, Adafactor; Dettmers et al. 2022, 8-bit Optimizers",
    ),
)
