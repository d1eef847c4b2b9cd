"""The network architecture (docs/network.md): published fabric sizes, switch counts and
radix limits, reproduced by ``fabric_sizing``.

Switch and host counts are integers that follow from exact construction rules, so the
tolerance is zero: one switch off is a different design, not a rounding.
"""

from __future__ import annotations

from calculators.catalogues import fabrics, hardware, switches
from published_checks import Check

_EXACT = "a count of switches or hosts: it must match exactly"
_AL_FARES_URL = "https://dl.acm.org/doi/10.1145/1402958.1402967"
_DEEPSEEK_URL = "https://arxiv.org/abs/2505.09343"
_HPN_URL = "https://doi.org/10.1145/3651890.3672265"


def _inputs(fabric_id: str) -> dict[str, float | int | str]:
    """The calculator inputs of a catalogued reference design."""
    ref = fabrics.get(fabric_id)
    return {"num_gpus": ref.num_gpus, "gpus_per_node": ref.gpus_per_node,
            "nics_per_node": ref.nics_per_node, "nic_port_bandwidth": ref.nic_bytes_per_s,
            "switch_radix": ref.radix, "switch_port_bandwidth": ref.port_bytes_per_s,
            "topology": ref.topology, "leaf_oversubscription": ref.leaf_oversubscription,
            **({} if ref.planes is None else {"planes": ref.planes})}


def _switches(check_id: str, fabric_id: str, claim: str, published: int, *,
              url: str = "", output: str = "switches") -> Check:
    return Check(id=check_id, chapter="network.md", claim=claim,
                 source=fabrics.get(fabric_id).source, url=url,
                 calculator="fabric_sizing", inputs=_inputs(fabric_id), output=output,
                 published=published, rel_tol=0.0, why_tolerance=_EXACT)


def _two_tier_limit(check_id: str, switch_id: str, claim: str, published: int, *,
                    arithmetic: str, nic: str = "400Gb/s", planes: int = 1) -> Check:
    """Two non-blocking rail-optimised tiers of a catalogued switch: k^2/2 GPUs."""
    switch = switches.get(switch_id)
    return Check(
        id=check_id, chapter="network.md", claim=claim,
        source=f"{switch.source}. Derivation: a spine port per leaf, k leaves of k/2 "
               f"endpoints, {arithmetic}",
        calculator="fabric_sizing",
        inputs={"num_gpus": published, "switch": switch_id, "nic_port_bandwidth": nic,
                **({"planes": planes} if planes > 1 else {})},
        output="max_gpus_two_tiers", published=published, rel_tol=0.0,
        why_tolerance=_EXACT, derived=True)


