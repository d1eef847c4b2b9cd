"""The ``sparse_training`` calculator: one step of a DLRM-style model, parameter server
against collective, with the assumptions in formulas.sparse.step."""

from __future__ import annotations

import math
from dataclasses import replace

from calculators.catalogues.embedding_tables import MAX_DIM
from calculators.core import charts, units
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output, Param
from calculators.formulas.sparse.sharding import COMM_BYTES
from calculators.formulas.sparse.step import (
    MAX_SERVERS,
    MAX_TABLE_BYTES,
    Job,
    StepComparison,
    collective_step,
    compare_step,
    ps_step,
)
from calculators.inputs.embeddings import (
    gpu_params,
    host_usable_bytes,
    network_from_inputs,
    network_params,
    usable_gpu_bytes,
)
from calculators.inputs.sparse_step import (
    BATCH_SIZE_PARAM,
    DENSE_ON_PS_PARAM,
    DENSE_PARAMS_PARAM,
    DTYPE_PARAM,
    HOST_MEMORY_PARAM,
    HOST_RESERVE_PARAM,
    NUM_SPARSE_FEATURES_PARAM,
    POOLING_FACTOR_PARAM,
    SERVER_NIC_BANDWIDTH_PARAM,
    UNIQUE_RATIO_PARAM,
)


def _job(inputs: Inputs) -> Job:
    return Job(
        batch=float(inputs.whole("batch_size")), features=inputs.whole("num_sparse_features"),
        pooling=inputs.num("pooling_factor"), unique=inputs.num("unique_ratio"),
        dim=inputs.whole("embedding_dim"), value_bytes=COMM_BYTES[inputs.text("dtype")],
        dense_params=inputs.num("dense_params"), workers=inputs.whole("num_workers"),
        servers=inputs.whole("num_ps_servers"), server_nic=inputs.num("server_nic_bandwidth"),
        dense_on_ps=inputs.flag("dense_on_ps"), net=network_from_inputs(inputs))


def _chart(job: Job) -> str:
    top = max(2, min(int(job.batch), job.workers * 64))
    counts = sorted({2 ** k for k in range(1, 31) if 2 ** k <= top} | {job.workers})
    # One worker has no collective communication at all: nothing to draw on a log axis.
    counts = [c for c in counts if c >= 2 and c * 64 >= job.workers]
    ps_points, coll_points = [], []
    for w in counts:
        trial = replace(job, workers=w)
        ps_points.append((float(w), ps_step(trial).time_s))
        coll_points.append((float(w), math.fsum(c.time_s for c in collective_step(trial))))
    return charts.line_chart(
        _("Communication per step against workers ({servers:,} PS servers, global batch "
          "{batch:,})").format(servers=job.servers, batch=int(job.batch)),
        [charts.Series(_("parameter server"), tuple(ps_points)),
         charts.Series(_("collective (alltoall + allreduce)"), tuple(coll_points))],
        _("workers (GPUs)"), _("seconds per step"), log_x=True, log_y=True,
        markers=(charts.Marker(float(job.workers), _("this job")),))


def _ratio(ps_s: float, coll_s: float) -> str:
    """Which side is faster, and by how much, in words."""
    if ps_s == coll_s:
        return _("equal")
    if coll_s == 0 or ps_s == 0:
        return _("collective") if coll_s == 0 else "PS"
    if coll_s < ps_s:
        return _("collective {ratio:.2g}x faster").format(ratio=ps_s / coll_s)
    return _("PS {ratio:.2g}x faster").format(ratio=coll_s / ps_s)


def _comparisons(step: StepComparison) -> Table:
    """The step as configured, and with the PS at the collective's bandwidth."""
    job, fmt = step.job, units.format_value
    coll = step.collective_time_s

    def row(name: str, servers: int, port: float, dense_on_ps: bool,
            ps_s: float) -> tuple[str, ...]:
        return (name, f"{servers:,} x {fmt(port, 'B/s', 'si')}",
                _("pulled and pushed by every worker") if dense_on_ps else _("allreduced"),
                fmt(ps_s, "s", "si"), fmt(coll, "s", "si"), _ratio(ps_s, coll))

    return Table(
        (_("comparison"), _("PS servers x port"), _("dense part on the PS side"),
         _("PS per step"), _("collective per step"), _("faster")),
        (row(_("as configured"), job.servers, job.server_nic, job.dense_on_ps, step.ps.time_s),
         row(_("matched bandwidth"), job.workers, job.net.nic, False, step.matched.time_s)),
        caption=_("Matched bandwidth: one PS server per worker, each with a worker's NIC, "
                  "and the dense part allreduced as the collective does; the gap left is "
                  "distinct rows against pooled vectors on the wire."))


