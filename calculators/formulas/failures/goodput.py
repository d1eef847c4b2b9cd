"""The goodput of a run: how often it stops, what a checkpoint costs, the interval, and
the fraction of wall-clock that advances training, composed from ``reliability``.

Goodput is defined once for the guide: the time that advances training over the
elapsed wall-clock (Llama 3's "effective training time", Dubey et al. 2024, Sec. 3.3.4;
Gemini's "goodput", Gemini Team 2023, Sec. 3). MFU is a separate factor: the model
FLOPs per second of the steps that do run, over peak (PaLM, App. B), which leaves
restarts out. Time to train = ideal time at that MFU / goodput.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.failures import checkpoints as ck
from calculators.formulas.failures import reliability as rel

if TYPE_CHECKING:
    from calculators.formulas.failures.restart import RestartModel, RestartParts

SECONDS_PER_DAY = 86_400.0
#: Below this goodput a run is reported as never finishing rather than as a number of
#: days that overflows.
MIN_GOODPUT = 1e-9


def clos_switches(endpoints: int, radix: int) -> int:
    """Switches in a non-blocking folded Clos (fat tree) of radix-k switches that holds
    ``endpoints`` NIC ports: t tiers hold up to 2 (k/2)^t ports and need (2t - 1) per
    k ports, t the fewest that suffice (Al-Fares et al. 2008, Sec. 3: 5k^2/4 switches for
    k^3/4 hosts at t = 3). A first-order count: partly filled tiers rounded up once."""
    if endpoints < 1:
        raise ValueError(f"endpoints must be >= 1, got {endpoints!r}")
    if radix < 4 or radix % 2:
        raise ValueError(f"radix must be even and >= 4, got {radix!r}")
    tiers = 1
    while endpoints > (radix if tiers == 1 else 2 * (radix // 2) ** tiers):
        tiers += 1
    return math.ceil((2 * tiers - 1) * endpoints / radix)


def pool_mtbf_s(failures: int, units: int, period_s: float) -> float:
    """Per-unit MTBF from an observed count: ``units`` parts ran for ``period_s`` and
    stopped the job ``failures`` times (e.g. Table 5's GPU rows over 16,384 GPUs)."""
    if failures < 1 or units < 1:
        raise ValueError(f"failures and units must be >= 1, got {failures!r}, {units!r}")
    if not period_s > 0:
        raise ValueError(f"period_s must be positive, got {period_s!r}")
    return period_s * units / failures


@dataclass(frozen=True)
class Storage:
    """Where checkpoints go and how fast: each node's write bandwidth to storage, the
    storage system's aggregate cap, each GPU's copy bandwidth to host memory, and
    whether saves are asynchronous (snapshot to host, then persist in the background)."""

    node_write_bytes_per_s: float
    aggregate_bytes_per_s: float
    gpu_to_host_bytes_per_s: float
    asynchronous: bool


@dataclass(frozen=True)
class Recovery:
    """What an interruption costs besides lost work: detection, node replacement (for
    the ``hardware_fraction`` that takes a node out, unless hot spares stand by),
    restart from the checkpoint; and planned stops, each one restart. The restart is
    ``restart_s`` if given, else ``restart_model``'s parts at the job's size."""

    detection_s: float
    restart_s: float | None
    replacement_s: float
    hardware_fraction: float
    hot_spares: bool
    planned_per_day: float = 0.0
    restart_model: RestartModel | None = None

    def __post_init__(self) -> None:
        if self.restart_s is None and self.restart_model is None:
            raise ValueError("give a restart time or a restart model")


@dataclass(frozen=True)
class GoodputPlan:
    """Everything ``plan_goodput`` worked out, in seconds, bytes and fractions."""

    mtbi_s: float
    checkpoint_bytes: float
    write_s: float  # persisting the checkpoint (storage-bound or node-bound)
    snapshot_s: float  # GPU -> host copy (asynchronous saves only block for this)
    stall_s: float  # what each checkpoint costs training: Daly's delta
    persist_s: float  # from the start of a save until it is durable
    interval_s: float  # compute time between checkpoints: Daly's tau
    interval_rule: str  # "daly", "given" or "persist" (raised to the persist time)
    young_interval_s: float
    downtime_s: float  # detection + replacement (without spares) + restart
    restart_s: float  # the restart used: given, or the model's parts summed
    restart_parts: RestartParts | None  # the model's parts at this size (if a model)
    read_s: float  # reading the checkpoint back (at the write's rates)
    recovery_s: float  # what Daly's R stands for: downtime + async extra rework
    lost_work_s: float  # expected recomputation per interruption, async extra included
    goodput: float

    @property
    def interrupted_fraction(self) -> float:
        """1 - goodput: the share of wall-clock lost to checkpoints and interruptions."""
        return 1.0 - self.goodput


def best_interval_s(cost: ck.CheckpointCost, mtbi_s: float) -> tuple[float, str]:
    """The interval to use: Daly 2006's Eq. 37 for the stall; for an asynchronous save,
    at least persist - stall, since a save must be durable before the next one starts
    (below that the segment costs the persist time whatever the interval, so goodput
    only rises up to it)."""
    tau = rel.daly_interval_s(cost.stall_s, mtbi_s) if cost.stall_s > 0 else mtbi_s
    floor = cost.persist_s - cost.stall_s
    return (floor, "persist") if floor > tau else (tau, "daly")


def writer_groups(checkpoint_bytes: float, gpus: int, gpus_per_node: int,
                  node_bytes_per_s: float, hosts: ck.Writers | None = None,
                  ) -> tuple[ck.Writers, ...]:
    """Who holds the checkpoint: ``hosts`` without GPUs (parameter servers) their
    ``bytes_total``, the GPU nodes the rest, in equal shares."""
    nodes = max(1, math.ceil(gpus / gpus_per_node))
    on_hosts = 0.0 if hosts is None else hosts.bytes_total
    if on_hosts > checkpoint_bytes * (1 + 1e-12):
        raise ValueError(f"the hosts hold {on_hosts!r} B of a {checkpoint_bytes!r} B checkpoint")
    on_nodes = max(0.0, checkpoint_bytes - on_hosts)
    groups = () if hosts is None else (hosts,)
    if on_nodes > 0 or not groups:
        groups = (ck.Writers(nodes, on_nodes, node_bytes_per_s), *groups)
    return groups


def plan_goodput(*, mtbi_s: float, checkpoint_bytes: float, gpus: int, gpus_per_node: int,
                 storage: Storage, recovery: Recovery, interval_s: float | None = None,
                 hosts: ck.Writers | None = None) -> GoodputPlan:
    """Goodput of a synchronous job, Daly 2006's model with the save costs above.

    Steps: write time = the sharded transfer of ``writer_groups`` (GPU nodes at the
    node bandwidth; ``hosts`` such as parameter servers at theirs, their NIC included)
    under the storage's aggregate cap; an asynchronous save stalls training only for
    the GPU -> host copy and adds the write time to the rework of a failure
    (``checkpoints.checkpoint_cost``); the interval is the one given or
    ``best_interval_s``; an interval shorter than persist - stall stretches the stall to
    fill the gap. Restart = the given time, or the model's parts at ``gpus`` with the
    checkpoint read back at the write's rates. Recovery = detection + (replacement,
    without spares) + restart. Planned stops then remove their restarts from each day."""
    groups = writer_groups(checkpoint_bytes, gpus, gpus_per_node,
                           storage.node_write_bytes_per_s, hosts)
    write = ck.sharded_transfer_time_s(groups, storage.aggregate_bytes_per_s)
    snapshot = ck.snapshot_time_s(checkpoint_bytes, gpus, storage.gpu_to_host_bytes_per_s)
    cost = ck.checkpoint_cost(write, snapshot, storage.asynchronous)
    if interval_s is None:
        tau, rule = best_interval_s(cost, mtbi_s)
    else:
        tau, rule = interval_s, "given"
    stall = max(cost.stall_s, cost.persist_s - tau)
    read = write  # a restart reads the same shares back over the same links (assumed)
    parts = (None if recovery.restart_model is None
             else recovery.restart_model.parts(gpus, read))
    restart = (recovery.restart_s if recovery.restart_s is not None
               else parts.total_s if parts is not None else 0.0)
    downtime = rel.recovery_time_s(recovery.detection_s, restart, recovery.replacement_s,
                                   recovery.hardware_fraction, recovery.hot_spares)
    mean_recovery = downtime + cost.extra_lost_s
    good = rel.daly_goodput(tau, stall, mean_recovery, mtbi_s)
    good = rel.goodput_with_planned_stops(good, recovery.planned_per_day, SECONDS_PER_DAY,
                                          restart)
    young = rel.young_interval_s(stall, mtbi_s) if stall > 0 else mtbi_s
    return GoodputPlan(
        mtbi_s=mtbi_s, checkpoint_bytes=checkpoint_bytes, write_s=write, snapshot_s=snapshot,
        stall_s=stall, persist_s=cost.persist_s, interval_s=tau, interval_rule=rule,
        young_interval_s=young, downtime_s=downtime, restart_s=restart, restart_parts=parts,
        read_s=read, recovery_s=mean_recovery,
        lost_work_s=rel.expected_lost_work_s(tau, stall, mtbi_s) + cost.extra_lost_s,
        goodput=good)


def wall_clock_s(ideal_s: float, goodput: float) -> float | None:
    """Wall-clock for ``ideal_s`` of failure-free training; None when the goodput is so
    low that the run never finishes (below ``MIN_GOODPUT``)."""
    return None if goodput < MIN_GOODPUT else rel.wall_clock_s(ideal_s, goodput)
