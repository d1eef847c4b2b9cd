"""One training step of a DLRM-style model, parameter server (PS) against collective.

A first-order model with its assumptions in the open (each is an input or stated here):

- PS: keys are hashed uniformly over the servers. Each worker sends the IDs it looks up
  (after de-duplication within its own batch), pulls those rows, and pushes their
  gradients; with ``dense_on_ps`` it also pulls the dense weights and pushes their
  gradients (the classic PS), otherwise the dense part is allreduced among the workers
  (the hybrid of PERSIA, Lian et al. 2022). A phase lasts as long as its slower side: a
  worker's NIC or a server's NIC, each at full rate (incast losses are not modelled).
- Collective: DLRM's hybrid (Naumov et al. 2019, Sec. 3): tables placed table-wise on
  the GPUs, an alltoall of IDs, an alltoall of pooled embeddings forward and of their
  gradients backward, a ring allreduce of the dense gradients; costs from
  ``calculators.comm``. Collectives run one after another, with no overlap with compute.
Both: the same wire precision, batch, features and pooling; compute time is not counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from calculators import charts, comm, embeddings, hardware, tables, units
from calculators.sharding import COMM_BYTES, INDEX_BYTES, Network, network_params, step_comm
from calculators.spec import Calculator, Choice, Computed, Output, Param

if TYPE_CHECKING:
    from calculators.spec import Inputs

MAX_SERVERS = 10_000_000


@dataclass(frozen=True)
class Job:
    """The validated inputs of one step, in SI units."""

    batch: float
    features: int
    pooling: float
    unique: float
    dim: int
    value_bytes: int
    dense_params: float
    workers: int
    servers: int
    server_nic: float
    dense_on_ps: bool
    net: Network

    def unique_ids_per_worker(self) -> float:
        """IDs a worker looks up per step after de-duplicating its own local batch."""
        return self.unique * self.batch / self.workers * self.features * self.pooling


@dataclass(frozen=True)
class PsStep:
    """Per-step PS traffic: per worker, per server, and the time it takes."""

    pull_bytes: float  # into each worker: rows (+ dense weights)
    push_bytes: float  # out of each worker: IDs + row gradients (+ dense gradients)
    server_ingress: float  # into each server: IDs + gradients from every worker
    server_egress: float  # out of each server: the rows every worker pulled
    fan_in: float  # workers sending to one server at once
    time_s: float


def ps_step(job: Job) -> PsStep:
    """Three phases, each as slow as its slower end: IDs to the servers, rows back,
    gradients to the servers; plus the dense allreduce when the dense part is not on
    the PS. Server bytes are the workers' totals spread evenly over the servers."""
    uniq = job.unique_ids_per_worker()
    keys = uniq * INDEX_BYTES
    rows = uniq * job.dim * job.value_bytes
    dense = job.dense_params * job.value_bytes if job.dense_on_ps else 0.0
    w, s, nic, snic = job.workers, job.servers, job.net.nic, job.server_nic

    def phase(per_worker: float) -> float:
        return max(per_worker / nic, w * per_worker / s / snic) + job.net.latency

    time_s = phase(keys) + phase(rows + dense) + phase(rows + dense)
    if not job.dense_on_ps:
        time_s += job.net.cost("allreduce", job.dense_params * job.value_bytes, w).time_s
    # A server hears from a worker if any of the worker's keys hash to it (always, when
    # the dense weights are spread over every server).
    fan_in = w if job.dense_on_ps else w * (1.0 - (1.0 - 1.0 / s) ** uniq)
    return PsStep(rows + dense, keys + rows + dense, w * (keys + rows + dense) / s,
                  w * (rows + dense) / s, fan_in, time_s)


def collective_step(job: Job) -> tuple[comm.Cost, comm.Cost]:
    """(embedding alltoalls, dense allreduce) for the busiest GPU. Table-wise: the
    busiest GPU owns ceil(features / workers) tables and sends their pooled vectors for
    the whole global batch."""
    w = job.workers
    width = math.ceil(job.features / w) * job.dim
    alltoall = step_comm("table_wise", [float(width)], w, batch=job.batch,
                         features=job.features, pooling=job.pooling,
                         value_bytes=job.value_bytes, net=job.net)
    allreduce = job.net.cost("allreduce", job.dense_params * job.value_bytes, w)
    return alltoall, allreduce


