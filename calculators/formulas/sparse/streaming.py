"""Streaming (online) training of a recommendation model: keeping up with the log,
staleness, and freshness, for a parameter server (PS) and for collective training.

The step's communication is ``formulas.sparse.step`` (``ps_step``, ``collective_step``);
this module adds the compute and asks how many samples per second a job sustains.

- **Compute per sample**: the dense part at 6 FLOP per parameter per sample (forward 2,
  backward 4; the rule of the compute chapter), at a model FLOPs utilisation that is an
  input. Embedding lookups, memory-bound, are not in it.
- **A step**: compute and communication overlap (TorchRec's pipelined training runs the
  ID alltoall of the next batch behind the current one; PERSIA overlaps its embedding
  traffic with the dense computation), so the step takes the larger of the two; without
  overlap, their sum.
- **Adding workers**: each worker keeps its local batch, and the global batch grows with
  the workers. A streaming job adds trainers to consume more of the log, not to split a
  fixed batch finer (weak scaling).
- **Staleness** with asynchronous updates: W workers at the same speed each push once a
  step, so the parameters a worker read have been changed by the other W - 1 pushes by
  the time its own lands. Lian et al. (NeurIPS 2015, "Asynchronous Parallel Stochastic
  Gradient for Nonconvex Optimization", Sec. 3) bound the staleness T by the number of
  workers and keep the 1/sqrt(K) rate while T = O(sqrt(K)); PERSIA (Lian et al. 2022)
  applies it to the embeddings only. Synchronous training has none, and waits for the
  slowest worker instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.formulas.sparse.step import collective_step, ps_step

if TYPE_CHECKING:
    from calculators.formulas.sparse.step import Job

#: FLOP per dense parameter per sample: forward 2, backward 4.
TRAIN_FLOP_PER_PARAM = 6.0
#: The most workers the search offers (the ``num_workers`` input's bound).
MAX_WORKERS = 1_000_000
MODES: tuple[str, ...] = ("ps", "collective")


def compute_time_per_sample(dense_params: float, peak_flops: float, mfu: float) -> float:
    """Seconds of one worker's compute per sample: 6 N FLOP at ``mfu`` of the peak."""
    return TRAIN_FLOP_PER_PARAM * dense_params / (peak_flops * mfu)


@dataclass(frozen=True)
class Throughput:
    """One job's step and the samples per second it sustains."""

    workers: int
    compute_s: float
    comm_s: float
    step_s: float
    samples_per_s: float


def scaled(job: Job, workers: int, mode: str = "collective", min_servers: int = 1) -> Job:
    """``job`` with ``workers`` workers, each keeping its local batch; a PS grows its
    servers with the workers at the configured ratio (at least ``min_servers``, the
    hosts that hold the tables)."""
    servers = job.servers
    if mode == "ps":
        servers = max(min_servers, math.ceil(workers * job.servers / job.workers))
    return replace(job, workers=workers, batch=job.batch / job.workers * workers,
                   servers=servers)


def comm_time(job: Job, mode: str) -> float:
    """Communication per step: the PS's three phases (plus the dense allreduce of the
    hybrid), or the collective's alltoalls and allreduce one after another."""
    if mode == "ps":
        return ps_step(job).time_s
    return math.fsum(c.time_s for c in collective_step(job))


def throughput(job: Job, mode: str, per_sample_s: float, *, overlap: bool) -> Throughput:
    """Samples per second = global batch / step time."""
    compute = per_sample_s * job.batch / job.workers
    comm = comm_time(job, mode)
    step = max(compute, comm) if overlap else compute + comm
    rate = math.inf if step == 0 else job.batch / step
    return Throughput(job.workers, compute, comm, step, rate)


