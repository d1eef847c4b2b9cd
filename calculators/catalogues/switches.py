"""Switches as a fabric sees them: a radix of ports at one speed, from the vendor's own
figures, one entry per way a chip is run.

A switch chip has a fixed capacity (its SerDes lanes times their rate) and splits it
into ports: a 51.2 Tb/s chip is 64 ports of 800G, 128 of 400G or 256 of 200G. Fewer,
faster ports suit fast NICs; more, slower ports reach further in the same number of
tiers (two non-blocking tiers hold k^2/2 endpoints), at the price of several ports per
NIC. Every entry's radix x port speed equals its chip's capacity (tests).

Speeds are bytes/s per direction (400 Gb/s = 50e9); capacities bits/s, one direction,
as the vendors quote them. ``announced``: a product announced with these figures but
not yet in a hardware manual; the entry says so rather than treating it as shipping.
"""

from __future__ import annotations

from dataclasses import dataclass

GBPS = 1e9 / 8  # bytes/s per direction for 1 Gb/s

SN5000_MANUAL = ("NVIDIA Spectrum-4 SN5000 2U Switch Systems Hardware User Manual, Data "
                 "Interfaces: SN5600, 64 ports of 800GbE, 128 of 400GbE or 256 of 200GbE "
                 "(51.2 Tb/s)")
TOMAHAWK5 = ("Broadcom BCM78900 (Tomahawk 5) product brief: 51.2 Tb/s from 512 lanes of "
             "100G PAM4 SerDes, 64 x 800GbE, 128 x 400GbE or 256 x 200GbE")
TOMAHAWK4 = ("Broadcom BCM56990 (Tomahawk 4) announcement, December 2019: 25.6 Tb/s from "
             "512 lanes of 50G PAM4 SerDes, 64 x 400GbE, 128 x 200GbE or 256 x 100GbE")
TOMAHAWK6 = ("Broadcom Tomahawk 6 (BCM78910) announcement, 3 June 2025: 102.4 Tb/s on one "
             "chip, 64 x 1.6TbE, from 512 lanes of 200G PAM4 SerDes (or 1,024 of 100G); "
             "800G and 400G ports are that capacity in 4- and 2-lane ports")
SPECTRUM_X_PHOTONICS = ("NVIDIA, 'Spectrum-X Photonics' announcement, GTC, 18 March 2025, "
                        "and Hot Chips 2025: Spectrum-6 co-packaged-optics switches, SN6810 "
                        "with 128 ports of 800G or 512 of 200G (102.4 Tb/s), SN6800 with 512 "
                        "of 800G (409.6 Tb/s); shipping announced for the second half of "
                        "2026 (figures read through press summaries)")
QUANTUM_X800 = ("NVIDIA Quantum-X800 InfiniBand platform, Q3400-RA switch: 144 ports of "
                "800 Gb/s XDR, 115.2 Tb/s (the leaf and spine of the DGX SuperPOD B300 with "
                "XDR design)")
QM9700 = ("NVIDIA QM97XX user manual, Interfaces: 32 OSFP cages, 'each OSFP port consists "
          "of 2 logical InfiniBand ports' of 400 Gb/s (25.6 Tb/s)")


@dataclass(frozen=True)
class Switch:
    """A switch as a fabric sees it: ``radix`` ports at ``port_bytes_per_s`` each."""

    id: str
    name: str
    radix: int
    port_bytes_per_s: float
    chip_bits_per_s: float  # the chip's (or the system's) capacity, one direction
    source: str
    announced: bool = False

    @property
    def capacity_bits_per_s(self) -> float:
        """Switching capacity, one direction: ports x port speed."""
        return self.radix * self.port_bytes_per_s * 8

    @property
    def port_gbps(self) -> float:
        return self.port_bytes_per_s / GBPS


def _switch(switch_id: str, name: str, radix: int, port_gbps: float, chip_tbps: float, *,
            source: str, announced: bool = False) -> Switch:
    return Switch(id=switch_id, name=name, radix=radix, port_bytes_per_s=port_gbps * GBPS,
                  chip_bits_per_s=chip_tbps * 1e12, source=source, announced=announced)


