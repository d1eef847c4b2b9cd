"""The shape of an accelerator entry (``Accelerator``) and of an announced part whose
datasheet is not out (``AnnouncedPart``), shared by the vendor modules
(``accelerators_nvidia``, ``accelerators_others``) and re-exported by ``accelerators``,
which explains the conventions: dense peaks, memory labels, per-direction links.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GB = 1e9
TFLOP = 1e12
PFLOP = 1e15

Precision = Literal["bf16", "fp8", "fp4"]
#: Narrowest last; a missing rate falls back to the next wider format (fp4 -> fp8 -> bf16).
PRECISIONS: tuple[Precision, ...] = ("bf16", "fp8", "fp4")


@dataclass(frozen=True)
class Accelerator:
    """One accelerator model with the figures the calculators need, each cited."""

    id: str
    name: str
    peak_bf16_flops: float  # FLOP/s, dense
    memory_bytes: float  # B, the vendor's label as decimal GB; the device holds it in GiB
    memory_bandwidth: float  # B/s, HBM
    scale_up_bandwidth: float  # B/s per direction per GPU (NVLink / Infinity Fabric / ICI)
    power_watts: float | None  # W, maximum board power (TDP); None when unpublished
    source: str
    memory_note: str = ""
    peak_fp8_flops: float | None = None  # FLOP/s, dense; None: no FP8 tensor cores
    peak_fp4_flops: float | None = None  # FLOP/s, dense; None: no FP4 tensor cores
    scale_up_domain: int = 8  # GPUs joined by the scale-up switches

    def _rate(self, precision: Precision) -> float | None:
        return {"bf16": self.peak_bf16_flops, "fp8": self.peak_fp8_flops,
                "fp4": self.peak_fp4_flops}[precision]

    def precision_used(self, precision: Precision) -> Precision:
        """The precision whose rate the device runs ``precision`` at: itself if the
        vendor publishes a dense figure for it, else the next wider one that it has."""
        wider_first = PRECISIONS[: PRECISIONS.index(precision) + 1]
        return next((p for p in reversed(wider_first) if self._rate(p) is not None), "bf16")

    def peak_flops(self, precision: Precision = "bf16") -> float:
        """Dense peak FLOP/s at ``precision`` (with the fallback of ``precision_used``)."""
        return self._rate(self.precision_used(precision)) or self.peak_bf16_flops


@dataclass(frozen=True)
class AnnouncedPart:
    """A part announced, or shipping without a datasheet, that the calculators cannot
    offer yet: a figure they need is unpublished. Every unpublished figure is ``None``
    (never a guess); ``announced`` quotes what the vendor did say, in its own terms
    (which may be "with sparsity" or an unstated mix), and ``source`` where."""

    id: str
    name: str
    status: str  # "announced" or "shipping, no datasheet"
    peak_bf16_flops: float | None  # FLOP/s, dense
    peak_fp8_flops: float | None  # FLOP/s, dense
    peak_fp4_flops: float | None  # FLOP/s, dense
    memory_bytes: float | None  # B, the vendor's label as decimal GB
    memory_bandwidth: float | None  # B/s
    scale_up_bandwidth: float | None  # B/s per direction per device
    scale_up_domain: int | None  # devices in one scale-up domain
    power_watts: float | None  # W
    announced: str
    source: str

    def unpublished(self) -> tuple[str, ...]:
        """The names of the figures the vendor has not published (``None`` here)."""
        fields = ("peak_bf16_flops", "peak_fp8_flops", "peak_fp4_flops", "memory_bytes",
                  "memory_bandwidth", "scale_up_bandwidth", "scale_up_domain", "power_watts")
        return tuple(f for f in fields if getattr(self, f) is None)