def servers_for(job: Job, target_s: float, at_least: int) -> int | None:
    """The fewest servers (>= ``at_least``) with a PS step within ``target_s``, or None
    when even unlimited servers cannot: the workers' own NICs are the floor."""
    if ps_step(replace(job, servers=MAX_SERVERS)).time_s > target_s:
        return None
    low, high = at_least, MAX_SERVERS
    if ps_step(replace(job, servers=low)).time_s <= target_s:
        return low
    while high - low > 1:
        mid = (low + high) // 2
        if ps_step(replace(job, servers=mid)).time_s <= target_s:
            high = mid
        else:
            low = mid
    return high


def _job(inputs: Inputs) -> Job:
    return Job(
        batch=float(inputs.whole("batch_size")), features=inputs.whole("num_sparse_features"),
        pooling=inputs.num("pooling_factor"), unique=inputs.num("unique_ratio"),
        dim=inputs.whole("embedding_dim"), value_bytes=COMM_BYTES[inputs.text("dtype")],
        dense_params=inputs.num("dense_params"), workers=inputs.whole("num_workers"),
        servers=inputs.whole("num_ps_servers"), server_nic=inputs.num("server_nic_bandwidth"),
        dense_on_ps=inputs.flag("dense_on_ps"), net=Network.from_inputs(inputs))


def _recommend(inputs: Inputs, job: Job, ps: PsStep, *, coll_time: float, min_gpus: int,
               min_hosts: int) -> tuple[str, str]:
    fmt = units.format_value
    coll_fits, ps_fits = job.workers >= min_gpus, job.servers >= min_hosts
    if inputs.flag("asynchronous"):
        return "ps", ("PS: asynchronous training needs it (a collective is a barrier); "
                      f"with at least {min_hosts:,} hosts for the tables.")
    if not coll_fits and not ps_fits:
        return "neither", (f"Neither fits: collective needs {min_gpus:,} GPUs (have "
                           f"{job.workers:,}); the PS needs {min_hosts:,} hosts (have "
                           f"{job.servers:,}).")
    if not coll_fits:
        return "ps", (f"PS: the tables and their optimizer state need {min_gpus:,} GPUs' "
                      f"memory but the job has {job.workers:,}; {min_hosts:,} CPU hosts "
                      "hold them instead.")
    if not ps_fits:
        return "collective", (f"Collective: the PS would need {min_hosts:,} hosts to hold "
                              f"the tables (have {job.servers:,}).")
    if coll_time == 0:
        return "collective", "Collective: one GPU holds everything and communicates nothing."
    if ps.time_s == 0:
        return "ps", "PS: the servers hold everything and nothing crosses the network."
    if coll_time <= ps.time_s:
        return "collective", (f"Collective: {ps.time_s / coll_time:.2g}x less communication "
                              f"per step ({fmt(coll_time, 's', 'si')} against "
                              f"{fmt(ps.time_s, 's', 'si')}).")
    return "ps", (f"PS: {coll_time / ps.time_s:.2g}x less communication per step "
                  f"({fmt(ps.time_s, 's', 'si')} against {fmt(coll_time, 's', 'si')}).")


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
        f"Communication per step against workers ({job.servers:,} PS servers, global batch "
        f"{int(job.batch):,})",
        [charts.Series("parameter server", tuple(ps_points)),
         charts.Series("collective (alltoall + allreduce)", tuple(coll_points))],
        "workers (GPUs)", "seconds per step", log_x=True, log_y=True,
        markers=(charts.Marker(float(job.workers), "this job"),))


