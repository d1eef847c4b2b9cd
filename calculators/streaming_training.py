"""The ``streaming_training`` calculator: does a parameter server or collective training
keep up with a stream of fresh samples, how stale and how fresh is the model, and what
do the syncs to serving and the checkpoints of the changed rows cost."""

from __future__ import annotations

import math
from dataclasses import replace

from calculators.catalogues import hardware
from calculators.catalogues.embedding_tables import MAX_DIM
from calculators.core import units
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output, Param, ValidationError
from calculators.formulas.sparse import checkpoints as ckpt
from calculators.formulas.sparse import streaming as st
from calculators.formulas.sparse.embeddings import shard_bytes
from calculators.formulas.sparse.sharding import COMM_BYTES
from calculators.formulas.sparse.step import MAX_SERVERS, MAX_TABLE_BYTES, Job
from calculators.inputs.embeddings import (
    gpu_params,
    host_usable_bytes,
    network_from_inputs,
    network_params,
    table_params,
    usable_gpu_bytes,
)
from calculators.inputs.sparse_step import SPARSE_STEP_PARAMS
from calculators.inputs.streaming import (
    CHECKPOINT_PARAMS,
    COMPUTE_PARAMS,
    FRESHNESS_PARAMS,
    STREAM_PARAMS,
)

_OPTIMIZER = next(p for p in table_params() if p.name == "optimizer")
_DENSE_ON_PS = replace(
    SPARSE_STEP_PARAMS["dense_on_ps"], default=False,
    help="Off: PERSIA's hybrid, the workers allreduce the dense part (Lian et al. 2022). "
         "On: the classic PS, every worker pulls and pushes the dense weights.")


def _job(inputs: Inputs) -> Job:
    workers = inputs.whole("num_workers")
    if inputs.whole("batch_size") < workers:
        raise ValidationError("batch_size", _(
            "a global batch of {batch:,} gives {workers:,} workers less than one sample "
            "each").format(batch=inputs.whole("batch_size"), workers=workers))
    if inputs.num("dense_params") == 0:
        raise ValidationError("dense_params", _(
            "0 is not allowed here: compute per sample is 6 FLOP per dense parameter, and a "
            "step with none takes no time"))
    return Job(
        batch=float(inputs.whole("batch_size")), features=inputs.whole("num_sparse_features"),
        pooling=inputs.num("pooling_factor"), unique=inputs.num("unique_ratio"),
        dim=inputs.whole("embedding_dim"), value_bytes=COMM_BYTES[inputs.text("dtype")],
        dense_params=inputs.num("dense_params"), workers=workers,
        servers=inputs.whole("num_ps_servers"), server_nic=inputs.num("server_nic_bandwidth"),
        dense_on_ps=inputs.flag("dense_on_ps"), net=network_from_inputs(inputs))


def _per_sample_s(inputs: Inputs) -> float:
    peak = hardware.get(inputs.text("gpu")).peak_bf16_flops
    return st.compute_time_per_sample(inputs.num("dense_params"), peak,
                                      inputs.num("dense_mfu"))


def _count(value: int | None) -> str:
    return _("never (up to 1,000,000)") if value is None else f"{value:,}"


def _verdict_table(s: st.Sizing, *, ps_stale: tuple[float, float], sync: ckpt.Sync,
                   host_memory: float) -> Table:
    fmt = units.format_value
    coll_w, keep_up = s.collective_workers, s.collective_keep_up
    extra_gpus = 0 if keep_up is None else max(0, s.min_gpus - keep_up)
    fewer = (_("neither") if coll_w is None and s.ps_workers is None else
             "PS" if coll_w is None or (s.ps_workers is not None and s.ps_workers < coll_w)
             else _("collective"))
    sparse = fmt(sync.sparse_bytes, "B", "si")
    rows = (
        (_("tables + optimizer state fit in"),
         _("{hosts:,} hosts' DRAM ({servers:,} servers when sized)").format(
             hosts=s.min_hosts, servers=s.ps_servers),
         _("{gpus:,} GPUs' HBM (throughput alone: {alone})").format(
             gpus=s.min_gpus, alone=_count(keep_up)),
         "PS" if extra_gpus > 0 else _("either")),
        (_("workers to keep up with the peak"),
         _("{workers} GPUs + {servers:,} servers").format(
             workers=_count(s.ps_workers), servers=s.ps_servers),
         _("{workers} GPUs").format(workers=_count(coll_w)), fewer),
        (_("staleness of a sparse update"),
         _("{updates:,.0f} updates, {seconds}").format(
             updates=ps_stale[0], seconds=fmt(ps_stale[1], "s", "si")),
         _("0 (synchronous); the slowest worker sets the pace"),
         _("collective") if ps_stale[0] > 0 else _("either")),
        (_("changed rows to serving per sync"),
         _("{bytes} read from the servers").format(bytes=sparse),
         _("{bytes} gathered from the GPUs").format(bytes=sparse), _("same bytes")),
        (_("memory bought for the tables"),
         _("{hosts:,} x {memory} of host DRAM").format(
             hosts=s.min_hosts, memory=fmt(host_memory, "B", "si")),
         _("{gpus:,} GPUs beyond those that keep up").format(gpus=extra_gpus),
         "PS" if extra_gpus > 0 else _("either")),
    )
    return Table((_("question"), _("parameter server"), _("collective"), _("favours")), rows,
                 caption=_("Each row computed for this workload. The recommendation: a mode "
                           "that cannot keep up is out; of two that can, fewer GPUs wins, the "
                           "collective on a tie. Servers and staleness are the PS's price."))


