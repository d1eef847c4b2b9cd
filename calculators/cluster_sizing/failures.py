"""Goodput in the sizing: the deadline is wall-clock, so a run that loses a share of it
to failures and checkpoints needs more GPUs, and its days and dollars grow by 1/goodput.

The ``goodput`` input is the reader's fraction (1 = failures ignored), or blank for the
estimate of inputs.reliability (the goodput calculator's model with Llama 3's rate).
Either way the model's checkpoint interval and write time at the chosen size are
reported, since they size the storage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.cluster_sizing.machine import fmt
from calculators.cluster_sizing.steps import MAX_GPUS
from calculators.core.i18n import _
from calculators.core.spec import ValidationError
from calculators.formulas.model.flops import gpu_seconds
from calculators.inputs.reliability import (
    ASSUMED_STORAGE,
    Goodput,
    estimate_basis,
    goodput_for,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from calculators.cluster_sizing.machine import Machine, Report
    from calculators.core.calculator import Inputs
    from calculators.formulas.planner.layout import Layout
    from calculators.inputs.reliability import Hosts

#: The fixed point of GPUs = GPUs at full goodput / goodput(GPUs) settles in a few
#: rounds (goodput changes slowly with the count); this many is far more than enough.
MAX_ROUNDS = 50


class Failures:
    """The goodput at any GPU count for one sizing, and the report's rows for it."""

    def __init__(self, inputs: Inputs, machine: Machine, checkpoint_bytes: float, *,
                 hosts: Hosts | None = None) -> None:
        self.inputs = inputs
        self.machine = machine
        self.checkpoint_bytes = checkpoint_bytes
        self.hosts = hosts  # parameter servers: they fail, write and read their tables

    def at(self, gpus: float) -> Goodput:
        """Goodput (given or estimated) at ``gpus`` GPUs, counted in whole nodes."""
        whole = self.machine.whole_nodes(gpus)
        return goodput_for(self.inputs, whole, self.machine.per_node, self.checkpoint_bytes,
                           hosts=self.hosts)

    def wall_clock_of(self, total_flops: float, steps: float) -> Callable[[Layout], float]:
        """The run's wall-clock (s) with a layout: the longer of the compute at the
        assumed MFU and the planner's step time, over the goodput at its GPU count (what
        the sizing reports), so that counts that miss the deadline can be compared."""
        machine = self.machine
        compute_gpu_s = gpu_seconds(total_flops, machine.gpu.peak_bf16_flops, machine.mfu)

        def wall_clock_s(lay: Layout) -> float:
            gpus = lay.dims.gpus
            return max(compute_gpu_s / gpus, steps * lay.step_s) / self.at(gpus).value

        return wall_clock_s

    def deadline_gpus(self, at_full_goodput: float) -> float:
        """GPUs that finish by the deadline once goodput is counted: n = n1 / g(n), with
        n1 the count at goodput 1, solved by iteration (n grows, g falls, each round)."""
        n = at_full_goodput
        for _round in range(MAX_ROUNDS):
            nxt = at_full_goodput / self.at(n).value
            if nxt > MAX_GPUS:
                raise ValidationError("deadline_days", _(
                    "with a goodput of {goodput:.1%} the deadline needs more than the "
                    "{most:,} GPUs this calculator sizes").format(goodput=self.at(n).value,
                                                                  most=MAX_GPUS))
            if abs(nxt - n) <= 1e-9 * n:
                return nxt
            n = nxt
        return n

    def report(self, report: Report, gpus: int, *, ideal_days: float | None) -> Goodput:
        """The goodput rows and outputs at the chosen count; ``ideal_days`` is the time
        without failures (None: nothing fits, so no run). Returns what was used."""
        used = self.at(gpus)
        plan = used.plan
        report.values.update(goodput=used.value, checkpoint_interval=plan.interval_s,
                             checkpoint_write_time=plan.write_s)
        checkpoint = _("a checkpoint every {interval}, {written}, a restart in "
                       "{restart}").format(
            interval=fmt(plan.interval_s, "s", "duration"),
            written=_written(plan.write_s, self.checkpoint_bytes, self.hosts),
            restart=fmt(plan.restart_s, "s", "duration"))
        if used.estimated:
            report.row(_("Goodput"), f"{used.value:.1%}",
                       _("the goodput model at {gpus:,} GPUs: an interruption every {mtbi}, "
                         "{checkpoint} ({basis})").format(
                           gpus=gpus, mtbi=fmt(plan.mtbi_s, "s", "duration"),
                           checkpoint=checkpoint, basis=estimate_basis()))
        else:
            report.row(_("Goodput"), _("{goodput:.1%} (given)").format(goodput=used.value),
                       _("the goodput model would give {goodput:.1%} here, with "
                         "{checkpoint}; leave goodput blank to use it with an MFU of the "
                         "steps that run (one read from a run's total GPU-hours already "
                         "contains its failures)").format(goodput=plan.goodput,
                                                          checkpoint=checkpoint))
        if ideal_days is None:  # a design that fits nowhere: no run, so no time to give
            report.row(_("Wall-clock time"), _("none"), _("nothing fits, so no run to time"))
            return used
        why = (_("{days:,.1f} days of training / {goodput:.1%} goodput (failures ignored); "
                 "the headline, GPU-hours, cost and energy follow this time, and the GPU "
                 "count was sized for it") if used.value >= 1.0 else
               _("{days:,.1f} days of training / {goodput:.1%} goodput (checkpoints, work "
                 "redone and restarts take the rest); the headline, GPU-hours, cost and "
                 "energy follow this time, and the GPU count was sized for it"))
        report.row(_("Wall-clock time"),
                   _("{days:,.1f} days").format(days=ideal_days / used.value),
                   why.format(days=ideal_days, goodput=used.value))
        return used


def _written(write_s: float, checkpoint_bytes: float, hosts: Hosts | None) -> str:
    """The write time, and what sets it when parameter servers hold part of the
    checkpoint: their NICs, the storage's cap or the GPU nodes' links (for the Goodput
    row)."""
    time = fmt(write_s, "s", "duration")
    if hosts is None:
        return _("written in {time}").format(time=time)
    writers = hosts.writers()
    if writers.alone_s >= write_s * (1 - 1e-9):
        return _("written in {time} at the {servers:,} parameter servers' {nic} NICs "
                 "({size} each)").format(time=time, servers=writers.count,
                                         nic=fmt(hosts.nic_bytes_per_s, "B/s"),
                                         size=fmt(hosts.checkpoint_bytes / writers.count, "B"))
    if checkpoint_bytes / ASSUMED_STORAGE.aggregate_bytes_per_s >= write_s * (1 - 1e-9):
        return _("written in {time} at the storage's cap").format(time=time)
    return _("written in {time} at the GPU nodes' links").format(time=time)