def _sparse_training(inputs: Inputs) -> Computed:
    job = _job(inputs)
    ps = ps_step(job)
    alltoall, allreduce = collective_step(job)
    coll_time = alltoall.time_s + allreduce.time_s
    table_bytes = inputs.num("embedding_bytes")
    min_gpus = max(1, math.ceil(table_bytes / embeddings.usable_gpu_bytes(inputs)))
    min_hosts = max(1, math.ceil(
        table_bytes / (inputs.num("host_memory") * (1.0 - inputs.num("host_reserve")))))
    needed = servers_for(job, inputs.num("target_step_time"), min_hosts)
    warnings: list[str] = []
    if needed is None:
        warnings.append("No number of PS servers meets the target step time: the workers' "
                        "own NICs take longer than that.")
    mode, reason = _recommend(inputs, job, ps, coll_time=coll_time, min_gpus=min_gpus,
                              min_hosts=min_hosts)
    return Computed(
        values={
            "ps_pull_bytes_per_worker": ps.pull_bytes,
            "ps_push_bytes_per_worker": ps.push_bytes,
            "ps_server_ingress_bytes": ps.server_ingress,
            "ps_server_egress_bytes": ps.server_egress,
            "ps_fan_in": ps.fan_in,
            "ps_incast_ratio": ps.fan_in * job.net.nic / job.server_nic,
            "ps_step_comm_time_s": ps.time_s,
            "ps_servers_needed": needed,
            "ps_min_hosts_memory": min_hosts,
            "collective_alltoall_bytes_per_gpu": alltoall.bytes_sent_per_rank,
            "collective_allreduce_bytes_per_gpu": allreduce.bytes_sent_per_rank,
            "collective_step_comm_time_s": coll_time,
            "collective_min_gpus_memory": min_gpus,
            "recommended_mode": mode,
            "recommendation": reason,
        },
        warnings=warnings,
        notes=["Communication only, no overlap with compute; PS servers at full line rate "
               "(incast losses would slow them further)."],
        chart=_chart(job),
    )


SPARSE_TRAINING = Calculator(
    id="sparse_training",
    title="Parameter server or collective: one sparse training step",
    summary="Per-step traffic and communication time of PS and collective (DLRM hybrid) training.",
    chapter="sparse.md",
    params=(
        Param("batch_size", "Global batch", "int", 65_536, unit="sample", minimum=1,
              maximum=1e9, help="Samples per step over all workers."),
        Param("num_sparse_features", "Sparse features", "int", 100, minimum=1, maximum=100_000,
              help="Categorical features, one embedding table each (Criteo: 26)."),
        Param("pooling_factor", "IDs per feature per sample", "float", 10.0, minimum=1e-3,
              maximum=1e5,
              help="Multi-hot features look up several rows and pool them (sum or mean); "
                   "Criteo has 1. 10 is an assumption."),
        Param("unique_ratio", "Unique fraction after de-duplication", "float", 0.5, unit="1",
              minimum=1e-6, maximum=1,
              help="Share of a worker's IDs left after removing repeats within its batch; "
                   "popular items repeat, so real data is well below 1 (an assumption)."),
        Param("embedding_dim", "Embedding dimension", "int", 128, minimum=1,
              maximum=tables.MAX_DIM),
        Param("dtype", "Precision on the wire", "choice", "fp32",
              choices=tuple(Choice(k, k) for k in COMM_BYTES),
              help="For embeddings, their gradients and the dense gradients.", advanced=True),
        Param("dense_params", "Dense parameters", "float", 50e6, unit="param", minimum=0,
              maximum=1e12, help="The MLPs and interaction layers; 50M is an assumption."),
        Param("num_workers", "Workers (GPUs)", "int", 64, unit="GPU", minimum=1,
              maximum=1_000_000),
        Param("num_ps_servers", "PS servers", "int", 16, unit="server", minimum=1,
              maximum=MAX_SERVERS),
        Param("server_nic_bandwidth", "NIC bandwidth per PS server", "float",
              hardware.LINKS["roce_100g"].bandwidth, unit="B/s", minimum=1e6,
              maximum=1e13,
              help="A CPU server with one 100 GbE port (an assumption); a GPU PS has more."),
        Param("dense_on_ps", "Dense part on the PS too", "bool", True,
              help="Classic PS: yes. Hybrid (PERSIA): no, the workers allreduce it."),
        Param("asynchronous", "Asynchronous training", "bool", False,
              help="Workers never wait for each other; only a PS supports it."),
        Param("embedding_bytes", "Tables + optimizer state", "float", 2e12, unit="B",
              minimum=1, maximum=1e17,
              help="From embedding_memory; 2 TB is an assumption."),
        *embeddings.gpu_params(),
        Param("host_memory", "Memory per PS server", "float", 1e12, unit="B", minimum=1e6,
              maximum=1e15, help="1 TB (an assumption)."),
        Param("host_reserve", "Host memory reserved", "float", 0.3, unit="1", minimum=0,
              maximum=0.95, help="OS, buffers and hash-map overhead (an assumption).",
              advanced=True),
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
        "Mudigere et al. 2022, ZionEX/Neo (ISCA): 12-trillion-parameter models, alltoall",
        "Thakur, Rabenseifner, Gropp 2005 (collective costs), via calculators.comm",
    ),
)
