"""The ``moe_plan`` calculator: search EP x TP x CP x PP x DP layouts of a mixture of
experts, rank and explain them. The search is formulas.moe.planner (the dense planner's
cost model plus the experts' memory, gradient groups and alltoalls); the inputs it
shares with the sizing are inputs.moe_planner."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.catalogues.speed_validation import STEP_TIME_BAND
from calculators.core import charts
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output, Param
from calculators.core.spec import ValidationError as Invalid
from calculators.formulas.model.flops import DEFAULT_FLOP_COUNT, computed_count
from calculators.formulas.moe.architecture import moe_model_flops_per_token
from calculators.formulas.moe.planner import Search, evaluate, search
from calculators.formulas.parallel.offload import offload_note, offload_when_needed
from calculators.formulas.planner.ranking import distinct, preferred
from calculators.formulas.planner.schedule_words import (
    dual_memory_words,
    sm_reserve_cost,
    sm_reserve_note,
)
from calculators.inputs.cluster import planner_cluster, planner_state_bytes
from calculators.inputs.hardware import (
    MFU_BASIS_HELP,
    PLANNER_MFU_HELP,
    mfu_basis,
    narrow_mfu_note,
    peak_note,
)
from calculators.inputs.memory import OFFLOAD_OUTPUTS, host_memory_warning
from calculators.inputs.moe import MOE_ARCHITECTURE_DETAIL, moe_architecture
from calculators.inputs.moe_planner import (
    MOE_PLANNER_PARAMS,
    expert_comm,
    moe_planner_options,
)
from calculators.inputs.parallel import check_pipeline_for_schedule, reserved_sms
from calculators.moe_plan.notes import GB, expert_dp, explain, row

if TYPE_CHECKING:
    from calculators.formulas.moe.shape import MoeArchitecture
    from calculators.formulas.planner.layout import Layout

_SIZES = ("tp", "cp", "pp", "dp", "ep")


def _fixed(inputs: Inputs, routed_experts: int) -> dict[str, int | None]:
    """The sizes the reader fixed (None: search), checked against the GPUs and experts."""
    n, domain = inputs.whole("num_gpus"), inputs.whole("gpus_per_node")
    if n > domain and n % domain:
        raise Invalid("num_gpus", _("{gpus} GPUs do not fill whole nodes of {node}").format(
            gpus=n, node=domain))
    fixed = {k: None if inputs[k] is None else inputs.whole(k)
             for k in (*_SIZES, "micro_batch")}
    dense = [fixed[k] for k in ("tp", "cp", "pp", "dp")]
    if all(size is not None for size in dense) and math.prod(dense) != n:  # type: ignore[arg-type]
        raise Invalid("dp", _("tp x cp x pp x dp = {product} must equal num_gpus = {gpus}")
                      .format(product=" x ".join(map(str, dense)), gpus=n))
    for name in ("tp", "cp", "pp", "dp"):
        size = fixed[name]
        if size is not None and n % size:
            raise Invalid(name, _("{name} = {size} does not divide num_gpus = {gpus}").format(
                name=name, size=size, gpus=n))
    ep = fixed["ep"]
    if ep is not None and routed_experts % ep:
        raise Invalid("ep", _("expert parallel size {ep} must divide the {experts} routed "
                              "experts (whole experts per GPU)").format(
            ep=ep, experts=routed_experts))
    check_pipeline_for_schedule(inputs, fixed["pp"])
    return fixed


RESULT_NAMES = ("layout", "tp", "cp", "pp", "dp", "ep", "micro_batch", "zero_stage", "recompute",
                "experts_per_gpu", "expert_data_parallel", "step_time", "tokens_per_second",
                "mfu", "memory_per_gpu_bytes", "host_memory_bytes",
                "host_memory_per_node_bytes", "weights_bytes", "gradients_bytes",
                "optimizer_bytes", "activations_bytes", "bubble_fraction", "alltoall_time",
                "alltoall_exposed_time", "alltoall_bytes", "alltoall_inter_node_bytes",
                "alltoall_to_compute", "dp_comm_time", "dp_exposed_time", "comm_sms_time")


#: The notes name the winner and up to three other layouts (moe_plan.notes.explain).
NOTED_LAYOUTS = 4
#: Layouts built per row of the table (formulas.moe.planner.search's ``keep``), past
#: those within the tolerance: a row lists a layout once whatever ZeRO stages tie on
#: it, and there are at most five of those (formulas.planner._shardings).
BUILT_PER_ROW = 5


def _search(inputs: Inputs, model: MoeArchitecture, fixed: dict[str, int | None],
            keep: int | None, offload: str | None = None) -> Search:
    """The planner's search on these inputs; with ``keep``, the layouts within the
    ranking tolerance and the ``keep`` fastest (see formulas.moe.planner.search);
    ``offload`` overrides the input's (formulas.parallel.offload)."""
    options = moe_planner_options(inputs)
    if offload is not None:
        options = replace(options, offload=offload)
    try:
        return search(model, inputs.whole("seq_len"), planner_cluster(inputs),
                      planner_state_bytes(inputs), inputs.whole("global_batch"),
                      comm=expert_comm(inputs), options=options,
                      tp=fixed["tp"], cp=fixed["cp"], pp=fixed["pp"], dp=fixed["dp"],
                      ep=fixed["ep"], micro_batch=fixed["micro_batch"],
                      tolerance=None if keep is None else inputs.num("rank_tolerance"),
                      keep=keep)
    except ValueError as err:  # k experts cannot fit in M nodes
        if isinstance(err, Invalid):
            raise
        raise Invalid("max_nodes_per_token", str(err)) from None


