"""The inputs of ``fabric_sizing``: the cluster, the switch (a catalogue choice whose
radix and port speed an override may replace), the topology and its planes, the leaf
and spine ratios, and what the collectives and the power figures need."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues import fabrics, hardware
from calculators.catalogues import switches as switch_catalogue
from calculators.core.i18n import _
from calculators.core.spec import Choice, Kind, Param, ValidationError
from calculators.formulas.fabric import clos
from calculators.inputs.hardware import accelerator_choices

if TYPE_CHECKING:
    from calculators.catalogues.switches import Switch
    from calculators.core.calculator import Inputs

TOPOLOGY_LABELS = {
    "leaf_spine": "two-tier leaf-spine",
    "fat_tree": "fat tree / folded Clos, up to three tiers",
    "rail_optimized": "rail-optimised (NIC k of every node on rail k's leaves)",
    "multi_plane": "multi-plane (NIC k of every node on its own plane)",
}
#: The most planes a node's NIC ports may be divided among (16 NICs of 4 ports).
MAX_PLANES = 64


def _p(name: str, label: str, default: float, unit: str, bounds: tuple[float, float], *,
       text: str, **extra: object) -> Param:
    """A numeric input: int if its default is, with its bounds and cited help."""
    kind: Kind = "int" if isinstance(default, int) else "float"
    return Param(name, label, kind, default, unit=unit, minimum=bounds[0],
                 maximum=bounds[1], help=text, **extra)  # type: ignore[arg-type]


def switch_of(inputs: Inputs) -> tuple[Switch, int, float]:
    """The chosen switch, and the radix and port speed in force: the overrides where
    given, else the switch's own. An odd radix is refused here, naming the input."""
    switch = switch_catalogue.get(inputs.text("switch"))
    radix_given = inputs.opt("switch_radix")
    radix = switch.radix if radix_given is None else inputs.whole("switch_radix")
    if radix % 2:
        raise ValidationError("switch_radix", _(
            "{radix} is not allowed: a switch radix must be even (half the ports down, half "
            "up at 1:1)").format(radix=radix))
    port = inputs.opt("switch_port_bandwidth") or switch.port_bytes_per_s
    return switch, radix, port


SWITCH_PARAMS = (
    Param("switch", "Switch", "choice", switch_catalogue.DEFAULT_SWITCH.id,
          choices=tuple(Choice(s.id, s.name) for s in switch_catalogue.SWITCHES.values()),
          help="A switch chip as it is run: ports x port speed = its capacity. 51.2 Tb/s "
               "(NVIDIA Spectrum-4 SN5600, Broadcom Tomahawk 5: 64 x 800G, 128 x 400G or "
               "256 x 200G; SN5000 hardware user manual, Tomahawk 5 product brief) is the "
               "current generation; 102.4 Tb/s (Broadcom Tomahawk 6: 64 x 1.6T to 512 x "
               "200G; NVIDIA Spectrum-6, announced) the next; 25.6 Tb/s (QM9700, "
               "Tomahawk 4: 64 x 400G) the one NVIDIA's H100/B200 SuperPOD designs use. "
               "More, slower ports reach further in two tiers (k^2/2 endpoints)."),
    Param("switch_radix", "Switch radix override (ports)", "int", None, unit="port",
          minimum=clos.MIN_RADIX, maximum=clos.MAX_RADIX, optional=True,
          placeholder="from the switch",
          help="Ports at the port speed below, when no catalogued switch fits. Blank: the "
               "switch's own (128 for the default 128 x 400G). Even."),
    Param("switch_port_bandwidth", "Switch port speed override, per direction", "float",
          None, unit="B/s", minimum=1e8, maximum=1e13, optional=True,
          placeholder="from the switch",
          help="400 Gb/s = 50 GB/s (400GbE, IEEE 802.3bs; NDR InfiniBand). Blank: the "
               "switch's own."),
)

