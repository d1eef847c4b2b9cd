"""What a GPU draws at the site beyond its own board: published system power, the
switches and optics of the scale-out fabric, and the storage behind the job.

System figures are the vendors' maximum input power for the whole system (the figure a
site provisions a circuit for), not a measured average: Latif et al. 2024
(arXiv 2412.08602, "Empirical Measurements of AI Training Power Demand on a
GPU-Accelerated Node") measured at most 8.4 kW on an 8-GPU HGX H100 node rated 10.2 kW,
even with its GPUs near full utilisation. A system's share per GPU beyond the GPU's
board power (``host_watts_per_gpu``) is what its CPUs, memory, NICs, NVLink switches,
fans, local drives and power conversion add.

A part with no published system figure (an H800 or H20 node, AMD's platforms, Ascend
servers) gets its share by an explicit rule, never a typed-in number: its board power
times the ratio of system power to GPU board power of the reference system it is built
like (``DERIVED_FROM``; the DGX H100 otherwise). ``host_share`` says which.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.catalogues.fabrics import TRANSCEIVER_WATTS_PER_400G_END
from calculators.core.i18n import _


@dataclass(frozen=True)
class SystemPower:
    """One system's published maximum power, for ``gpus`` GPUs of ``gpu_watts`` each."""

    id: str
    name: str
    system_watts: float  # W, maximum input power of the whole system (or rack)
    gpus: int
    gpu_watts: float  # W, board power of each GPU it holds (the accelerator catalogue's)
    source: str

    @property
    def watts_per_gpu(self) -> float:
        """The system's power divided among its GPUs."""
        return self.system_watts / self.gpus

    @property
    def host_watts_per_gpu(self) -> float:
        """Per GPU, what the system draws beyond the GPU boards."""
        return self.watts_per_gpu - self.gpu_watts

    @property
    def ratio(self) -> float:
        """System power over the GPUs' board power (DGX H100: 10.2 kW / 5.6 kW = 1.82)."""
        return self.system_watts / (self.gpus * self.gpu_watts)


SYSTEMS: dict[str, SystemPower] = {s.id: s for s in (
    SystemPower(
        "dgx_a100", "NVIDIA DGX A100", 6_500.0, 8, 400.0,
        "NVIDIA DGX A100 user guide, power specifications: 6.5 kW maximum, six 3 kW "
        "power supplies (3+3 redundant); 8 A100 SXM4 at 400 W."),
    SystemPower(
        "dgx_h100", "NVIDIA DGX H100/H200", 10_200.0, 8, 700.0,
        "NVIDIA DGX H100/H200 user guide, power specifications: 10.2 kW maximum, six "
        "3.3 kW power supplies (4+2 redundant); 8 H100 or H200 SXM at 700 W. Latif et al. "
        "2024 cite the same 10.2 kW rating for the HGX H100 node they measured."),
    SystemPower(
        "dgx_b200", "NVIDIA DGX B200", 14_300.0, 8, 1_000.0,
        "NVIDIA DGX B200 user guide, power specifications: 14.3 kW maximum, six 3.3 kW "
        "power supplies (5+1 redundant); 8 B200 at 1,000 W."),
    SystemPower(
        "dgx_b300", "NVIDIA DGX B300", 14_500.0, 8, 1_100.0,
        "NVIDIA DGX B300 user guide, introduction: 14.5 kW maximum (twelve 3.2 kW power "
        "supplies, N+N, or a 54 V DC busbar); 8 B300 at the 1,100 W of the accelerator "
        "catalogue."),
    SystemPower(
        "gb200_nvl72", "NVIDIA GB200 NVL72 rack", 120_000.0, 72, 1_200.0,
        "NVIDIA's GB200 NVL72 rack as shown at GTC 2024: 72 B200 GPUs and 36 Grace CPUs "
        "in 18 compute trays with 9 NVLink switch trays, 120 kW per rack (ServeTheHome, "
        "'NVIDIA DGX GB200 NVL72', March 2024); GPUs at up to 1,200 W. NVIDIA's DGX "
        "SuperPOD GB200 reference architecture provisions 1.2 MW for a scalable unit of "
        "8 racks with its share of the fabric."),
    SystemPower(
        "gb300_nvl72", "NVIDIA GB300 NVL72 rack", 132_000.0, 72, 1_400.0,
        "Supermicro's GB300 NVL72 rack: power shelves of 33 kW (six 5.5 kW supplies "
        "each), 132 kW per rack, and 132-140 kW in operation by Supermicro's Blackwell "
        "solutions brochure (as reported by ServeTheHome and ServerSimply, 2025); the "
        "catalogue takes the low end, 132 kW. 72 B300 at 1,400 W."),
)}

#: The system each accelerator of the hardware catalogue ships in.
BY_ACCELERATOR = {"a100_40gb_sxm": "dgx_a100", "a100_80gb_sxm": "dgx_a100",
                  "h100_sxm": "dgx_h100", "h200": "dgx_h100", "b200": "dgx_b200",
                  "b300": "dgx_b300", "gb200": "gb200_nvl72", "gb300": "gb300_nvl72"}
#: Parts with no published system figure, built like a system that has one: the H800
#: and H20 are Hopper boards in the HGX H100 baseboard and chassis; an A800 is an A100
#: in an HGX A100 node. Any other part is derived from the DGX H100.
DERIVED_FROM = {"h800": "dgx_h100", "h20": "dgx_h100", "a800": "dgx_a100",
                "a800_80gb_sxm": "dgx_a100", "a800_40gb_sxm": "dgx_a100"}
