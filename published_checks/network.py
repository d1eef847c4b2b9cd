"""The network architecture (docs/network.md): published fabric sizes, switch counts and
radix limits, reproduced by ``fabric_sizing``.

Switch and host counts are integers that follow from exact construction rules, so the
tolerance is zero: one switch off is a different design, not a rounding.
"""

from __future__ import annotations

from calculators.catalogues import fabrics, hardware
from published_checks import Check

_EXACT = "a count of switches or hosts: it must match exactly"
_AL_FARES_URL = "https://dl.acm.org/doi/10.1145/1402958.1402967"
_DEEPSEEK_URL = "https://arxiv.org/abs/2505.09343"


def _inputs(fabric_id: str) -> dict[str, float | int | str]:
    """The calculator inputs of a catalogued reference design."""
    ref = fabrics.get(fabric_id)
    return {"num_gpus": ref.num_gpus, "gpus_per_node": ref.gpus_per_node,
            "nics_per_node": ref.nics_per_node, "nic_port_bandwidth": ref.nic_bytes_per_s,
            "switch_radix": ref.radix, "switch_port_bandwidth": ref.port_bytes_per_s,
            "topology": ref.topology}


def _switches(check_id: str, fabric_id: str, claim: str, published: int, *,
              url: str = "") -> Check:
    return Check(id=check_id, chapter="network.md", claim=claim,
                 source=fabrics.get(fabric_id).source, url=url,
                 calculator="fabric_sizing", inputs=_inputs(fabric_id), output="switches",
                 published=published, rel_tol=0.0, why_tolerance=_EXACT)


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
        inputs={"num_gpus": 8192, "switch_radix": fabrics.SWITCHES["sn5600_400g"].radix,
                "switch_port_bandwidth": fabrics.SWITCHES["sn5600_400g"].port_bytes_per_s},
        output="max_gpus_two_tiers", published=8_192, rel_tol=0.0, why_tolerance=_EXACT,
        derived=True,
    ),
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
