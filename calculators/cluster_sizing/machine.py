"""What the steps of ``cluster_sizing`` share: the machine, the report, money, storage."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.cluster_sizing.steps import MAX_GPUS
from calculators.core import units
from calculators.core.calculator import Computed, Table
from calculators.core.i18n import N_, _
from calculators.core.spec import ValidationError
from calculators.formulas.model.flops import co2_tonnes, energy_kwh, gpu_seconds
from calculators.formulas.sparse.data_loading import read_bandwidth
from calculators.inputs.memory import gpu_capacity

if TYPE_CHECKING:
    from calculators.catalogues.hardware import Accelerator
    from calculators.core.calculator import Inputs

SECONDS_PER_DAY = 86_400.0
#: Loading data above this share of a GPU's NIC competes with training traffic (the
#: threshold data_pipeline warns at).
NIC_SHARE_WARNING = 0.1


def fmt(value: float | None, unit: str, style: units.Format = "si") -> str:
    """A value as the outputs show it (units.format_value)."""
    return units.format_value(value, unit, style)


@dataclass
class Machine:
    """The accelerator, the node shape and the assumed MFU and deadline, in SI units."""

    gpu: Accelerator
    per_node: int
    nic_per_gpu: float
    capacity: float
    power: float | None
    mfu: float
    k: float
    deadline_s: float

    @classmethod
    def from_inputs(cls, inputs: Inputs) -> Machine:
        gpu = hardware.get(inputs.text("gpu"))
        per_node = inputs.whole("gpus_per_node")
        nics = per_node if inputs["nics_per_node"] is None else inputs.whole("nics_per_node")
        nic = inputs.opt("nic_bandwidth") or hardware.default_nic(gpu.id).bandwidth
        return cls(gpu, per_node, nics * nic / per_node,
                   gpu_capacity(inputs, gpu),
                   inputs.opt("gpu_power_watts") or gpu.power_watts,
                   inputs.num("utilization"), inputs.num("flops_per_param_token"),
                   inputs.num("deadline_days") * SECONDS_PER_DAY)

    def gpus_for(self, flops: float) -> float:
        """GPUs that finish ``flops`` by the deadline at the assumed MFU (formulas.model.flops)."""
        exact = gpu_seconds(flops, self.gpu.peak_bf16_flops, self.mfu) / self.deadline_s
        if exact > MAX_GPUS:
            raise ValidationError("deadline_days", _(
                "{days:g} days needs {gpus:,.0f} GPUs at this MFU, more than the {most:,} "
                "this calculator sizes").format(days=self.deadline_s / SECONDS_PER_DAY,
                                                gpus=exact, most=MAX_GPUS))
        return exact

    def nodes_text(self, gpus: int) -> str:
        """GPUs and whole nodes, as in "1,024 (128 nodes)"."""
        nodes = gpus // self.per_node
        said = _("{gpus:,} ({nodes:,} node)") if nodes == 1 else _("{gpus:,} ({nodes:,} nodes)")
        return said.format(gpus=gpus, nodes=nodes)

    def whole_nodes(self, gpus: float) -> int:
        return max(1, math.ceil(gpus / self.per_node)) * self.per_node


@dataclass
class Report:
    """Values, the reasoning table and the notes, filled step by step."""

    values: dict[str, float | bool | str | None] = field(default_factory=dict)
    rows: list[tuple[str, str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def row(self, step: str, value: str, why: str) -> None:
        self.rows.append((step, value, why))

    def computed(self, caption: str) -> Computed:
        return Computed(values=self.values, warnings=self.warnings, notes=self.notes,
                        table=Table((_("step"), _("value"), _("why")), tuple(self.rows),
                                    caption))


def deadline_row(report: Report, machine: Machine, exact: float, compute_hours: float) -> None:
    """The "GPUs for the deadline" step: compute alone, at the assumed MFU (dense and MoE)."""
    report.row(_("GPUs for the deadline"), fmt(exact, "", "count"),
               _("{hours} at {mfu:.1%} of {gpu}'s {peak}, over {days:g} days").format(
                   hours=fmt(compute_hours, "GPU-hours", "count"), mfu=machine.mfu,
                   gpu=machine.gpu.name, peak=fmt(machine.gpu.peak_bf16_flops, "FLOP/s"),
                   days=machine.deadline_s / SECONDS_PER_DAY))


def missed_deadline(report: Report, machine: Machine, gpus: int, *, wall_days: float,
                    training_days: float, goodput: float, why: str) -> None:
    """The warning when the wall-clock at the count chosen is past the deadline (dense
    and MoE), with ``why`` no count did better."""
    said = (_("The run misses its {deadline:g}-day deadline: on {gpus:,} GPUs it takes "
              "{wall:,.1f} days of wall-clock ({training:,.1f} of training, {lost:,.1f} lost "
              "to failures at a goodput of {goodput:.1%}). {why}. A larger global batch, a "
              "faster network or GPU, or a longer deadline is needed.") if goodput < 1.0 else
            _("The run misses its {deadline:g}-day deadline: on {gpus:,} GPUs it takes "
              "{wall:,.1f} days of wall-clock ({training:,.1f} of training). {why}. A larger "
              "global batch, a faster network or GPU, or a longer deadline is needed."))
    report.warnings.append(said.format(
        deadline=machine.deadline_s / SECONDS_PER_DAY, gpus=gpus, wall=wall_days,
        training=training_days, lost=wall_days - training_days, goodput=goodput,
        why=why[0].upper() + why[1:]))


def deadline_status(report: Report, machine: Machine) -> str | None:
    """The deadline in the summary: met (with the margin) or missed (by how much), so
    that a miss is flagged where the eye is, not only in a warning below (issue 37)."""
    days = report.values.get("wall_clock_days")
    if not isinstance(days, float):
        return None
    deadline = machine.deadline_s / SECONDS_PER_DAY
    if days <= deadline * (1 + 1e-9):
        return _("met: {days:,.1f} of {deadline:g} days").format(days=days, deadline=deadline)
    return _("MISSED by {late:,.1f} days ({days:,.1f} against {deadline:g})").format(
        late=days - deadline, days=days, deadline=deadline)


#: A sparse sizing's layout in the summary, by its training mode.
SPARSE_LAYOUTS = {"collective": N_("collective: tables sharded over the GPUs"),
                  "ps": N_("parameter servers hold the tables"),
                  "neither": N_("none: the tables fit neither way")}
#: The reasoning table's caption, by the kind of sizing.
CAPTIONS = {"dense": N_("How dense sizing reached its answer"),
            "moe": N_("How moe sizing reached its answer"),
            "sparse": N_("How sparse sizing reached its answer")}

#: What each kind of sizing assumes, said with its answer.
ASSUMED = {
    "dense": N_("Assumed: the MFU is that of the steps that run (failures are the goodput's); "
                "the planner's own step model (every operation at its measured kernel and "
                "link speed) bounds it: the training time is the longer of the two "
                "estimates, and the wall-clock time that over the goodput."),
    "moe": N_("Assumed: the MFU is that of the steps that run (failures are the goodput's) "
              "and counts the active parameters (6 N_active D); the expert-parallel "
              "planner's step model bounds it, its alltoalls hidden behind another "
              "micro-batch's compute at the overlap efficiency."),
    "sparse": N_("Assumed: compute at the given MFU counts only the dense MLPs; communication "
                 "as sparse_training models it, hidden behind compute up to the step's "
                 "length."),
}


def money(report: Report, inputs: Inputs, machine: Machine, gpu_hours: float, *,
          ps_host_hours: float | None = None) -> None:
    """Cost, energy and carbon from GPU-hours, as training_compute computes them; a
    sparse design's parameter-server host-hours (``ps_host_hours``) add to the cost at
    their own price."""
    ps_cost = (None if ps_host_hours is None
               else ps_host_hours * inputs.num("price_per_ps_host_hour"))
    cost = gpu_hours * inputs.num("price_per_gpu_hour") + (ps_cost or 0.0)
    energy = carbon = None
    if machine.power is None:
        report.warnings.append(_("{gpu} has no published power figure: set gpu_power_watts "
                                 "to get energy and CO2.").format(gpu=machine.gpu.name))
    else:
        energy = energy_kwh(gpu_hours, machine.power, inputs.num("pue"))
        carbon = co2_tonnes(energy, inputs.num("carbon_intensity"))
    report.values.update(cost_usd=cost, ps_cost_usd=ps_cost, energy_kwh=energy,
                         co2_tonnes=carbon)
    value = ("{cost}; {energy}; {carbon}" if not ps_cost else
             _("{cost} (PS hosts: {hours} x {price} = {ps_cost}); {energy}; {carbon}"))
    report.row(_("Cost, energy, carbon"), value.format(
        cost=fmt(cost, "USD", "usd"), hours=fmt(ps_host_hours, "host-h", "count"),
        price=fmt(inputs.num("price_per_ps_host_hour"), "USD/h", "usd"),
        ps_cost=fmt(ps_cost, "USD", "usd"), energy=fmt(energy, "kWh", "count"),
        carbon=fmt(carbon, "tCO2e", "count")),
               _("GPU-hours x price, plus any PS host-hours x theirs; x GPU power x PUE; x "
                 "grid intensity (Meta's method, LLaMA Table 15). Energy either way off: "
                 "hosts, network and storage are left out (too low), and every hour is at "
                 "board power (too high)."))


def storage(report: Report, machine: Machine, n: int, *, rate: float, item_bytes: float,
            items: float, what: str) -> None:
    """The read rate the data pipeline must sustain (data_pipeline.read_bandwidth)."""
    bandwidth = read_bandwidth(rate, item_bytes)
    per_gpu = bandwidth / n
    share = per_gpu / machine.nic_per_gpu
    report.values.update(read_bandwidth=bandwidth, read_bandwidth_per_gpu=per_gpu,
                         dataset_bytes=items * item_bytes)
    nic = f"{share:.1%}" if share >= 0.001 else _("under 0.1%")
    report.row(_("Storage read bandwidth"),
               _("{rate} ({per_gpu} per GPU, {nic} of its NIC)").format(
                   rate=fmt(bandwidth, "B/s"), per_gpu=fmt(per_gpu, "B/s"), nic=nic),
               _("{rate} x {size} each, at the pace of the run ({data} of data; "
                 "data_pipeline)").format(rate=fmt(rate, what + "/s", "count"),
                                          size=fmt(item_bytes, "B"),
                                          data=fmt(items * item_bytes, "B")))
    if share > NIC_SHARE_WARNING:
        report.warnings.append(_("Reading data takes {share:.0%} of each GPU's NIC: give "
                                 "storage its own network or cache the data locally.").format(
            share=share))


def empty_layout(report: Report) -> None:
    """The dense layout's outputs, when there is no layout to report."""
    report.values.update(dict.fromkeys((
        "layout", "tp", "cp", "pp", "dp", "micro_batch", "zero_stage", "recompute",
        "memory_per_gpu_bytes", "memory_headroom_bytes", "planner_mfu", "planner_days")))