def workers_to_keep_up(job: Job, mode: str, per_sample_s: float, target: float, *,
                       overlap: bool, at_least: int = 1, min_servers: int = 1) -> int | None:
    """The fewest workers (>= ``at_least``) whose throughput reaches ``target`` samples
    per second, or None when even ``MAX_WORKERS`` do not: doubling to bracket it, then
    bisection (throughput grows with the workers under weak scaling, up to the servers'
    ports or the busiest GPU's alltoall; about 40 step evaluations at most)."""
    def enough(w: int) -> bool:
        return throughput(scaled(job, w, mode, min_servers), mode, per_sample_s,
                          overlap=overlap).samples_per_s >= target

    low = max(1, min(at_least, MAX_WORKERS))
    if enough(low):
        return low
    high = low
    while not enough(high):
        if high >= MAX_WORKERS:
            return None
        low, high = high, min(2 * high, MAX_WORKERS)
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def staleness_updates(workers: int, *, asynchronous: bool) -> float:
    """Expected updates between a worker's read of a parameter and its own push:
    W - 1 with asynchronous updates (Lian et al. 2015), 0 when synchronous."""
    return float(workers - 1) if asynchronous else 0.0


def staleness_seconds(workers: int, step_s: float, *, asynchronous: bool) -> float:
    """The same in seconds: W - 1 pushes, one every step / W at the server."""
    if workers <= 0:
        return 0.0
    return staleness_updates(workers, asynchronous=asynchronous) * step_s / workers


@dataclass(frozen=True)
class Freshness:
    """Seconds from an event in the log to a model that has learned it, and to serving."""

    wait_for_batch_s: float
    trained_s: float
    serving_s: float


def freshness(*, ingest_s: float, global_batch: float, mean_rate: float, step_s: float,
              sync_interval_s: float, sync_transfer_s: float) -> Freshness:
    """Ingest delay, half the time the stream takes to fill a global batch (a sample
    waits that long on average), one step; then half a sync interval and the transfer."""
    wait = global_batch / mean_rate / 2.0
    trained = math.fsum((ingest_s, wait, step_s))
    return Freshness(wait, trained, math.fsum((trained, sync_interval_s / 2.0,
                                               sync_transfer_s)))


@dataclass(frozen=True)
class Sizing:
    """What each mode needs to keep up with the peak stream."""

    ps_workers: int | None
    ps_servers: int  # at ps_workers (or as configured when the PS cannot keep up)
    collective_keep_up: int | None  # for throughput alone
    collective_workers: int | None  # at least the GPUs that hold the tables
    min_gpus: int
    min_hosts: int


def recommend_streaming(s: Sizing, *, ps_staleness: float) -> tuple[str, str]:
    """(mode, reason): a mode that cannot keep up, or cannot hold the tables, is out;
    of two that can, the one that needs fewer GPUs, and the collective on a tie because
    it is synchronous."""
    if s.ps_workers is None and s.collective_workers is None:
        return "neither", _("Neither keeps up: no worker count up to {most:,} reaches the "
                            "peak in either mode.").format(most=MAX_WORKERS)
    if s.collective_workers is None:
        return "ps", _("PS: {workers:,} workers and {servers:,} servers keep up; the "
                       "collective cannot reach the peak with any number of GPUs (the "
                       "busiest GPU's alltoall caps it).").format(workers=s.ps_workers,
                                                                  servers=s.ps_servers)
    coll_w = s.collective_workers
    if s.ps_workers is None:
        return "collective", _("Collective: {gpus:,} GPUs keep up; the PS does not with up to "
                               "{most:,} workers.").format(gpus=coll_w, most=MAX_WORKERS)
    ps_w = s.ps_workers
    if coll_w <= ps_w:
        return "collective", _("Collective: {gpus:,} GPUs keep up against the PS's "
                               "{ps_gpus:,} GPUs plus {servers:,} servers, synchronously (no "
                               "staleness).").format(gpus=coll_w, ps_gpus=ps_w,
                                                     servers=s.ps_servers)
    memory = s.collective_keep_up is not None and s.min_gpus > s.collective_keep_up
    because = (_("{gpus:,} GPUs, {extra:,} of them only to hold the tables in HBM") if memory
               else _("{gpus:,} GPUs")).format(
        gpus=coll_w, extra=coll_w - int(s.collective_keep_up or 0))
    price = (_("the price is a staleness of about {updates:,.0f} updates").format(
        updates=ps_staleness) if ps_staleness
             else _("synchronous, every step waits for the slowest worker"))
    return "ps", _("PS: {gpus:,} GPUs plus {servers:,} servers keep up, where the collective "
                   "needs {because}; {price}.").format(gpus=ps_w, servers=s.ps_servers,
                                                       because=because, price=price)