PARAMS: tuple[Param, ...] = (
    _p("num_gpus", "GPUs", 1024, "GPU", (1, 1_000_000),
       text="GPUs to connect, in whole nodes (the last node is counted whole)."),
    _p("gpus_per_node", "GPUs per node", 8, "GPU", (1, 16),
       text="8 in an HGX/DGX H100 or B200 node (NVIDIA DGX user guides)."),
    _p("nics_per_node", "Scale-out NICs per node", 8, "NIC", (1, 16),
       text="DGX H100/B200: 8 ConnectX-7 for the compute fabric, one per GPU (DGX "
       "SuperPOD reference architectures); storage NICs are not counted."),
    _p("nic_port_bandwidth", "NIC speed, per direction", 50e9, "B/s", (1e8, 1e13),
       text="400 Gb/s NDR InfiniBand or 400 GbE = 50 GB/s; 800 Gb/s XDR or a ConnectX-8 = "
       "100 GB/s. A NIC faster than a switch port is split over several ports (spread "
       "over the planes)."),
    *SWITCH_PARAMS,
    Param("topology", "Topology", "choice", "rail_optimized",
          choices=tuple(Choice(k, v) for k, v in TOPOLOGY_LABELS.items()),
          help="Leaf-spine: two tiers. Fat tree: up to three (Al-Fares et al. 2008). "
               "Rail-optimised: NVIDIA's DGX SuperPOD designs. Multi-plane: DeepSeek's "
               "fabric, one independent two-tier fat tree per NIC (Zhao et al., ISCA "
               "2025)."),
    Param("planes", "Planes", "int", None, minimum=1, maximum=MAX_PLANES, optional=True,
          placeholder="one per NIC port (multi-plane), else 1",
          help="Independent copies of the topology among which each node's NIC ports are "
               "divided; must divide them. Alibaba HPN: 2, each 400G NIC's two 200G ports "
               "on two rail-optimised planes (Qian et al., SIGCOMM 2024, Sec. 6)."),
    _p("leaf_oversubscription", "Leaf oversubscription (down:up)", 1.0, "", (1, 63),
       text="1 = non-blocking: as many uplinks as host ports. 3 = 96 down and 32 up on a "
       "128-port switch (48 and 16 on 64 ports). Alibaba HPN's ToR: 128 down, 120 up "
       "(1.067). An assumption of the design, not a measurement."),
    _p("spine_oversubscription", "Spine oversubscription (down:up)", 1.0, "", (1, 63),
       text="Spine to core, used only when the fabric needs three tiers."),
    Param("gpu", "GPU", "choice", hardware.DEFAULT_ACCELERATOR,
          choices=accelerator_choices(),
          help="For NVLink bandwidth (the allreduce's cap and the alltoall's "
               "node-local share) and board power (the fabric's share)."),
    _p("message_bytes", "Collective message size S", float(2**30), "B", (1, 1e15),
       text="Buffer size as nccl-tests reports it, for the two collective times."),
    Param("incast_senders", "Incast senders (GPUs pushing at once)", "int", None,
          unit="GPU", minimum=1, maximum=1_000_000, optional=True,
          placeholder="every GPU",
          help="Workers pushing to parameter servers at the same time. Blank: all."),
    _p("incast_receivers", "Incast receivers (servers sharing the push)", 1, "server",
       (1, 100_000), text="Each sender spreads its push evenly over the receivers."),
    Param("receiver_bandwidth", "Receiver port speed, per direction", "float", None,
          unit="B/s", minimum=1e8, maximum=1e13, optional=True,
          placeholder="the GPU's NIC share",
          help="A server's NICs together, e.g. 100 GbE = 12.5 GB/s."),
    Param("host_links_optical", "Optics on NIC links", "bool", True,
          help="Yes: transceivers at both ends of every NIC cable (SuperPOD racks); "
               "no: copper DACs to a leaf in the rack. Switch-to-switch links are "
               "always counted optical (an assumption)."),
    _p("watts_per_transceiver", "Power per transceiver (one link end)",
       fabrics.TRANSCEIVER_WATTS_PER_400G_END["nic_side_400g_sr4_typical"], "W",
       (0, 100),
       text="8 W: NVIDIA's 400G multimode OSFP, 'typical' (MMA4Z00-NS400 product "
            "specifications; 9 W maximum); the twin-port switch module is 15 W for "
            "two 400G ends (7.5 W each). Per 400G end; faster optics draw more.",
       optional=True, placeholder="not counted"),
    Param("watts_per_switch", "Power per switch, without optics", "float", None,
          unit="W", minimum=0, maximum=1e5, optional=True, placeholder="not counted",
          help="From the switch's datasheet; blank leaves the switches out."),
)
#: Shown under "More inputs" unless an example sets them.
ADVANCED = ("planes", "spine_oversubscription", "switch_radix", "switch_port_bandwidth",
            "gpu", "message_bytes", "incast_senders", "incast_receivers",
            "receiver_bandwidth", "host_links_optical", "watts_per_transceiver",
            "watts_per_switch")
