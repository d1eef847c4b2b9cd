"""Parallel-layout inputs shared by ``model_memory`` and the planner: the pipeline
schedule, its virtual stages and the context-parallel method, each with its source."""

from __future__ import annotations

from calculators.core.spec import Choice, Param

SCHEDULE_PARAM = Param(
    "schedule", "Pipeline schedule", "choice", "1f1b",
    choices=(Choice("1f1b", "1F1B"), Choice("interleaved", "interleaved 1F1B"),
             Choice("zb_h1", "zero bubble ZB-H1"), Choice("zb_h2", "zero bubble ZB-H2")),
    help="1F1B: bubble (p-1)/m, p micro-batches in flight (Narayanan et al. 2021, Sec. "
         "2.2.1). Interleaved: v chunks per GPU, bubble (p-1)/(v m), v times the "
         "pipeline sends, about p + (p-1)/v in flight; m a multiple of p (Sec. 2.2.2). "
         "ZB-H1 and ZB-H2 split the backward into input and weight passes: a third of "
         "1F1B's bubble at 1F1B's memory, or none at twice the micro-batches in flight "
         "(Qi et al. 2024, Sec. 2, passes of equal length).")
VIRTUAL_STAGES_PARAM = Param(
    "virtual_stages", "Virtual stages per GPU (interleaved)", "int", 2, minimum=1,
    maximum=64,
    help="Model chunks per pipeline GPU for the interleaved schedule, v. Llama 3 405B "
         "ran 8 one-layer chunks per GPU on 16 stages (126 layers plus an embedding and "
         "an output chunk; Dubey et al. 2024, Sec. 3.3.2).")
CP_METHOD_PARAM = Param(
    "cp_method", "Context-parallel method", "choice", "ring",
    choices=(Choice("ring", "ring (pass K, V blocks)"),
             Choice("allgather", "all-gather K, V (Llama 3)"),
             Choice("ulysses", "all-to-all over heads (Ulysses)")),
    help="Ring: each GPU passes its K, V block around the group, hidden behind attention "
         "(Liu et al. 2023; Megatron-Core's default). All-gather: K and V gathered before "
         "attention, exposed but small under GQA (Dubey et al. 2024, Sec. 3.3.2). "
         "Ulysses: four all-to-alls re-split sequence into heads (Jacobs et al. 2023); "
         "heads and KV heads per TP rank must divide by CP.")
