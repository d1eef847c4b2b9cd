"""The hardware catalogue: accelerators (``accelerators.ACCELERATORS``, re-exported here),
the network ports and scale-up links, and which NIC a node of each accelerator has.

Peak figures are dense (no 2:4 structured sparsity) tensor throughput at BF16, FP8 and
FP4 where the vendor publishes them; memory capacities are the vendor's label as
printed, in decimal GB, which the memory calculators read as GiB, what the device holds,
less an explicit reserve (``accelerators`` explains, and each entry's ``memory_note``
says what the device physically holds). Link bandwidths are per GPU and per direction
(datasheets quote the bidirectional total).
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.catalogues.accelerators import (
    ACCELERATORS,
    ANNOUNCED,
    PRECISIONS,
    Accelerator,
    AnnouncedPart,
    Precision,
)

__all__ = ["ACCELERATORS", "ANNOUNCED", "DEFAULT_ACCELERATOR", "LINKS", "PRECISIONS",
           "Accelerator", "AnnouncedPart", "Link", "Precision", "default_nic", "get"]

DEFAULT_ACCELERATOR = "h100_sxm"


def get(accelerator_id: str) -> Accelerator:
    return ACCELERATORS[accelerator_id]


#: Default scale-out port per GPU when none is given: DGX A100 has one HDR 200 Gb/s
#: port per GPU, DGX H100/H200/B200 and GB200 NVL72 one ConnectX-7 at 400 Gb/s (NVIDIA
#: DGX user guides; GB200 NVL72 datasheet), Blackwell Ultra one ConnectX-8 at 800 Gb/s
#: (72 per GB300 NVL72 rack, 8 per HGX B300: NVIDIA GB300 NVL72 and HGX B300 datasheets).
#: AMD platforms: one 400 Gb/s NIC per GPU (the catalogue's assumption, as on MI300X
#: systems in MLPerf submissions). The export parts for China: an H800 node has one
#: 400 Gb/s InfiniBand NIC per GPU (DeepSeek-V3 report, Sec. 3.2.2: "IB (50 GB/s)" per
#: GPU); HGX H20 and HGX A800 nodes are taken as built like the HGX H100 and DGX A100
#: they derive from (assumption). Ascend 910C: the CloudMatrix384 RDMA plane, up to
#: 400 Gb/s of RoCE per NPU (Zuo et al. 2025). TPUs and Trainium have no NIC per chip in
#: this sense: TPU slices beyond the ICI domain talk over Google's data-center network,
#: 50 Gbps per chip on v5p (Google Cloud TPU v5p documentation; v6e and TPU7x assumed
#: alike), and a trn2.48xlarge shares 3,200 Gbps of EFAv3 among its 16 chips.
DEFAULT_NIC = {"a100_40gb_sxm": "ib_hdr", "a100_80gb_sxm": "ib_hdr", "a800": "ib_hdr",
               "h800": "ib_ndr", "h20": "ib_ndr",
               "b300": "connectx8_800g", "gb300": "connectx8_800g",
               "tpu_v5p": "tpu_dcn", "tpu_v6e": "tpu_dcn", "tpu_v7": "tpu_dcn",
               "trainium2": "efa_v3", "ascend_910c": "roce_400g"}


def default_nic(accelerator_id: str) -> Link:
    """The scale-out port a node of this accelerator has by default (DEFAULT_NIC)."""
    return LINKS[DEFAULT_NIC.get(accelerator_id, "ib_ndr")]


@dataclass(frozen=True)
class Link:
    """A network port or scale-up link, with its line rate per direction."""

    id: str
    name: str
    bandwidth: float  # B/s per direction (line rate, not measured)
    source: str


LINKS: dict[str, Link] = {
    link.id: link
    for link in (
        Link(
            "ib_hdr",
            "InfiniBand HDR 200 Gb/s",
            200e9 / 8,
            "InfiniBand Trade Association roadmap: HDR 4x = 200 Gb/s per port, per direction.",
        ),
        Link(
            "ib_ndr",
            "InfiniBand NDR 400 Gb/s",
            400e9 / 8,
            "InfiniBand Trade Association roadmap: NDR 4x = 400 Gb/s per port, per direction.",
        ),
        Link(
            "ib_xdr",
            "InfiniBand XDR 800 Gb/s",
            800e9 / 8,
            "InfiniBand Trade Association roadmap: XDR 4x = 800 Gb/s per port, per direction.",
        ),
        Link(
            "connectx7_400g",
            "NVIDIA ConnectX-7, 400 Gb/s",
            400e9 / 8,
            "NVIDIA ConnectX-7: InfiniBand NDR 400 Gb/s or 400GbE per port, per direction "
            "(upstream Linux driver release notes list NDR for ConnectX-7).",
        ),
        Link(
            "connectx8_800g",
            "NVIDIA ConnectX-8 SuperNIC, 800 Gb/s",
            800e9 / 8,
            "NVIDIA ConnectX-8 SuperNIC firmware release notes v40.44.0208, Link Speed: "
            "800Gb/s or XDR IB or 2 x 400GbE (800GbE is not supported on a single port).",
        ),
        Link(
            "roce_400g",
            "400 GbE RoCEv2",
            400e9 / 8,
            "IEEE 802.3bs 400GBASE: 400 Gb/s per port, per direction.",
        ),
        Link(
            "roce_400g_tuned",
            "400 GbE RoCEv2, tuned for AI (Meta's clusters)",
            400e9 / 8,
            "IEEE 802.3bs 400GBASE: 400 Gb/s per port, per direction; the RoCE fabric Meta "
            "built for its 24,576-GPU clusters and trained Llama 3 on (Gangidi et al. 2024, "
            "SIGCOMM; Dubey et al. 2024, Sec. 3.3.1).",
        ),
        Link(
            "roce_100g",
            "100 GbE RoCEv2",
            100e9 / 8,
            "IEEE 802.3ba/bm 100GBASE: 100 Gb/s per port, per direction.",
        ),
        Link(
            "tpu_dcn",
            "TPU data-center network (DCN), per chip",
            50e9 / 8,
            "Google Cloud TPU v5p documentation, key specifications: data center network "
            "(DCN) bandwidth 50 Gbps per chip; the links between TPU slices (multislice).",
        ),
        Link(
            "efa_v3",
            "AWS EFAv3, a Trn2 chip's share",
            3200e9 / 8 / 16,
            "Amazon EC2 Trn2 architecture (AWS Neuron documentation): EFAv3 3,200 Gbps per "
            "trn2.48xlarge instance of 16 Trainium2 chips, 200 Gb/s per chip.",
        ),
        Link(
            "nvlink3",
            "NVLink 3 (A100), per GPU",
            300e9,
            "NVIDIA A100 datasheet: 600 GB/s NVLink per GPU, bidirectional.",
        ),
        Link(
            "nvlink4",
            "NVLink 4 (H100/H200), per GPU",
            450e9,
            "NVIDIA H100 datasheet: 900 GB/s NVLink per GPU, bidirectional.",
        ),
        Link(
            "nvlink5",
            "NVLink 5 (B200, B300; GB200/GB300 NVL72), per GPU",
            900e9,
            "NVIDIA HGX B200 datasheet: 1.8 TB/s NVLink per GPU, bidirectional; the NVL72 "
            "racks give every one of 72 GPUs the same (130 TB/s in all).",
        ),
    )
}
