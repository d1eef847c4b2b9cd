"""How ``parallel_plan`` shows a layout: its name, its table row, and the notes that
say why the winner wins and what the runners-up lose on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.core.i18n import N_, _
from calculators.core.units import format_value
from calculators.formulas.planner.plan_words import choices, fullest_stage_note
from calculators.formulas.planner.ranking import (
    recommendation_note,
    simplicity_in_words,
)
from calculators.formulas.planner.schedule_words import SCHEDULE_NAMES, pp_sends_words

if TYPE_CHECKING:
    from calculators.formulas.kernels.dense_layer import LayerTimes
    from calculators.formulas.planner.layout import Cluster, Layout

GB = 1e9


def where(inter: bool, used: bool) -> str:
    if not used:
        return "-"
    return _("across NVLink domains") if inter else _("in an NVLink domain")


def row(rank: int, lay: Layout) -> tuple[str, ...]:
    def comm(
        seconds: float, sent: float, inter: bool, used: bool, exposed: float | None = None
    ) -> str:
        if not used:
            return "-"
        hidden = exposed is not None and exposed < seconds
        words = (_("{time:.3g} s ({exposed:.3g} s exposed), {sent} across") if hidden and inter
                 else _("{time:.3g} s ({exposed:.3g} s exposed), {sent} in domain") if hidden
                 else _("{time:.3g} s, {sent} across") if inter
                 else _("{time:.3g} s, {sent} in domain"))
        return words.format(time=seconds, exposed=exposed, sent=format_value(sent, "B", "si"))

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


#: Options.tp_overlap in words.
TP_OVERLAP_WORDS = {"none": N_("none"), "backward": N_("in the backward, behind the weight "
                                                        "and input gradients"),
                    "full": N_("forward and backward")}


def explain(best: Layout, fitting: list[Layout], fastest: Layout, cluster: Cluster,
            tolerance: float, *, tp_overlap: str = "backward") -> list[str]:
    """Why the winner wins and what the next distinct layouts lose on."""
    several = best.micro_batches > 1
    best_words = (
        _("Best: TP {tp} ({tp_where}), CP {cp} ({cp_where}), PP {pp} ({pp_where}), DP {dp} "
          "({dp_where}), {choices}, {micro_batches} micro-batches per replica per step, "
          "bubble {bubble:.1%}; {stages}.") if several and best.stages else
        _("Best: TP {tp} ({tp_where}), CP {cp} ({cp_where}), PP {pp} ({pp_where}), DP {dp} "
          "({dp_where}), {choices}, {micro_batches} micro-batches per replica per step, "
          "bubble {bubble:.1%}.") if several else
        _("Best: TP {tp} ({tp_where}), CP {cp} ({cp_where}), PP {pp} ({pp_where}), DP {dp} "
          "({dp_where}), {choices}, {micro_batches} micro-batch per replica per step, "
          "bubble {bubble:.1%}; {stages}.") if best.stages else
        _("Best: TP {tp} ({tp_where}), CP {cp} ({cp_where}), PP {pp} ({pp_where}), DP {dp} "
          "({dp_where}), {choices}, {micro_batches} micro-batch per replica per step, "
          "bubble {bubble:.1%}."))
    notes = [
        best_words.format(
            tp=best.tp, tp_where=where(best.tp_inter, best.tp > 1), cp=best.cp,
            cp_where=where(best.cp_inter, best.cp > 1), pp=best.pp,
            pp_where=where(best.pp_inter, best.pp > 1), dp=best.dp,
            dp_where=where(best.dp_inter, best.dp * best.cp > 1), choices=choices(best),
            micro_batches=best.micro_batches, bubble=best.bubble_fraction,
            stages=best.stages),
        fullest_stage_note(best, cluster),
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
        notes.append(_(
            "Faster but too big: {layout} ({choices}) would take {time:.3g} s but needs "
            "{memory:,.1f} GB per GPU.").format(
            layout=fastest.dims.label(), choices=choices(fastest), time=fastest.step_s,
            memory=fastest.memory_bytes / GB))
    assumed = (
        _("Assumed: every operation at the speed measured for this GPU's kernels (GEMMs by "
          "shape, its attention kernel, memory-bound passes at the bandwidth HBM reaches) "
          "and every collective at what NCCL reaches on its links at that message size; TP "
          "traffic overlapped: {tp_overlap}; {overlap:.0%} of what hides really disappears "
          "(the rest slows the compute it shares the GPU with); {pp_sends}; the {schedule} "
          "schedule with {chunks} chunks per GPU; ranks ordered TP, CP, DP, PP in NVLink "
          "domains of {domain}.") if best.chunks > 1 else
        _("Assumed: every operation at the speed measured for this GPU's kernels (GEMMs by "
          "shape, its attention kernel, memory-bound passes at the bandwidth HBM reaches) "
          "and every collective at what NCCL reaches on its links at that message size; TP "
          "traffic overlapped: {tp_overlap}; {overlap:.0%} of what hides really disappears "
          "(the rest slows the compute it shares the GPU with); {pp_sends}; the {schedule} "
          "schedule; ranks ordered TP, CP, DP, PP in NVLink domains of {domain}."))
    notes.append(assumed.format(
        tp_overlap=_(TP_OVERLAP_WORDS[tp_overlap]), overlap=cluster.overlap,
        pp_sends=pp_sends_words(best.schedule), schedule=_(SCHEDULE_NAMES[best.schedule]),
        chunks=best.chunks, domain=cluster.gpus_per_node))
    return notes


def time_per_layer(times: LayerTimes, recompute: str) -> str:
    """Where one layer's compute goes, for one micro-batch on one GPU."""
    ms = 1e3
    extra = times.recompute_s(recompute)
    rate = times.gemm_flops / times.gemm_s if times.gemm_s > 0 else 0.0
    words = (
        _("One layer, one micro-batch, on one GPU (forward + backward): GEMMs {gemm:.3g} ms "
          "at {rate:,.0f} TFLOP/s, attention {attention:.3g} ms, memory-bound passes "
          "{memory:.3g} ms (norms, activation, residuals, gradient accumulation), "
          "recomputation {recompute:.3g} ms.") if extra > 0 else
        _("One layer, one micro-batch, on one GPU (forward + backward): GEMMs {gemm:.3g} ms "
          "at {rate:,.0f} TFLOP/s, attention {attention:.3g} ms, memory-bound passes "
          "{memory:.3g} ms (norms, activation, residuals, gradient accumulation)."))
    return words.format(
        gemm=times.gemm_s * ms, rate=rate / 1e12,
        attention=(times.attention_forward_s + times.attention_backward_s) * ms,
        memory=times.memory_bound_s * ms, recompute=extra * ms)




