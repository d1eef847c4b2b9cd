"""Accelerator inputs shared by several calculators: the catalogue as a choice, and
the overrides of its peak and memory."""

from __future__ import annotations

from calculators.catalogues.hardware import ACCELERATORS
from calculators.core.spec import Choice, Param


def accelerator_choices() -> tuple[Choice, ...]:
    """The catalogue as choices for a ``gpu`` input."""
    return tuple(Choice(a.id, a.name) for a in ACCELERATORS.values())


#: The override of the catalogue's peak, shared by every calculator that divides by it.
PEAK_FLOPS_PARAM = Param(
    "peak_flops",
    "Peak FLOP/s override",
    "float",
    None,
    unit="FLOP/s",
    # A floor far below any real accelerator (1 GFLOP/s) keeps everything divided by
    # the peak finite at every corner of the bounds (tests/unit/test_extremes.py).
    minimum=1e9,
    maximum=1e17,
    optional=True,
    placeholder="from the accelerator",
    help="Blank: the catalogue's dense BF16 peak for the chosen accelerator.",
    advanced=True,
)

GPU_MEMORY_PARAM = Param(
    "gpu_memory",
    "GPU memory override",
    "float",
    None,
    unit="B",
    minimum=0,
    exclusive_minimum=True,
    maximum=1e14,
    optional=True,
    placeholder="from the GPU",
    help="E.g. 80 GiB, or what your framework leaves.",
)
