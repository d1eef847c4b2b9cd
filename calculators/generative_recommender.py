"""The ``generative_recommender`` calculator: an HSTU-class sequential recommender's
parameters, FLOPs and memory, its step on a cluster (formulas.sparse.generative_step),
the GPUs a deadline needs, and a DLRM with the same tables beside it."""

from __future__ import annotations

import math

from calculators.catalogues import hardware
from calculators.core import units
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output
from calculators.formulas.model.model_states import device_capacity_bytes
from calculators.formulas.sparse.embeddings import DTYPE_BYTES
from calculators.formulas.sparse.generative import attention_share, dlrm_flops_per_sample
from calculators.formulas.sparse.generative_step import (
    DENSE_STATE_BYTES,
    WIRE_BYTES,
    GenerativeJob,
    StepTime,
    best_step,
    smallest_for,
    why_none_fits,
)
from calculators.inputs import generative as gi
from calculators.inputs.machine import fabric_for, machine_for

DAY_S = 86_400.0
#: The largest cluster the deadline search tries.
MAX_GPUS = 65_536


def _job(inputs: Inputs) -> GenerativeJob:
    gpu = hardware.get(inputs.text("gpu"))
    node = gi.node_size(inputs)
    rows, dim, row = inputs.num("table_rows"), inputs.whole("table_dim"), gi.row_bytes(inputs)
    usable = device_capacity_bytes(gpu.memory_bytes) * (1.0 - inputs.num("gpu_reserve"))
    return GenerativeJob(
        model=gi.sequence_model(inputs), lengths=gi.lengths(inputs),
        negatives=gi.negatives(inputs), lookups_per_token=inputs.whole("lookups_per_token"),
        embedding_dim=dim, embedding_row_bytes=row, table_bytes=rows * row,
        global_batch=inputs.whole("gr_batch"),
        machine=machine_for(gpu.id), fabric=fabric_for(gpu.id, domain=node),
        gpus_per_node=node,
        memory_bytes=usable, overlap=inputs.num("overlap"),
        cache_bytes=gi.cache_bytes(inputs, usable))


def _layout(step: StepTime) -> str:
    said = (_("TP {tp:,} x DP {dp:,} = {gpus:,} GPUs, {micro} micro-batches")
            if step.micro_batches > 1 else _("TP {tp:,} x DP {dp:,} = {gpus:,} GPUs"))
    return said.format(tp=step.tp, dp=step.gpus // step.tp, gpus=step.gpus,
                       micro=step.micro_batches)


def _comparison(inputs: Inputs, job: GenerativeJob) -> Table:
    """Where the FLOPs and the bytes go: the generative model against a DLRM that reads
    the same rows and pools them into one vector per lookup kind."""
    counts, per_token = job.counts, job.lookups_per_token
    dlrm = dlrm_flops_per_sample(inputs.num("dlrm_dense_params"))
    rows = counts.lookups(per_token)
    gr_wire = rows * job.embedding_dim * WIRE_BYTES
    dlrm_wire = per_token * job.embedding_dim * WIRE_BYTES
    gr_flops = counts.training_flops
    read = rows * job.embedding_dim * DTYPE_BYTES[inputs.text("table_dtype")]

    def flops(v: float) -> str:
        return units.format_value(v, "FLOP", "sci")

    def size(v: float) -> str:
        return units.format_value(v, "B", "si")

    body = (
        (_("Training FLOPs per sample"), flops(gr_flops), flops(dlrm)),
        (_("Embedding rows read per sample"), f"{rows:,.0f}", f"{rows:,.0f}"),
        (_("Embedding bytes read per sample"), size(read), size(read)),
        (_("Alltoall bytes per sample, each way"), size(gr_wire), size(dlrm_wire)),
        (_("FLOPs per embedding byte read"), f"{gr_flops / read:,.1f}",
         f"{dlrm / read:,.3f}"),
        (_("Activations kept per sample"),
         size(counts.tokens * job.model.activation_bytes_per_token()), _("small")),
    )
    return Table(("", _("Generative recommender"), _("DLRM, same tables")), body,
                 _("The same tables, two models: the DLRM pools the history before the wire"))


