"""fabric_sizing: the scale-out fabric a GPU cluster needs, and what each collective
sees of it.

Sizing is formulas.fabric.sizing on formulas.fabric.clos (folded Clos rules that
reproduce NVIDIA's DGX SuperPOD tables and Al-Fares et al.'s k-ary fat tree); the
per-GPU bandwidth of each traffic pattern is formulas.fabric.patterns, whose collective
times come from formulas.collectives.costs, the same implementation collective_time uses.
"""

from __future__ import annotations

import math

from calculators.catalogues import fabrics, hardware
from calculators.core import charts
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.spec import Choice, Kind, Output, Param, ValidationError
from calculators.formulas.fabric import clos
from calculators.formulas.fabric import patterns as fabric_patterns
from calculators.formulas.fabric import sizing as fabric
from calculators.inputs.hardware import accelerator_choices

TOPOLOGY_LABELS = {
    "leaf_spine": "two-tier leaf-spine",
    "fat_tree": "fat tree / folded Clos, up to three tiers",
    "rail_optimized": "rail-optimised (NIC k of every node on rail k's leaves)",
    "multi_plane": "multi-plane (NIC k of every node on its own plane)",
}
#: Leaf down:up ratios the chart sweeps (those the radix allows).
CHART_RATIOS = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)


def _size(inputs: Inputs, leaf_ratio: float) -> fabric.FabricPlan:
    """size_fabric on the inputs; its ValueErrors become errors naming an input."""
    radix = inputs.whole("switch_radix")
    if radix % 2:
        raise ValidationError("switch_radix", f"{radix} is not allowed: a switch radix "
                              "must be even (half the ports down, half up at 1:1)")
    for name in ("leaf_oversubscription", "spine_oversubscription"):
        if inputs.num(name) > radix - 1:
            raise ValidationError(name, f"{inputs.num(name):g} is not allowed: with "
                                  f"{radix} ports a switch keeps at least one uplink, so "
                                  f"the down:up ratio is at most {radix - 1}")
    try:
        return fabric.size_fabric(
            num_gpus=inputs.whole("num_gpus"), gpus_per_node=inputs.whole("gpus_per_node"),
            nics_per_node=inputs.whole("nics_per_node"),
            nic_bytes_per_s=inputs.num("nic_port_bandwidth"), radix=radix,
            port_bytes_per_s=inputs.num("switch_port_bandwidth"),
            topology=inputs.text("topology"), leaf_oversubscription=leaf_ratio,
            spine_oversubscription=inputs.num("spine_oversubscription"),
            host_links_optical=inputs.flag("host_links_optical"),
            watts_per_transceiver=inputs.opt("watts_per_transceiver"),
            watts_per_switch=inputs.opt("watts_per_switch"))
    except ValueError as err:
        name = "topology" if "choose fat_tree" in str(err) else "num_gpus"
        raise ValidationError(name, f"{inputs[name]} is not allowed: {err}") from None


def _rails(inputs: Inputs) -> tuple[int, int]:
    """(NIC ports per node, of which on one plane): a NIC faster than a switch port
    takes ceil(nic/port) ports; multi-plane puts each port on its own plane."""
    per_nic = math.ceil(inputs.num("nic_port_bandwidth") / inputs.num("switch_port_bandwidth")
                        - 1e-9)
    rails = inputs.whole("nics_per_node") * per_nic
    return rails, 1 if inputs.text("topology") == "multi_plane" else rails


def _patterns(inputs: Inputs, plan: fabric.FabricPlan) -> fabric_patterns.PatternBandwidths:
    _, per_plane = _rails(inputs)
    nic = fabric_patterns.nic_bytes_per_s_per_gpu(
        inputs.whole("nics_per_node"), inputs.num("nic_port_bandwidth"),
        inputs.whole("gpus_per_node"))
    senders = inputs.opt("incast_senders")
    return fabric_patterns.pattern_bandwidths(
        plan, num_gpus=inputs.whole("num_gpus"), gpus_per_node=inputs.whole("gpus_per_node"),
        nics_per_node=inputs.whole("nics_per_node"),
        nic_bytes_per_s=inputs.num("nic_port_bandwidth"),
        port_bytes_per_s=inputs.num("switch_port_bandwidth"), rails_per_plane=per_plane,
        incast_senders=inputs.whole("num_gpus") if senders is None else int(senders),
        incast_receivers=inputs.whole("incast_receivers"),
        receiver_bytes_per_s=inputs.opt("receiver_bandwidth") or nic)


