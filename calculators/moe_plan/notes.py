"""How ``moe_plan`` shows a layout: its table row and the notes that say where the expert
groups sit, what the winner's memory and alltoall are, and what the runners-up lose on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.core.units import format_value
from calculators.formulas.planner.plan_words import choices, fullest_stage_note
from calculators.formulas.planner.ranking import (
    recommendation_note,
    simplicity_in_words,
)
from calculators.formulas.planner.schedule_words import SCHEDULE_NAMES, pp_sends_words

if TYPE_CHECKING:
    from calculators.formulas.planner.layout import Cluster, Layout

GB = 1e9



def ep_group(lay: Layout, domain: int) -> str:
    """Where an EP group of consecutive ranks sits."""
    ep = lay.dims.ep
    if ep == 1:
        return _("no expert parallelism: every GPU holds all its stage's experts")
    if ep <= domain:
        return _("EP {ep} inside one NVLink domain").format(ep=ep)
    return _("EP {ep} across {domains} NVLink domains of {size}").format(
        ep=ep, domains=ep // domain, size=domain)


def expert_dp(lay: Layout) -> int:
    """The expert-data-parallel size: a stage's TP x CP x DP GPUs over EP."""
    return lay.tp * lay.cp * lay.dp // lay.dims.ep


def row(rank: int, lay: Layout) -> tuple[str, ...]:
    def comm(seconds: float, exposed: float, sent: float, used: bool) -> str:
        if not used:
            return "-"
        if exposed >= seconds:
            return f"{seconds:.3g} s, {format_value(sent, 'B', 'si')}"
        return _("{time:.3g} s ({exposed:.3g} s exposed), {sent}").format(
            time=seconds, exposed=exposed, sent=format_value(sent, 'B', 'si'))

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
    layout, chosen = other.dims.label(), choices(other)
    if slower <= -5e-4:
        return _("{layout} ({choices}) is {faster:.1%} faster, within the ranking tolerance, "
                 "but less simple ({simplicity}).").format(
            layout=layout, choices=chosen, faster=-slower,
            simplicity=simplicity_in_words(other))
    if slower < 5e-4:
        return _("{layout} ({choices}) is as fast, to within 0.05%.").format(
            layout=layout, choices=chosen)
    return _("{layout} ({choices}) is {slower:.1%} slower, mostly {part} "
             "(+{delta:.3g} s).").format(layout=layout, choices=chosen, slower=slower,
                                         part=_(name), delta=delta)


def explain(best: Layout, fitting: list[Layout], cluster: Cluster,
            tolerance: float) -> list[str]:
    """Why the winner wins, its memory and alltoall, and what the runners-up lose on."""
    domain = cluster.gpus_per_node
    best_words = (
        _("Best: {layout}, {choices}, {micro_batches} micro-batches per replica per step, "
          "bubble {bubble:.1%}; {experts}, each expert replicated {copies} times (expert "
          "data parallelism); {stages}.") if best.stages else
        _("Best: {layout}, {choices}, {micro_batches} micro-batches per replica per step, "
          "bubble {bubble:.1%}; {experts}, each expert replicated {copies} times (expert "
          "data parallelism)."))
    notes = [
        best_words.format(layout=best.dims.label(), choices=choices(best),
                          micro_batches=best.micro_batches, bubble=best.bubble_fraction,
                          experts=ep_group(best, domain), copies=expert_dp(best),
                          stages=best.stages),
        fullest_stage_note(best, cluster),
    ]
    if best.dims.ep > 1 and not best.ep_cover_s:
        # The step is timed on its slowest pipeline stage; with many stages that can be
        # one of dense layers only (DeepSeek-V3's first three), which sends no alltoall.
        notes.append(_("Expert alltoalls: none on the pipeline stage that sets the step "
                       "time, which holds no MoE block."))
    elif best.dims.ep > 1:
        share = best.ep_inter_bytes / best.ep_bytes if best.ep_bytes else 0.0
        notes.append(_(
            "Expert alltoalls: {sent:,.3g} GB per GPU per step ({share:.0%} of it over the "
            "network), {time:.3g} s against the {cover:.3g} s its MoE blocks compute "
            "({ratio:.2f} of it); {exposed:.3g} s stays exposed. Below 1, overlap with "
            "another micro-batch's compute can hide it (as far as the overlap efficiency "
            "allows); above 1, no schedule can.").format(
            sent=best.ep_bytes / GB, share=share, time=best.ep_s, cover=best.ep_cover_s,
            ratio=best.ep_s / best.ep_cover_s, exposed=best.ep_exposed_s))
    if recommended := recommendation_note(best, fitting, tolerance, choices):
        notes.append(recommended)
    seen = {best.dims.label()}
    for other in fitting[1:]:
        if other.dims.label() not in seen:
            seen.add(other.dims.label())
            notes.append(why(best, other))
        if len(seen) == 4:
            break
    notes.append(_(
        "Assumed: the {schedule} schedule ({pp_sends}); every block priced operation by "
        "operation at the speeds measured for this GPU's kernels, routed experts as one "
        "grouped GEMM of balanced tokens; experts whole on a GPU (expert TP 1) and EP folded "
        "into a stage's TP x CP x DP GPUs, consecutive ranks (Megatron-Core); {overlap:.0%} "
        "of the traffic that fits under compute really hides (DP behind the backward pass, "
        "the alltoall behind another micro-batch when overlapped); tensor parallelism kept "
        "inside the NVLink domain.").format(
        schedule=_(SCHEDULE_NAMES[best.schedule]), pp_sends=pp_sends_words(best.schedule),
        overlap=cluster.overlap))
    return notes