def _generative_recommender(inputs: Inputs) -> Computed:
    job = _job(inputs)
    model, counts = job.model, job.counts
    gpus, tp = inputs.whole("num_gpus"), gi.fixed_tp(inputs)
    samples = inputs.num("training_samples")
    steps = samples / job.global_batch
    peak = job.machine.peak_bf16
    step = best_step(job, gpus, tp)
    warnings: list[str] = []
    notes: list[str] = [
        _("Step times use the guide's speed model (GEMM, attention and NCCL measurements, "
          "the Validation page); no public generative-recommender run reports enough of "
          "its layout to check them, so no error band is claimed.")]
    if step is None:
        said = (_("No layout fits {gpus:,} GPU: {why}.") if gpus == 1 else
                _("No layout fits {gpus:,} GPUs: {why}."))
        warnings.append(said.format(gpus=gpus, why=why_none_fits(job, gpus)))
    deadline_s = inputs.num("deadline_days") * DAY_S
    sized = smallest_for(job, deadline_s, node=job.gpus_per_node, largest=MAX_GPUS,
                         steps=steps, tp=tp)
    if sized is None:
        warnings.append(_(
            "No cluster of up to {most:,} GPUs meets the deadline of {days:g} days at a batch "
            "of {batch:,}: a larger batch spreads over more GPUs.").format(
            most=MAX_GPUS, days=inputs.num("deadline_days"), batch=job.global_batch))
    if inputs.whole("candidates") > 0 and inputs.whole("negatives") > 0:
        notes.append(_("A ranking model (with candidates) scores its candidates, not "
                       "sampled negatives: the negatives input is not used."))
    days = step.seconds * steps / DAY_S if step else None
    room = job.memory_bytes - model.params * DENSE_STATE_BYTES
    hold = math.ceil(job.table_bytes / room) if room > 0 else None
    lookups = counts.lookups(job.lookups_per_token)
    if job.cache_bytes is not None and step is not None:
        rate = job.global_batch / step.seconds / gpus
        notes.append(_(
            "The tables live below HBM: each GPU caches {cache} of hot rows and looks up "
            "{rows:,.3g} rows a second ({rate:,.0f} samples of {lookups:,.0f} lookups). "
            "Whether host memory and the SSDs serve the misses is embedding_tiers' question; "
            "its step time is not added here.").format(
            cache=units.format_value(job.cache_bytes, "B", "si"), rows=rate * lookups,
            rate=rate, lookups=lookups))
    elif sized is not None and hold is not None and sized.gpus <= 2 * hold and (
            sized.seconds * steps < 0.75 * deadline_s):
        notes.append(_(
            "The tables set the cluster's size here, not the deadline: {hold:,} GPUs are the "
            "fewest whose memory holds them beside the dense states, and the cluster found "
            "finishes well before the deadline. Tables in host memory or on SSD "
            "(embedding_tiers) would let fewer GPUs train it.").format(hold=hold))
    return Computed(
        values={
            "dense_params": float(model.params),
            "embedding_params": inputs.num("table_rows") * job.embedding_dim,
            "table_bytes": job.table_bytes,
            "flops_per_sample": counts.training_flops,
            "attention_share": attention_share(counts),
            "training_flops": samples * counts.training_flops,
            "dlrm_flops_ratio": counts.training_flops / max(
                dlrm_flops_per_sample(inputs.num("dlrm_dense_params")), 1.0),
            "layout": _layout(step) if step else _("none fits"),
            "step_time": step.seconds if step else None,
            "mfu": step.mfu(peak) if step else None,
            "samples_per_second": job.global_batch / step.seconds if step else None,
            "memory_per_gpu": step.memory_per_gpu if step else None,
            "training_days": days,
            "gpus_for_deadline": sized.gpus if sized else None,
            "gpus_to_hold_tables": hold if job.cache_bytes is None else None,
            "days_at_that_size": sized.seconds * steps / DAY_S if sized else None,
            "gemm_time": step.gemm_s if step else None,
            "attention_time": step.attention_s if step else None,
            "memory_bound_time": (step.memory_bound_s + step.embedding_s
                                  + step.optimizer_s) if step else None,
            "comm_time": (step.tp_comm_s + step.alltoall_s + step.allreduce_s)
            if step else None,
        },
        warnings=warnings, notes=notes, table=_comparison(inputs, job))


