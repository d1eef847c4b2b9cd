"""fabric_sizing: the scale-out fabric a GPU cluster needs, and what each collective
sees of it.

Sizing is formulas.fabric.sizing on formulas.fabric.clos (folded Clos rules that
reproduce NVIDIA's DGX SuperPOD tables and Al-Fares et al.'s k-ary fat tree); the
per-GPU bandwidth of each traffic pattern is formulas.fabric.patterns, whose collective
times come from formulas.collectives.costs, the same implementation collective_time uses.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.core import charts
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output, ValidationError
from calculators.formulas.fabric import clos
from calculators.formulas.fabric import patterns as fabric_patterns
from calculators.formulas.fabric import sizing as fabric
from calculators.inputs import fabric as fabric_inputs

if TYPE_CHECKING:
    from calculators.catalogues.switches import Switch
#: Leaf down:up ratios the chart sweeps (those the radix allows).
CHART_RATIOS = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)


def _size(inputs: Inputs, leaf_ratio: float) -> fabric.FabricPlan:
    """size_fabric on the inputs; its ValueErrors become errors naming an input."""
    radix, port = fabric_inputs.switch_of(inputs)[1:]
    for name in ("leaf_oversubscription", "spine_oversubscription"):
        if inputs.num(name) > radix - 1:
            raise ValidationError(name, _(
                "{ratio:g} is not allowed: with {radix} ports a switch keeps at least one "
                "uplink, so the down:up ratio is at most {most}").format(
                ratio=inputs.num(name), radix=radix, most=radix - 1))
    # The planes first, so that the error names the input without reading its words.
    try:
        fabric.plane_count(inputs.text("topology"), _node_ports(inputs, port), _planes(inputs))
    except ValueError as err:
        raise ValidationError("planes", _("{value} is not allowed: {reason}").format(
            value=inputs["planes"], reason=err)) from None
    try:
        return fabric.size_fabric(
            num_gpus=inputs.whole("num_gpus"), gpus_per_node=inputs.whole("gpus_per_node"),
            nics_per_node=inputs.whole("nics_per_node"),
            nic_bytes_per_s=inputs.num("nic_port_bandwidth"), radix=radix,
            port_bytes_per_s=port, planes=_planes(inputs),
            topology=inputs.text("topology"), leaf_oversubscription=leaf_ratio,
            spine_oversubscription=inputs.num("spine_oversubscription"),
            host_links_optical=inputs.flag("host_links_optical"),
            watts_per_transceiver=inputs.opt("watts_per_transceiver"),
            watts_per_switch=inputs.opt("watts_per_switch"))
    except ValueError as err:
        # Only leaf_spine's refusal of a third tier names fat_tree (a choice value, which
        # stays as it is in every language).
        name = "topology" if "fat_tree" in str(err) else "num_gpus"
        raise ValidationError(name, _("{value} is not allowed: {reason}").format(
            value=inputs[name], reason=err)) from None


def _planes(inputs: Inputs) -> int | None:
    planes = inputs.opt("planes")
    return None if planes is None else int(planes)


def _node_ports(inputs: Inputs, port: float) -> int:
    """NIC ports per node: a NIC faster than a switch port takes ceil(nic/port) ports."""
    per_nic = math.ceil(inputs.num("nic_port_bandwidth") / port - 1e-9)
    return inputs.whole("nics_per_node") * per_nic


def _rails(inputs: Inputs) -> tuple[int, int]:
    """(NIC ports per node, of which on one plane), divided evenly among the planes."""
    rails = _node_ports(inputs, fabric_inputs.switch_of(inputs)[2])
    return rails, rails // fabric.plane_count(inputs.text("topology"), rails, _planes(inputs))


def _patterns(inputs: Inputs, plan: fabric.FabricPlan) -> fabric_patterns.PatternBandwidths:
    per_plane = _rails(inputs)[1]
    nic = fabric_patterns.nic_bytes_per_s_per_gpu(
        inputs.whole("nics_per_node"), inputs.num("nic_port_bandwidth"),
        inputs.whole("gpus_per_node"))
    port = fabric_inputs.switch_of(inputs)[2]
    senders = inputs.opt("incast_senders")
    return fabric_patterns.pattern_bandwidths(
        plan, num_gpus=inputs.whole("num_gpus"), gpus_per_node=inputs.whole("gpus_per_node"),
        nics_per_node=inputs.whole("nics_per_node"),
        nic_bytes_per_s=inputs.num("nic_port_bandwidth"),
        port_bytes_per_s=port, rails_per_plane=per_plane,
        incast_senders=inputs.whole("num_gpus") if senders is None else int(senders),
        incast_receivers=inputs.whole("incast_receivers"),
        receiver_bytes_per_s=inputs.opt("receiver_bandwidth") or nic)


def _chart(inputs: Inputs) -> str:
    series: dict[str, list[tuple[float, float]]] = {"alltoall": [], "ring allreduce": [],
                                                    "PS incast": []}
    radix = fabric_inputs.switch_of(inputs)[1]
    for ratio in CHART_RATIOS:
        if ratio > radix - 1:
            continue
        try:
            bw = _patterns(inputs, _size(inputs, ratio))
        except ValidationError:
            continue  # a ratio this cluster cannot be built with; leave the point out
        for name, value in (("alltoall", bw.alltoall), ("ring allreduce", bw.allreduce),
                            ("PS incast", bw.incast)):
            series[name].append((ratio, value / 1e9))
    labels = {"alltoall": _("alltoall (GB/s)"), "ring allreduce": _("ring allreduce (GB/s)"),
              "PS incast": _("PS incast (GB/s)")}
    return charts.line_chart(
        _("Per-GPU bandwidth each pattern sees against the leaf's down:up ratio"),
        [charts.Series(labels[name], tuple(points)) for name, points in series.items()],
        _("leaf oversubscription (down:up)"), _("GB/s per GPU, per direction"),
        markers=(charts.Marker(inputs.num("leaf_oversubscription"), _("this design")),))


def _table(plan: fabric.FabricPlan) -> Table:
    rows = [(_("NIC ports"), f"{plan.endpoints:,}", "", "",
             _("{links:,} to leaves").format(links=plan.host_links))]
    for tier in plan.tiers:
        ratio = tier.oversubscription
        rows.append((_(tier.name), f"{tier.switches:,}", f"{tier.down_ports} / {tier.up_ports}",
                     _("top") if ratio is None else f"{ratio:.3g}:1",
                     f"{tier.links_up:,}" if tier.links_up else ""))
    caption = _("Switches per tier, all planes") if plan.planes > 1 else _("Switches per tier")
    return Table((_("tier"), _("switches"), _("ports down / up"), _("down:up"),
                  _("links to the next tier")), tuple(rows), caption=caption)


def _fabric_sizing(inputs: Inputs) -> Computed:
    num_gpus, per_node = inputs.whole("num_gpus"), inputs.whole("gpus_per_node")
    senders = inputs.opt("incast_senders")
    if senders is not None and senders > num_gpus:
        raise ValidationError("incast_senders", _(
            "{senders} is not allowed: at most the {gpus} GPUs of the cluster can push at "
            "once").format(senders=int(senders), gpus=num_gpus))
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
    switch, radix, port = fabric_inputs.switch_of(inputs)
    endpoint = fabric_patterns.port_rate(inputs.num("nic_port_bandwidth"), port)
    aligned = inputs.text("topology") in fabric_patterns.RAIL_ALIGNED
    largest = {t: clos.max_nodes(radix, t, rails_per_plane=per_plane,
                                 rail_aligned=aligned) * per_node for t in (2, 3)}
    share: float | None = None
    if plan.power_watts is not None and gpu.power_watts is not None:
        share = plan.power_watts / (plan.power_watts + num_gpus * gpu.power_watts)
    spine = tiers.get("spine")
    shape = (_("{planes} plane(s), {tiers} tier(s) of {radix}-port switches; {rails} NIC "
               "port(s) per node. An alltoall stays under one leaf for {leaf:,} GPUs and under "
               "one pod for {pod:,}; beyond that it pays each tier's down:up ratio, a ring "
               "allreduce does not.") if bw.pod_gpus else
             _("{planes} plane(s), {tiers} tier(s) of {radix}-port switches; {rails} NIC "
               "port(s) per node. An alltoall stays under one leaf for {leaf:,} GPUs; beyond "
               "that it pays each tier's down:up ratio, a ring allreduce does not."))
    notes = [
        _switch_note(switch, radix, port),
        shape.format(planes=plan.planes, tiers=len(plan.tiers), radix=radix, rails=rails,
                     leaf=bw.leaf_gpus, pod=bw.pod_gpus),
        _("First order: perfect load balance on the links each pattern may use (see "
          "ecmp_collisions for hashing), no congestion control or queues (see incast), "
          "no latency terms in the times (see collective_time)."),
    ]
    warnings: list[str] = []
    if plan.power_watts is not None and inputs.opt("watts_per_switch") is None:
        notes.append(_("Fabric power counts the optics only: give watts_per_switch (the "
                       "switch's datasheet figure without optics) to add the switches."))
    if inputs.num("spine_oversubscription") != 1 and "core" not in tiers:
        warnings.append(_("The spine oversubscription applies to a third tier only; this "
                          "fabric has none, so it is ignored."))
    if inputs.whole("nics_per_node") < per_node:
        warnings.append(_("{gpus} GPUs share {nics} NIC(s): each GPU gets a share of a NIC, "
                          "and alltoall traffic from GPUs without their own NIC crosses PCIe "
                          "or NVLink first.").format(gpus=per_node,
                                                     nics=inputs.whole("nics_per_node")))
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


def _switch_note(switch: Switch, radix: int, port: float) -> str:
    """Which switch the fabric is built from: the catalogue's, or its overrides."""
    if (radix, port) != (switch.radix, switch.port_bytes_per_s):
        return _("Switches of {radix} ports at {port:g} Gb/s ({total:g} Tb/s), given instead "
                 "of the {switch}.").format(radix=radix, port=port * 8 / 1e9,
                                            total=radix * port * 8 / 1e12, switch=switch.name)
    if switch.announced:
        return _("Switches: {switch}. Announced, not yet shipping: its figures are the "
                 "announcement's.").format(switch=switch.name)
    return _("Switches: {switch}.").format(switch=switch.name)


