"""goodput: how often a long synchronous run stops, what its checkpoints cost, the best
interval between them, and the share of wall-clock that advances training.

It composes formulas.failures.goodput (which composes formulas.failures.reliability): the job's MTBI
from Llama 3's observed rate, the reader's, or per-part MTBFs; checkpoint size from the
model state (formulas.parallel.memory); write and snapshot times; Daly 2006's interval and
goodput; the days and dollars that failures add. The charts are in ``charts.py``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.catalogues.failure_rates import LLAMA3_405B, LLAMA3_SWITCH_RADIX
from calculators.core import units
from calculators.core.calculator import Calculator, Computed, Table
from calculators.core.i18n import _
from calculators.core.spec import Output
from calculators.formulas.failures import checkpoints as ck
from calculators.formulas.failures import goodput as gm
from calculators.formulas.failures import reliability as rel
from calculators.formulas.failures.restart import RestartModel
from calculators.formulas.parallel.memory import state_bytes
from calculators.goodput.charts import goodput_charts
from calculators.goodput.params import HOUR, PARAMS

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

DAY = gm.SECONDS_PER_DAY
#: Warn when the goodput falls below this.
LOW_GOODPUT = 0.5


def mtbi_s(inputs: Inputs, gpus: int) -> float:
    """The job's mean time between unexpected interruptions at ``gpus`` GPUs."""
    model = inputs.text("failure_model")
    if model == "llama3":
        run = LLAMA3_405B
        return rel.scaled_mtbi_s(run.unexpected, run.period_s, run.gpus, gpus)
    if model == "observed":
        return rel.scaled_mtbi_s(inputs.whole("observed_interruptions"),
                                 inputs.num("observed_days") * DAY,
                                 inputs.whole("observed_gpus"), gpus)
    hosts = math.ceil(gpus / inputs.whole("gpus_per_node"))
    nics = hosts * inputs.whole("nics_per_node")
    if inputs["switches"] is not None:
        switches = inputs.whole("switches")
    else:
        switches = gm.clos_switches(nics, LLAMA3_SWITCH_RADIX) if nics else 0
    pools = [rel.ComponentPool(name, count, inputs.num(f"{name}_mtbf_hours") * HOUR)
             for name, count in (("gpu", gpus), ("host", hosts), ("nic", nics),
                                 ("switch", switches), ("other", gpus))]
    return rel.job_mtbi_s(pools)


def checkpoint_bytes(inputs: Inputs) -> float:
    """The override, or N x (weights + optimizer state) bytes per parameter."""
    given = inputs.opt("checkpoint_bytes")
    if given is not None:
        return given
    per_param = state_bytes(inputs.text("precision"), inputs.text("optimizer"))
    return inputs.num("params") * ck.checkpoint_bytes_per_param(per_param)


def plan_at(inputs: Inputs, gpus: int, *, asynchronous: bool | None = None,
            interval_s: float | None = None, use_given_interval: bool = True,
            ) -> gm.GoodputPlan:
    """The goodput model for these inputs at ``gpus`` GPUs; the keywords vary one thing
    for the charts."""
    storage = gm.Storage(inputs.num("node_write_bandwidth"), inputs.num("storage_bandwidth"),
                         inputs.num("gpu_to_host_bandwidth"),
                         inputs.flag("asynchronous") if asynchronous is None else asynchronous)
    recovery = gm.Recovery(inputs.num("detection_time"), inputs.opt("restart_time"),
                           inputs.num("replacement_time"), inputs.num("hardware_fraction"),
                           inputs.flag("hot_spares"), inputs.num("planned_stops_per_day"),
                           restart_model=RestartModel(inputs.num("startup_time"),
                                                      inputs.num("comm_init_per_gpu"),
                                                      inputs.num("warmup_time")))
    if interval_s is None and use_given_interval:
        interval_s = inputs.opt("checkpoint_interval")
    return gm.plan_goodput(mtbi_s=mtbi_s(inputs, gpus), checkpoint_bytes=checkpoint_bytes(inputs),
                           gpus=gpus, gpus_per_node=inputs.whole("gpus_per_node"),
                           storage=storage, recovery=recovery, interval_s=interval_s)