def _chart(inputs: Inputs) -> str:
    series: dict[str, list[tuple[float, float]]] = {"alltoall": [], "ring allreduce": [],
                                                    "PS incast": []}
    for ratio in CHART_RATIOS:
        if ratio > inputs.whole("switch_radix") - 1:
            continue
        try:
            bw = _patterns(inputs, _size(inputs, ratio))
        except ValidationError:
            continue  # a ratio this cluster cannot be built with; leave the point out
        for name, value in (("alltoall", bw.alltoall), ("ring allreduce", bw.allreduce),
                            ("PS incast", bw.incast)):
            series[name].append((ratio, value / 1e9))
    return charts.line_chart(
        "Per-GPU bandwidth each pattern sees against the leaf's down:up ratio",
        [charts.Series(f"{name} (GB/s)", tuple(points)) for name, points in series.items()],
        "leaf oversubscription (down:up)", "GB/s per GPU, per direction",
        markers=(charts.Marker(inputs.num("leaf_oversubscription"), "this design"),))


def _table(plan: fabric.FabricPlan) -> Table:
    rows = [("NIC ports", f"{plan.endpoints:,}", "", "", f"{plan.host_links:,} to leaves")]
    for tier in plan.tiers:
        ratio = tier.oversubscription
        rows.append((tier.name, f"{tier.switches:,}", f"{tier.down_ports} / {tier.up_ports}",
                     "top" if ratio is None else f"{ratio:.3g}:1",
                     f"{tier.links_up:,}" if tier.links_up else ""))
    caption = "Switches per tier, all planes" if plan.planes > 1 else "Switches per tier"
    return Table(("tier", "switches", "ports down / up", "down:up", "links to the next tier"),
                 tuple(rows), caption=caption)


def _fabric_sizing(inputs: Inputs) -> Computed:
    num_gpus, per_node = inputs.whole("num_gpus"), inputs.whole("gpus_per_node")
    senders = inputs.opt("incast_senders")
    if senders is not None and senders > num_gpus:
        raise ValidationError("incast_senders", f"{int(senders)} is not allowed: at most "
                              f"the {num_gpus} GPUs of the cluster can push at once")
    plan = _size(inputs, inputs.num("leaf_oversubscription"))
    bw = _patterns(inputs, plan)
    rails, per_plane = _rails(inputs)
    gpu = hardware.get(inputs.text("gpu"))
    message = inputs.num("message_bytes")
    times = {name: f(message, num_gpus, gpus_per_node=per_node,
                     scale_up_bytes_per_s=gpu.scale_up_bandwidth, bandwidth=bw)
             for name, f in (("allreduce", fabric_patterns.allreduce_time_s),
                             ("alltoall", fabric_patterns.alltoall_time_s))}
    tiers = {t.name: t for t in plan.tiers}
    endpoint = fabric_patterns.port_rate(inputs.num("nic_port_bandwidth"),
                                         inputs.num("switch_port_bandwidth"))
    aligned = inputs.text("topology") in fabric_patterns.RAIL_ALIGNED
    largest = {t: clos.max_nodes(inputs.whole("switch_radix"), t, rails_per_plane=per_plane,
                                 rail_aligned=aligned) * per_node for t in (2, 3)}
    share: float | None = None
    if plan.power_watts is not None and gpu.power_watts is not None:
        share = plan.power_watts / (plan.power_watts + num_gpus * gpu.power_watts)
    spine = tiers.get("spine")
    notes = [
        f"{plan.planes} plane(s), {len(plan.tiers)} tier(s) of {inputs.whole('switch_radix')}"
        f"-port switches; {rails} NIC port(s) per node. An alltoall stays under one leaf "
        f"for {bw.leaf_gpus:,} GPUs"
        + (f" and under one pod for {bw.pod_gpus:,}" if bw.pod_gpus else "")
        + "; beyond that it pays each tier's down:up ratio, a ring allreduce does not.",
        "First order: perfect load balance on the links each pattern may use (see "
        "ecmp_collisions for hashing), no congestion control or queues (see incast), "
        "no latency terms in the times (see collective_time).",
    ]
    warnings: list[str] = []
    if plan.power_watts is not None and inputs.opt("watts_per_switch") is None:
        notes.append("Fabric power counts the optics only: give watts_per_switch (the "
                     "switch's datasheet figure without optics) to add the switches.")
    if inputs.num("spine_oversubscription") != 1 and "core" not in tiers:
        warnings.append("The spine oversubscription applies to a third tier only; this "
                        "fabric has none, so it is ignored.")
    if inputs.whole("nics_per_node") < per_node:
        warnings.append(f"{per_node} GPUs share {inputs.whole('nics_per_node')} NIC(s): "
                        "each GPU gets a share of a NIC, and alltoall traffic from "
                        "GPUs without their own NIC crosses PCIe or NVLink first.")
    return Computed(
        values={
            "switches": plan.switches,
            "bisection_bandwidth": plan.bisection_bytes_per_s,
            "alltoall_bandwidth_per_gpu": bw.alltoall,
            "tiers": len(plan.tiers),
            "planes": plan.planes,
            "leaf_switches": tiers["leaf"].switches,
            "spine_switches": spine.switches if spine else 0,
            "core_switches": tiers["core"].switches if "core" in tiers else 0,
            "host_links": plan.host_links,
            "switch_links": plan.switch_links,
            "transceivers": plan.transceivers,
            "leaf_down_up": tiers["leaf"].oversubscription,
            "spine_down_up": spine.oversubscription if spine else None,
            "bisection_fraction": plan.bisection_bytes_per_s / (plan.endpoints / 2 * endpoint),
            "max_gpus_two_tiers": largest[2],
            "max_gpus_three_tiers": largest[3],
            "nic_bandwidth_per_gpu": bw.nic,
            "allreduce_bandwidth_per_gpu": bw.allreduce,
            "incast_bandwidth_per_gpu": bw.incast,
            "allreduce_time_s": times["allreduce"],
            "alltoall_time_s": times["alltoall"],
            "fabric_power": plan.power_watts,
            "fabric_power_share": share,
        },
        warnings=warnings, notes=notes, table=_table(plan), chart=_chart(inputs))


