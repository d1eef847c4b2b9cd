"""Parallel-layout inputs shared by ``model_memory`` and the planner: the pipeline
schedule, its virtual stages and the context-parallel method, each with its source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.core.spec import Choice, Param, ValidationError, When
from calculators.formulas.parallel.schedules import DUAL_SCHEDULES

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

#: SMs DeepSeek-V3 gives its communication kernels under DualPipe: 20 of the H800's
#: 132 (report, arXiv:2412.19437, Sec. 3.2.1 and 3.5.1).
DEEPSEEK_COMM_SMS = 20

SCHEDULE_PARAM = Param(
    "schedule", "Pipeline schedule", "choice", "1f1b",
    choices=(Choice("1f1b", "1F1B"), Choice("interleaved", "interleaved 1F1B"),
             Choice("zb_h1", "zero bubble ZB-H1"), Choice("zb_h2", "zero bubble ZB-H2"),
             Choice("dualpipe", "DualPipe (DeepSeek-V3)"),
             Choice("dualpipev", "DualPipeV (cut-in-half DualPipe)")),
    help="1F1B: bubble (p-1)/m, p micro-batches in flight (Narayanan et al. 2021, Sec. "
         "2.2.1). Interleaved: v chunks per GPU, bubble (p-1)/(v m), v times the "
         "pipeline sends, about p + (p-1)/v in flight; m a multiple of p (Sec. 2.2.2). "
         "ZB-H1 and ZB-H2 split the backward into input and weight passes: a third of "
         "1F1B's bubble at 1F1B's memory, or none at twice the micro-batches in flight "
         "(Qi et al. 2024, Sec. 2, passes of equal length). DualPipe feeds micro-batches "
         "from both ends: bubble (p/2-1)(F&B+B-3W), each GPU holds its stage and a copy of "
         "the mirror stage (2x weights, gradients and optimizer states), p+1 in flight; p "
         "and m even, m >= 2p (DeepSeek-V3 report, Sec. 3.2.1 and Table 2; "
         "deepseek-ai/DualPipe). DualPipeV folds it into a V, 2p chunks on p GPUs: the "
         "same bubble in chunk times, no copy, m >= 2p (DualPipe README). Both hide the "
         "pipeline sends behind the paired chunk at the overlap efficiency, taken as "
         "F&B = F + B (no gain from the pairing itself, an assumption). Applies only with "
         "PP > 1.")
VIRTUAL_STAGES_PARAM = Param(
    "virtual_stages", "Virtual stages per GPU (interleaved)", "int", 2, minimum=1,
    maximum=64, when=When("schedule", ("interleaved",)),
    help="Model chunks per pipeline GPU for the interleaved schedule, v. Llama 3 405B "
         "ran 8 one-layer chunks per GPU on 16 stages (126 layers plus an embedding and "
         "an output chunk; Dubey et al. 2024, Sec. 3.3.2). Applies only with PP > 1.")
CP_METHOD_PARAM = Param(
    "cp_method", "Context-parallel method", "choice", "ring",
    choices=(Choice("ring", "ring (pass K, V blocks)"),
             Choice("allgather", "all-gather K, V (Llama 3)"),
             Choice("ulysses", "all-to-all over heads (Ulysses)")),
    help="Ring: each GPU passes its K, V block around the group, hidden behind attention "
         "(Liu et al. 2023; Megatron-Core's default). All-gather: K and V gathered before "
         "attention, exposed but small under GQA (Dubey et al. 2024, Sec. 3.3.2). "
         "Ulysses: four all-to-alls re-split sequence into heads (Jacobs et al. 2023); "
         "heads and KV heads per TP rank must divide by CP. Applies only with CP > 1.")
COMM_SMS_PARAM = Param(
    "comm_sms", "SMs reserved for communication", "int", None, unit="SM", minimum=0,
    maximum=256, optional=True, placeholder="20 under DualPipe(V), else 0",
    help="Streaming multiprocessors that run the communication kernels (alltoall "
         "dispatch and combine, pipeline sends) while the rest compute, as a schedule "
         "that overlaps communication with compute needs. DeepSeek-V3 reserves 20 of the "
         "H800's 132 for it (report, Sec. 3.2.1: 20 SMs in 10 channels; Sec. 3.5.1). "
         "Blank: 20 with DualPipe or DualPipeV (on a device of 80 compute units or "
         "fewer, 20/132 of them, at least 1), 0 otherwise. GEMMs and attention then "
         "run at (SMs - reserved)/SMs of their speed; memory-bound kernels keep theirs "
         "(assumption).",
    advanced=True)


def reserved_sms(inputs: Inputs, sms: int) -> int:
    """The SMs taken from compute (``COMM_SMS_PARAM``) on a GPU of ``sms``, or a
    ValidationError when that leaves none."""
    chosen = inputs["comm_sms"]
    if chosen is None:
        if inputs.text("schedule") not in DUAL_SCHEDULES:
            return 0
        # DeepSeek's 20 of the H800's 132; on a device with fewer compute units (a TPU's
        # cores), the same share of them, at least one.
        return DEEPSEEK_COMM_SMS if sms > 4 * DEEPSEEK_COMM_SMS else max(
            1, round(sms * DEEPSEEK_COMM_SMS / 132))
    reserved = int(chosen)
    if reserved >= sms:
        raise ValidationError("comm_sms", _(
            "{reserved} SMs reserved for communication leave none of this GPU's {sms} to "
            "compute").format(reserved=reserved, sms=sms))
    return reserved


def check_pipeline_for_schedule(inputs: Inputs, pp: int | None) -> None:
    """DualPipe and DualPipeV need a pipeline: a reader who fixes pp = 1 with either is
    told so (a search leaves such layouts out, planner.layout.Options.runs)."""
    if pp == 1 and inputs.text("schedule") in DUAL_SCHEDULES:
        raise ValidationError("pp", _("DualPipe and DualPipeV need a pipeline: fix pp at 2 "
                                      "or more, or leave it blank"))