def _day_split(plan: gm.GoodputPlan, planned_per_day: float, restart_s: float) -> Table:
    """Where a day of wall-clock goes, to first order: training is exact (goodput);
    checkpoint stalls take stall/interval of it; planned stops their restarts; the rest
    is failures (recomputed work and recovery)."""
    hours = 24.0
    training = hours * plan.goodput
    stalls = training * plan.stall_s / plan.interval_s
    planned = min(hours, planned_per_day * restart_s / HOUR)
    failures = max(0.0, hours - training - stalls - planned)
    rows = ((_("Training"), training), (_("Checkpoint stalls"), stalls),
            (_("Failures: recomputed work and recovery"), failures),
            (_("Planned stops"), planned))
    return Table((_("time"), _("hours per day"), _("share")),
                 tuple((name, f"{value:.2f}", f"{value / hours:.1%}") for name, value in rows),
                 _("A day of wall-clock, first-order split"))


def _restart_note(plan: gm.GoodputPlan, *, given: bool) -> str:
    """The restart's parts at this size, and whether the given time replaced them."""
    parts = plan.restart_parts
    restart = units.format_value(plan.restart_s, "s", "duration")
    if parts is None:
        return _("Restart: {time}.").format(time=restart)
    listed = ", ".join(f"{name} {units.format_value(t, 's', 'duration')}"
                       for name, t in parts.rows())
    modelled = units.format_value(parts.total_s, "s", "duration")
    if given:
        return _("Restart: the given {given} replaces the model's {modelled} "
                 "({parts}).").format(given=restart, modelled=modelled, parts=listed)
    return _("Restart: {modelled} at this size ({parts}).").format(modelled=modelled,
                                                                   parts=listed)


def _goodput(inputs: Inputs) -> Computed:
    gpus = inputs.whole("num_gpus")
    plan = plan_at(inputs, gpus)
    warnings: list[str] = []
    notes: list[str] = []
    ideal_s = inputs.num("ideal_days") * DAY
    wall = gm.wall_clock_s(ideal_s, plan.goodput)
    extra_days = extra_cost = interruptions = None
    if wall is None:
        warnings.append(_("The job never finishes: interruptions come faster than it can "
                          "checkpoint and restart. Fewer GPUs per job, faster storage or "
                          "faster recovery are needed."))
    else:
        extra_days = (wall - ideal_s) / DAY
        extra_cost = rel.extra_cost_usd(gpus, ideal_s, plan.goodput,
                                        inputs.num("price_per_gpu_hour"))
        interruptions = wall / plan.mtbi_s
    if plan.goodput < LOW_GOODPUT:
        warnings.append(_("Goodput is {goodput:.0%}: most of the wall-clock is lost to "
                          "failures and checkpoints.").format(goodput=plan.goodput))
    if plan.stall_s >= 2 * plan.mtbi_s:
        warnings.append(_("A checkpoint stalls the job for at least twice the mean time "
                          "between interruptions (delta >= 2M): Daly's interval is then M "
                          "and most checkpoints never complete."))
    if inputs.flag("asynchronous") and plan.interval_s < plan.persist_s - plan.snapshot_s:
        warnings.append(_(
            "The {interval:.3g} s interval is shorter than the {persist:.3g} s an "
            "asynchronous save takes to persist: each save waits for the one before, and "
            "the stall grows from {snapshot:.3g} s to {stall:.3g} s.").format(
                interval=plan.interval_s, persist=plan.persist_s - plan.snapshot_s,
                snapshot=plan.snapshot_s, stall=plan.stall_s))
    if plan.interval_rule == "persist":
        warnings.append(_(
            "Daly's interval for a {snapshot:.3g} s snapshot is shorter than the "
            "{persist:.3g} s an asynchronous save takes to persist, so saves would queue: "
            "the interval is raised to the persist time. Faster storage would allow more "
            "frequent checkpoints.").format(snapshot=plan.snapshot_s,
                                            persist=plan.persist_s - plan.snapshot_s))
    hardware = inputs.num("hardware_fraction")
    # Little's law over the node-taking interruptions alone: their rate is the share
    # ``hardware`` of all. Scaling the count, not dividing the MTBI, keeps a tiny share
    # from overflowing the MTBI to infinity.
    spares = rel.nodes_in_repair(plan.mtbi_s, inputs.num("repair_time")) * hardware
    if plan.interval_rule == "daly":
        notes.append(_(
            "Young 1974's first-order interval, sqrt(2 x stall x MTBI), would be {young}; "
            "Daly 2006's Eq. 37 takes {daly}, shorter by about two thirds of the "
            "stall.").format(young=units.format_value(plan.young_interval_s, "s", "duration"),
                             daly=units.format_value(plan.interval_s, "s", "duration")))
    notes.append(_restart_note(plan, given=inputs["restart_time"] is not None))
    if not inputs.flag("hot_spares"):
        notes.append(_("Hot spares would save {minutes:.3g} min per interruption on "
                       "average.").format(minutes=hardware * inputs.num("replacement_time") / 60))
    return Computed(
        values={
            "goodput": plan.goodput,
            "wall_clock_days": None if wall is None else wall / DAY,
            "checkpoint_interval": plan.interval_s,
            "mtbi": plan.mtbi_s,
            "interruptions": interruptions,
            "checkpoint_bytes": plan.checkpoint_bytes,
            "checkpoint_write_time": plan.write_s,
            "checkpoint_stall": plan.stall_s,
            "young_interval": plan.young_interval_s,
            "lost_work_per_failure": plan.lost_work_s,
            "recovery_time": plan.downtime_s,
            "time_to_restart": plan.restart_s,
            "extra_days": extra_days,
            "extra_cost_usd": extra_cost,
            "spare_nodes": spares,
        },
        warnings=warnings,
        notes=notes,
        table=_day_split(plan, inputs.num("planned_stops_per_day"), plan.restart_s),
        chart=goodput_charts(inputs, plan, plan_at),
    )


