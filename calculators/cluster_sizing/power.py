"""The site step of ``cluster_sizing``: what the sized cluster draws, in megawatts.

IT load per GPU = the GPU (its board power, or the reader's) + its system's share
beyond the GPU (catalogues.system_power: published DGX, HGX and NVL72 figures, or a
labelled derivation) + the scale-out fabric (formulas.fabric.sizing's non-blocking
rail-optimised fabric for this cluster, switches and optics) + storage (Llama 3's
storage servers per GPU, each at an assumed power). The facility load, the energy at
the meter and the swing of a synchronous step follow (formulas.site.power).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues import switches, system_power
from calculators.core import units
from calculators.core.i18n import _
from calculators.core.spec import Output, Param
from calculators.formulas.site.power import SitePower, network_watts_per_gpu, swing_watts

if TYPE_CHECKING:
    from calculators.cluster_sizing.machine import Machine, Report
    from calculators.core.calculator import Inputs

_STORAGE_DEFAULT = system_power.storage_watts_per_gpu()

POWER_PARAMS: tuple[Param, ...] = (
    Param("host_watts_per_gpu", "System power per GPU beyond the GPU", "float", None,
          unit="W", minimum=0, maximum=100_000, optional=True,
          placeholder="from the system's published power",
          help="CPUs, memory, NICs, NVLink switches, fans and power conversion, per GPU. "
               "Blank: the system's published maximum per GPU less the GPU's board power "
               "(DGX A100 6.5 kW, DGX H100/H200 10.2 kW and DGX B200 14.3 kW for 8 GPUs, "
               "NVIDIA DGX user guides; GB200 NVL72 120 kW for 72); a part with no "
               "published system (H800, AMD, Ascend) gets its board power x the ratio "
               "of a like system, an assumption the table names."),
    Param("network_watts_per_gpu", "Network power per GPU", "float", None, unit="W",
          minimum=0, maximum=100_000, optional=True,
          placeholder="a non-blocking fabric",
          help="Blank: fabric_sizing's non-blocking rail-optimised fabric of 128-port "
               "400G switches for these nodes and NICs, each switch at 11.7 W a port (a "
               "QM9700's 747 W typical over its 64 ports, QM97X0 user manual) and 8 W "
               "per optical link end, divided among the GPUs."),
    Param("storage_watts_per_gpu", "Storage power per GPU", "float", None, unit="W",
          minimum=0, maximum=100_000, optional=True,
          placeholder=f"Llama 3's ratio, {_STORAGE_DEFAULT:.0f} W",
          help="Blank: Llama 3's storage, 7,500 SSD servers for 16,384 GPUs (Dubey et al. "
               "2024, Sec. 3.3.1), each at an assumed 300 W."),
    Param("wait_power_share", "GPU power while the job waits", "float",
          system_power.WAIT_POWER_SHARE, unit="1", minimum=0, maximum=1,
          help="Share of its busy power a GPU draws while every GPU waits for a "
               "collective or a checkpoint: sets the swing. 20% is an assumption: GPUs "
               "fall near idle in the communication phase (Choukse et al. 2025, Power "
               "Stabilization for AI Training Datacenters) but keep memory and clocks "
               "up. Measure it on your own nodes."),
)

POWER_OUTPUTS: tuple[Output, ...] = (
    Output("it_watts_per_gpu", "IT load per GPU (GPU, host, network, storage)", "W"),
    Output("it_load_watts", "IT load", "W",
           help="GPUs x IT load per GPU, at published maximum system power: what the site "
                "provisions. A measured HGX H100 node peaked at 8.4 kW of its 10.2 kW "
                "rating (Latif et al. 2024)."),
    Output("facility_load_watts", "Facility load (IT load x PUE)", "W"),
    Output("power_swing_watts", "Power swing of a synchronous step", "W",
           help="GPUs x (busy - waiting) board power: the step the grid sees when every "
                "GPU stops for a collective or a checkpoint, or starts again (Dubey et "
                "al. 2024, Sec. 3.3.4: tens of megawatts)."),
    Output("site_energy_kwh", "Energy at the facility meter", "kWh", "count",
           help="GPU-hours x IT load per GPU x PUE: the Energy output's method with "
                "hosts, network and storage counted. Emissions stay on the Energy "
                "output, as Meta counts them."),
)
_NAMES = tuple(o.name for o in POWER_OUTPUTS)


def _network(inputs: Inputs, machine: Machine, gpus: int) -> float:
    """The fabric's power per GPU (formulas.site.power.network_watts_per_gpu)."""
    given = inputs.opt("network_watts_per_gpu")
    if given is not None:
        return given
    per_node = machine.per_node
    nics = per_node if inputs["nics_per_node"] is None else inputs.whole("nics_per_node")
    switch = switches.DEFAULT_SWITCH
    return network_watts_per_gpu(
        num_gpus=gpus, gpus_per_node=per_node, nics_per_node=nics,
        nic_bytes_per_s=machine.nic_per_gpu * per_node / nics, radix=switch.radix,
        port_bytes_per_s=switch.port_bytes_per_s,
        watts_per_switch_port=system_power.SWITCH_WATTS_PER_400G_PORT,
        watts_per_transceiver=system_power.TRANSCEIVER_WATTS)


