"""The ``parallel_plan`` calculator: search TP x CP x PP x DP layouts, rank and explain
them. The search and its cost model are formulas.planner; the inputs it shares with the
sizing are inputs.cluster."""

from __future__ import annotations

import math
from dataclasses import replace

from calculators.catalogues import hardware
from calculators.catalogues.speed_validation import STEP_TIME_BAND
from calculators.core import charts
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output, Param, ValidationError
from calculators.formulas.model.flops import (
    DEFAULT_FLOP_COUNT,
    computed_count,
    dense_model_flops_per_token,
)
from calculators.formulas.parallel.offload import offload_note, offload_when_needed
from calculators.formulas.planner.layer_costs import DenseStack
from calculators.formulas.planner.ranking import distinct, preferred
from calculators.formulas.planner.schedule_words import (
    dual_memory_words,
    sm_reserve_cost,
    sm_reserve_note,
)
from calculators.formulas.planner.search import Searched, evaluate, search_shown
from calculators.inputs.architecture import ARCHITECTURE_DETAIL, architecture, check_layout
from calculators.inputs.cluster import (
    PLANNER_PARAMS,
    planner_cluster,
    planner_options,
    planner_state_bytes,
)
from calculators.inputs.hardware import (
    MFU_BASIS_HELP,
    PALM_FLOPS_HELP,
    PLANNER_MFU_HELP,
    mfu_basis,
    narrow_mfu_note,
    peak_note,
)
from calculators.inputs.layer_mix import DOCUMENT_DETAIL
from calculators.inputs.memory import OFFLOAD_OUTPUTS, host_memory_warning
from calculators.inputs.parallel import check_pipeline_for_schedule, reserved_sms
from calculators.parallel_plan.notes import GB, explain, row, time_per_layer


def _fixed_sizes(inputs: Inputs, n: int) -> dict[str, int | None]:
    """The sizes the reader fixed (None: search), checked against num_gpus."""
    gpn = inputs.whole("gpus_per_node")
    if n > gpn and n % gpn:
        raise ValidationError("num_gpus", _("{gpus} GPUs do not fill whole nodes of {node}")
                              .format(gpus=n, node=gpn))
    fixed = {
        k: None if inputs[k] is None else inputs.whole(k)
        for k in ("tp", "cp", "pp", "dp", "micro_batch")
    }
    tp, cp, pp, dp = fixed["tp"], fixed["cp"], fixed["pp"], fixed["dp"]
    known = [size for size in (tp, cp, pp, dp) if size is not None]
    if len(known) == 4 and math.prod(known) != n:
        raise ValidationError("dp", _(
            "tp x cp x pp x dp = {product} must equal num_gpus = {gpus}").format(
            product=f"{tp} x {cp} x {pp} x {dp}", gpus=n))
    for name, size in (("tp", tp), ("cp", cp), ("pp", pp), ("dp", dp)):
        if size is not None and n % size:
            raise ValidationError(name, _("{name} = {size} does not divide num_gpus = {gpus}")
                                  .format(name=name, size=size, gpus=n))
    check_pipeline_for_schedule(inputs, pp)
    return fixed


RESULT_NAMES = (
    "layout", "tp", "cp", "pp", "dp", "micro_batch", "zero_stage", "recompute", "step_time",
    "tokens_per_second", "mfu", "memory_per_gpu_bytes", "host_memory_bytes",
    "host_memory_per_node_bytes", "bubble_fraction", "tp_comm_time", "cp_comm_time",
    "cp_exposed_time", "pp_comm_time", "dp_comm_time", "dp_exposed_time",
    "model_flops_per_gpu", "weights_bytes", "gradients_bytes", "optimizer_bytes",
    "activations_bytes", "outer_bytes", "working_bytes", "comm_sms_time",
)