def _streaming_training(inputs: Inputs) -> Computed:
    job = _job(inputs)
    per_sample = _per_sample_s(inputs)
    overlap, asynchronous = inputs.flag("overlap"), inputs.flag("asynchronous")
    mean_rate = inputs.num("events_per_s") * inputs.num("passes")
    peak_rate = mean_rate * inputs.num("peak_to_mean")
    table_bytes = inputs.num("embedding_bytes")
    min_gpus = max(1, math.ceil(table_bytes / usable_gpu_bytes(inputs)))
    min_hosts = max(1, math.ceil(table_bytes / host_usable_bytes(inputs)))
    now = {m: st.throughput(job, m, per_sample, overlap=overlap) for m in st.MODES}
    ps_w = st.workers_to_keep_up(job, "ps", per_sample, peak_rate, overlap=overlap,
                                 min_servers=min_hosts)
    keep_up = st.workers_to_keep_up(job, "collective", per_sample, peak_rate, overlap=overlap)
    coll_w = None if keep_up is None else st.workers_to_keep_up(
        job, "collective", per_sample, peak_rate, overlap=overlap,
        at_least=max(keep_up, min_gpus))
    ps_job = st.scaled(job, ps_w or job.workers, "ps", min_hosts)
    sizing = st.Sizing(ps_w, ps_job.servers, keep_up, coll_w, min_gpus, min_hosts)
    ps_sized = st.throughput(ps_job, "ps", per_sample, overlap=overlap)
    stale = (st.staleness_updates(ps_sized.workers, asynchronous=asynchronous),
             st.staleness_seconds(ps_sized.workers, ps_sized.step_s,
                                  asynchronous=asynchronous))
    mode, reason = st.recommend_streaming(sizing, ps_staleness=stale[0])

    # What changes: rows touched per sync and per checkpoint interval.
    dim, optimizer = job.dim, inputs.text("optimizer")
    live_rows = max(1.0, table_bytes / shard_bytes(1, dim, "fp32", optimizer))
    lookups_per_s = mean_rate * job.features * job.pooling
    exponent = inputs.num("zipf_exponent")
    sync_s = inputs.num("sparse_sync_interval")
    sync = ckpt.sync_to_serving(
        rows=ckpt.rows_touched(live_rows, exponent, lookups_per_s * sync_s), dim=dim,
        dtype=inputs.text("serving_dtype"), interval_s=sync_s,
        dense_params=job.dense_params, link_bandwidth=inputs.num("sync_link_bandwidth"))
    interval = inputs.num("checkpoint_interval")
    plan = ckpt.checkpoint_plan(
        live_rows=live_rows, rows_modified=ckpt.rows_touched(live_rows, exponent,
                                                             lookups_per_s * interval),
        dim=dim, optimizer=optimizer, bits=inputs.whole("checkpoint_bits"),
        qparam_bytes=inputs.num("qparam_bytes"), dense_params=job.dense_params,
        interval_s=interval, full_every=inputs.whole("full_every"),
        storage_bandwidth=inputs.num("storage_bandwidth"))

    sized_workers = {"ps": ps_w, "collective": coll_w}.get(mode)
    fresh = None
    if sized_workers is not None:
        sized = st.throughput(st.scaled(job, sized_workers, mode, min_hosts), mode,
                              per_sample, overlap=overlap)
        fresh = st.freshness(ingest_s=inputs.num("ingest_delay"),
                             global_batch=job.batch / job.workers * sized_workers,
                             mean_rate=mean_rate, step_s=sized.step_s,
                             sync_interval_s=sync_s, sync_transfer_s=sync.transfer_s)
    warnings: list[str] = []
    if sync.link_load > 1:
        warnings.append(_("The changed rows take longer to ship than the sync interval: the "
                          "serving copy falls further behind at every sync."))
    if plan.incremental_write_s > interval:
        warnings.append(_("An incremental checkpoint takes longer to write than the interval "
                          "between checkpoints."))
    if now["ps"].samples_per_s < mean_rate:
        warnings.append(_("As configured, the PS job falls behind even the mean stream: its "
                          "backlog grows without bound."))
    if now["collective"].samples_per_s < mean_rate:
        warnings.append(_("As configured, the collective job falls behind even the mean "
                          "stream: its backlog grows without bound."))
    return Computed(
        values={
            "recommended_mode": mode,
            "recommendation": reason,
            "ps_workers_needed": ps_w,
            "ps_servers_needed": ps_job.servers if ps_w is not None else None,
            "collective_workers_needed": coll_w,
            "freshness_to_serving_s": None if fresh is None else fresh.serving_s,
            "freshness_trained_s": None if fresh is None else fresh.trained_s,
            "peak_samples_per_s": peak_rate,
            "compute_time_per_step_s": now["ps"].compute_s,
            "ps_step_time_s": now["ps"].step_s,
            "collective_step_time_s": now["collective"].step_s,
            "ps_samples_per_s": now["ps"].samples_per_s,
            "collective_samples_per_s": now["collective"].samples_per_s,
            "ps_headroom": now["ps"].samples_per_s / peak_rate,
            "collective_headroom": now["collective"].samples_per_s / peak_rate,
            "ps_staleness_updates": stale[0],
            "ps_staleness_s": stale[1],
            "collective_min_gpus_memory": min_gpus,
            "ps_min_hosts_memory": min_hosts,
            "live_rows": live_rows,
            "sync_rows": sync.rows,
            "sync_bytes": sync.sparse_bytes,
            "sync_bandwidth": sync.average_bandwidth,
            "sync_transfer_time_s": sync.transfer_s,
            "sync_link_load": sync.link_load,
            "dense_sync_bytes": sync.dense_bytes,
            "dense_sync_bandwidth": sync.dense_bytes / inputs.num("dense_sync_interval"),
            "checkpoint_rows": plan.rows_modified,
            "checkpoint_full_bytes": plan.full_bytes,
            "checkpoint_incremental_bytes": plan.incremental_bytes,
            "checkpoint_reduction": plan.reduction,
            "checkpoint_row_quantisation_ratio": ckpt.quantisation_ratio(
                dim, inputs.whole("checkpoint_bits"), inputs.num("qparam_bytes")),
            "checkpoint_write_time_s": plan.incremental_write_s,
            "checkpoint_write_bandwidth": plan.incremental_bytes / interval,
            "checkpoint_average_bandwidth": plan.average_bandwidth,
            "checkpoint_bandwidth_reduction": plan.bandwidth_reduction,
        },
        warnings=warnings,
        notes=[_("Workers added at a fixed local batch (the global batch grows with them); "
                 "compute is the dense part at 6 FLOP per parameter per sample; compute and "
                 "communication overlap (the larger sets the step).") if overlap else
               _("Workers added at a fixed local batch (the global batch grows with them); "
                 "compute is the dense part at 6 FLOP per parameter per sample; compute and "
                 "communication add."),
               _("Distinct rows: all tables as one Zipf-distributed ID space.")],
        table=_verdict_table(sizing, ps_stale=stale, sync=sync,
                             host_memory=inputs.num("host_memory")),
    )