OUTPUTS: tuple[Output, ...] = (
    Output("goodput", "Goodput", "1", "percent",
           help="Share of wall-clock that advances training (Daly 2006's model)."),
    Output("wall_clock_days", "Wall-clock with failures", "days", "fixed"),
    Output("checkpoint_interval", "Checkpoint interval", "s", "duration"),
    Output("mtbi", "Mean time between interruptions", "s", "duration"),
    Output("interruptions", "Interruptions over the run", "", "count"),
    Output("checkpoint_bytes", "Checkpoint size", "B"),
    Output("checkpoint_write_time", "Checkpoint write time", "s", "duration"),
    Output("checkpoint_stall", "Training stalled per checkpoint", "s", "duration"),
    Output("young_interval", "Young's interval (first order)", "s", "duration"),
    Output("lost_work_per_failure", "Work recomputed per interruption", "s", "duration"),
    Output("time_to_restart", "Restart", "s", "duration",
           help="Given, or the sum of its parts at this size (the notes list them)."),
    Output("recovery_time", "Downtime per interruption", "s", "duration",
           help="Detection + restart, + the wait for a node without hot spares."),
    Output("extra_days", "Days added by failures and checkpoints", "days", "fixed"),
    Output("extra_cost_usd", "Cost of those days", "USD", "usd"),
    Output("spare_nodes", "Nodes in repair on average (hot spares to keep)", "", "fixed"),
)

GOODPUT = Calculator(
    id="goodput",
    headline=("goodput", "wall_clock_days", "checkpoint_interval"),
    title="Failures, checkpoints and goodput",
    summary="How often a job of N GPUs stops, how long its checkpoints take, the interval "
            "between them (Young, Daly), and the days and dollars failures add.",
    chapter="long-runs.md",
    params=PARAMS,
    outputs=OUTPUTS,
    function=_goodput,
    sources=(
        "Dubey et al. 2024, The Llama 3 Herd of Models, Sec. 3.3.1, 3.3.4 and Table 5",
        "Young 1974, A first order approximation to the optimum checkpoint interval, "
        "CACM 17(9)",
        "Daly 2006, A higher order estimate of the optimum checkpoint interval for restart "
        "dumps, FGCS 22(3), Eq. 37",
        "Mohan et al. 2021, CheckFreq (FAST '21); PyTorch Distributed Checkpoint async_save",
        "Rajbhandari et al. 2020, ZeRO, Sec. 3.1 (model state bytes)",
    ),
)

