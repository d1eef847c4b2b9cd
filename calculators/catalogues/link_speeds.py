"""How each kind of link behaves under NCCL, as nccl-tests measures it: the bus bandwidth
plateau as a share of the line rate, the message size at which half of it is reached,
the steepness of the curve and the latency floor (formulas.collectives.achieved).

Line rates are per GPU and per direction (catalogues.hardware). Plateaus are the
large-message busbw of ring collectives and of alltoall; across nodes, the share of the
NICs' aggregate that a ring reaches (NCCL runs one ring per NIC; GTC 2024 S62129 and GTC
2025 S72583, slide 12: DGX A100 with 8 x HDR 192 GB/s of 200, DGX H100 with 8 x NDR
370-380 of 400). The curve's half size grows with the number of GPUs across nodes
(nccl-tests on H100 InfiniBand, 32 to 8,192 GPUs: about 40 MiB x (GPUs/32)^0.27; NVIDIA
GTC 2024 S62129 slide 35, Fernandez et al. arXiv 2411.13055). Point-to-point sends (NCCL
send/recv, pipeline stages) reach the line rate's share at much smaller sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.formulas.collectives.achieved import LinkCurve

MIB = 2.0**20


@dataclass(frozen=True)
class LinkSpeed:
    """One kind of link: its curve and where the figures come from."""

    link: str
    curve: LinkCurve
    source: str


def _nvlink(link: str, shares: tuple[float, float], curve: tuple[float, float], *,
            in_network: float, source: str, floor_s: float = 12e-6) -> LinkSpeed:
    """A scale-up link: (ring, alltoall) shares of its line rate, (half size in MiB,
    steepness) of its curve, and its latency floor."""
    (ring, alltoall), (half_mib, steepness) = shares, curve
    return LinkSpeed(link, LinkCurve(ring, alltoall, half_mib * MIB, steepness, floor_s,
                                     in_network_allreduce=in_network,
                                     send_half_bytes=half_mib * MIB / 4, send_floor_s=10e-6),
                     source)


def _network(link: str, ring: float, alltoall: float, source: str) -> LinkSpeed:
    return LinkSpeed(link, LinkCurve(ring, alltoall, 40.5 * MIB, 0.866, 47e-6, half_ranks=32,
                                     half_growth=0.30, send_half_bytes=1.0 * MIB,
                                     send_floor_s=30e-6), source)


_IB = ("nccl-tests, ring allreduce across nodes: 0.95-0.96 of the NICs' line rate (DGX "
       "A100 8 x HDR 192 of 200 GB/s; DGX H100 8 x NDR 370-380 of 400; A100 4 x HDR 96 of "
       "100, NVIDIA/nccl-tests issue 119); alltoall across nodes 0.74 of the NIC's rate, "
       "fitted (scripts/calibrate.py) to the published nccl-tests alltoall curves "
       "(calibration/collectives.json). Half size 40.5 MiB at 32 GPUs, k 0.87, x "
       "(GPUs/32)^0.30, fitted to the curve of arXiv 2411.13055 (4 nodes of H100) and the "
       "NVLSTree curves of GTC 2024 S62129 slide 35 (32 to 8,192 GPUs); floor 47 us (2 "
       "nodes, NVIDIA/nccl issue 1244); send/recv floor 30 us (nccl-tests issue 214), half "
       "size 1 MiB (assumption: RDMA writes reach line rate by about a megabyte).")
_ROCE = ("RoCE: ring allreduce 320 GB/s across 4+ nodes of 8 x 400 Gb/s, 0.80 of the line "
         "rate (NVIDIA/nccl issue 1221, NCCL 2.19.3); alltoall 0.80: assumption; the curve's "
         "shape as InfiniBand's (assumption).")

_ENTRIES: tuple[LinkSpeed, ...] = (
    _nvlink("nvlink3", (0.79, 0.70), (20.9, 0.72), in_network=1.0, floor_s=10e-6,
            source="8 x A100 NVLink 3: ring allreduce busbw 234.9 GB/s at 16 GiB (0.78 of 300), "
            "alltoall 210 (GTC 2025 S72583, slide 13); Hill fit with the plateau pinned to "
            "the nccl-tests curve from 16 MiB to 2 GiB, the sizes training's collectives "
            "have (106 GB/s at 16 MiB, 172 at 64 MiB, 223 at 512 MiB): refitted with "
            "scripts/calibrate.py, plateau 0.79, half size 20.9 MiB, k 0.72, 2.5% rms "
            "(stas00/ml-engineering, network/README.md, 8 x A100 "
            "all_reduce table); floor about 10 us (2 x A100, NVIDIA/nccl issue 583)."),
    _nvlink("nvlink4", (0.81, 0.71), (18.6, 0.80), in_network=1.32, floor_s=13e-6,
            source="8 x H100 NVLink 4: ring collectives about 370 GB/s (0.82 of 450; sjeaugey, "
            "NVIDIA/nccl-tests issue 212), reduce-scatter 360 and allgather 350 (NVIDIA/nccl "
            "issue 1281), alltoall 320 (GTC 2025); NVLink SHARP allreduce 480 (NVIDIA/dgxc-"
            "benchmarking nccl sample); floor 13 us (same sample). Fitted together "
            "(scripts/calibrate.py, 2.1% rms): ring plateau 0.81, NVLS 1.32 x the ring, half "
            "size 18.6 MiB and k 0.80, taken for the ring collectives too (assumption: the "
            "ring curve's shape is NVLS's)."),
    _nvlink("nvlink_h800", (0.80, 0.71), (7.1, 0.76), in_network=1.34, floor_s=13e-6,
            source="H800 NVLink (400 GB/s bidirectional): 160 GB/s measured one way (DeepSeek-V3 "
            "report, Sec. 3.2.2; 'our unidirectional measurement', deepseek-ai/DeepSeek-V3 "
            "issue 28), 0.80 of 200; NVLS allreduce 215 (NVIDIA/nccl issue 1374); DeepEP "
            "intranode dispatch/combine 153-158 GB/s. Alltoall share, half size (H100's "
            "scaled by 160/370) and k: assumption."),
    _nvlink("nvlink_a800", (0.80, 0.70), (14.2, 0.72), in_network=1.0, floor_s=10e-6,
            source="A800 NVLink (400 GB/s bidirectional, 8 NVLinks): allreduce about 160 GB/s "
            "expected at 8 GiB on 8 x A800 (sjeaugey, NVIDIA/nccl issue 412), 0.80 of 200. "
            "Alltoall share, k and floor: the A100's (nvlink3; same NVLink 3 links and "
            "NVSwitch, no NVLink SHARP); half size the A100's scaled by 160/235: assumption."),
    _nvlink("nvlink5", (0.78, 0.71), (59.0, 0.67), in_network=1.20,
            source="8 x B200 NVLink 5: ring allreduce 682 GB/s (0.76 of 900), NVLS 838, alltoall "
            "640 (GTC 2025 S72583; stas00/ml-engineering network/README.md, NCCL 2.27.7); "
            "Hill fit (scripts/calibrate.py) from 16 MiB to 1 GiB: plateau 0.78, half size "
            "59 MiB, k 0.67, NVLS 1.20 x the ring. NVL72 racks assumed alike."),
    _nvlink("infinity_fabric", (0.70, 0.70), (20.5, 0.74), in_network=1.0,
            source="8 x MI300X: RCCL allreduce 312.9 GB/s at 4 GiB (0.70 of 448; stas00/ml-"
            "engineering network/README.md). Alltoall share, half size and k: assumption "
            "(A100's)."),
    _nvlink("ici", (0.80, 0.70), (16.5, 0.76), in_network=1.0,
            source="TPU ICI: assumption throughout (no published nccl-tests-like curve)."),
    _nvlink("neuronlink3", (0.80, 0.70), (16.5, 0.76), in_network=1.0,
            source="Trainium2 NeuronLink-v3: assumption throughout, as TPU ICI (a torus of "
            "direct links; no published nccl-tests-like curve for Neuron collectives)."),
    _nvlink("unified_bus", (0.80, 0.70), (16.5, 0.76), in_network=1.0,
            source="Huawei Unified Bus (CloudMatrix384): assumption throughout, the ICI "
            "entry's shares and curve (no published HCCL-tests curve; Zuo et al. 2025 give "
            "the line rate, 392 GB/s per NPU each way, not the achieved share)."),
    _network("ib_hdr", 0.96, 0.74, _IB),
    _network("ib_ndr", 0.96, 0.74, _IB),
    _network("ib_xdr", 0.96, 0.74, _IB + " XDR assumed like NDR."),
    _network("connectx7_400g", 0.96, 0.74, _IB),
    _network("connectx8_800g", 0.96, 0.74,
             _IB + " 800G assumed like NDR (B200 on 8 x 400 Gb/s EFA: 381.8 of 400 GB/s, "
             "stas00/ml-engineering)."),
    _network("roce_400g", 0.80, 0.80, _ROCE),
    _network("roce_400g_tuned", 0.96, 0.74,
             "Meta: 'we have successfully used both RoCE and InfiniBand clusters for large, "
             "GenAI workloads (including our ongoing training of Llama 3 on our RoCE "
             "cluster) without any network bottlenecks' (Meta engineering blog, 'Building "
             "Meta's GenAI Infrastructure', 2024-03-12; the tuning in Gangidi et al. 2024): "
             "taken as InfiniBand's curve. " + _IB),
    _network("roce_100g", 0.80, 0.80, _ROCE),
    _network("tpu_dcn", 0.80, 0.80,
             "TPU data-center network between slices: assumption, RoCE's shares and curve "
             "(Google publishes no collective curve over DCN). " + _ROCE),
    _network("efa_v3", 0.96, 0.74,
             "EFA taken as InfiniBand (B200 on 8 x 400 Gb/s EFA: 381.8 of 400 GB/s ring "
             "busbw, stas00/ml-engineering): assumption for Trainium2's EFAv3. " + _IB),
)

LINK_SPEEDS: dict[str, LinkSpeed] = {s.link: s for s in _ENTRIES}

#: The scale-up link of each accelerator of the catalogue.
#: The H20 keeps the H100's 18 NVLink 4 links and NVSwitch (900 GB/s): the H100's curve.
SCALE_UP_LINK: dict[str, str] = {
    "a100_40gb_sxm": "nvlink3", "a100_80gb_sxm": "nvlink3", "a800": "nvlink_a800",
    "h100_sxm": "nvlink4", "h200": "nvlink4", "h800": "nvlink_h800", "h20": "nvlink4",
    "b200": "nvlink5", "gb200": "nvlink5", "b300": "nvlink5", "gb300": "nvlink5",
    "mi300x": "infinity_fabric", "mi325x": "infinity_fabric", "mi355x": "infinity_fabric",
    "tpu_v5p": "ici", "tpu_v6e": "ici", "tpu_v7": "ici", "trainium2": "neuronlink3",
    "ascend_910c": "unified_bus"}


def scale_up_curve(accelerator: str) -> LinkCurve:
    """The measured curve of an accelerator's scale-up (NVLink-class) links."""
    return LINK_SPEEDS[SCALE_UP_LINK[accelerator]].curve


def network_curve(link: str) -> LinkCurve:
    """The measured curve of a NIC of the catalogue (catalogues.hardware.LINKS)."""
    return LINK_SPEEDS[link].curve