def _ranked(inputs: Inputs, model: MoeArchitecture, fixed: dict[str, int | None],
            offload: str | None = None) -> tuple[Search, list[Layout]]:
    """The search and its layouts that fit, recommended first (formulas.planner.ranking).

    Building a layout costs more than timing it, and the table and notes read only the
    first of the recommended order: the layouts within the tolerance (simplest first),
    then the fastest of the rest. So the search builds those within the tolerance and,
    past them, enough of the fastest for the table's rows; the recommended order of
    those is the start of the order of all of them. If the rows or the layouts the
    notes name would run past them, the search is run again, building every layout."""
    top = inputs.whole("top")
    found = _search(inputs, model, fixed, keep=BUILT_PER_ROW * (top + NOTED_LAYOUTS),
                    offload=offload)
    tolerance = inputs.num("rank_tolerance")
    fitting = preferred(found.layouts, tolerance)
    enough = (len(distinct(fitting, top)) == top
              and len({lay.dims.label() for lay in fitting}) >= NOTED_LAYOUTS)
    if len(found.layouts) < found.fitting and not enough:
        found = _search(inputs, model, fixed, keep=None, offload=offload)
        fitting = preferred(found.layouts, tolerance)
    return found, fitting


def _moe_plan(inputs: Inputs) -> Computed:
    model = moe_architecture(inputs)
    fixed = _fixed(inputs, model.routed_experts)
    cluster = planner_cluster(inputs)
    global_batch = inputs.whole("global_batch")
    (found, fitting), mode = offload_when_needed(
        lambda mode: _ranked(inputs, model, fixed, offload=mode),
        lambda ranked: bool(ranked[1]), auto=inputs.text("offload") == "auto")
    offloaded = mode or moe_planner_options(inputs).offload
    offload_words = [offload_note(mode, cluster.memory_bytes)] if mode else []
    if not found.evaluated:
        raise Invalid("global_batch", _(
            "no layout of {gpus} GPUs divides a global batch of {batch} sequences and the "
            "{experts} experts with these constraints").format(
            gpus=cluster.num_gpus, batch=global_batch, experts=model.routed_experts))
    tolerance = inputs.num("rank_tolerance")
    values: dict[str, float | bool | str | None] = {
        "layouts_evaluated": float(found.evaluated), "layouts_fitting": float(found.fitting),
        "mfu_basis": mfu_basis(inputs, hardware.get(inputs.text("gpu"))),
        "offload": offloaded}
    if not fitting:
        values.update(dict.fromkeys(RESULT_NAMES))
        return Computed(values=values, warnings=[_(
            "No layout fits in the {usable:,.1f} GB per GPU a layout may use (the capacity "
            "less the reserve): the smallest needs {smallest:,.1f} GB. More GPUs, a larger "
            "EP, or a larger GPU are needed.").format(
            usable=cluster.memory_bytes / GB, smallest=found.smallest_bytes / GB)])
    best = fitting[0]
    seq = inputs.whole("seq_len")
    tokens = global_batch * seq
    # The kernel is fused (inputs.moe_planner): the causal half of the scores.
    model_flops = moe_model_flops_per_token(
        model, seq, computed_count(DEFAULT_FLOP_COUNT, "fused")) * tokens
    mem = best.memory
    values.update({
        "layout": best.dims.summary(experts=True),
        "tp": float(best.tp), "cp": float(best.cp), "pp": float(best.pp),
        "dp": float(best.dp), "ep": float(best.dims.ep), "micro_batch": float(best.micro_batch),
        "zero_stage": float(best.zero_stage), "recompute": best.recompute,
        "experts_per_gpu": model.routed_experts / best.dims.ep,
        "expert_data_parallel": float(expert_dp(best)),
        "step_time": best.step_s, "tokens_per_second": tokens / best.step_s,
        "mfu": model_flops / (cluster.num_gpus * cluster.peak_flops * best.step_s),
        "memory_per_gpu_bytes": best.memory_bytes, "weights_bytes": mem.weights,
        "host_memory_bytes": mem.host,
        "host_memory_per_node_bytes": mem.host * inputs.whole("gpus_per_node"),
        "gradients_bytes": mem.gradients, "optimizer_bytes": mem.optimizer,
        "activations_bytes": mem.activations, "bubble_fraction": best.bubble_fraction,
        "alltoall_time": best.ep_s, "alltoall_exposed_time": best.ep_exposed_s,
        "alltoall_bytes": best.ep_bytes, "alltoall_inter_node_bytes": best.ep_inter_bytes,
        "alltoall_to_compute": best.ep_s / best.ep_cover_s if best.ep_cover_s else None,
        "dp_comm_time": best.dp_s, "dp_exposed_time": best.dp_exposed_s,
        "comm_sms_time": 0.0,
    })
    notes = explain(best, fitting, cluster, tolerance)
    if mfu_words := narrow_mfu_note(inputs, hardware.get(inputs.text("gpu")),
                                    float(values["mfu"] or 0.0)):
        notes.insert(-1, mfu_words)
    if peak_words := peak_note(inputs, hardware.get(inputs.text("gpu"))):
        notes.insert(-1, peak_words)  # a precision the GPU lacks, or moot by the override
    for words in offload_words:
        notes.insert(1, words)
    if words := dual_memory_words(best.schedule):
        notes.insert(-1, words)
    reserved = reserved_sms(inputs, cluster.machine.speed.sms)
    if reserved:
        unreserved = min(lay.step_s for lay in evaluate(
            model, seq, planner_cluster(inputs, reserve_sms=False), planner_state_bytes(inputs),
            global_batch, dims=best.dims, micro_batch=best.micro_batch,
            comm=expert_comm(inputs), options=moe_planner_options(inputs))
            if (lay.recompute, lay.zero_stage, lay.shard_group)
            == (best.recompute, best.zero_stage, best.shard_group))
        values["comm_sms_time"] = sm_reserve_cost(best.step_s, unreserved)
        notes.insert(-1, sm_reserve_note(reserved, cluster.machine.speed.sms, best.step_s,
                                         unreserved))
    top = distinct(fitting, inputs.whole("top"))
    table = Table(
        ("#", "TP x CP x PP x DP, EP", _("b, recompute, ZeRO"), _("Memory/GPU"), _("Bubble"),
         _("EP alltoall"), _("TP + CP comm"), _("DP comm"), _("Step")),
        tuple(row(i + 1, lay) for i, lay in enumerate(top)),
        caption=_("The first {shown} distinct layouts of the {fitting} that fit ({evaluated} "
                  "choices costed): those within {tolerance:.0%} of the fastest, simplest "
                  "first (fewest GPUs holding a replica, then fewest parallel dimensions), "
                  "then the rest by step time. Communication per step: time (exposed part) "
                  "and bytes each GPU sends.").format(
            shown=len(top), fitting=found.fitting, evaluated=found.evaluated,
            tolerance=tolerance))
    chart = charts.stacked_bar_chart(
        _("Step time of the first layouts, by part"),
        [(f"#{i + 1} {lay.dims.label()}", [(_(n), t) for n, t in lay.parts()])
         for i, lay in enumerate(top[:5])],
        _("seconds per step"), legend_right=True)
    warnings = [w] if (w := host_memory_warning(mem.host, inputs.text("gpu"))) else []
    return Computed(values=values, notes=notes, warnings=warnings, table=table, chart=chart)