def _parallel_plan(inputs: Inputs) -> Computed:
    arch = architecture(inputs)
    n = inputs.whole("num_gpus")
    fixed = _fixed_sizes(inputs, n)
    options = planner_options(inputs)
    fixed_pp = fixed["pp"] or 1
    check_layout(arch, fixed["tp"] or 1, fixed_pp, options.chunks(fixed_pp),
                 options.placement(fixed_pp))
    cluster = planner_cluster(inputs)
    global_batch = inputs.whole("global_batch")
    tolerance = inputs.num("rank_tolerance")

    def searched_with(mode: str | None) -> Searched:
        return search_shown(arch, cluster, planner_state_bytes(inputs), global_batch,
                            tp=fixed["tp"], cp=fixed["cp"], pp=fixed["pp"], dp=fixed["dp"],
                            micro_batch=fixed["micro_batch"],
                            options=options if mode is None else replace(options, offload=mode))

    searched, mode = offload_when_needed(
        searched_with, lambda found: bool(preferred(found.layouts, tolerance)),
        auto=inputs.text("offload") == "auto")
    layouts = searched.layouts
    if not layouts:
        raise ValidationError("global_batch", _(
            "no layout of {gpus} GPUs divides a global batch of {batch} sequences with these "
            "constraints").format(gpus=n, batch=global_batch))
    fitting = preferred(layouts, tolerance)
    offload_words = []
    if mode is not None:
        options = replace(options, offload=mode)
        offload_words.append(offload_note(mode, cluster.memory_bytes))
    values: dict[str, float | bool | str | None] = {
        "layouts_evaluated": float(searched.evaluated),
        "layouts_fitting": float(searched.fitting),
        "mfu_basis": mfu_basis(inputs, hardware.get(inputs.text("gpu"))),
        "offload": options.offload,
    }
    if not fitting:
        values.update(dict.fromkeys(RESULT_NAMES))
        return Computed(
            values=values,
            warnings=[_(
                "No layout fits in the {usable:,.1f} GB per GPU a layout may use (the "
                "capacity less the reserve): the smallest needs {smallest:,.1f} GB. More "
                "GPUs, recomputation, a schedule with fewer micro-batches in flight or a "
                "larger GPU are needed.").format(
                usable=cluster.memory_bytes / GB,
                smallest=min(x.memory_bytes for x in layouts) / GB)],
        )
    best = fitting[0]
    tokens = global_batch * arch.seq_len
    model_flops = dense_model_flops_per_token(
        arch, computed_count(DEFAULT_FLOP_COUNT, options.attention)) * tokens
    mem = best.memory
    values.update(
        {
            "layout": best.dims.summary(),
            "tp": float(best.tp),
            "cp": float(best.cp),
            "pp": float(best.pp),
            "dp": float(best.dp),
            "micro_batch": float(best.micro_batch),
            "zero_stage": float(best.zero_stage),
            "recompute": best.recompute,
            "step_time": best.step_s,
            "tokens_per_second": tokens / best.step_s,
            "mfu": model_flops / (n * cluster.peak_flops * best.step_s),
            "memory_per_gpu_bytes": best.memory_bytes,
            "host_memory_bytes": mem.host,
            "host_memory_per_node_bytes": mem.host * inputs.whole("gpus_per_node"),
            "bubble_fraction": best.bubble_fraction,
            "tp_comm_time": best.tp_s,
            "cp_comm_time": best.cp_s,
            "cp_exposed_time": best.cp_exposed_s,
            "pp_comm_time": best.pp_s,
            "dp_comm_time": best.dp_s,
            "dp_exposed_time": best.dp_exposed_s,
            # In PaLM's count, as published TFLOP/s figures are (Llama 3, Table 4).
            "model_flops_per_gpu": dense_model_flops_per_token(arch) * tokens / (n * best.step_s),
            "weights_bytes": mem.weights,
            "gradients_bytes": mem.gradients,
            "optimizer_bytes": mem.optimizer,
            "activations_bytes": mem.activations,
            "outer_bytes": mem.outer,
            "working_bytes": mem.working,
            "comm_sms_time": 0.0,
        }
    )
    reserved = reserved_sms(inputs, cluster.machine.speed.sms)
    extra_notes = [words] if (words := dual_memory_words(best.schedule)) else []
    extra_notes += offload_words
    if peak_words := peak_note(inputs, hardware.get(inputs.text("gpu"))):
        extra_notes.append(peak_words)  # a precision the GPU lacks, or moot by the override
    if mfu_words := narrow_mfu_note(inputs, hardware.get(inputs.text("gpu")),
                                    float(values["mfu"] or 0.0)):
        extra_notes.append(mfu_words)
    if reserved:
        unreserved = evaluate(arch, planner_cluster(inputs, reserve_sms=False),
                              planner_state_bytes(inputs), global_batch, tp=best.tp,
                              pp=best.pp, dp=best.dp, micro_batch=best.micro_batch,
                              recompute=best.recompute, zero_stage=best.zero_stage,
                              cp=best.cp, hybrid=best.hybrid, options=options).step_s
        values["comm_sms_time"] = sm_reserve_cost(best.step_s, unreserved)
        extra_notes.append(sm_reserve_note(reserved, cluster.machine.speed.sms, best.step_s,
                                           unreserved))
    top = distinct(fitting, inputs.whole("top"))
    table = Table(
        ("#", "TP x CP x PP x DP", _("b, recompute, ZeRO"), _("Memory/GPU"), _("Bubble"),
         _("TP comm"), _("CP comm"), _("PP comm"), _("DP comm"), _("Step")),
        tuple(row(i + 1, lay) for i, lay in enumerate(top)),
        caption=_("The first {shown} distinct layouts of the {fitting} that fit ({evaluated} "
                  "evaluated): those within {tolerance:.0%} of the fastest, simplest first "
                  "(fewest GPUs per replica, then fewest parallel dimensions), then the rest "
                  "by step time. Communication per step: time, bytes each GPU sends, and "
                  "whether it stays in the NVLink domain or goes across it. ZeRO '3/8': "
                  "stage 3 sharded in groups of 8 and replicated across (hybrid).").format(
            shown=len(top), fitting=searched.fitting, evaluated=searched.evaluated,
            tolerance=tolerance),
    )
    chart = charts.stacked_bar_chart(
        _("Step time of the fastest layouts, by part"),
        [(f"#{i + 1} {lay.dims.label()}", [(_(n), t) for n, t in lay.parts()])
         for i, lay in enumerate(top[:5])],
        _("seconds per step"),
        legend_right=True,
    )
    notes = explain(best, fitting, layouts[0], cluster, tolerance, tp_overlap=options.tp_overlap)
    layer = DenseStack(arch, cluster.machine, options).compute(best.tp, best.cp,
                                                               best.micro_batch)[0]
    notes.insert(2, time_per_layer(layer, best.recompute))
    notes[3:3] = extra_notes
    warnings = [w] if (w := host_memory_warning(mem.host, inputs.text("gpu"))) else []
    return Computed(
        values=values, notes=notes, warnings=warnings,
        table=table, chart=chart
    )