_ALL = (
    # 25.6 Tb/s: the switches of the DGX SuperPOD H100/B200 designs and DeepSeek's fabrics.
    _switch("qm9700_ndr", "25.6 Tb/s: NVIDIA Quantum-2 QM9700, 64 x 400G NDR", 64, 400,
            25.6, source=QM9700),
    _switch("tomahawk4_400g", "25.6 Tb/s: Broadcom Tomahawk 4, 64 x 400GbE", 64, 400, 25.6,
            source=TOMAHAWK4),
    _switch("tomahawk4_200g", "25.6 Tb/s: Broadcom Tomahawk 4, 128 x 200GbE", 128, 200, 25.6,
            source=TOMAHAWK4),
    # 51.2 Tb/s, the generation 2025-2026 clusters are built from.
    _switch("sn5600_800g", "51.2 Tb/s: NVIDIA Spectrum-4 SN5600 or Broadcom Tomahawk 5, "
            "64 x 800G", 64, 800, 51.2, source=f"{SN5000_MANUAL}; {TOMAHAWK5}"),
    _switch("sn5600_400g", "51.2 Tb/s: NVIDIA Spectrum-4 SN5600 or Broadcom Tomahawk 5, "
            "128 x 400G", 128, 400, 51.2, source=f"{SN5000_MANUAL}; {TOMAHAWK5}"),
    _switch("sn5600_200g", "51.2 Tb/s: NVIDIA Spectrum-4 SN5600 or Broadcom Tomahawk 5, "
            "256 x 200G", 256, 200, 51.2, source=f"{SN5000_MANUAL}; {TOMAHAWK5}"),
    _switch("q3400_xdr", "115.2 Tb/s: NVIDIA Quantum-X800 Q3400, 144 x 800G XDR", 144, 800,
            115.2, source=QUANTUM_X800),
    # 102.4 Tb/s: Tomahawk 6 ships; NVIDIA's Spectrum-6 switches are announced.
    _switch("tomahawk6_1600g", "102.4 Tb/s: Broadcom Tomahawk 6, 64 x 1.6T", 64, 1600, 102.4,
            source=TOMAHAWK6),
    _switch("tomahawk6_800g", "102.4 Tb/s: Broadcom Tomahawk 6, 128 x 800G", 128, 800, 102.4,
            source=TOMAHAWK6),
    _switch("tomahawk6_400g", "102.4 Tb/s: Broadcom Tomahawk 6, 256 x 400G", 256, 400, 102.4,
            source=TOMAHAWK6),
    _switch("tomahawk6_200g", "102.4 Tb/s: Broadcom Tomahawk 6, 512 x 200G", 512, 200, 102.4,
            source=TOMAHAWK6),
    _switch("sn6810_800g", "102.4 Tb/s: NVIDIA Spectrum-X Photonics SN6810 (Spectrum-6, "
            "announced), 128 x 800G", 128, 800, 102.4, source=SPECTRUM_X_PHOTONICS, announced=True),
    _switch("sn6810_200g", "102.4 Tb/s: NVIDIA Spectrum-X Photonics SN6810 (Spectrum-6, "
            "announced), 512 x 200G", 512, 200, 102.4, source=SPECTRUM_X_PHOTONICS, announced=True),
    _switch("sn6800_800g", "409.6 Tb/s: NVIDIA Spectrum-X Photonics SN6800 (several "
            "Spectrum-6 chips, announced), 512 x 800G", 512, 800, 409.6,
            source=SPECTRUM_X_PHOTONICS, announced=True),
)
SWITCHES: dict[str, Switch] = {s.id: s for s in _ALL}
#: The calculator's default switch: the current generation run at the 400G of a
#: ConnectX-7 NIC (issue 32, item 11: the 64-port switch forced three tiers at 8,192
#: GPUs, where this one needs two).
DEFAULT_SWITCH = SWITCHES["sn5600_400g"]


def get(switch_id: str) -> Switch:
    """The switch with this id; ValueError naming the choices otherwise."""
    try:
        return SWITCHES[switch_id]
    except KeyError:
        raise ValueError(f"unknown switch {switch_id!r}; choose one of: "
                         f"{', '.join(SWITCHES)}") from None
