"""How ``parallel_plan`` shows a layout: its name, its table row, and the notes that
say why the winner wins and what the runners-up lose on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.core.units import format_value
from calculators.formulas.planner.ranking import (
    RECOMPUTE_WORDS,
    recommendation_note,
    simplicity_in_words,
)
from calculators.formulas.planner.schedule_words import SCHEDULE_NAMES, pp_sends_words

if TYPE_CHECKING:
    from calculators.formulas.kernels.dense_layer import LayerTimes
    from calculators.formulas.planner.layout import Cluster, Layout

GB = 1e9


def where(inter: bool, used: bool) -> str:
    return "-" if not used else ("across NVLink domains" if inter else "in an NVLink domain")


def choices(lay: Layout) -> str:
    """Micro-batch, recomputation and sharding, as the table's third column shows them."""
    hybrid = f" in groups of {lay.shard_group}" if lay.zero_stage and lay.hybrid else ""
    return f"b={lay.micro_batch}, {RECOMPUTE_WORDS[lay.recompute]}, ZeRO {lay.zero_stage}{hybrid}"


def row(rank: int, lay: Layout) -> tuple[str, ...]:
    def comm(
        seconds: float, sent: float, inter: bool, used: bool, exposed: float | None = None
    ) -> str:
        if not used:
            return "-"
        hidden = "" if exposed is None or exposed >= seconds else f" ({exposed:.3g} s exposed)"
        where = "across" if inter else "in domain"
        return f"{seconds:.3g} s{hidden}, {format_value(sent, 'B', 'si')} {where}"

    hybrid = f"/{lay.shard_group}" if lay.zero_stage and lay.hybrid else ""
    return (
        str(rank),
        lay.dims.label(),
        f"{lay.micro_batch}, {lay.recompute}, {lay.zero_stage}{hybrid}",
        f"{lay.memory_bytes / GB:,.1f} GB",
        f"{lay.bubble_fraction:.1%}",
        comm(lay.tp_s, lay.tp_bytes, lay.tp_inter, lay.tp > 1),
        comm(lay.cp_s, lay.cp_bytes, lay.cp_inter, lay.cp > 1, lay.cp_exposed_s),
        comm(lay.pp_s, lay.pp_bytes, lay.pp_inter, lay.pp > 1),
        comm(lay.dp_s, lay.dp_bytes, lay.dp_inter, lay.dp * lay.cp > 1, lay.dp_exposed_s),
        f"{lay.step_s:.3g} s",
    )


def why(best: Layout, other: Layout) -> str:
    """The part of the step time that grows most from the winner to ``other``."""
    growth = [(o - b, name) for (name, b), (_, o) in zip(best.parts(), other.parts(), strict=True)]
    delta, name = max(growth)
    slower = other.step_s / best.step_s - 1
    if slower <= -5e-4:
        return (f"{other.dims.label()} ({choices(other)}) is {-slower:.1%} faster, within "
                f"the ranking tolerance, but less simple ({simplicity_in_words(other)}).")
    if slower < 5e-4:
        return f"{other.dims.label()} ({choices(other)}) is as fast, to within 0.05%."
    return f"{other.dims.label()} ({choices(other)}) is {slower:.1%} slower, mostly {name} " \
        f"(+{delta:.3g} s)."


#: Options.tp_overlap in words.
TP_OVERLAP_WORDS = {"none": "none", "backward": "in the backward, behind the weight and "
                    "input gradients", "full": "forward and backward"}


def explain(best: Layout, fitting: list[Layout], fastest: Layout, cluster: Cluster,
            tolerance: float, *, tp_overlap: str = "backward") -> list[str]:
    """Why the winner wins and what the next distinct layouts lose on."""
    mem = best.memory
    stage = best.fullest_stage
    notes = [
        f"Best: TP {best.tp} ({where(best.tp_inter, best.tp > 1)}), CP {best.cp} "
        f"({where(best.cp_inter, best.cp > 1)}), PP {best.pp} "
        f"({where(best.pp_inter, best.pp > 1)}), DP {best.dp} "
        f"({where(best.dp_inter, best.dp * best.cp > 1)}), {choices(best)}, "
        f"{best.micro_batches} micro-batch{'es' if best.micro_batches > 1 else ''} per "
        "replica per step, bubble "
        f"{best.bubble_fraction:.1%}{'; ' + best.stages if best.stages else ''}.",
        f"Memory on {stage}, the fullest: {mem.total / GB:,.1f} GB of the "
        f"{cluster.memory_bytes / GB:,.1f} GB a layout may use: weights "
        f"{mem.weights / GB:,.2f}, gradients {mem.gradients / GB:,.2f}, optimizer "
        f"{mem.optimizer / GB:,.2f}, layers' activations {mem.activations / GB:,.2f}, "
        f"embedding and output layer {mem.outer / GB:,.2f}, working "
        f"{mem.working / GB:,.2f} GB.",
    ]
    if recommended := recommendation_note(best, fitting, tolerance, choices):
        notes.append(recommended)
    seen = {best.dims.label()}
    for other in fitting[1:]:
        if other.dims.label() not in seen:
            seen.add(other.dims.label())
            notes.append(why(best, other))
        if len(seen) == 4:
            break
    if not fastest.fits:
        notes.append(
            f"Faster but too big: {fastest.dims.label()} ({choices(fastest)}) would take "
            f"{fastest.step_s:.3g} s but needs {fastest.memory_bytes / GB:,.1f} GB "
            "per GPU."
        )
    notes.append(
        "Assumed: every operation at the speed measured for this GPU's kernels (GEMMs by "
        "shape, its attention kernel, memory-bound passes at the bandwidth HBM reaches) "
        "and every collective at what NCCL reaches on its links at that message size; "
        f"TP traffic overlapped: {TP_OVERLAP_WORDS[tp_overlap]}; "
        f"{cluster.overlap:.0%} of what hides really disappears (the rest slows the "
        f"compute it shares the GPU with); {pp_sends_words(best.schedule)}; the "
        f"{SCHEDULE_NAMES[best.schedule]} schedule"
        + (f" with {best.chunks} chunks per GPU" if best.chunks > 1 else "")
        + f"; ranks ordered TP, CP, DP, PP in NVLink domains of {cluster.gpus_per_node}."
    )
    return notes


def time_per_layer(times: LayerTimes, recompute: str) -> str:
    """Where one layer's compute goes, for one micro-batch on one GPU."""
    ms = 1e3
    extra = times.recompute_s(recompute)
    rate = times.gemm_flops / times.gemm_s if times.gemm_s > 0 else 0.0
    return (
        f"One layer, one micro-batch, on one GPU (forward + backward): GEMMs "
        f"{times.gemm_s * ms:.3g} ms at {rate / 1e12:,.0f} TFLOP/s, attention "
        f"{(times.attention_forward_s + times.attention_backward_s) * ms:.3g} ms, "
        f"memory-bound passes {times.memory_bound_s * ms:.3g} ms (norms, activation, "
        "residuals, gradient accumulation)"
        + (f", recomputation {extra * ms:.3g} ms" if extra > 0 else "") + "."
    )




