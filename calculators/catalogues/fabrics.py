"""Published fabric designs with the counts their sources print, for checking
:func:`calculators.formulas.fabric.sizing.size_fabric` and as presets.

Each entry gives the inputs (cluster, switch, planes, leaf ratio) and the published
counts; a count the source does not print is ``None``. Speeds are bytes/s per
direction: 400 Gb/s = 50e9. A ``derived`` entry is a construction, not a printed table:
its counts follow from the radix (k^2/2 endpoints on two tiers), and it is checked as a
derivation.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.catalogues import switches as switch_catalogue

NDR_BYTES_PER_S = 400e9 / 8  # InfiniBand NDR, 400 Gb/s per port
XDR_BYTES_PER_S = 800e9 / 8  # InfiniBand XDR, 800 Gb/s per port

H100_RA = ("NVIDIA DGX SuperPOD Reference Architecture, DGX H100 (RA-11333-001), "
           "Network Fabrics, Table 4 'Compute fabric component count'")
B200_RA = ("NVIDIA DGX SuperPOD Reference Architecture, DGX B200, DGX SuperPOD "
           "Architecture, table of larger SuperPOD component counts")
B300_XDR_RA = ("NVIDIA DGX SuperPOD Reference Architecture, DGX B300 with XDR, DGX "
               "SuperPOD Architecture, Table 3 'Example Compute Fabric Components'")
DEEPSEEK = ("Zhao et al., 'Insights into DeepSeek-V3: Scaling Challenges and Reflections on "
            "Hardware for AI Architectures', ISCA 2025 (arXiv:2505.09343), Sec. 5, "
            "topology comparison table (figures read through a secondary summary)")
HPN = ("Qian et al., 'Alibaba HPN: A Data Center Network for Large Language Model "
       "Training', SIGCOMM 2024: Sec. 3 and Figure 7 (hosts of 8 GPUs with 8 backend NICs "
       "of 2 x 200 Gb/s, each port on its own ToR; 16 ToRs and 1,024 active GPUs per "
       "segment), Sec. 5.1 (a 51.2 Tb/s ToR: 128 active + 8 backup 200G ports down, 60 x "
       "400G up, 1.067:1), Sec. 6 and Table 1 (dual plane, 60 aggregation switches per "
       "plane, 15 segments: 15,360 GPUs on two tiers; 15:1 towards the core)")
TWO_TIER_RULE = ("Construction: a spine port per leaf, so two non-blocking tiers hold k "
                 "leaves of k/2 endpoints (k^2/2) on 3k/2 switches per plane, the two-tier "
                 "case of Al-Fares et al. 2008, Sec. 3; the switch as the catalogue gives it")
AL_FARES = ("Al-Fares, Loukissas, Vahdat, 'A Scalable, Commodity Data Center Network "
            "Architecture', SIGCOMM 2008, Sec. 3")


@dataclass(frozen=True)
class ReferenceFabric:
    """A published design: the inputs to size it and the counts the source prints."""

    id: str
    source: str
    topology: str
    num_gpus: int
    gpus_per_node: int
    nics_per_node: int
    nic_bytes_per_s: float
    radix: int
    port_bytes_per_s: float
    leaf: int | None = None
    spine: int | None = None
    core: int | None = None
    switches: int | None = None
    host_links: int | None = None
    leaf_spine_links: int | None = None
    spine_core_links: int | None = None
    note: str = ""
    #: Independent planes the NIC ports are divided among (None: the topology's own).
    planes: int | None = None
    #: The leaf's down:up ratio as built (1 = non-blocking).
    leaf_oversubscription: float = 1.0
    derived: bool = False


def _h100(su: int, nodes: int, leaf: int, spine: int, *, compute_ufm: int,
          leaf_spine: int) -> ReferenceFabric:
    # 32 node slots per SU; one DGX gives way to the UFM links, whose 4 cables the
    # table adds to the node cables (compute + UFM column).
    return ReferenceFabric(
        id=f"dgx_superpod_h100_{su}su", source=H100_RA, topology="rail_optimized",
        num_gpus=8 * nodes, gpus_per_node=8, nics_per_node=8,
        nic_bytes_per_s=NDR_BYTES_PER_S, radix=64, port_bytes_per_s=NDR_BYTES_PER_S,
        leaf=leaf, spine=spine, host_links=compute_ufm, leaf_spine_links=leaf_spine,
        note="QM9700: 32 OSFP cages, 2 NDR ports each (QM97XX user manual); the host "
             "link column includes 4 UFM cables, which a GPU fabric model leaves out.")


def _b200(su: int, leaf: int, spine: int, core: int | None) -> ReferenceFabric:
    nodes = 32 * su
    return ReferenceFabric(
        id=f"dgx_superpod_b200_{su}su", source=B200_RA, topology="rail_optimized",
        num_gpus=8 * nodes, gpus_per_node=8, nics_per_node=8,
        nic_bytes_per_s=NDR_BYTES_PER_S, radix=64, port_bytes_per_s=NDR_BYTES_PER_S,
        leaf=leaf, spine=spine, core=core, host_links=8 * nodes,
        leaf_spine_links=8 * nodes, spine_core_links=8 * nodes if core else None,
        note="Every cable column equals the GPU count: a 1:1 fabric at every tier.")


def _b300_xdr(su: int, leaf: int, spine: int) -> ReferenceFabric:
    nodes = 72 * su
    return ReferenceFabric(
        id=f"dgx_superpod_b300_xdr_{su}su", source=B300_XDR_RA, topology="rail_optimized",
        num_gpus=8 * nodes, gpus_per_node=8, nics_per_node=8,
        nic_bytes_per_s=XDR_BYTES_PER_S, radix=144, port_bytes_per_s=XDR_BYTES_PER_S,
        leaf=leaf, spine=spine, host_links=8 * nodes, leaf_spine_links=8 * nodes,
        note="Radix 144 is read from the table (72 nodes per leaf, as many uplinks), "
             "matching a 144-port 800 Gb/s Quantum-X800 switch. The 18-SU row prints "
             "9,216 GPUs for 1,296 nodes (8 x 1,296 = 10,368, its own cable count).")


REFERENCE_FABRICS: tuple[ReferenceFabric, ...] = (
    _h100(1, 31, 8, 4, compute_ufm=252, leaf_spine=256),
    _h100(2, 63, 16, 8, compute_ufm=508, leaf_spine=512),
    _h100(3, 95, 24, 16, compute_ufm=764, leaf_spine=768),
    _h100(4, 127, 32, 16, compute_ufm=1020, leaf_spine=1024),
    _b200(2, 16, 8, None),
    _b200(4, 32, 16, None),
    _b200(8, 64, 32, None),
    _b200(16, 128, 128, 64),
    _b200(32, 256, 256, 128),
    _b200(64, 512, 512, 256),
    _b300_xdr(1, 8, 4),
    _b300_xdr(2, 16, 8),
    _b300_xdr(4, 32, 18),
    _b300_xdr(8, 64, 36),
    _b300_xdr(18, 144, 72),
    ReferenceFabric(
        id="deepseek_ft2", source=DEEPSEEK, topology="leaf_spine", num_gpus=2048,
        gpus_per_node=8, nics_per_node=8, nic_bytes_per_s=NDR_BYTES_PER_S, radix=64,
        port_bytes_per_s=NDR_BYTES_PER_S, switches=96,
        note="Two-layer fat tree of 64-port 400G IB switches, the comparison baseline."),
    ReferenceFabric(
        id="deepseek_mpft", source=DEEPSEEK, topology="multi_plane", num_gpus=16384,
        gpus_per_node=8, nics_per_node=8, nic_bytes_per_s=NDR_BYTES_PER_S, radix=64,
        port_bytes_per_s=NDR_BYTES_PER_S, switches=768,
        note="Eight planes, one per GPU-NIC pair, each a two-layer fat tree; "
             "'theoretically up to 16,384 GPUs'. DeepSeek-V3 itself trained on 2,048 H800."),
    ReferenceFabric(
        id="deepseek_ft3", source=DEEPSEEK, topology="fat_tree", num_gpus=65536,
        gpus_per_node=8, nics_per_node=8, nic_bytes_per_s=NDR_BYTES_PER_S, radix=64,
        port_bytes_per_s=NDR_BYTES_PER_S, switches=5120,
        note="Three-layer fat tree of the same switches."),
    ReferenceFabric(
        id="al_fares_k48", source=AL_FARES, topology="fat_tree", num_gpus=27648,
        gpus_per_node=1, nics_per_node=1, nic_bytes_per_s=1e9 / 8, radix=48,
        port_bytes_per_s=1e9 / 8, switches=2880,
        note="48-port GigE switches: k^3/4 = 27,648 hosts on 5k^2/4 = 2,880 switches."),
    ReferenceFabric(
        id="alibaba_hpn_pod", source=HPN, topology="rail_optimized", num_gpus=15_360,
        gpus_per_node=8, nics_per_node=8, nic_bytes_per_s=400e9 / 8, radix=256,
        port_bytes_per_s=200e9 / 8, planes=2, leaf_oversubscription=128 / 120,
        leaf=240, spine=120, host_links=30_720,
        note="Counted in 200G ports: the 51.2 Tb/s ToR is 256 of them (136 down, 60 x 400G "
             "up = 120), so each 400G uplink counts as two links and the switch-to-switch "
             "link and optics counts are twice the paper's cables. The 8 backup hosts per "
             "ToR are left out; each aggregation switch (the spine) uses 240 of its 256 "
             "ports, the other 16 (8 x 400G) being the ones the paper turns to the core."),
    *(ReferenceFabric(
        id=fabric_id, source=f"{TWO_TIER_RULE} ({s.name})", topology="rail_optimized",
        num_gpus=s.radix**2 // 2, gpus_per_node=8, nics_per_node=8,
        nic_bytes_per_s=nic_gbps * 1e9 / 8, radix=s.radix, port_bytes_per_s=s.port_bytes_per_s,
        planes=planes, leaf=s.radix * planes, spine=s.radix // 2 * planes,
        host_links=s.radix**2 // 2 * planes, leaf_spine_links=s.radix**2 // 2 * planes,
        derived=True,
        note="Non-blocking, rail-optimised, every spine port used; a NIC faster than a "
             "port is split over the planes, one port on each.")
      for fabric_id, s, nic_gbps, planes in (
          ("rail_2tier_51t_400g", switch_catalogue.SWITCHES["sn5600_400g"], 400, 1),
          ("rail_2tier_51t_800g", switch_catalogue.SWITCHES["sn5600_800g"], 800, 1),
          ("rail_2tier_51t_800g_nic_2_planes", switch_catalogue.SWITCHES["sn5600_400g"], 800,
           2),
          ("rail_2tier_102t_400g_nic_2_planes", switch_catalogue.SWITCHES["tomahawk6_200g"],
           400, 2))),
)


def get(fabric_id: str) -> ReferenceFabric:
    """The reference design with this id; ValueError naming the choices otherwise."""
    for fabric in REFERENCE_FABRICS:
        if fabric.id == fabric_id:
            return fabric
    choices = ", ".join(f.id for f in REFERENCE_FABRICS)
    raise ValueError(f"unknown reference fabric {fabric_id!r}; choose one of: {choices}")


#: Optics power from NVIDIA's transceiver specifications, per 400G link end. Optional
#: inputs: the calculator leaves power blank unless the reader picks one.
TRANSCEIVER_WATTS_PER_400G_END = {
    # MMA4Z00-NS400 / MMA1Z00-NS400 single-port 400G multimode: "9 Watts maximum or
    # 8 Watts typical" (product specifications, Connectivity Scenarios / Overview).
    "nic_side_400g_sr4_max": 9.0,
    "nic_side_400g_sr4_typical": 8.0,
    # MMA4Z00-NS-T twin-port 2x400G multimode OSFP: "remain at 15 Watts" per module,
    # two 400G ends per module (product specifications, Overview).
    "switch_side_twin_port_sr8": 15.0 / 2,
}
