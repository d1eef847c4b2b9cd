"""How ``moe_plan`` shows a layout: its table row and the notes that say where the expert
groups sit, what the winner's memory and alltoall are, and what the runners-up lose on."""

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
    from calculators.formulas.planner.layout import Cluster, Layout

GB = 1e9



def choices(lay: Layout) -> str:
    hybrid = f" in groups of {lay.shard_group}" if lay.zero_stage and lay.hybrid else ""
    return f"b={lay.micro_batch}, {RECOMPUTE_WORDS[lay.recompute]}, ZeRO {lay.zero_stage}{hybrid}"


def ep_group(lay: Layout, domain: int) -> str:
    """Where an EP group of consecutive ranks sits."""
    ep = lay.dims.ep
    if ep == 1:
        return "no expert parallelism: every GPU holds all its stage's experts"
    if ep <= domain:
        return f"EP {ep} inside one NVLink domain"
    return f"EP {ep} across {ep // domain} NVLink domains of {domain}"


def expert_dp(lay: Layout) -> int:
    """The expert-data-parallel size: a stage's TP x CP x DP GPUs over EP."""
    return lay.tp * lay.cp * lay.dp // lay.dims.ep


def row(rank: int, lay: Layout) -> tuple[str, ...]:
    def comm(seconds: float, exposed: float, sent: float, used: bool) -> str:
        if not used:
            return "-"
        hidden = "" if exposed >= seconds else f" ({exposed:.3g} s exposed)"
        return f"{seconds:.3g} s{hidden}, {format_value(sent, 'B', 'si')}"

    hybrid = f"/{lay.shard_group}" if lay.zero_stage and lay.hybrid else ""
    return (
        str(rank), lay.dims.label(),
        f"{lay.micro_batch}, {lay.recompute}, {lay.zero_stage}{hybrid}",
        f"{lay.memory_bytes / GB:,.1f} GB", f"{lay.bubble_fraction:.1%}",
        comm(lay.ep_s, lay.ep_exposed_s, lay.ep_bytes, lay.dims.ep > 1),
        comm(lay.tp_s + lay.cp_s, lay.tp_s + lay.cp_exposed_s, lay.tp_bytes + lay.cp_bytes,
             lay.tp * lay.cp > 1),
        comm(lay.dp_s, lay.dp_exposed_s, lay.dp_bytes, True),
        f"{lay.step_s:.3g} s",
    )


def why(best: Layout, other: Layout) -> str:
    """The part of the step time that grows most from the winner to ``other``."""
    growth = [(o - b, name) for (name, b), (_, o) in zip(best.parts(), other.parts(), strict=True)]
    delta, name = max(growth)
    slower = other.step_s / best.step_s - 1
    label = f"{other.dims.label()} ({choices(other)})"
    if slower <= -5e-4:
        return (f"{label} is {-slower:.1%} faster, within the ranking tolerance, but less "
                f"simple ({simplicity_in_words(other)}).")
    if slower < 5e-4:
        return f"{label} is as fast, to within 0.05%."
    return f"{label} is {slower:.1%} slower, mostly {name} (+{delta:.3g} s)."


def explain(best: Layout, fitting: list[Layout], cluster: Cluster,
            tolerance: float) -> list[str]:
    """Why the winner wins, its memory and alltoall, and what the runners-up lose on."""
    mem, domain = best.memory, cluster.gpus_per_node
    stage = best.fullest_stage
    notes = [
        f"Best: {best.dims.label()}, {choices(best)}, {best.micro_batches} micro-batches per "
        f"replica per step, bubble {best.bubble_fraction:.1%}; {ep_group(best, domain)}, each "
        f"expert replicated {expert_dp(best)} times (expert data parallelism)"
        f"{'; ' + best.stages if best.stages else ''}.",
        f"Memory on {stage}, the fullest: {mem.total / GB:,.1f} GB of the "
        f"{cluster.memory_bytes / GB:,.1f} GB a layout may use: weights "
        f"{mem.weights / GB:,.2f}, gradients {mem.gradients / GB:,.2f}, optimizer "
        f"{mem.optimizer / GB:,.2f}, activations {mem.activations / GB:,.2f}, embedding and "
        f"output layers {mem.outer / GB:,.2f}, working {mem.working / GB:,.2f} GB.",
    ]
    if best.dims.ep > 1 and not best.ep_cover_s:
        # The step is timed on its slowest pipeline stage; with many stages that can be
        # one of dense layers only (DeepSeek-V3's first three), which sends no alltoall.
        notes.append("Expert alltoalls: none on the pipeline stage that sets the step time, "
                     "which holds no MoE block.")
    elif best.dims.ep > 1:
        share = best.ep_inter_bytes / best.ep_bytes if best.ep_bytes else 0.0
        notes.append(
            f"Expert alltoalls: {best.ep_bytes / GB:,.3g} GB per GPU per step "
            f"({share:.0%} of it over the network), {best.ep_s:.3g} s against the "
            f"{best.ep_cover_s:.3g} s its MoE blocks compute "
            f"({best.ep_s / best.ep_cover_s:.2f} of it); {best.ep_exposed_s:.3g} s stays "
            "exposed. Below 1, overlap with another micro-batch's compute can hide it "
            "(as far as the overlap efficiency allows); above 1, no schedule can.")
    if recommended := recommendation_note(best, fitting, tolerance, choices):
        notes.append(recommended)
    seen = {best.dims.label()}
    for other in fitting[1:]:
        if other.dims.label() not in seen:
            seen.add(other.dims.label())
            notes.append(why(best, other))
        if len(seen) == 4:
            break
    notes.append(
        f"Assumed: the {SCHEDULE_NAMES[best.schedule]} schedule "
        f"({pp_sends_words(best.schedule)}); every block priced "
        "operation by operation at the speeds measured for this GPU's kernels, routed "
        "experts as one grouped GEMM of balanced tokens; experts whole on a GPU "
        "(expert TP 1) and EP folded into a stage's TP x CP x DP GPUs, consecutive ranks "
        f"(Megatron-Core); {cluster.overlap:.0%} of the traffic that fits under compute "
        "really hides (DP behind the backward pass, the alltoall behind another "
        "micro-batch when overlapped); tensor parallelism kept inside the NVLink domain.")
    return notes