def _p(name: str, label: str, default: float, unit: str, bounds: tuple[float, float], *,
       text: str, **extra: object) -> Param:
    """A numeric input: int if its default is, with its bounds and cited help."""
    kind: Kind = "int" if isinstance(default, int) else "float"
    return Param(name, label, kind, default, unit=unit, minimum=bounds[0],
                 maximum=bounds[1], help=text, **extra)  # type: ignore[arg-type]


FABRIC_SIZING = Calculator(
    id="fabric_sizing",
    headline=("switches", "bisection_bandwidth", "alltoall_bandwidth_per_gpu"),
    title="Fabric sizing: tiers, switches, bisection, and what each collective sees",
    summary="Leaf-spine, fat tree, rail-optimised or multi-plane fabric for a GPU "
            "cluster: switches, links, optics, bisection bandwidth, and the per-GPU "
            "bandwidth of a ring allreduce, an alltoall and a parameter-server incast.",
    chapter="network.md",
    advanced=("spine_oversubscription", "gpu", "message_bytes", "incast_senders",
              "incast_receivers", "receiver_bandwidth", "host_links_optical",
              "watts_per_transceiver", "watts_per_switch"),
    params=(
        _p("num_gpus", "GPUs", 1024, "GPU", (1, 1_000_000),
           text="GPUs to connect, in whole nodes (the last node is counted whole)."),
        _p("gpus_per_node", "GPUs per node", 8, "GPU", (1, 16),
           text="8 in an HGX/DGX H100 or B200 node (NVIDIA DGX user guides)."),
        _p("nics_per_node", "Scale-out NICs per node", 8, "NIC", (1, 16),
           text="DGX H100/B200: 8 ConnectX-7 for the compute fabric, one per GPU (DGX "
           "SuperPOD reference architectures); storage NICs are not counted."),
        _p("nic_port_bandwidth", "NIC speed, per direction", 50e9, "B/s", (1e8, 1e13),
           text="400 Gb/s NDR InfiniBand or 400 GbE = 50 GB/s; 800 Gb/s XDR = 100 GB/s. A NIC "
           "faster than a switch port is split over several ports (one plane each "
           "in a multi-plane fabric)."),
        _p("switch_radix", "Switch radix (ports)", fabrics.DEFAULT_SWITCH.radix, "port",
           (4, clos.MAX_RADIX),
           text="Ports at the port speed below. 128: a 51.2 Tb/s switch run at 400G, the "
           "current generation (NVIDIA SN5600 / Spectrum-4: 64 x 800GbE or 128 x 400GbE, "
           "SN5000 hardware user manual, Data Interfaces; Broadcom Tomahawk 5 alike): two "
           "tiers hold 8,192 GPUs. 64: the previous 25.6 Tb/s generation, a QM9700's 32 "
           "OSFP cages of 2 NDR ports (QM97XX user manual), as in the DGX SuperPOD H100 "
           "and B200 designs. A Quantum-X800 has 144 ports of 800 Gb/s. Even."),
        _p("switch_port_bandwidth", "Switch port speed, per direction",
           fabrics.DEFAULT_SWITCH.port_bytes_per_s, "B/s", (1e8, 1e13),
           text="400 Gb/s = 50 GB/s (400GbE, IEEE 802.3bs; NDR InfiniBand)."),
        Param("topology", "Topology", "choice", "rail_optimized",
              choices=tuple(Choice(k, v) for k, v in TOPOLOGY_LABELS.items()),
              help="Leaf-spine: two tiers. Fat tree: up to three (Al-Fares et al. 2008). "
                   "Rail-optimised: NVIDIA's DGX SuperPOD designs. Multi-plane: DeepSeek's "
                   "fabric, one independent two-tier fat tree per NIC (Zhao et al., ISCA "
                   "2025)."),
        _p("leaf_oversubscription", "Leaf oversubscription (down:up)", 1.0, "", (1, 63),
           text="1 = non-blocking: as many uplinks as host ports. 3 = 96 down and 32 up on a "
           "128-port switch (48 and 16 on 64 ports). An assumption of the design, not a "
           "measurement."),
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
    ),
    outputs=(
        Output("switches", "Switches", "", "count"),
        Output("bisection_bandwidth", "Bisection bandwidth, one direction", "B/s"),
        Output("alltoall_bandwidth_per_gpu", "Alltoall bandwidth per GPU", "B/s"),
        Output("tiers", "Tiers", "", "count"),
        Output("planes", "Planes", "", "count"),
        Output("leaf_switches", "Leaf switches", "", "count"),
        Output("spine_switches", "Spine switches", "", "count"),
        Output("core_switches", "Core switches", "", "count"),
        Output("host_links", "NIC-to-leaf links", "", "count"),
        Output("switch_links", "Switch-to-switch links", "", "count"),
        Output("transceivers", "Transceivers (link ends with optics)", "", "count"),
        Output("leaf_down_up", "Leaf oversubscription, as built", "", "fixed"),
        Output("spine_down_up", "Spine oversubscription, as built", "", "fixed"),
        Output("bisection_fraction", "Bisection / full bisection", "1", "percent"),
        Output("max_gpus_two_tiers", "Largest non-blocking cluster, two tiers", "GPU",
               "count"),
        Output("max_gpus_three_tiers", "Largest non-blocking cluster, three tiers", "GPU",
               "count"),
        Output("nic_bandwidth_per_gpu", "NIC bandwidth per GPU", "B/s"),
        Output("allreduce_bandwidth_per_gpu", "Ring allreduce bandwidth per GPU", "B/s"),
        Output("incast_bandwidth_per_gpu", "PS incast bandwidth per sender", "B/s"),
        Output("allreduce_time_s", "Ring allreduce time, line rate", "s"),
        Output("alltoall_time_s", "Alltoall time, line rate", "s"),
        Output("fabric_power", "Fabric power", "W"),
        Output("fabric_power_share", "Fabric share of GPU + fabric power", "1", "percent"),
    ),
    function=_fabric_sizing,
    sources=(
        "Al-Fares, Loukissas, Vahdat 2008, A Scalable, Commodity Data Center Network "
        "Architecture, SIGCOMM, Sec. 3 (k-ary fat tree: k^3/4 hosts, 5k^2/4 switches)",
        "NVIDIA DGX SuperPOD reference architectures (DGX H100, B200, B300 with XDR): "
        "rail-optimised compute fabrics and their component counts",
        "NVIDIA Spectrum-4 SN5000 2U Switch Systems Hardware User Manual, Data Interfaces "
        "(SN5600: 64 x 800GbE, 128 x 400GbE); Broadcom Tomahawk 5 (BCM78900) product "
        "brief (51.2 Tb/s): the default switch",
        "Zhao et al. 2025, Insights into DeepSeek-V3: Scaling Challenges and Reflections "
        "on Hardware for AI Architectures, ISCA, Sec. 5 (multi-plane fat tree)",
        "NVIDIA blog, Doubling all2all Performance with NCCL 2.12 (PXN), 2022",
        "NVIDIA nccl-tests, doc/PERFORMANCE.md (bus bandwidth); Thakur, Rabenseifner and "
        "Gropp 2005 (collective costs)",
    ),
)
