"""The ``model_memory`` calculator: training memory per GPU, whether it fits, and the
smallest GPU count that fits at the given strategy. The formulas are formulas.memory."""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.core import charts
from calculators.core.spec import Calculator, Computed, Inputs, Output, Param
from calculators.formulas.memory import Strategy, memory_per_gpu, min_dp_to_fit, state_bytes
from calculators.inputs.architecture import (
    ARCHITECTURE_DETAIL,
    ARCHITECTURE_PARAMS,
    architecture,
    check_layout,
)
from calculators.inputs.hardware import GPU_MEMORY_PARAM, accelerator_choices
from calculators.inputs.training import OPTIMIZER_PARAM, PRECISION_PARAM, RECOMPUTE_PARAM

GB = 1e9


def _model_memory(inputs: Inputs) -> Computed:
    arch = architecture(inputs)
    tp, pp, dp = inputs.whole("tp"), inputs.whole("pp"), inputs.whole("dp")
    check_layout(arch, tp, pp)
    zero = inputs.whole("zero_stage")
    precision = inputs.text("precision")
    per_param = state_bytes(precision, inputs.text("optimizer"))
    scale = 2.0 if precision == "fp32" else 1.0
    sp = inputs.flag("sequence_parallel")
    gpu = hardware.get(inputs.text("gpu"))
    capacity = inputs.opt("gpu_memory") or gpu.memory_bytes
    params = inputs.opt("params")
    warnings: list[str] = []
    notes: list[str] = []

    def at(stage: int) -> Strategy:
        return Strategy(
            tp=tp,
            pp=pp,
            dp=dp,
            zero_stage=stage,
            micro_batch=inputs.whole("micro_batch"),
            sequence_parallel=sp,
            recompute=inputs.text("recompute"),
        )

    breakdown = memory_per_gpu(arch, at(zero), per_param, params, scale)
    fits = breakdown.total <= capacity
    if not fits:
        warnings.append(
            f"Does not fit: {breakdown.total / GB:,.1f} GB needed against "
            f"{capacity / GB:,.1f} GB on {gpu.name}, short by "
            f"{(breakdown.total - capacity) / GB:,.1f} GB."
        )
    dp_min = min_dp_to_fit(breakdown, zero, dp, capacity)
    min_gpus = None if dp_min is None else dp_min * tp * pp
    if dp_min is None:
        notes.append(
            "No data-parallel size makes this fit at this tp, pp and ZeRO stage: "
            "what ZeRO does not partition already exceeds the GPU's memory."
        )
    if zero >= 2 and pp > 1:
        warnings.append(
            "DeepSpeed's pipeline engine supports ZeRO stage 1 only; stages 2-3 "
            "with pipeline parallelism re-communicate per micro-batch."
        )
    if sp and tp == 1:
        notes.append(
            "Sequence parallelism needs tensor parallelism (tp > 1) to split "
            "anything; it has no effect at tp = 1."
        )
    if gpu.memory_note and inputs["gpu_memory"] is None:
        notes.append(gpu.memory_note)
    notes.append(
        "Not counted: the logits / loss buffers, communication buffers, the "
        "framework's workspace and fragmentation (often a few GB)."
    )
    bars = []
    for stage in range(4):
        b = memory_per_gpu(arch, at(stage), per_param, params, scale)
        bars.append(
            (
                f"ZeRO {stage}" + (" (this)" if stage == zero else ""),
                [
                    ("weights", b.weights / GB),
                    ("gradients", b.gradients / GB),
                    ("optimizer", b.optimizer / GB),
                    ("activations", b.activations / GB),
                ],
            )
        )
    chart = charts.stacked_bar_chart(
        f"Memory per GPU at tp={tp}, pp={pp}, dp={dp}, by ZeRO stage",
        bars,
        "GB per GPU",
        limit=capacity / GB,
        limit_label=f"{gpu.name}: {capacity / GB:g} GB",
        legend_right=True,
    )
    return Computed(
        values={
            "weights_bytes": breakdown.weights,
            "gradients_bytes": breakdown.gradients,
            "optimizer_bytes": breakdown.optimizer,
            "activations_bytes": breakdown.activations,
            "total_bytes": breakdown.total,
            "gpu_memory_bytes": capacity,
            "fits": fits,
            "min_gpus": None if min_gpus is None else float(min_gpus),
            "bytes_per_param": per_param.total,
        },
        warnings=warnings,
        notes=notes,
        chart=chart,
    )


def _int(name: str, label: str, default: int, maximum: int, help_text: str) -> Param:
    return Param(name, label, "int", default, minimum=1, maximum=maximum, help=help_text)


MODEL_MEMORY = Calculator(
    id="model_memory",
    advanced=(
        *ARCHITECTURE_DETAIL,
        "params",
        "gpu_memory",
    ),
    title="Training memory per GPU",
    summary="Weights, gradients, optimizer states and activations per GPU, under "
    "TP x PP x DP, ZeRO, sequence parallelism and recomputation.",
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
        OPTIMIZER_PARAM,
        Param(
            "zero_stage",
            "ZeRO stage",
            "int",
            0,
            minimum=0,
            maximum=3,
            help="0: replicated; 1: optimizer states, 2: + gradients, 3: + weights "
            "partitioned over the dp ranks (Rajbhandari et al. 2020, Sec. 5).",
        ),
        _int("dp", "Data-parallel size", 1, 10_000_000, "Model replicas (ZeRO divides by it)."),
        _int(
            "tp",
            "Tensor-parallel size",
            1,
            100_000,
            "GPUs splitting each layer's matrices; must divide the heads.",
        ),
        _int(
            "pp",
            "Pipeline-parallel size",
            1,
            100_000,
            "Pipeline stages; at most the number of layers.",
        ),
        Param(
            "sequence_parallel",
            "Sequence parallelism",
            "bool",
            False,
            help="Split the norms' and dropouts' activations along the sequence over the "
            "tp ranks (Korthikanti et al. 2022, Sec. 4.2.2).",
        ),
        RECOMPUTE_PARAM,
        Param(
            "gpu",
            "GPU",
            "choice",
            "a100_80gb_sxm",
            choices=accelerator_choices(),
            help="Memory capacity from the datasheet (decimal GB).",
        ),
        GPU_MEMORY_PARAM,
    ),
    outputs=(
        Output("weights_bytes", "Weights", "B"),
        Output("gradients_bytes", "Gradients", "B"),
        Output("optimizer_bytes", "Optimizer states (incl. master weights)", "B"),
        Output("activations_bytes", "Activations", "B"),
        Output("total_bytes", "Total per GPU", "B"),
        Output("gpu_memory_bytes", "GPU memory", "B"),
        Output("fits", "Fits", "", "bool"),
        Output("min_gpus", "Smallest GPU count that fits (this tp, pp, ZeRO)", "GPU", "count"),
        Output("bytes_per_param", "Model-state bytes per parameter (unpartitioned)", "B"),
    ),
    function=_model_memory,
    sources=(
        "Rajbhandari et al. 2020, ZeRO: Memory Optimizations Toward Training Trillion "
        "Parameter Models, Sec. 3.1, Sec. 5, Fig. 1",
        "Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer "
        "Models, Sec. 4, Table 2",
        "Narayanan et al. 2021, Megatron-LM (SC21), Sec. 2.2",
        "Shazeer and Stern 2018, Adafactor; Dettmers et al. 2022, 8-bit Optimizers",
    ),
)
