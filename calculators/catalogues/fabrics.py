"""Published fabric designs with the counts their sources print, for checking
:func:`calculators.formulas.fabric.sizing.size_fabric` and as presets.

Each entry gives the inputs (cluster and switch) and the published counts; a count the
source does not print is ``None``. Speeds are bytes/s per direction: 400 Gb/s = 50e9.
"""

from __future__ import annotations

from dataclasses import dataclass

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
)


def get(fabric_id: str) -> ReferenceFabric:
    """The reference design with this id; ValueError naming the choices otherwise."""
    for fabric in REFERENCE_FABRICS:
        if fabric.id == fabric_id:
            return fabric
    choices = ", ".join(f.id for f in REFERENCE_FABRICS)
    raise ValueError(f"unknown reference fabric {fabric_id!r}; choose one of: {choices}")


@dataclass(frozen=True)
class Switch:
    """A switch as a fabric sees it: ports at one speed (bytes/s per direction)."""

    id: str
    name: str
    radix: int
    port_bytes_per_s: float
    source: str

    @property
    def capacity_bits_per_s(self) -> float:
        """Switching capacity, one direction: ports x port speed."""
        return self.radix * self.port_bytes_per_s * 8


SWITCHES: dict[str, Switch] = {
    # The previous generation, 25.6 Tb/s: the switch of the DGX SuperPOD H100/B200
    # reference designs and DeepSeek's fabrics above.
    "qm9700_ndr": Switch(
        id="qm9700_ndr", name="NVIDIA Quantum-2 QM9700, 64 x 400G NDR (25.6 Tb/s)",
        radix=64, port_bytes_per_s=NDR_BYTES_PER_S,
        source="NVIDIA QM97XX user manual, Interfaces: 32 OSFP cages, 'each OSFP port "
               "consists of 2 logical InfiniBand ports' of 400 Gb/s"),
    # The current generation, 51.2 Tb/s, run at the 400G of a ConnectX-7 NIC.
    "sn5600_400g": Switch(
        id="sn5600_400g",
        name="51.2 Tb/s: NVIDIA Spectrum-4 SN5600 or Broadcom Tomahawk 5, 128 x 400G",
        radix=128, port_bytes_per_s=400e9 / 8,
        source="NVIDIA Spectrum-4 SN5000 2U Switch Systems Hardware User Manual, Data "
               "Interfaces: SN5600, 64 ports of 800GbE, 128 of 400GbE or 256 of 200GbE; "
               "Broadcom BCM78900 (Tomahawk 5) product brief: 51.2 Tb/s, 64 x 800GbE, "
               "128 x 400GbE or 256 x 200GbE"),
}
#: The calculator's default switch: the current generation (issue 32, item 11: the
#: 64-port switch forced three tiers at 8,192 GPUs, where this one needs two).
DEFAULT_SWITCH = SWITCHES["sn5600_400g"]


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