CHECKS: tuple[Check, ...] = (
    Check(
        id="al-fares-k48-hosts",
        chapter="network.md",
        claim="Largest three-tier fat tree of 48-port switches, one host per port: k³/4",
        source=fabrics.AL_FARES + " (27,648 hosts for k = 48)",
        url=_AL_FARES_URL,
        calculator="fabric_sizing",
        inputs=_inputs("al_fares_k48"),
        output="max_gpus_three_tiers",
        published=27_648,
        rel_tol=0.0,
        why_tolerance=_EXACT,
    ),
    _switches("al-fares-k48-switches", "al_fares_k48",
              "Switches of that fat tree: 5k²/4 (k pods of k/2 + k/2, (k/2)² core)", 2_880,
              url=_AL_FARES_URL),
    _switches("superpod-h100-4su-switches", "dgx_superpod_h100_4su",
              "DGX SuperPOD H100, 4 scalable units (127 nodes): 32 leaves + 16 spines", 48),
    _switches("superpod-b300-xdr-4su-switches", "dgx_superpod_b300_xdr_4su",
              "DGX SuperPOD B300 XDR, 4 units: 32 leaves + 18 spines (18 divides 72 "
              "uplinks; 16 would hold the ports)", 50),
    _switches("superpod-b200-64su-switches", "dgx_superpod_b200_64su",
              "DGX SuperPOD B200, 64 units (16,384 GPUs): 512 leaves + 512 spines + 256 "
              "core", 1_280),
    _switches("deepseek-ft2-switches", "deepseek_ft2",
              "Two-tier fat tree of 64-port 400G switches, 2,048 GPUs", 96, url=_DEEPSEEK_URL),
    Check(
        id="deepseek-mpft-endpoints",
        chapter="network.md",
        claim="Multi-plane fat tree: eight two-tier planes of 64-port switches hold 16,384 "
              "GPUs",
        source=fabrics.DEEPSEEK,
        url=_DEEPSEEK_URL,
        calculator="fabric_sizing",
        inputs=_inputs("deepseek_mpft"),
        output="max_gpus_two_tiers",
        published=16_384,
        rel_tol=0.0,
        why_tolerance=_EXACT,
    ),
    _switches("deepseek-mpft-switches", "deepseek_mpft",
              "Switches of that multi-plane fat tree", 768, url=_DEEPSEEK_URL),
    Check(
        id="deepseek-ft3-endpoints",
        chapter="network.md",
        claim="Three-tier fat tree of 64-port switches: k³/4 = 65,536 GPUs",
        source=fabrics.DEEPSEEK,
        url=_DEEPSEEK_URL,
        calculator="fabric_sizing",
        inputs=_inputs("deepseek_ft3"),
        output="max_gpus_three_tiers",
        published=65_536,
        rel_tol=0.0,
        why_tolerance=_EXACT,
    ),
    _switches("deepseek-ft3-switches", "deepseek_ft3",
              "Switches of that three-tier fat tree: 5k²/4", 5_120, url=_DEEPSEEK_URL),
    Check(
        id="switch-51t-two-tier-limit",
        chapter="network.md",
        claim="A 51.2 Tb/s switch at 400G: 128 ports, so two non-blocking tiers hold "
              "k²/2 = 8,192 GPUs (rail-optimised, 8 NICs per node)",
        source="NVIDIA Spectrum-4 SN5000 2U Switch Systems Hardware User Manual, Data "
               "Interfaces: SN5600, 128 ports of 400GbE (64 of 800GbE). Derivation: a "
               "spine port per leaf, k leaves of k/2 hosts, 128 x 64 = 8,192",
        url="https://docs.nvidia.com/networking/display/sn5000/data+interfaces",
        calculator="fabric_sizing",
        inputs={"num_gpus": 8192, "switch": "sn5600_400g"},
        output="max_gpus_two_tiers", published=8_192, rel_tol=0.0, why_tolerance=_EXACT,
        derived=True,
    ),
    _two_tier_limit(
        "switch-51t-800g-two-tier-limit", "sn5600_800g",
        "The same 51.2 Tb/s chip run as 64 ports of 800G, one 800G NIC per GPU: two tiers "
        "hold k²/2 = 2,048 GPUs", 2_048, arithmetic="64 x 32 = 2,048", nic="800Gb/s"),
    _two_tier_limit(
        "switch-51t-800g-nic-two-planes-limit", "sn5600_400g",
        "An 800G NIC split into two 400G ports on two planes of 128-port 51.2 Tb/s "
        "switches: two tiers hold 8,192 GPUs at 800G each", 8_192,
        arithmetic="128 x 64 = 8,192 per plane, each GPU one port on each of 2 planes",
        nic="800Gb/s", planes=2),
    _two_tier_limit(
        "switch-102t-two-tier-limit", "tomahawk6_200g",
        "A 102.4 Tb/s switch at 200G: 512 ports, so a 400G NIC split over two planes "
        "puts k²/2 = 131,072 GPUs on two tiers", 131_072,
        arithmetic="512 x 256 = 131,072 per plane, each GPU one 200G port on each of 2 "
                   "planes", planes=2),
    _switches("alibaba-hpn-pod-tors", "alibaba_hpn_pod",
              "Alibaba HPN pod: 15 segments of 16 ToRs (8 rails x 2 ToRs), two planes of "
              "200G ports, 15,360 GPUs on two tiers", 240, url=_HPN_URL,
              output="leaf_switches"),
    _switches("alibaba-hpn-pod-aggregation", "alibaba_hpn_pod",
              "Alibaba HPN pod: 60 aggregation switches in each of the two planes (60 divides "
              "a ToR's 120 uplink ports; 57 would hold them)", 120, url=_HPN_URL,
              output="spine_switches"),
    Check(
        id="superpod-h100-3su-spines",
        chapter="network.md",
        claim="DGX SuperPOD H100, 3 scalable units: spines for 24 leaves of 32 uplinks "
              "(768 links would fill 12, but 12 does not divide a leaf's 32)",
        source=fabrics.H100_RA + ": 16 spines",
        calculator="fabric_sizing", inputs=_inputs("dgx_superpod_h100_3su"),
        output="spine_switches", published=16, rel_tol=0.0, why_tolerance=_EXACT,
    ),
    Check(
        id="gb200-nvl72-nvlink-rack",
        chapter="network.md",
        claim="GB200 NVL72: the rack's NVLink bandwidth from the catalogue's per-GPU "
              "figure (both directions) x 72",
        source="NVIDIA GB200 NVL72 datasheet: NVLink 130 TB/s per rack, 1.8 TB/s per GPU",
        formula=lambda: 2 * hardware.get("gb200").scale_up_bandwidth * 72,
        formula_name="2 x hardware gb200 scale_up_bandwidth x 72", unit="B/s",
        published=130e12, rel_tol=0.005,
        why_tolerance="the datasheet rounds 72 x 1.8 = 129.6 TB/s to 130",
    ),
)
