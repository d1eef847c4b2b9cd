"""The generated Hardware page: every accelerator the calculators offer, with the figures
they use and where each comes from, then the parts announced (or shipping without a
datasheet) that they cannot offer yet, their unpublished figures said to be unpublished.
Both tables are read from the catalogue (``catalogues.accelerators``), so the page and the
calculators cannot disagree."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bigmodel_guide.site_text import site_, site_N_
from calculators.catalogues import hardware
from calculators.core import i18n

if TYPE_CHECKING:
    from calculators.catalogues.accelerator_spec import Accelerator, AnnouncedPart

HARDWARE_PATH = "reference/hardware.md"
UNPUBLISHED = site_N_("unpublished")


def _unpublished() -> str:
    return site_(UNPUBLISHED)


def _num(value: float | None, scale: float, digits: int = 0, absent: str = "—") -> str:
    return absent if value is None else f"{value / scale:,.{digits}f}"


def _tflops(value: float | None, absent: str = "—") -> str:
    return _num(value, 1e12, 1 if value is not None and value < 1e15 else 0, absent)


def _row(gpu: Accelerator) -> str:
    cells = (
        f"`{gpu.id}`", gpu.name, _tflops(gpu.peak_bf16_flops), _tflops(gpu.peak_fp8_flops),
        _tflops(gpu.peak_fp4_flops), _num(gpu.memory_bytes, 1e9),
        _num(gpu.memory_bandwidth, 1e12, 2), _num(gpu.scale_up_bandwidth, 1e9),
        str(gpu.scale_up_domain), _num(gpu.power_watts, 1.0, absent=_unpublished()),
        hardware.default_nic(gpu.id).name)
    return "| " + " | ".join(cells) + " |"


def _announced_row(part: AnnouncedPart) -> str:
    unpublished = _unpublished()
    cells = (
        part.name, site_(part.status), _tflops(part.peak_bf16_flops, unpublished),
        _tflops(part.peak_fp8_flops, unpublished), _tflops(part.peak_fp4_flops, unpublished),
        _num(part.memory_bytes, 1e9, absent=unpublished),
        _num(part.memory_bandwidth, 1e12, 2, unpublished),
        _num(part.scale_up_bandwidth, 1e9, absent=unpublished),
        unpublished if part.scale_up_domain is None else str(part.scale_up_domain),
        _num(part.power_watts, 1.0, absent=unpublished))
    return "| " + " | ".join(cells) + " |"


_TITLE = site_N_("Hardware")
_INTRO = site_N_("""Every accelerator the calculators offer as a `gpu`, with the figures they
compute with. Peaks are dense tensor rates (no 2:4 sparsity: a datasheet's "with sparsity" figure is
halved, and the source says so); a dash means the part has no tensor rate at that
precision, and runs it at the next wider one it has. Memory is the vendor's label,
which the memory calculators read as GiB, what the stacks hold. Scale-up bandwidth is
per device and per direction (datasheets quote both directions together); the domain is
how many devices share it: an HGX node of 8, an NVL72 rack of 72, a TPU torus, a Trn2
UltraServer, a CloudMatrix384 supernode. Board power reads "unpublished" where the vendor
publishes none: the energy calculators then ask for it. The default NIC is the scale-out
port the planners give each device unless told otherwise (`network`).""")
_CATALOGUE_TITLE = site_N_("Offered to the calculators")
_SOURCES_TITLE = site_N_("Sources")
_ANNOUNCED_TITLE = site_N_("Announced, or without a datasheet")
_ANNOUNCED_INTRO = site_N_("""Parts the calculators cannot offer yet: a figure they divide by
is unpublished, and the catalogue does not guess it. What the vendor did announce is quoted
in its own terms, which may count sparsity or not say.""")
_COLUMNS = (site_N_("BF16 TFLOP/s"), site_N_("FP8 TFLOP/s"), site_N_("FP4 TFLOP/s"),
            site_N_("Memory GB"), site_N_("HBM TB/s"), site_N_("Scale-up GB/s each way"),
            site_N_("Domain"), site_N_("Board W"))


def _header(first: tuple[str, ...], last: tuple[str, ...] = ()) -> str:
    names = [site_(name) for name in (*first, *_COLUMNS, *last)]
    return "| " + " | ".join(names) + " |"


def hardware_markdown() -> str:
    """The page's Markdown, from the catalogue as it is now."""
    # Every heading keeps its English anchor in every edition (a link works in both).
    lines = [f"# {site_(_TITLE)} {{#hardware}}", "", site_(_INTRO), "",
             f"## {site_(_CATALOGUE_TITLE)} {{#catalogue}}", "",
             _header((site_N_("id"), site_N_("Accelerator")), (site_N_("Default NIC"),)),
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    lines += [_row(gpu) for gpu in hardware.ACCELERATORS.values()]
    lines += ["", f"### {site_(_SOURCES_TITLE)} {{#sources}}", ""]
    lines += [f"- **`{gpu.id}`**: {site_(gpu.source)} {i18n._(gpu.memory_note)}".rstrip()
              for gpu in hardware.ACCELERATORS.values()]
    lines += ["", f"## {site_(_ANNOUNCED_TITLE)} {{#announced}}", "", site_(_ANNOUNCED_INTRO), "",
              _header((site_N_("Part"), site_N_("Status"))),
              "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    lines += [_announced_row(part) for part in hardware.ANNOUNCED.values()]
    lines += [""]
    lines += [site_("- **{name}** ({status}): {announced}. {source}").format(
        name=part.name, status=site_(part.status), announced=site_(part.announced),
        source=site_(part.source)) for part in hardware.ANNOUNCED.values()]
    return "\n".join(lines) + "\n"
