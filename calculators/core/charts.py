"""Small SVG charts drawn in pure Python, pre-rendered at build time and redrawn live.

Colours come from CSS classes (``bm-series-N``, ``bm-axis``) that the site's stylesheet
defines for light and dark schemes, so a chart follows the reader's theme. Every chart
carries a <title> and a <desc> that state its data in words, for screen readers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape as _escape_html

WIDTH, HEIGHT = 640, 320
LEFT, RIGHT, TOP, BOTTOM = 72, 16, 16, 48
LEGEND_WIDTH = 136  # room kept on the right by ``stacked_bar_chart(legend_right=True)``


def escape(text: str) -> str:
    """Escape text for SVG character data (&, <, >), like xml.sax.saxutils.escape.

    html.escape is used because xml.sax.saxutils imports urllib.request (and with it
    http.client, email, ssl): about 0.4 s of a reader's first chart under Pyodide.
    """
    return _escape_html(text, quote=False)


@dataclass(frozen=True)
class Series:
    """One line of a line chart: (x, y) points in plotting units."""

    label: str
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Marker:
    """A vertical rule at ``x`` with a label (e.g. a crossover)."""

    x: float
    label: str


def _ticks(low: float, high: float, log: bool) -> list[float]:
    if log:
        first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
        step = max(1, (last - first) // 6)
        return [10.0**e for e in range(first, last + 1, step) if low <= 10.0**e <= high]
    span = high - low or 1.0
    raw = span / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    start = math.ceil(low / step) * step
    return [start + i * step for i in range(int((high - start) / step) + 1)]


def _label(value: float) -> str:
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if -2 <= exponent <= 4:
        return f"{value:,.6g}"
    return f"1e{exponent}" if value == 10.0**exponent else f"{value:.2g}"


class _Axis:
    def __init__(self, low: float, high: float, log: bool, start: float, end: float) -> None:
        if log:
            low, high = max(low, 1e-300), max(high, low * 10)
        elif low == high:
            low, high = low - 1, high + 1
        self.low, self.high, self.log, self.start, self.end = low, high, log, start, end

    def __call__(self, value: float) -> float:
        if self.log:
            frac = (math.log10(max(value, 1e-300)) - math.log10(self.low)) / (
                math.log10(self.high) - math.log10(self.low)
            )
        else:
            frac = (value - self.low) / (self.high - self.low)
        return self.start + frac * (self.end - self.start)


def _frame(title: str, desc: str, body: list[str]) -> str:
    return (
        f'<svg class="bm-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
        f"<desc>{escape(desc)}</desc>{''.join(body)}</svg>"
    )


def line_chart(
    title: str,
    series: list[Series],
    x_label: str,
    y_label: str,
    *,
    log_x: bool = False,
    log_y: bool = False,
    markers: tuple[Marker, ...] = (),
) -> str:
    """A line chart with one polyline per series, axes, ticks and a legend."""
    xs = [x for s in series for x, _ in s.points] or [1.0]
    ys = [y for s in series for _, y in s.points] or [1.0]
    x_axis = _Axis(min(xs), max(xs), log_x, LEFT, WIDTH - RIGHT)
    y_low = min(ys) if log_y else min(0.0, *ys)
    y_axis = _Axis(y_low, max(ys), log_y, HEIGHT - BOTTOM, TOP)
    body = [
        f'<line class="bm-axis" x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" '
        f'y2="{HEIGHT - BOTTOM}"/>',
        f'<line class="bm-axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}"/>',
    ]
    for tick in _ticks(x_axis.low, x_axis.high, log_x):
        x = x_axis(tick)
        body.append(
            f'<text class="bm-tick" x="{x:.1f}" y="{HEIGHT - BOTTOM + 16}" '
            f'text-anchor="middle">{escape(_label(tick))}</text>'
        )
    for tick in _ticks(y_axis.low, y_axis.high, log_y):
        y = y_axis(tick)
        body.append(
            f'<line class="bm-grid" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}"/>'
        )
        body.append(
            f'<text class="bm-tick" x="{LEFT - 6}" y="{y + 4:.1f}" '
            f'text-anchor="end">{escape(_label(tick))}</text>'
        )
    body.append(
        f'<text class="bm-label" x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 8}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    body.append(
        f'<text class="bm-label" x="14" y="{(TOP + HEIGHT - BOTTOM) / 2}" '
        f'text-anchor="middle" transform="rotate(-90 14 {(TOP + HEIGHT - BOTTOM) / 2})">'
        f"{escape(y_label)}</text>"
    )
    for marker in markers:
        x = x_axis(marker.x)
        body.append(
            f'<line class="bm-marker" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{HEIGHT - BOTTOM}"/>'
        )
        body.append(
            f'<text class="bm-tick" x="{x + 4:.1f}" y="{TOP + 12}">{escape(marker.label)}</text>'
        )
    for index, s in enumerate(series):
        points = " ".join(f"{x_axis(x):.1f},{y_axis(y):.1f}" for x, y in s.points)
        body.append(f'<polyline class="bm-series-{index % 6}" fill="none" points="{points}"/>')
        body.append(
            f'<text class="bm-legend bm-fill-{index % 6}" x="{LEFT + 8}" '
            f'y="{TOP + 14 + 16 * index}">{escape(s.label)}</text>'
        )
    desc = "; ".join(
        f"{s.label}: "
        + ", ".join(
            f"({_label(x)}, {_label(y)})" for x, y in s.points[:: max(1, len(s.points) // 8)]
        )
        for s in series
    )
    return _frame(title, f"{x_label} against {y_label}. {desc}", body)


def stacked_bar_chart(
    title: str,
    bars: list[tuple[str, list[tuple[str, float]]]],
    y_label: str,
    *,
    limit: float | None = None,
    limit_label: str = "",
    legend_right: bool = False,
) -> str:
    """Vertical stacked bars: ``bars`` = [(bar label, [(segment label, value), ...])].

    ``legend_right`` keeps a column on the right for the legend so that it never
    covers the bars (the default draws it inside the plot, top left)."""
    totals = [sum(v for _, v in segments) for _, segments in bars] or [1.0]
    top = max([*totals, limit or 0.0]) or 1.0
    y_axis = _Axis(0.0, top * 1.05, False, HEIGHT - BOTTOM, TOP)
    right = RIGHT + (LEGEND_WIDTH if legend_right else 0)
    slot = (WIDTH - LEFT - right) / max(1, len(bars))
    body = [
        f'<line class="bm-axis" x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" '
        f'y2="{HEIGHT - BOTTOM}"/>'
    ]
    for tick in _ticks(0.0, top * 1.05, False):
        y = y_axis(tick)
        body.append(
            f'<text class="bm-tick" x="{LEFT - 6}" y="{y + 4:.1f}" '
            f'text-anchor="end">{escape(_label(tick))}</text>'
        )
    legend: dict[str, int] = {}
    for index, (label, segments) in enumerate(bars):
        x = LEFT + index * slot + slot * 0.2
        base = 0.0
        for name, value in segments:
            colour = legend.setdefault(name, len(legend))
            y0, y1 = y_axis(base), y_axis(base + value)
            body.append(
                f'<rect class="bm-fill-{colour % 6}" x="{x:.1f}" y="{y1:.1f}" '
                f'width="{slot * 0.6:.1f}" height="{max(0.0, y0 - y1):.1f}">'
                f"<title>{escape(name)}: {escape(_label(value))}</title></rect>"
            )
            base += value
        body.append(
            f'<text class="bm-tick" x="{x + slot * 0.3:.1f}" y="{HEIGHT - BOTTOM + 16}" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    if limit is not None:
        y = y_axis(limit)
        body.append(
            f'<line class="bm-marker" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - right}" y2="{y:.1f}"/>'
        )
        body.append(
            f'<text class="bm-tick" x="{WIDTH - right - 4}" y="{y - 4:.1f}" '
            f'text-anchor="end">{escape(limit_label)}</text>'
        )
    legend_x = WIDTH - right + 12 if legend_right else LEFT + 8
    for name, colour in legend.items():
        body.append(
            f'<text class="bm-legend bm-fill-{colour % 6}" x="{legend_x}" '
            f'y="{TOP + 14 + 16 * colour}">{escape(name)}</text>'
        )
    body.append(
        f'<text class="bm-label" x="14" y="{(TOP + HEIGHT - BOTTOM) / 2}" '
        f'text-anchor="middle" transform="rotate(-90 14 {(TOP + HEIGHT - BOTTOM) / 2})">'
        f"{escape(y_label)}</text>"
    )
    desc = "; ".join(
        f"{label}: " + ", ".join(f"{n} {_label(v)}" for n, v in segments)
        for label, segments in bars
    )
    return _frame(title, f"{y_label}. {desc}", body)