REFERENCE_SYSTEM = "dgx_h100"


@dataclass(frozen=True)
class HostShare:
    """Watts per GPU beyond its board, and where the figure comes from."""

    watts: float
    basis: str
    derived: bool


def host_share(accelerator_id: str, board_watts: float) -> HostShare:
    """What each GPU of ``accelerator_id`` adds at the system level beyond its board:
    the published system's share per GPU less its board power, or, with no published
    system, ``board_watts`` x (the reference system's ratio - 1), an assumption that
    says so."""
    published = SYSTEMS.get(BY_ACCELERATOR.get(accelerator_id, ""))
    if published is not None:
        return HostShare(published.host_watts_per_gpu,
                         _("{system}: {kw:g} kW for {gpus} GPUs").format(
                             system=published.name, kw=published.system_watts / 1e3,
                             gpus=published.gpus), derived=False)
    ref = SYSTEMS[DERIVED_FROM.get(accelerator_id, REFERENCE_SYSTEM)]
    return HostShare(board_watts * (ref.ratio - 1.0),
                     _("board power x {ratio:.2f}, the {system}'s ratio of system to GPU "
                       "power (an assumption)").format(ratio=ref.ratio, system=ref.name),
                     derived=True)


@dataclass(frozen=True)
class WholeSystem:
    """A system whose power is known only as a whole, its chips' own power unpublished:
    its share per chip, chip included."""

    id: str
    name: str
    system_watts: float
    chips: int
    source: str

    @property
    def watts_per_chip(self) -> float:
        return self.system_watts / self.chips


#: Huawei publishes no power figure for the Ascend 910C or its supernode; SemiAnalysis
#: estimates the whole CloudMatrix 384 (384 Ascend 910C in 12 compute racks, 4 racks of
#: UB switches, 6,912 optical transceivers of 800G) at 559 kW ("Huawei AI CloudMatrix
#: 384 - China's Answer to Nvidia GB200 NVL72", 16 April 2025; Tom's Hardware reported
#: the same), an analyst's estimate, not Huawei's figure.
WHOLE_SYSTEMS: dict[str, WholeSystem] = {
    "ascend_910c": WholeSystem(
        "cloudmatrix_384", "Huawei CloudMatrix 384 (SemiAnalysis's estimate)", 559_000.0,
        384, "SemiAnalysis, 'Huawei AI CloudMatrix 384 - China's Answer to Nvidia GB200 "
        "NVL72' (16 April 2025): 559 kW for the whole system, its scale-up optics "
        "included; an estimate, Huawei publishes none."),
}


def whole_system(accelerator_id: str) -> WholeSystem | None:
    """The whole-system figure of a part with no chip power, if one is catalogued."""
    return WHOLE_SYSTEMS.get(accelerator_id)


# --- the scale-out fabric ------------------------------------------------------------

#: NVIDIA QM97X0 (Quantum-2, 64 ports of 400 Gb/s NDR) hardware user manual,
#: Specifications: 747 W typical with passive cables, 1,720 W maximum with active cables.
QM9700_TYPICAL_WATTS = 747.0
QM9700_MAX_WATTS = 1_720.0
QM9700_PORTS = 64
#: A switch's own power per 400 Gb/s port, optics apart: the QM9700's typical figure
#: spread over its ports. Applied to a switch of any radix (an assumption: the 51.2 Tb/s
#: generation's 128 ports of 400G draw about as much per port, or less).
SWITCH_WATTS_PER_400G_PORT = QM9700_TYPICAL_WATTS / QM9700_PORTS
#: NVIDIA's 400G multimode OSFP, 8 W typical per link end (fabric catalogue).
TRANSCEIVER_WATTS = TRANSCEIVER_WATTS_PER_400G_END["nic_side_400g_sr4_typical"]

# --- storage -------------------------------------------------------------------------

#: Dubey et al. 2024 (Llama 3), Sec. 3.3.1: the Tectonic storage fabric built for
#: Llama 3 pre-training has 240 PB "out of 7,500 servers equipped with SSDs" and
#: sustains 2 TB/s; Llama 3 405B trained on up to 16K H100s (16,384; same section).
LLAMA3_STORAGE_SERVERS = 7_500
LLAMA3_TRAINING_GPUS = 16_384
#: Power of one SSD storage server: an assumption (a server of NVMe drives at typical
#: load), not a published figure.
STORAGE_SERVER_WATTS = 300.0


def storage_watts_per_gpu() -> float:
    """Storage power per GPU at Llama 3's ratio of storage servers to GPUs, each server
    at the assumed STORAGE_SERVER_WATTS: 7,500 x 300 W / 16,384 = 137 W."""
    return LLAMA3_STORAGE_SERVERS * STORAGE_SERVER_WATTS / LLAMA3_TRAINING_GPUS


# --- the swing -----------------------------------------------------------------------

#: Share of its board power a GPU draws while the whole job waits (for a collective or a
#: checkpoint write): an assumption. Choukse et al. 2025 ("Power Stabilization for AI
#: Training Datacenters", Microsoft, OpenAI and NVIDIA, arXiv 2508.14318) describe GPUs
#: near their board power in the compute phase and near idle in the communication
#: phase; a waiting GPU keeps its memory and clocks up, so more than idle.
WAIT_POWER_SHARE = 0.2