GENERATIVE_RECOMMENDER = Calculator(
    id="generative_recommender",
    headline=("gpus_for_deadline", "training_days", "mfu"),
    title="Generative recommender: FLOPs, step time and GPUs",
    summary="An HSTU-class sequential recommender: parameters, FLOPs per sample, its "
            "training step on a cluster, the GPUs a deadline needs, and a DLRM beside it.",
    chapter="sparse.md",
    params=(*gi.MODEL_PARAMS, *gi.TRAINING_PARAMS),
    outputs=(
        Output("gpus_for_deadline", "GPUs for the deadline", "GPU", "count",
               help="The smallest cluster searched (whole nodes) that trains the samples "
                    "in time, at the fastest tensor parallelism that fits."),
        Output("days_at_that_size", "Days on that cluster", "days", "fixed"),
        Output("gpus_to_hold_tables", "GPUs to hold the tables in HBM", "GPU", "count",
               help="The tables with their optimizer state over each GPU's usable memory "
                    "less the dense states (activations need more)."),
        Output("training_days", "Days on the GPUs given", "days", "fixed"),
        Output("mfu", "MFU", "1", "percent",
               help="Model FLOPs (6 per dense weight and token, attention 3.5x its "
                    "forward) over the GPUs' dense BF16 peak."),
        Output("step_time", "Step time", "s", "fixed"),
        Output("layout", "Layout", "", "text"),
        Output("samples_per_second", "Samples per second", "sample/s", "count"),
        Output("memory_per_gpu", "Memory per GPU", "B", "si"),
        Output("dense_params", "Sequence-layer parameters", "param", "count"),
        Output("embedding_params", "Embedding parameters", "param", "count"),
        Output("table_bytes", "Tables with optimizer state", "B", "si"),
        Output("flops_per_sample", "Training FLOPs per sample", "FLOP", "sci"),
        Output("attention_share", "Share of FLOPs in attention", "1", "percent"),
        Output("training_flops", "Training compute", "FLOP", "sci"),
        Output("dlrm_flops_ratio", "FLOPs per sample over the DLRM's", "x", "fixed"),
        Output("gemm_time", "Step: linear layers", "s", "fixed"),
        Output("attention_time", "Step: attention", "s", "fixed"),
        Output("memory_bound_time", "Step: memory-bound passes and lookups", "s", "fixed"),
        Output("comm_time", "Step: exposed communication", "s", "fixed"),
    ),
    function=_generative_recommender,
    sources=(
        "Zhai et al. 2024, Actions Speak Louder than Words (HSTU), arXiv:2402.17152, "
        "Sec. 3 and abstract",
        "facebookresearch/generative-recommenders: research/modeling/sequential/hstu.py, "
        "modules/stu.py, dlrm_v3/configs.py, configs/*/*.gin",
        "Naumov et al. 2019, DLRM (arXiv:1906.00091), Sec. 3: hybrid parallelism",
        "Korthikanti et al. 2022, Sec. 4.1: activation bytes of a transformer layer",
        "Dao 2023, FlashAttention-2, Sec. 4.1: attention FLOPs and backward",
    ),
)