def _out(name: str, label: str, unit: str = "", fmt: units.Format = "si",
         help: str = "") -> Output:
    return Output(name, label, unit, fmt, help)


STREAMING_TRAINING = Calculator(
    id="streaming_training",
    headline=("recommended_mode", "ps_workers_needed", "collective_workers_needed",
              "freshness_to_serving_s"),
    title="Streaming training: keeping up with the log, staleness, sync to serving, "
          "incremental checkpoints; parameter server or collective",
    summary="Workers each mode needs to keep up with a stream of samples, staleness, "
            "freshness, the rows shipped to serving and Check-N-Run checkpoints.",
    chapter="sparse.md",
    params=(
        *STREAM_PARAMS,
        *(SPARSE_STEP_PARAMS[n] for n in ("batch_size", "num_sparse_features",
                                          "pooling_factor", "unique_ratio")),
        Param("embedding_dim", "Embedding dimension", "int", 128, minimum=1,
              maximum=MAX_DIM),
        SPARSE_STEP_PARAMS["dtype"],
        SPARSE_STEP_PARAMS["dense_params"],
        Param("num_workers", "Workers (GPUs) as configured", "int", 64, unit="GPU",
              minimum=1, maximum=st.MAX_WORKERS,
              help="Their local batch (global batch / workers) is kept when the search "
                   "adds workers."),
        Param("num_ps_servers", "PS servers", "int", 16, unit="server", minimum=1,
              maximum=MAX_SERVERS),
        SPARSE_STEP_PARAMS["server_nic_bandwidth"],
        _DENSE_ON_PS,
        *COMPUTE_PARAMS,
        Param("embedding_bytes", "Tables + optimizer state", "float", 2e12, unit="B",
              minimum=1, maximum=MAX_TABLE_BYTES,
              help="From embedding_memory; 2 TB is an assumption. With the dimension and "
                   "optimizer it gives the live rows (fp32 weights)."),
        _OPTIMIZER,
        *gpu_params(),
        SPARSE_STEP_PARAMS["host_memory"],
        SPARSE_STEP_PARAMS["host_reserve"],
        *FRESHNESS_PARAMS,
        *CHECKPOINT_PARAMS,
        *network_params(),
    ),
    outputs=(
        _out("recommended_mode", "Recommended", fmt="text"),
        _out("recommendation", "Why", fmt="text"),
        _out("ps_workers_needed", "PS: workers to keep up with the peak", "GPU", "count"),
        _out("ps_servers_needed", "PS: servers at that size", "server", "count",
             help="The configured servers per worker, and at least the hosts that hold "
                  "the tables."),
        _out("collective_workers_needed", "Collective: GPUs to keep up (and hold the tables)",
             "GPU", "count"),
        _out("freshness_to_serving_s", "Event to serving model (recommended mode)", "s"),
        _out("freshness_trained_s", "Event to trained model (recommended mode)", "s"),
        _out("peak_samples_per_s", "Peak samples to train", "sample/s"),
        _out("compute_time_per_step_s", "Compute per step (as configured)", "s"),
        _out("ps_step_time_s", "PS: step as configured", "s"),
        _out("collective_step_time_s", "Collective: step as configured", "s"),
        _out("ps_samples_per_s", "PS: samples/s as configured", "sample/s"),
        _out("collective_samples_per_s", "Collective: samples/s as configured", "sample/s"),
        _out("ps_headroom", "PS: sustained / peak", fmt="fixed"),
        _out("collective_headroom", "Collective: sustained / peak", fmt="fixed"),
        _out("ps_staleness_updates", "PS: staleness (updates)", fmt="count",
             help="At the workers needed to keep up: W - 1 when asynchronous."),
        _out("ps_staleness_s", "PS: staleness (seconds)", "s"),
        _out("collective_min_gpus_memory", "Collective: GPUs to hold the tables", "GPU",
             "count"),
        _out("ps_min_hosts_memory", "PS: hosts to hold the tables", "server", "count"),
        _out("live_rows", "Live rows", "row", "count"),
        _out("sync_rows", "Rows changed per sparse sync", "row", "count"),
        _out("sync_bytes", "Bytes per sparse sync", "B"),
        _out("sync_bandwidth", "Sparse sync, averaged", "B/s"),
        _out("sync_transfer_time_s", "Time to ship one sparse sync", "s"),
        _out("sync_link_load", "Ship time / sync interval", fmt="fixed"),
        _out("dense_sync_bytes", "Bytes per dense sync", "B"),
        _out("dense_sync_bandwidth", "Dense sync, averaged", "B/s"),
        _out("checkpoint_rows", "Rows modified per checkpoint interval", "row", "count"),
        _out("checkpoint_full_bytes", "Full checkpoint (fp32 + optimizer)", "B"),
        _out("checkpoint_incremental_bytes", "Incremental checkpoint", "B"),
        _out("checkpoint_reduction", "Full / incremental", fmt="fixed"),
        _out("checkpoint_row_quantisation_ratio", "fp32 row / quantised row", fmt="fixed"),
        _out("checkpoint_write_time_s", "Time to write an increment", "s"),
        _out("checkpoint_write_bandwidth", "Increment bytes / interval", "B/s"),
        _out("checkpoint_average_bandwidth", "Average write rate over a cycle", "B/s"),
        _out("checkpoint_bandwidth_reduction", "Full every interval / cycle", fmt="fixed"),
    ),
    function=_streaming_training,
    sources=(
        "Liu et al. 2022, Monolith (arXiv:2209.07663), Sec. 2: online training, "
        "parameter sync",
        "Lian et al. 2022, PERSIA (KDD, arXiv:2111.05897): hybrid synchronous dense, "
        "asynchronous sparse",
        "Lian et al. 2015, Asynchronous Parallel Stochastic Gradient for Nonconvex "
        "Optimization (NeurIPS): staleness bounded by the workers",
        "Eisenman et al. 2022, Check-N-Run (NSDI): incremental, quantised checkpoints",
        "Breslau et al. 1999 (Zipf popularity), via calculators.formulas.sparse.zipf",
        "OneRec technical report (arXiv:2506.13695): training MFU of ranking models",
        "Naumov et al. 2019, DLRM; step model of calculators.formulas.sparse.step",
    ),
)
