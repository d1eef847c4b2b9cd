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
from calculators.core.spec import ValidationError
from calculators.formulas.model.flops import gpu_seconds
from calculators.inputs.reliability import (
    ASSUMED_STORAGE,
    ESTIMATE_BASIS,
    Goodput,
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
        for _ in range(MAX_ROUNDS):
            nxt = at_full_goodput / self.at(n).value
            if nxt > MAX_GPUS:
                raise ValidationError("deadline_days", f"with a goodput of "
                                      f"{self.at(n).value:.1%} the deadline needs more "
                                      f"than the {MAX_GPUS:,} GPUs this calculator sizes")
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
        checkpoint = (f"a checkpoint every {fmt(plan.interval_s, 's', 'duration')}, "
                      f"written in {fmt(plan.write_s, 's', 'duration')}"
                      + _bound_by(plan.write_s, self.checkpoint_bytes, self.hosts)
                      + f", a restart in {fmt(plan.restart_s, 's', 'duration')}")
        if used.estimated:
            report.row("Goodput", f"{used.value:.1%}",
                       f"the goodput model at {gpus:,} GPUs: an interruption every "
                       f"{fmt(plan.mtbi_s, 's', 'duration')}, {checkpoint} ({ESTIMATE_BASIS})")
        else:
            report.row("Goodput", f"{used.value:.1%} (given)",
                       f"the goodput model would give {plan.goodput:.1%} here, with "
                       f"{checkpoint}; leave goodput blank to use it with an MFU of the "
                       "steps that run (one read from a run's total GPU-hours already "
                       "contains its failures)")
        lost = ("failures ignored" if used.value >= 1.0 else
                "checkpoints, work redone and restarts take the rest")
        if ideal_days is None:  # a design that fits nowhere: no run, so no time to give
            report.row("Wall-clock time", "none", "nothing fits, so no run to time")
            return used
        report.row("Wall-clock time", f"{ideal_days / used.value:,.1f} days",
                   f"{ideal_days:,.1f} days of training / {used.value:.1%} goodput ({lost}); "
                   "the headline, GPU-hours, cost and energy follow this time, and the GPU "
                   "count was sized for it")
        return used


def _bound_by(write_s: float, checkpoint_bytes: float, hosts: Hosts | None) -> str:
    """What sets the write time when parameter servers hold part of the checkpoint: their
    NICs, the storage's cap or the GPU nodes' links (for the Goodput row)."""
    if hosts is None:
        return ""
    writers = hosts.writers()
    if writers.alone_s >= write_s * (1 - 1e-9):
        return (f" at the {writers.count:,} parameter servers' "
                f"{fmt(hosts.nic_bytes_per_s, 'B/s')} NICs "
                f"({fmt(hosts.checkpoint_bytes / writers.count, 'B')} each)")
    if checkpoint_bytes / ASSUMED_STORAGE.aggregate_bytes_per_s >= write_s * (1 - 1e-9):
        return " at the storage's cap"
    return " at the GPU nodes' links"
