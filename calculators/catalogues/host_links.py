"""What sits behind each accelerator on the host side: the link to host memory (PCIe or
NVLink-C2C) and the host memory bandwidth its share of the CPUs has. Offloading optimizer
states or activations (formulas.parallel.offload) is priced by these.

Rates are per GPU and per direction. The achieved fraction of a PCIe link is measured:
NVIDIA's nvbandwidth reports 55.63 GB/s for host_to_device_memcpy_ce on a PCIe 5.0 x16
GPU (NVIDIA technical blog "NVbandwidth", example output), 88% of the 63.0 GB/s line rate
(32 GT/s x 16 lanes x 128/130 encoding / 8); the same share is our assumption for
PCIe 4.0 and for NVLink-C2C. Host memory bandwidth: the node's DRAM channels at their
data rate, shared by its GPUs, 80% achieved (assumption: STREAM-like copies on server
DDR5 and LPDDR5X reach 75-85% of their channels' rate).
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.core.i18n import _

GB = 1e9
#: nvbandwidth's 55.63 GB/s over PCIe 5.0 x16's 63.0 GB/s line rate.
LINK_EFFICIENCY = 55.63 / 63.0
#: Achieved share of the host DRAM channels' rate (assumption).
HOST_MEMORY_EFFICIENCY = 0.8


@dataclass(frozen=True)
class HostSide:
    """One accelerator's path to host memory and its share of the host's bandwidth."""

    link: str
    link_bandwidth: float  # B/s per direction, line rate
    host_memory_bandwidth: float  # B/s per GPU, the channels' rate
    host_memory: float  # B per GPU of host memory in the reference node
    source: str

    @property
    def achieved_link(self) -> float:
        return self.link_bandwidth * LINK_EFFICIENCY

    @property
    def achieved_host_memory(self) -> float:
        return self.host_memory_bandwidth * HOST_MEMORY_EFFICIENCY


#: PCIe 5.0 x16 per GPU in HGX H100/H200/B200/B300 nodes, behind two Xeon sockets with
#: eight DDR5-4800 channels each, 2 x 307.2 GB/s, and 2 TB of DDR5 (DGX H100 datasheet),
#: shared by eight GPUs.
_HGX = HostSide("PCIe 5.0 x16", 63.0 * GB, 2 * 307.2 * GB / 8, 2e12 / 8,
                "DGX H100: PCIe 5.0 x16 per GPU; 2 x Xeon 8480C, 8 DDR5-4800 channels each "
                "(2 x 307.2 GB/s), 2 TB, for 8 GPUs")
#: DGX A100: PCIe 4.0 x16 (31.5 GB/s), 2 x EPYC 7742 with 8 DDR4-3200 channels each
#: (2 x 204.8 GB/s), 1 TB for 8 GPUs.
_A100 = HostSide("PCIe 4.0 x16", 31.5 * GB, 2 * 204.8 * GB / 8, 1e12 / 8,
                 "DGX A100: PCIe 4.0 x16 per GPU; 2 x EPYC 7742, 8 DDR4-3200 channels each "
                 "(2 x 204.8 GB/s), 1 TB, for 8 GPUs")
#: GB200 / GB300: one Grace per two GPUs, NVLink-C2C 900 GB/s in both directions per
#: Grace, so 225 GB/s per GPU per direction (our reading: the link is shared evenly);
#: LPDDR5X at up to 546 GB/s and 480 GB per Grace (NVIDIA Grace Hopper Superchip
#: Architecture whitepaper: C2C "900 GB/s total bandwidth, 450 GB/s per direction").
_GRACE_PAIR = HostSide("NVLink-C2C (one Grace per two GPUs)", 225.0 * GB, 546.0 * GB / 2,
                       480e9 / 2,
                       "GB200/GB300 NVL72: one Grace per two GPUs, NVLink-C2C 900 GB/s "
                       "total (450 per direction) per Grace, LPDDR5X 546 GB/s, 480 GB")
#: AMD MI300X/MI325X/MI355X platforms: PCIe 5.0 x16 per GPU behind two EPYC 9004/9005
#: sockets with 12 DDR5-4800 channels each (2 x 460.8 GB/s), 1.5 TB typical, 8 GPUs
#: (assumption: a typical 8-GPU OAM server).
_AMD = HostSide("PCIe 5.0 x16", 63.0 * GB, 2 * 460.8 * GB / 8, 1.5e12 / 8,
                "8-GPU OAM server: PCIe 5.0 x16 per GPU; 2 x EPYC, 12 DDR5-4800 channels "
                "each (2 x 460.8 GB/s), 1.5 TB (assumption)")

#: The export parts for China as the nodes they derive from (assumption: HGX A800 as DGX
#: A100, HGX H20 as DGX H100). TPUs, Trainium2 and the Ascend 910C are not listed: their
#: host paths are not published (host_side says so).
HOST_SIDES: dict[str, HostSide] = {
    "a100_40gb_sxm": _A100, "a100_80gb_sxm": _A100, "a800": _A100,
    "h100_sxm": _HGX, "h800": _HGX, "h20": _HGX, "h200": _HGX, "b200": _HGX, "b300": _HGX,
    "gb200": _GRACE_PAIR, "gb300": _GRACE_PAIR,
    "mi300x": _AMD, "mi325x": _AMD, "mi355x": _AMD,
}


def host_side(accelerator: str) -> HostSide:
    """The host side of ``accelerator``; an accelerator not listed (a TPU, Trainium2, the
    Ascend 910C) is given the HGX node's PCIe 5.0 path, and its source says so."""
    side = HOST_SIDES.get(accelerator)
    if side is None:
        return HostSide(_HGX.link, _HGX.link_bandwidth, _HGX.host_memory_bandwidth,
                        _HGX.host_memory, _("no published host path: an HGX node's assumed"))
    return side
