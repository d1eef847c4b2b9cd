"""The pipeline schedule in words, for the planners' notes: its name, what it does with
the pipeline sends, and what the SMs it gives to communication cost."""

from __future__ import annotations

from calculators.core.i18n import N_, _
from calculators.formulas.planner.layout_cost import OVERLAPPING_SCHEDULES

#: Translated where shown (only "interleaved 1F1B" has words in it).
SCHEDULE_NAMES = {"1f1b": N_("1F1B"), "interleaved": N_("interleaved 1F1B"),
                  "zb_h1": N_("ZB-H1"), "zb_h2": N_("ZB-H2"), "dualpipe": N_("DualPipe"),
                  "dualpipev": N_("DualPipeV")}


def pp_sends_words(schedule: str) -> str:
    """How the step model treats the pipeline sends under ``schedule``."""
    if schedule in OVERLAPPING_SCHEDULES:
        return _("PP sends hidden behind the paired forward and backward chunks at the "
                 "overlap efficiency (DeepSeek-V3 report, Sec. 3.2.1)")
    return _("PP sends exposed")


def dual_memory_words(schedule: str) -> str:
    """What DualPipe(V) does to the weights a GPU holds ("" for other schedules)."""
    if schedule == "dualpipe":
        return _("DualPipe: each GPU holds its stage and a copy of the mirror stage, so "
                 "weights, gradients and optimizer states count twice (DeepSeek-V3 report, "
                 "Sec. 3.2.1: two copies of the parameters; the reference code keeps "
                 "each copy's own gradient and sums the pair's after the step); p + 1 "
                 "micro-batches of a stage in flight.")
    if schedule == "dualpipev":
        return _("DualPipeV: two chunks per GPU in a V (chunks r and 2p-1-r), every "
                 "parameter held once; the first GPU holds the embedding and the output "
                 "layer; p + 1/2 micro-batches of a GPU's layers in flight "
                 "(deepseek-ai/DualPipe README).")
    return ""


def sm_reserve_cost(step_s: float, unreserved_step_s: float) -> float:
    """Step time lost to the reserved SMs: never below zero. The planner lets a longer
    compute window hide more of the tensor-, context- and data-parallel traffic at once
    (each part against the same compute), so slower GEMMs can hide a little more than
    they add; giving SMs away cannot make a step faster, and that gain is not one."""
    return max(0.0, step_s - unreserved_step_s)


def sm_reserve_note(reserved: int, sms: int, step_s: float, unreserved_step_s: float) -> str:
    """What ``reserved`` of ``sms`` SMs given to communication cost the step."""
    cost = sm_reserve_cost(step_s, unreserved_step_s)
    what = (_("That costs {cost:.3g} s of the {step:.3g} s step (the same layout with every "
              "SM computing: {unreserved:.3g} s).") if cost > 0 else
            _("Here that costs nothing the model can see: with every SM computing the same "
              "layout takes {unreserved:.3g} s, as the slower compute hides as much "
              "communication as it adds (the planner hides each kind of traffic behind the "
              "same compute)."))
    return _("{reserved} of the GPU's {sms} SMs drive communication (DeepSeek-V3 reserves "
             "20 of the H800's 132, Sec. 3.2.1): GEMMs and attention run at {speed:.1%} of "
             "their speed, memory-bound kernels at theirs (assumption). {cost}").format(
        reserved=reserved, sms=sms, speed=(sms - reserved) / sms,
        cost=what.format(cost=cost, step=step_s, unreserved=unreserved_step_s))