def _sparse_training(inputs: Inputs) -> Computed:
    job = _job(inputs)
    step = compare_step(job, table_bytes=inputs.num("embedding_bytes"),
                        gpu_usable=usable_gpu_bytes(inputs),
                        host_usable=host_usable_bytes(inputs),
                        target_s=inputs.num("target_step_time"),
                        asynchronous=inputs.flag("asynchronous"))
    ps, alltoall, allreduce = step.ps, step.alltoall, step.allreduce
    needed, min_gpus, min_hosts = step.servers_needed, step.min_gpus, step.min_hosts
    coll_time = step.collective_time_s
    warnings: list[str] = []
    if needed is None:
        warnings.append(_("No number of PS servers meets the target step time: the "
                          "workers' own NICs take longer than that."))
    return Computed(
        values={
            "ps_pull_bytes_per_worker": ps.pull_bytes,
            "ps_push_bytes_per_worker": ps.push_bytes,
            "ps_server_ingress_bytes": ps.server_ingress,
            "ps_server_egress_bytes": ps.server_egress,
            "ps_fan_in": ps.fan_in,
            "ps_incast_ratio": ps.fan_in * job.net.nic / job.server_nic,
            "ps_step_comm_time_s": ps.time_s,
            "ps_matched_step_comm_time_s": step.matched.time_s,
            "ps_servers_needed": needed,
            "ps_min_hosts_memory": min_hosts,
            "collective_alltoall_bytes_per_gpu": alltoall.bytes_sent_per_rank,
            "collective_allreduce_bytes_per_gpu": allreduce.bytes_sent_per_rank,
            "collective_step_comm_time_s": coll_time,
            "collective_min_gpus_memory": min_gpus,
            "recommended_mode": step.mode,
            "recommendation": step.reason,
        },
        warnings=warnings,
        notes=[_("Communication only, no overlap with compute; PS servers at full line rate "
                 "(incast losses would slow them further).")],
        table=_comparisons(step),
        chart=_chart(job),
    )



SPARSE_TRAINING = Calculator(
    id="sparse_training",
    headline=("recommended_mode", "ps_step_comm_time_s", "collective_step_comm_time_s"),
    title="Parameter server or collective: one sparse training step",
    summary="Per-step traffic and communication time of PS and collective (DLRM hybrid) training.",
    chapter="sparse.md",
    params=(
        BATCH_SIZE_PARAM,
        NUM_SPARSE_FEATURES_PARAM,
        POOLING_FACTOR_PARAM,
        UNIQUE_RATIO_PARAM,
        Param("embedding_dim", "Embedding dimension", "int", 128, minimum=1,
              maximum=MAX_DIM),
        DTYPE_PARAM,
        DENSE_PARAMS_PARAM,
        Param("num_workers", "Workers (GPUs)", "int", 64, unit="GPU", minimum=1,
              maximum=1_000_000),
        Param("num_ps_servers", "PS servers", "int", 16, unit="server", minimum=1,
              maximum=MAX_SERVERS),
        SERVER_NIC_BANDWIDTH_PARAM,
        DENSE_ON_PS_PARAM,
        Param("asynchronous", "Asynchronous training", "bool", False,
              help="Workers never wait for each other. A PS applies updates as they "
                   "arrive; a collective needs every member of its group at once. "
                   "Asynchronous decentralised schemes exist (AD-PSGD, Lian et al. 2018) "
                   "but are not modelled: on, the calculator recommends the PS."),
        Param("embedding_bytes", "Tables + optimizer state", "float", 2e12, unit="B",
              minimum=1, maximum=MAX_TABLE_BYTES,
              help="From embedding_memory; 2 TB is an assumption."),
        *gpu_params(),
        HOST_MEMORY_PARAM,
        HOST_RESERVE_PARAM,
        Param("target_step_time", "Target communication time per step", "float", 0.1,
              unit="s", minimum=1e-6, maximum=1e4,
              help="For the number of PS servers needed."),
        *network_params(),
    ),
    outputs=(
        Output("ps_pull_bytes_per_worker", "PS: pulled per worker", "B", "si"),
        Output("ps_push_bytes_per_worker", "PS: pushed per worker (IDs + gradients)", "B", "si"),
        Output("ps_server_ingress_bytes", "PS: into each server", "B", "si"),
        Output("ps_server_egress_bytes", "PS: out of each server", "B", "si"),
        Output("ps_fan_in", "PS: workers sending to one server", "", "count"),
        Output("ps_incast_ratio", "PS: offered load / server port", "", "fixed"),
        Output("ps_step_comm_time_s", "PS: communication per step", "s", "si"),
        Output("ps_matched_step_comm_time_s", "PS at matched bandwidth: per step", "s", "si",
               help="One server per worker, each with a worker's NIC, dense part "
                    "allreduced: the like-for-like comparison with the collective."),
        Output("ps_servers_needed", "PS: servers for the target", "server", "count"),
        Output("ps_min_hosts_memory", "PS: hosts to hold the tables", "server", "count"),
        Output("collective_alltoall_bytes_per_gpu", "Collective: alltoall sent per GPU", "B",
               "si"),
        Output("collective_allreduce_bytes_per_gpu", "Collective: allreduce sent per GPU",
               "B", "si"),
        Output("collective_step_comm_time_s", "Collective: communication per step", "s", "si"),
        Output("collective_min_gpus_memory", "Collective: GPUs to hold the tables", "GPU",
               "count"),
        Output("recommended_mode", "Recommended", "", "text"),
        Output("recommendation", "Why", "", "text"),
    ),
    function=_sparse_training,
    sources=(
        "Naumov et al. 2019, DLRM (arXiv:1906.00091), Sec. 3",
        "Li et al. 2014, Scaling Distributed Machine Learning with the Parameter Server (OSDI)",
        "Lian et al. 2022, PERSIA (KDD): hybrid PS for 100-trillion-parameter models",
        "Lian et al. 2018, Asynchronous Decentralized Parallel SGD (ICML)",
        "Mudigere et al. 2022, ZionEX/Neo (ISCA): 12-trillion-parameter models, alltoall",
        "Thakur, Rabenseifner, Gropp 2005 (collective costs), via "
        "calculators.formulas.collectives.costs",
    ),
)
