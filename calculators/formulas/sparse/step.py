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
  formulas.collectives.costs. Collectives run one after another, with no overlap with compute.
Both: the same wire precision, batch, features and pooling; compute time is not counted.

As configured, the two sides may have very different networks (a few CPU servers with
100 GbE ports against GPUs with 400 Gb/s NICs). ``matched_job`` is the same step with the
PS given as many servers as there are workers, each with a worker's NIC, and the dense
part allreduced as in the collective: what remains of the gap is what crosses the wire
(distinct rows against pooled vectors), not how fast the wire is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from calculators.core import units
from calculators.core.i18n import _
from calculators.formulas.sparse.sharding import INDEX_BYTES, Network, step_comm

if TYPE_CHECKING:
    from calculators.formulas.collectives import costs as comm

MAX_SERVERS = 10_000_000
#: The largest tables (with optimizer state) this model is offered: 100 PB, far beyond
#: any published model (ZionEX's 12T parameters are tens of TB).
MAX_TABLE_BYTES = 1e17


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


def matched_job(job: Job) -> Job:
    """``job`` with the PS at the collective's bandwidth: one server per worker, each with
    a worker's NIC, and the dense part allreduced among the workers (PERSIA's hybrid,
    Lian et al. 2022) instead of pulled and pushed per worker."""
    return replace(job, servers=job.workers, server_nic=job.net.nic, dense_on_ps=False)


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


def recommend(job: Job, ps: PsStep, *, coll_time: float, min_gpus: int, min_hosts: int,
              asynchronous: bool) -> tuple[str, str]:
    """The mode with less communication per step, unless memory or asynchrony decides:
    (mode, the reason in words)."""
    fmt = units.format_value
    coll_fits, ps_fits = job.workers >= min_gpus, job.servers >= min_hosts
    if asynchronous:
        return "ps", _("PS: it applies each worker's updates as they arrive, while a "
                       "collective waits for every member of its group; with at least "
                       "{hosts:,} hosts for the tables.").format(hosts=min_hosts)
    if not coll_fits and not ps_fits:
        return "neither", _("Neither fits: collective needs {gpus:,} GPUs (have {workers:,}); "
                            "the PS needs {hosts:,} hosts (have {servers:,}).").format(
            gpus=min_gpus, workers=job.workers, hosts=min_hosts, servers=job.servers)
    if not coll_fits:
        return "ps", _("PS: the tables and their optimizer state need {gpus:,} GPUs' memory "
                       "but the job has {workers:,}; {hosts:,} CPU hosts hold them "
                       "instead.").format(gpus=min_gpus, workers=job.workers, hosts=min_hosts)
    if not ps_fits:
        return "collective", _("Collective: the PS would need {hosts:,} hosts to hold the "
                               "tables (have {servers:,}).").format(hosts=min_hosts,
                                                                    servers=job.servers)
    if coll_time == 0:
        return "collective", _("Collective: one GPU holds everything and communicates "
                               "nothing.")
    if ps.time_s == 0:
        return "ps", _("PS: the servers hold everything and nothing crosses the network.")
    matched = ps_step(matched_job(job)).time_s
    if matched == 0:
        like_for_like = ""
    elif coll_time <= matched:
        like_for_like = _("At matched bandwidth (one server per worker, same NIC): "
                          "collective {ratio:.2g}x faster.").format(ratio=matched / coll_time)
    else:
        like_for_like = _("At matched bandwidth (one server per worker, same NIC): PS "
                          "{ratio:.2g}x faster.").format(ratio=coll_time / matched)
    if coll_time <= ps.time_s:
        mode, said = "collective", _(
            "Collective: {ratio:.2g}x less communication per step as configured ({time} "
            "against {other}).").format(ratio=ps.time_s / coll_time,
                                        time=fmt(coll_time, "s", "si"),
                                        other=fmt(ps.time_s, "s", "si"))
    else:
        mode, said = "ps", _(
            "PS: {ratio:.2g}x less communication per step as configured ({time} against "
            "{other}).").format(ratio=coll_time / ps.time_s, time=fmt(ps.time_s, "s", "si"),
                                other=fmt(coll_time, "s", "si"))
    if not like_for_like:
        return mode, said
    return mode, _("{first} {second}").format(first=said, second=like_for_like)


@dataclass(frozen=True)
class StepComparison:
    """PS against collective for one job: traffic, time, memory floors and the verdict."""

    job: Job
    ps: PsStep
    alltoall: comm.Cost
    allreduce: comm.Cost
    min_gpus: int
    min_hosts: int
    servers_needed: int | None
    mode: str
    reason: str
    #: The PS at matched bandwidth (``matched_job``), for the like-for-like comparison.
    matched: PsStep

    @property
    def collective_time_s(self) -> float:
        return self.alltoall.time_s + self.allreduce.time_s


def compare_step(job: Job, *, table_bytes: float, gpu_usable: float, host_usable: float,
                 target_s: float, asynchronous: bool) -> StepComparison:
    """Both modes for ``job``; the tables (with optimizer state) need at least
    ``table_bytes / usable`` GPUs or hosts; the PS is sized for ``target_s``."""
    ps = ps_step(job)
    alltoall, allreduce = collective_step(job)
    min_gpus = max(1, math.ceil(table_bytes / gpu_usable))
    min_hosts = max(1, math.ceil(table_bytes / host_usable))
    mode, reason = recommend(job, ps, coll_time=alltoall.time_s + allreduce.time_s,
                             min_gpus=min_gpus, min_hosts=min_hosts,
                             asynchronous=asynchronous)
    return StepComparison(job, ps, alltoall, allreduce, min_gpus, min_hosts,
                          servers_for(job, target_s, min_hosts), mode, reason,
                          ps_step(matched_job(job)))
