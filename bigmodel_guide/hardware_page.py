"""The generated Hardware page: every accelerator the calculators offer, with the figures
they use and where each comes from, then the parts announced (or shipping without a
datasheet) that they cannot offer yet, their unpublished figures said to be unpublished.
Both tables are read from the catalogue (``catalogues.accelerators``), so the page and the
calculators cannot disagree."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues import hardware

if TYPE_CHECKING:
    from calculators.catalogues.accelerator_spec import Accelerator, AnnouncedPart

HARDWARE_PATH = "reference/hardware.md"
UNPUBLISHED = "unpublished"


def _num(value: float | None, scale: float, digits: int = 0, absent: str = "—") -> str:
    return absent if value is None else f"{value / scale:,.{digits}f}"


def _tflops(value: float | None, absent: str = "—") -> str:
    return _num(value, 1e12, 1 if value is not None and value < 1e15 else 0, absent)


def _row(gpu: Accelerator) -> str:
    cells = (
        f"`{gpu.id}`", gpu.name, _tflops(gpu.peak_bf16_flops), _tflops(gpu.peak_fp8_flops),
        _tflops(gpu.peak_fp4_flops), _num(gpu.memory_bytes, 1e9),
        _num(gpu.memory_bandwidth, 1e12, 2), _num(gpu.scale_up_bandwidth, 1e9),
        str(gpu.scale_up_domain), _num(gpu.power_watts, 1.0, absent=UNPUBLISHED),
        hardware.default_nic(gpu.id).name)
    return "| " + " | ".join(cells) + " |"


def _announced_row(part: AnnouncedPart) -> str:
    cells = (
        part.name, part.status, _tflops(part.peak_bf16_flops, UNPUBLISHED),
        _tflops(part.peak_fp8_flops, UNPUBLISHED), _tflops(part.peak_fp4_flops, UNPUBLISHED),
        _num(part.memory_bytes, 1e9, absent=UNPUBLISHED),
        _num(part.memory_bandwidth, 1e12, 2, UNPUBLISHED),
        _num(part.scale_up_bandwidth, 1e9, absent=UNPUBLISHED),
        UNPUBLISHED if part.scale_up_domain is None else str(part.scale_up_domain),
        _num(part.power_watts, 1.0, absent=UNPUBLISHED))
    return "| " + " | ".join(cells) + " |"


_INTRO = """# Hardware

Every accelerator the calculators offer as a `gpu`, with the figures they compute with.
Peaks are dense tensor rates (no 2:4 sparsity: a datasheet's "with sparsity" figure is
halved, and the source says so); a dash means the part has no tensor rate at that
precision, and runs it at the next wider one it has. Memory is the vendor's label,
which the memory calculators read as GiB, what the stacks hold. Scale-up bandwidth is
per device and per direction (datasheets quote both directions together); the domain is
how many devices share it: an HGX node of 8, an NVL72 rack of 72, a TPU torus, a Trn2
UltraServer, a CloudMatrix384 supernode. Board power reads "unpublished" where the vendor
publishes none: the energy calculators then ask for it. The default NIC is the scale-out port the
planners give each device unless told otherwise (`network`).
"""

_ANNOUNCED_INTRO = """## Announced, or without a datasheet {#announced}

Parts the calculators cannot offer yet: a figure they divide by is unpublished, and the
catalogue does not guess it. What the vendor did announce is quoted in its own terms,
which may count sparsity or not say.
"""


def hardware_markdown() -> str:
    """The page's Markdown, from the catalogue as it is now."""
    lines = [_INTRO, "## Offered to the calculators {#catalogue}", "",
             "| id | Accelerator | BF16 TFLOP/s | FP8 TFLOP/s | FP4 TFLOP/s | Memory GB "
             "| HBM TB/s | Scale-up GB/s each way | Domain | Board W | Default NIC |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    lines += [_row(gpu) for gpu in hardware.ACCELERATORS.values()]
    lines += ["", "### Sources {#sources}", ""]
    lines += [f"- **`{gpu.id}`**: {gpu.source} {gpu.memory_note}".rstrip()
              for gpu in hardware.ACCELERATORS.values()]
    lines += ["", _ANNOUNCED_INTRO,
              "| Part | Status | BF16 TFLOP/s | FP8 TFLOP/s | FP4 TFLOP/s | Memory GB "
              "| HBM TB/s | Scale-up GB/s each way | Domain | Board W |",
              "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    lines += [_announced_row(part) for part in hardware.ANNOUNCED.values()]
    lines += [""]
    lines += [f"- **{part.name}** ({part.status}): {part.announced}. {part.source}"
              for part in hardware.ANNOUNCED.values()]
    return "\n".join(lines) + "\n"