FABRIC_SIZING = Calculator(
    id="fabric_sizing",
    headline=("switches", "bisection_bandwidth", "alltoall_bandwidth_per_gpu"),
    title="Fabric sizing: tiers, switches, bisection, and what each collective sees",
    summary="Leaf-spine, fat tree, rail-optimised or multi-plane fabric for a GPU "
            "cluster: switches, links, optics, bisection bandwidth, and the per-GPU "
            "bandwidth of a ring allreduce, an alltoall and a parameter-server incast.",
    chapter="network.md",
    advanced=fabric_inputs.ADVANCED,
    params=fabric_inputs.PARAMS,
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
        "brief (51.2 Tb/s): the default switch; the rest of the switch catalogue "
        "(Tomahawk 4 and 6, Quantum-2 and Quantum-X800, Spectrum-X Photonics) with its "
        "sources in catalogues.switches",
        "Qian et al. 2024, Alibaba HPN: A Data Center Network for Large Language Model "
        "Training, SIGCOMM, Sec. 5-6 (a dual-plane, rail-optimised two-tier pod of 15,360 "
        "GPUs on 51.2 Tb/s switches)",
        "Zhao et al. 2025, Insights into DeepSeek-V3: Scaling Challenges and Reflections "
        "on Hardware for AI Architectures, ISCA, Sec. 5 (multi-plane fat tree)",
        "NVIDIA blog, Doubling all2all Performance with NCCL 2.12 (PXN), 2022",
        "NVIDIA nccl-tests, doc/PERFORMANCE.md (bus bandwidth); Thakur, Rabenseifner and "
        "Gropp 2005 (collective costs)",
    ),
)
