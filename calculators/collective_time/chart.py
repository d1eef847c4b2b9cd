"""The ``collective_time`` calculator's chart: time and bus bandwidth against message
size, with the message and the size where the latency and bandwidth terms are equal."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

from calculators.collective_time.algorithms import ALGORITHMS, collective_cost, fastest
from calculators.core.charts import Marker, Series, line_chart
from calculators.core.i18n import _
from calculators.formulas.collectives import costs as comm

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs


def time_and_busbw_chart(inputs: Inputs, message_bytes: float, crossover: float, used: str) -> str:
    """Time and busbw against size for the chosen algorithm; for "auto" (or a fallback
    to it) NCCL's choice at each size, so the curve bends where NCCL would switch."""
    collective, ranks = inputs.text("collective"), inputs.whole("ranks")
    automatic = inputs.text("algorithm") not in ALGORITHMS[collective]
    algorithm = "auto" if automatic else used
    anchor = crossover if math.isfinite(crossover) and crossover > 0 else message_bytes
    low = max(1.0, min(message_bytes, anchor) / 1e3)
    high = max(message_bytes, anchor) * 1e2
    times: list[tuple[float, float]] = []
    buses: list[tuple[float, float]] = []
    # Sizes 2^k and 1.5 x 2^k: exact floats, so every platform draws the same chart.
    for power in range(math.frexp(low)[1] - 1, math.frexp(high)[1] + 1):
        for mantissa in (1.0, 1.5):
            size = math.ldexp(mantissa, power)
            cost = (fastest(inputs, collective, size)[1] if automatic
                    else collective_cost(inputs, collective, used, size))
            times.append((size, cost.time_s * 1e6))
            buses.append((size, comm.busbw(cast("comm.Collective", collective), size,
                                           cost.time_s, ranks) / 1e9))
    markers = [Marker(message_bytes, _("this message"))]
    if math.isfinite(crossover) and low <= crossover <= high:
        markers.insert(0, Marker(crossover, _("latency = bandwidth term")))
    return line_chart(
        _("{collective} ({algorithm}) on {ranks} ranks: time and bus bandwidth").format(
            collective=collective, algorithm=algorithm, ranks=ranks),
        [Series(_("time (µs)"), tuple(times)), Series(_("busbw (GB/s)"), tuple(buses))],
        _("message size S (bytes)"), _("time in µs; busbw in GB/s"),
        log_x=True, log_y=True, markers=tuple(markers),
    )