def _opt_int(name: str, label: str, help_text: str) -> Param:
    return Param(name, label, "int", None, minimum=1, maximum=10_000_000, optional=True,
                 placeholder="search", help=help_text)


PARALLEL_PLAN = Calculator(
    id="parallel_plan",
    headline=("step_time", "mfu", "layout"),
    advanced=(
        *ARCHITECTURE_DETAIL,
        *DOCUMENT_DETAIL,
        "gpu_memory",
        "intra_node_bandwidth",
        "inter_node_bandwidth",
        "comm_efficiency",
        "latency",
        "precision",
        "optimizer",
        "tp",
        "cp",
        "pp",
        "dp",
        "micro_batch",
        "top",
        "nvlink_domain",
        "virtual_stages",
        "cp_method",
        "attention",
        "dropout",
        "gradients",
        "memory_reserve",
        "rank_tolerance",
    ),
    title="TP x CP x PP x DP planner",
    summary="Enumerate every tensor/context/pipeline/data-parallel layout of a cluster, "
    "cost its memory, bubble and communication, and rank them by step time.",
    chapter="dense.md",
    params=(
        *PLANNER_PARAMS,
        _opt_int("tp", "Fix tensor-parallel size",
                 "Blank: search all that divide the heads and the KV heads."),
        _opt_int("cp", "Fix context-parallel size",
                 "Blank: search all that split the sequence into 2 x CP chunks."),
        _opt_int("pp", "Fix pipeline-parallel size",
                 "Blank: search all that split the layers evenly (or one fewer on the "
                 "first and last chunk)."),
        _opt_int("dp", "Fix data-parallel size", "Blank: whatever num_gpus / (tp x pp) is."),
        _opt_int("micro_batch", "Fix micro-batch size", "Blank: search 1, 2, 4 and 8."),
        Param(
            "top", "Layouts to list", "int", 10, minimum=1, maximum=100, help="Rows in the table."
        ),
    ),
    outputs=(
        Output("layout", "Layout (best)", "", "text"),
        Output("tp", "Tensor parallel (best)", "", "count"),
        Output("cp", "Context parallel (best)", "", "count"),
        Output("pp", "Pipeline parallel (best)", "", "count"),
        Output("dp", "Data parallel (best)", "", "count"),
        Output("micro_batch", "Micro-batch (best)", "sequence", "count"),
        Output("zero_stage", "ZeRO stage (best)", "", "count"),
        Output("recompute", "Recomputation (best)", "", "text"),
        Output("step_time", "Step time", "s", "fixed", help=STEP_TIME_BAND.words(),
               band=STEP_TIME_BAND.worst),
        Output("tokens_per_second", "Tokens per second", "token/s", "count"),
        Output("mfu", "Estimated MFU", "1", "percent",
               help=PLANNER_MFU_HELP),
        Output("mfu_basis", "MFU against", "", "text", help=MFU_BASIS_HELP),
        Output("model_flops_per_gpu", "Model FLOP/s per GPU, PaLM's count", "FLOP/s",
               help=PALM_FLOPS_HELP),
        Output("memory_per_gpu_bytes", "Memory per GPU", "B"),
        *OFFLOAD_OUTPUTS,
        Output("weights_bytes", "of which weights", "B"),
        Output("gradients_bytes", "of which gradients", "B"),
        Output("optimizer_bytes", "of which optimizer states", "B"),
        Output("activations_bytes", "of which layers' activations", "B"),
        Output("outer_bytes", "of which embedding and output layer", "B"),
        Output("working_bytes", "of which working buffers", "B"),
        Output("bubble_fraction", "Pipeline bubble (of ideal time)", "1", "percent"),
        Output("comm_sms_time", "Step time lost to SMs reserved for communication", "s",
               "fixed", help="The step of this layout less the same layout with every SM "
               "computing (input comm_sms; DeepSeek-V3 reserves 20 of 132, Sec. 3.2.1)."),
        Output("tp_comm_time", "TP communication per step", "s", "fixed"),
        Output("cp_comm_time", "CP communication per step", "s", "fixed"),
        Output("cp_exposed_time", "CP communication not hidden", "s", "fixed"),
        Output("pp_comm_time", "PP communication per step", "s", "fixed"),
        Output("dp_comm_time", "DP communication per step", "s", "fixed"),
        Output("dp_exposed_time", "DP communication not hidden", "s", "fixed"),
        Output("layouts_evaluated", "Layouts evaluated", "", "count"),
        Output("layouts_fitting", "Layouts that fit", "", "count"),
    ),
    function=_parallel_plan,
    sources=(
        "Narayanan et al. 2021, Megatron-LM (SC21), Sec. 2.2, 3, 4.1, 5.1, Table 1",
        "Qi et al. 2024, Zero Bubble Pipeline Parallelism (ICLR), Sec. 2",
        "Liu et al. 2023, Ring Attention; Jacobs et al. 2023, DeepSpeed Ulysses; Dubey et "
        "al. 2024, The Llama 3 Herd of Models, Sec. 3.3.2",
        "Zhao et al. 2023, PyTorch FSDP (hybrid sharding), Sec. 3.2",
        "Shoeybi et al. 2019, Megatron-LM, Sec. 3",
        "Korthikanti et al. 2022, Reducing Activation Recomputation, Sec. 4, 6",
        "Rajbhandari et al. 2020, ZeRO, Sec. 5 and 7",
        "Thakur, Rabenseifner and Gropp 2005 (collective costs); NVIDIA nccl-tests",
    ),
)
