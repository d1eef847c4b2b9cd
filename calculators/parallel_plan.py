"""The ``parallel_plan`` calculator: search TP x PP x DP layouts, rank and explain them.
The search and its cost model are formulas.planner; the inputs it shares with the
sizing are inputs.cluster."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.core import charts
from calculators.core.spec import (
    Calculator,
    Computed,
    Inputs,
    Output,
    Param,
    Table,
    ValidationError,
)
from calculators.formulas.flops import megatron_model_flops_per_token
from calculators.formulas.memory import state_bytes
from calculators.formulas.planner import search
from calculators.inputs.architecture import ARCHITECTURE_DETAIL, architecture, check_layout
from calculators.inputs.cluster import PLANNER_PARAMS, planner_cluster

if TYPE_CHECKING:
    from calculators.formulas.planner import Cluster, Layout

GB = 1e9


def _where(inter: bool, used: bool) -> str:
    return "-" if not used else ("across nodes" if inter else "in node")


def _name(lay: Layout) -> str:
    return f"{lay.tp}x{lay.pp}x{lay.dp}"


def _row(rank: int, lay: Layout) -> tuple[str, ...]:
    def comm(
        seconds: float, sent: float, inter: bool, used: bool, exposed: float | None = None
    ) -> str:
        if not used:
            return "-"
        hidden = "" if exposed is None or exposed >= seconds else f" ({exposed:.3g} s exposed)"
        return f"{seconds:.3g} s{hidden}, {sent / GB:,.3g} GB {'across' if inter else 'in node'}"

    return (
        str(rank),
        _name(lay),
        f"{lay.micro_batch}, {lay.recompute}, {lay.zero_stage}",
        f"{lay.memory_bytes / GB:,.1f} GB",
        f"{lay.bubble_fraction:.1%}",
        comm(lay.tp_s, lay.tp_bytes, lay.tp_inter, lay.tp > 1),
        comm(lay.pp_s, lay.pp_bytes, lay.pp_inter, lay.pp > 1),
        comm(lay.dp_s, lay.dp_bytes, lay.dp_inter, lay.dp > 1, lay.dp_exposed_s),
        f"{lay.step_s:.3g} s",
    )


def _why(best: Layout, other: Layout) -> str:
    """The part of the step time that grows most from the winner to ``other``."""
    growth = [(o - b, name) for (name, b), (_, o) in zip(best.parts(), other.parts(), strict=True)]
    delta, name = max(growth)
    slower = other.step_s / best.step_s - 1
    return (
        f"{_name(other)} (b={other.micro_batch}, {other.recompute} recompute, ZeRO "
        f"{other.zero_stage}) is {slower:.1%} slower, mostly {name} (+{delta:.3g} s)."
    )


def _fixed_sizes(inputs: Inputs, n: int) -> dict[str, int | None]:
    """The sizes the reader fixed (None: search), checked against num_gpus."""
    gpn = inputs.whole("gpus_per_node")
    if n > gpn and n % gpn:
        raise ValidationError("num_gpus", f"{n} GPUs do not fill whole nodes of {gpn}")
    fixed = {
        k: None if inputs[k] is None else inputs.whole(k) for k in ("tp", "pp", "dp", "micro_batch")
    }
    tp, pp, dp = fixed["tp"], fixed["pp"], fixed["dp"]
    if tp is not None and pp is not None and dp is not None and tp * pp * dp != n:
        raise ValidationError("dp", f"tp x pp x dp = {tp} x {pp} x {dp} must equal num_gpus = {n}")
    for name, size in (("tp", tp), ("pp", pp), ("dp", dp)):
        if size is not None and n % size:
            raise ValidationError(name, f"{name} = {size} does not divide num_gpus = {n}")
    return fixed


def _explain(best: Layout, fitting: list[Layout], fastest: Layout, cluster: Cluster) -> list[str]:
    """Why the winner wins and what the next distinct layouts lose on."""
    notes = [
        f"Best: TP {best.tp} ({_where(best.tp_inter, best.tp > 1)}), PP {best.pp} "
        f"({_where(best.pp_inter, best.pp > 1)}), DP {best.dp} "
        f"({_where(best.dp_inter, best.dp > 1)}), micro-batch {best.micro_batch} "
        f"({best.micro_batches} per replica per step), {best.recompute} recompute, ZeRO "
        f"{best.zero_stage}: {best.memory_bytes / GB:,.1f} of "
        f"{cluster.memory_bytes / GB:g} GB per GPU, bubble {best.bubble_fraction:.1%}."
    ]
    seen = {_name(best)}
    for other in fitting[1:]:
        if _name(other) not in seen:
            seen.add(_name(other))
            notes.append(_why(best, other))
        if len(seen) == 4:
            break
    if fastest is not best:
        notes.append(
            f"Faster but too big: {_name(fastest)} (b={fastest.micro_batch}, "
            f"{fastest.recompute} recompute, ZeRO {fastest.zero_stage}) would take "
            f"{fastest.step_s:.3g} s but needs {fastest.memory_bytes / GB:,.1f} GB "
            "per GPU."
        )
    notes.append(
        "Assumed: compute at the stated fraction of peak; TP and PP communication "
        "exposed; DP communication "
        + ("hidden behind backward compute where it can be" if cluster.overlap_dp else "exposed")
        + "; 1F1B schedule; ranks "
        "ordered TP, DP, PP."
    )
    return notes


def _distinct(fitting: list[Layout], count: int) -> list[Layout]:
    """The fastest ``count`` layouts, listing only the leaner of ZeRO 0/1 when they tie."""
    top: list[Layout] = []
    listed: set[tuple[int, int, int, int, str, float]] = set()
    for lay in fitting:
        key = (lay.tp, lay.pp, lay.dp, lay.micro_batch, lay.recompute, lay.step_s)
        if key not in listed:
            listed.add(key)
            top.append(lay)
        if len(top) == count:
            break
    return top


RESULT_NAMES = (
    "tp",
    "pp",
    "dp",
    "micro_batch",
    "zero_stage",
    "recompute",
    "step_time",
    "tokens_per_second",
    "mfu",
    "memory_per_gpu_bytes",
    "bubble_fraction",
    "tp_comm_time",
    "pp_comm_time",
    "dp_comm_time",
    "dp_exposed_time",
)


def _parallel_plan(inputs: Inputs) -> Computed:
    arch = architecture(inputs)
    n = inputs.whole("num_gpus")
    fixed = _fixed_sizes(inputs, n)
    check_layout(arch, fixed["tp"] or 1, fixed["pp"] or 1)
    cluster = planner_cluster(inputs)
    precision = inputs.text("precision")
    global_batch = inputs.whole("global_batch")
    layouts = search(
        arch,
        cluster,
        state_bytes(precision, inputs.text("optimizer")),
        global_batch,
        tp=fixed["tp"],
        pp=fixed["pp"],
        dp=fixed["dp"],
        micro_batch=fixed["micro_batch"],
        act_bytes=4.0 if precision == "fp32" else 2.0,
    )
    if not layouts:
        raise ValidationError(
            "global_batch",
            f"no layout of {n} GPUs divides a global batch "
            f"of {global_batch} sequences with these constraints",
        )
    fitting = [lay for lay in layouts if lay.fits]
    values: dict[str, float | bool | str | None] = {
        "layouts_evaluated": float(len(layouts)),
        "layouts_fitting": float(len(fitting)),
    }
    if not fitting:
        values.update(dict.fromkeys(RESULT_NAMES))
        return Computed(
            values=values,
            warnings=[
                f"No layout fits in {cluster.memory_bytes / GB:g} GB per GPU: the smallest needs "
                f"{min(x.memory_bytes for x in layouts) / GB:,.1f} GB. More GPUs, a smaller "
                "micro-batch or a larger GPU are needed."
            ],
        )
    best = fitting[0]
    tokens = global_batch * arch.seq_len
    model_flops = megatron_model_flops_per_token(arch) * tokens
    values.update(
        {
            "tp": float(best.tp),
            "pp": float(best.pp),
            "dp": float(best.dp),
            "micro_batch": float(best.micro_batch),
            "zero_stage": float(best.zero_stage),
            "recompute": best.recompute,
            "step_time": best.step_s,
            "tokens_per_second": tokens / best.step_s,
            "mfu": model_flops / (n * cluster.peak_flops * best.step_s),
            "memory_per_gpu_bytes": best.memory_bytes,
            "bubble_fraction": best.bubble_fraction,
            "tp_comm_time": best.tp_s,
            "pp_comm_time": best.pp_s,
            "dp_comm_time": best.dp_s,
            "dp_exposed_time": best.dp_exposed_s,
        }
    )
    top = _distinct(fitting, inputs.whole("top"))
    table = Table(
        (
            "#",
            "TP x PP x DP",
            "b, recompute, ZeRO",
            "Memory/GPU",
            "Bubble",
            "TP comm",
            "PP comm",
            "DP comm",
            "Step",
        ),
        tuple(_row(i + 1, lay) for i, lay in enumerate(top)),
        caption=f"Fastest {len(top)} distinct layouts of the {len(fitting)} that fit "
        f"({len(layouts)} evaluated). Communication per step: time, bytes each GPU "
        "sends, and whether it stays in a node or goes across nodes.",
    )
    chart = charts.stacked_bar_chart(
        "Step time of the fastest layouts, by part",
        [(f"#{i + 1} {_name(lay)}", lay.parts()) for i, lay in enumerate(top[:5])],
        "seconds per step",
        legend_right=True,
    )
    return Computed(
        values=values, notes=_explain(best, fitting, layouts[0], cluster), table=table, chart=chart
    )


def _opt_int(name: str, label: str, help_text: str) -> Param:
    return Param(
        name,
        label,
        "int",
        None,
        minimum=1,
        maximum=10_000_000,
        optional=True,
        placeholder="search",
        help=help_text,
    )


PARALLEL_PLAN = Calculator(
    id="parallel_plan",
    advanced=(
        *ARCHITECTURE_DETAIL,
        "gpu_memory",
        "intra_node_bandwidth",
        "inter_node_bandwidth",
        "comm_efficiency",
        "latency",
        "compute_efficiency",
        "precision",
        "optimizer",
        "tp",
        "pp",
        "dp",
        "micro_batch",
        "top",
    ),
    title="TP x PP x DP planner",
    summary="Enumerate every tensor/pipeline/data-parallel layout of a cluster, cost its "
    "memory, bubble and communication, and rank them by step time.",
    chapter="dense.md",
    params=(
        *PLANNER_PARAMS,
        _opt_int("tp", "Fix tensor-parallel size", "Blank: search all that divide the heads."),
        _opt_int("pp", "Fix pipeline-parallel size", "Blank: search 1 to the layer count."),
        _opt_int("dp", "Fix data-parallel size", "Blank: whatever num_gpus / (tp x pp) is."),
        _opt_int("micro_batch", "Fix micro-batch size", "Blank: search 1, 2, 4 and 8."),
        Param(
            "top", "Layouts to list", "int", 10, minimum=1, maximum=100, help="Rows in the table."
        ),
    ),
    outputs=(
        Output("tp", "Tensor parallel (best)", "", "count"),
        Output("pp", "Pipeline parallel (best)", "", "count"),
        Output("dp", "Data parallel (best)", "", "count"),
        Output("micro_batch", "Micro-batch (best)", "sequence", "count"),
        Output("zero_stage", "ZeRO stage (best)", "", "count"),
        Output("recompute", "Recomputation (best)", "", "text"),
        Output("step_time", "Step time", "s", "fixed"),
        Output("tokens_per_second", "Tokens per second", "token/s", "count"),
        Output("mfu", "Estimated MFU", "1", "percent"),
        Output("memory_per_gpu_bytes", "Memory per GPU", "B"),
        Output("bubble_fraction", "Pipeline bubble (p-1)/m", "1", "percent"),
        Output("tp_comm_time", "TP communication per step", "s", "fixed"),
        Output("pp_comm_time", "PP communication per step", "s", "fixed"),
        Output("dp_comm_time", "DP communication per step", "s", "fixed"),
        Output("dp_exposed_time", "DP communication not hidden", "s", "fixed"),
        Output("layouts_evaluated", "Layouts evaluated", "", "count"),
        Output("layouts_fitting", "Layouts that fit", "", "count"),
    ),
    function=_parallel_plan,
    sources=(
        "Narayanan et al. 2021, Megatron-LM (SC21), Sec. 2.2, 3, 4.1, 5.1, Table 1",
        "Shoeybi et al. 2019, Megatron-LM, Sec. 3",
        "Korthikanti et al. 2022, Reducing Activation Recomputation, Sec. 4, 6",
        "Rajbhandari et al. 2020, ZeRO, Sec. 5 and 7",
        "Thakur, Rabenseifner and Gropp 2005 (collective costs); NVIDIA nccl-tests",
    ),
)