def _opt_int(name: str, label: str, help_text: str) -> Param:
    return Param(name, label, "int", None, minimum=1, maximum=10_000_000, optional=True,
                 placeholder="search", help=help_text)


MOE_PLAN = Calculator(
    id="moe_plan",
    headline=("step_time", "mfu", "layout", "memory_per_gpu_bytes"),
    advanced=(*MOE_ARCHITECTURE_DETAIL, "gpu_memory", "intra_node_bandwidth",
              "inter_node_bandwidth", "comm_efficiency", "latency",
              "precision", "optimizer", "gradients", "tp", "cp", "pp", "dp", "ep",
              "micro_batch", "top", "nvlink_domain", "virtual_stages", "cp_method",
              "dropout", "memory_reserve", "rank_tolerance", "dispatch_bytes",
              "combine_bytes", "peak_precision", "peak_flops"),
    title="EP x TP x CP x PP x DP planner for a mixture of experts",
    summary="Search every expert/tensor/context/pipeline/data-parallel layout of a cluster "
            "for an MoE model: memory with experts split by EP, the expert alltoalls and "
            "what hides them, the gradient groups, ranked by step time.",
    chapter="moe.md",
    params=(
        *MOE_PLANNER_PARAMS,
        _opt_int("tp", "Fix tensor-parallel size",
                 "Blank: search those that divide the heads, inside the NVLink domain."),
        _opt_int("cp", "Fix context-parallel size",
                 "Blank: search those that split the sequence into 2 x CP chunks."),
        _opt_int("pp", "Fix pipeline-parallel size",
                 "Blank: search those that split the blocks (layers and MTP modules) "
                 "evenly, or one fewer on the first and last stage."),
        _opt_int("dp", "Fix data-parallel size", "Blank: num_gpus / (tp x cp x pp)."),
        _opt_int("ep", "Fix expert-parallel size",
                 "Blank: search those that divide the routed experts and a stage's "
                 "tp x cp x dp GPUs. DeepSeek-V3: 64 over 8 nodes (report, Sec. 3.2)."),
        _opt_int("micro_batch", "Fix micro-batch size", "Blank: search 1, 2, 4 and 8."),
        Param("top", "Layouts to list", "int", 10, minimum=1, maximum=100,
              help="Rows in the table."),
    ),
    outputs=(
        Output("layout", "Layout (best)", "", "text"),
        Output("tp", "Tensor parallel (best)", "", "count"),
        Output("cp", "Context parallel (best)", "", "count"),
        Output("pp", "Pipeline parallel (best)", "", "count"),
        Output("dp", "Data parallel (best)", "", "count"),
        Output("ep", "Expert parallel (best)", "", "count"),
        Output("micro_batch", "Micro-batch (best)", "sequence", "count"),
        Output("zero_stage", "ZeRO stage (best)", "", "count"),
        Output("recompute", "Recomputation (best)", "", "text"),
        Output("experts_per_gpu", "Routed experts per GPU per layer", "", "fixed"),
        Output("expert_data_parallel", "Expert-data-parallel size", "", "count"),
        Output("step_time", "Step time", "s", "fixed", help=STEP_TIME_BAND.words(),
               band=STEP_TIME_BAND.worst),
        Output("tokens_per_second", "Tokens per second", "token/s", "count"),
        Output("mfu", "Estimated MFU", "1", "percent",
               help=PLANNER_MFU_HELP),
        Output("mfu_basis", "MFU against", "", "text", help=MFU_BASIS_HELP),
        Output("memory_per_gpu_bytes", "Memory per GPU", "B"),
        *OFFLOAD_OUTPUTS,
        Output("weights_bytes", "of which weights", "B"),
        Output("gradients_bytes", "of which gradients", "B"),
        Output("optimizer_bytes", "of which optimizer states", "B"),
        Output("activations_bytes", "of which activations", "B"),
        Output("bubble_fraction", "Pipeline bubble (of ideal time)", "1", "percent"),
        Output("comm_sms_time", "Step time lost to SMs reserved for communication", "s",
               "fixed", help="The step of this layout less the same layout with every SM "
               "computing (input comm_sms; DeepSeek-V3 reserves 20 of 132, Sec. 3.2.1)."),
        Output("alltoall_time", "Expert alltoalls per step", "s", "fixed"),
        Output("alltoall_exposed_time", "Expert alltoalls not hidden", "s", "fixed"),
        Output("alltoall_bytes", "Alltoall bytes per GPU per step", "B"),
        Output("alltoall_inter_node_bytes", "of which over the network", "B"),
        Output("alltoall_to_compute", "Alltoall / the compute it can hide behind", "1",
               "fixed", help="Per MoE block and micro-batch: the four alltoalls' time over "
               "the block's forward and backward compute. Above 1 no overlap can hide it."),
        Output("dp_comm_time", "DP and expert-DP communication per step", "s", "fixed"),
        Output("dp_exposed_time", "DP communication not hidden", "s", "fixed"),
        Output("layouts_evaluated", "Choices costed", "", "count"),
        Output("layouts_fitting", "Layouts that fit", "", "count"),
    ),
    function=_moe_plan,
    sources=(
        "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Secs. 2.1-2.2, 3.1-3.3, 4.2",
        "Megatron-Core parallel_state.initialize_model_parallel (expert groups, "
        "parallel folding)",
        "Lepikhin et al. 2020, GShard, Sec. 3 (dispatch and combine as AllToAll)",
        "Narayanan et al. 2021, Megatron-LM (SC21), Secs. 2.2, 3.3",
        "Korthikanti et al. 2022, Reducing Activation Recomputation, Secs. 4, 6",
        "Rajbhandari et al. 2020, ZeRO, Secs. 5, 7",
    ),
)
