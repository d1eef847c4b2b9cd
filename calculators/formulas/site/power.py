"""Power as a site sees it.

IT load = GPUs x (GPU power + the system's share beyond the GPU + network + storage, each
per GPU); facility load = IT load x PUE (power usage effectiveness: the site's total
draw over its IT draw, The Green Grid's definition); energy over a run = GPU-hours x IT
power per GPU x PUE, Meta's method (Touvron et al. 2023, LLaMA, Table 15;
formulas.model.flops.energy_kwh) with the whole IT load per GPU in place of the board.

The swing: in a synchronous job every GPU computes, then every GPU waits at once, for a
collective or a checkpoint write, or the job starts or stops. Dubey et al. 2024
(Llama 3), Sec. 3.3.4: tens of thousands of GPUs changing power together make the data
centre's consumption jump by "tens of megawatts", stretching the limits of the grid.
Modelled as GPUs x (busy power - waiting power) of the GPU boards: the hosts, network
and storage draw about the same either way, and cooling follows too slowly to add to
a step's swing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators.formulas.fabric.clos import tiers_needed
from calculators.formulas.fabric.sizing import size_fabric
from calculators.formulas.model.flops import energy_kwh


@dataclass(frozen=True)
class SitePower:
    """Per-GPU power by part, in W, for ``gpus`` GPUs, and the site's PUE."""

    gpus: int
    gpu_watts: float
    host_watts: float
    network_watts: float
    storage_watts: float
    pue: float

    @property
    def it_watts_per_gpu(self) -> float:
        return self.gpu_watts + self.host_watts + self.network_watts + self.storage_watts

    @property
    def it_watts(self) -> float:
        """IT load: every GPU with its share of host, network and storage."""
        return self.gpus * self.it_watts_per_gpu

    @property
    def facility_watts(self) -> float:
        """Facility load: the IT load x PUE."""
        return facility_load_watts(self.it_watts, self.pue)

    def energy_kwh(self, gpu_hours: float) -> float:
        """Energy at the facility over ``gpu_hours``: GPU-hours x IT power per GPU x PUE."""
        return energy_kwh(gpu_hours, self.it_watts_per_gpu, self.pue)


def facility_load_watts(it_watts: float, pue: float) -> float:
    """Facility load = IT load x PUE."""
    if pue < 1.0:
        raise ValueError(f"a PUE is at least 1, got {pue}")
    return it_watts * pue


def swing_watts(gpus: int, busy_watts: float, waiting_watts: float) -> float:
    """The step of a synchronous job: GPUs x (busy - waiting) board power, in W."""
    if waiting_watts > busy_watts:
        raise ValueError("a waiting GPU draws no more than a busy one")
    return gpus * (busy_watts - waiting_watts)


def fabric_watts_per_port(*, tiers: int, watts_per_switch_port: float,
                          watts_per_transceiver: float) -> float:
    """A full non-blocking folded Clos of ``tiers``, per NIC port: 2t - 1 switch ports
    (its leaf port, then a port at each end of each link up) and 2t transceivers (both
    ends of its host link and of each link up)."""
    return (2 * tiers - 1) * watts_per_switch_port + 2 * tiers * watts_per_transceiver


def network_watts_per_gpu(*, num_gpus: int, gpus_per_node: int, nics_per_node: int,
                          nic_bytes_per_s: float, radix: int, port_bytes_per_s: float,
                          watts_per_switch_port: float,
                          watts_per_transceiver: float) -> float:
    """The scale-out fabric's power per GPU: the non-blocking rail-optimised fabric
    formulas.fabric.sizing builds for the cluster (whole switches, optics on every
    link end, as fabric_sizing counts them), each switch at ``watts_per_switch_port`` x
    its radix. Node shapes that calculator does not take (over 16 GPUs or NICs a node,
    fabrics beyond three tiers) are priced as a full tree of the NIC ports instead
    (``fabric_watts_per_port``; three tiers at most counted)."""
    per_switch = watts_per_switch_port * radix
    try:
        plan = size_fabric(num_gpus=num_gpus, gpus_per_node=gpus_per_node,
                           nics_per_node=nics_per_node, nic_bytes_per_s=nic_bytes_per_s,
                           radix=radix, port_bytes_per_s=port_bytes_per_s,
                           topology="rail_optimized", watts_per_transceiver=watts_per_transceiver,
                           watts_per_switch=per_switch)
    except ValueError:
        nodes = math.ceil(num_gpus / gpus_per_node)
        ports = nodes * nics_per_node * math.ceil(nic_bytes_per_s / port_bytes_per_s - 1e-9)
        try:
            tiers = tiers_needed(ports, radix)
        except ValueError:
            tiers = 3
        return ports * fabric_watts_per_port(
            tiers=tiers, watts_per_switch_port=watts_per_switch_port,
            watts_per_transceiver=watts_per_transceiver) / num_gpus
    return (plan.power_watts or 0.0) / num_gpus
