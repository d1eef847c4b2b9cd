"""The pipeline schedule in words, for the planners' notes: its name, what it does with
the pipeline sends, and what the SMs it gives to communication cost."""

from __future__ import annotations

from calculators.formulas.planner.layout_cost import OVERLAPPING_SCHEDULES

SCHEDULE_NAMES = {"1f1b": "1F1B", "interleaved": "interleaved 1F1B", "zb_h1": "ZB-H1",
                  "zb_h2": "ZB-H2", "dualpipe": "DualPipe", "dualpipev": "DualPipeV"}


def pp_sends_words(schedule: str) -> str:
    """How the step model treats the pipeline sends under ``schedule``."""
    if schedule in OVERLAPPING_SCHEDULES:
        return ("PP sends hidden behind the paired forward and backward chunks at the "
                "overlap efficiency (DeepSeek-V3 report, Sec. 3.2.1)")
    return "PP sends exposed"


def dual_memory_words(schedule: str) -> str:
    """What DualPipe(V) does to the weights a GPU holds ("" for other schedules)."""
    if schedule == "dualpipe":
        return ("DualPipe: each GPU holds its stage and a copy of the mirror stage, so "
                "weights, gradients and optimizer states count twice (DeepSeek-V3 report, "
                "Sec. 3.2.1: two copies of the parameters; the reference code keeps "
                "each copy's own gradient and sums the pair's after the step); p + 1 "
                "micro-batches of a stage in flight.")
    if schedule == "dualpipev":
        return ("DualPipeV: two chunks per GPU in a V (chunks r and 2p-1-r), every "
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
    what = (f"That costs {cost:.3g} s of the {step_s:.3g} s step (the same layout with "
            f"every SM computing: {unreserved_step_s:.3g} s)." if cost > 0 else
            f"Here that costs nothing the model can see: with every SM computing the "
            f"same layout takes {unreserved_step_s:.3g} s, as the slower compute hides "
            "as much communication as it adds (the planner hides each kind of traffic "
            "behind the same compute).")
    return (f"{reserved} of the GPU's {sms} SMs drive communication (DeepSeek-V3 reserves "
            f"20 of the H800's 132, Sec. 3.2.1): GEMMs and attention run at "
            f"{(sms - reserved) / sms:.1%} of their speed, memory-bound kernels at theirs "
            f"(assumption). {what}")