def _host(inputs: Inputs, machine: Machine) -> tuple[float, float, str, str] | None:
    """(GPU W, rest of the system W, where that comes from, a note or ""), per GPU; None
    when neither the GPU nor its system has a power figure."""
    gpu, given = machine.gpu, inputs.opt("host_watts_per_gpu")
    if machine.power is None:
        whole = system_power.whole_system(gpu.id)
        if whole is None:
            return None
        basis = _("{system}, {watts} for {chips} chips, the chip included").format(
            system=whole.name, watts=_fmt(whole.system_watts), chips=whole.chips)
        # Only the whole is known: the share per chip, chip included, stands for both.
        return (0.0, whole.watts_per_chip if given is None else given, basis,
                _("{gpu} has no published power of its own: the site figures take each "
                  "chip's share of the {basis}, and the swing needs gpu_power_watts.").format(
                    gpu=gpu.name, basis=basis))
    share = system_power.host_share(gpu.id, gpu.power_watts or machine.power)
    if given is not None:
        return machine.power, given, _("as given"), ""
    if not share.derived:
        return machine.power, share.watts, share.basis, ""
    return (machine.power, share.watts,
            _("no published system: {basis}").format(basis=share.basis),
            _("{gpu} has no published system power: what its server adds beyond the GPU is "
              "taken as {basis}. Give host_watts_per_gpu from the server's datasheet to "
              "replace it.").format(gpu=gpu.name, basis=share.basis))


def site_power(inputs: Inputs, machine: Machine, report: Report) -> None:
    """IT load, facility load, energy at the meter and the swing, for the GPUs sized."""
    gpus, gpu_hours = report.values.get("num_gpus"), report.values.get("gpu_hours")
    host = _host(inputs, machine)
    if host is None or not isinstance(gpus, float) or not isinstance(gpu_hours, float):
        report.values.update(dict.fromkeys(_NAMES))
        return
    n, (board, rest, basis, note) = int(gpus), host
    storage = inputs.opt("storage_watts_per_gpu")
    site = SitePower(n, board, rest, _network(inputs, machine, n),
                     _STORAGE_DEFAULT if storage is None else storage, inputs.num("pue"))
    wait = inputs.num("wait_power_share")
    swing = None if machine.power is None else swing_watts(n, board, board * wait)
    report.values.update(it_watts_per_gpu=site.it_watts_per_gpu, it_load_watts=site.it_watts,
                         facility_load_watts=site.facility_watts, power_swing_watts=swing,
                         site_energy_kwh=site.energy_kwh(gpu_hours))
    parts = (_("{gpu} GPU + {rest} rest of the system ({basis})") if board else
             _("{rest} system ({basis})")).format(gpu=_fmt(board), rest=_fmt(rest), basis=basis)
    why = (_("{gpus:,} x ({parts} + {network} network + {storage} storage) x PUE {pue:g}")
           if swing is None else
           _("{gpus:,} x ({parts} + {network} network + {storage} storage) x PUE {pue:g}; the "
             "swing: every GPU falling to {wait:.0%} of its power while the job waits "
             "(Llama 3, Sec. 3.3.4)"))
    report.row(_("Site power"), _("IT {it}; facility {facility}; swing {swing}").format(
        it=_fmt(site.it_watts), facility=_fmt(site.facility_watts),
        swing=_("n/a") if swing is None else _fmt(swing)),
               why.format(gpus=n, parts=parts, network=_fmt(site.network_watts),
                          storage=_fmt(site.storage_watts), pue=site.pue, wait=wait))
    if note:
        report.notes.append(note)


def _fmt(watts: float) -> str:
    """Watts as the outputs show them ("10.4 MW")."""
    return units.format_value(watts, "W", "si")
