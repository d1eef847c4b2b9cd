"""The pieces the SVG charts are drawn with: axes and their ticks, text and rules as SVG
elements, and the canvas that lays one layout out row by row, from the top down.

Colours are CSS classes (``bm-series-N``, ``bm-fill-N``, ``bm-axis``) that the site's
stylesheet defines for light and dark schemes; text sizes come from ``chart_text``.
"""

from __future__ import annotations

import math
from html import escape as _escape_html

from calculators.core.chart_text import FONT, LINE, flow, text_width, thin, wrap

#: Series colours the stylesheet defines (``--bm-c0`` .. ``--bm-c7``, light and dark):
#: a chart with more series than this is refused rather than drawing two series in one
#: colour (the planners' step-time bars have 7 parts, the MoE planner's 8).
PALETTE = 8
GAP = 8.0  # between labels
#: The start of one layout's <svg> element, up to its viewBox.
LAYOUT_START = ('<svg class="bm-chart" data-layout="{name}" role="img" '
                'xmlns="http://www.w3.org/2000/svg" ')


def escape(text: str) -> str:
    """Escape text for SVG character data (&, <, >), like xml.sax.saxutils.escape.

    html.escape is used because xml.sax.saxutils imports urllib.request (and with it
    http.client, email, ssl): about 0.4 s of a reader's first chart under Pyodide.
    """
    return _escape_html(text, quote=False)


def tick_values(low: float, high: float, log: bool) -> list[float]:
    """Round values between ``low`` and ``high`` to put ticks at: powers of ten on a log
    axis, steps of 1, 2 or 5 times a power of ten (about five of them) otherwise."""
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


def tick_label(value: float) -> str:
    """A value as a tick (or a chart's description) shows it: short, exponent if large."""
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if -2 <= exponent <= 4:
        return f"{value:,.6g}"
    return f"1e{exponent}" if value == 10.0**exponent else f"{value:.2g}"


class Axis:
    """A range of values (linear or log) mapped onto the drawing between two ends."""

    def __init__(self, low: float, high: float, log: bool, start: float, end: float) -> None:
        if log:
            low, high = max(low, 1e-300), max(high, low * 10)
        elif low == high:
            low, high = low - 1, high + 1
        self.low, self.high, self.log, self.start, self.end = low, high, log, start, end
        # The range's ends as plotted (logarithms on a log axis), worked out once: a
        # chart maps every point of every series through here, in each layout.
        self._from = math.log10(low) if log else low
        self._span = (math.log10(high) if log else high) - self._from

    def at(self, start: float, end: float) -> Axis:
        """The same range drawn between other ends."""
        return Axis(self.low, self.high, self.log, start, end)

    def __call__(self, value: float) -> float:
        plotted = math.log10(max(value, 1e-300)) if self.log else value
        return self.start + (plotted - self._from) / self._span * (self.end - self.start)


def series_colour(index: int) -> int:
    """The colour number of the series (or bar part) at ``index``; refused past the palette."""
    if not 0 <= index < PALETTE:
        raise ValueError(f"a chart has more than {PALETTE} series: its colours would repeat")
    return index


def text_element(x: float, y: float, text: str, cls: str, anchor: str = "start") -> str:
    align = "" if anchor == "start" else f' text-anchor="{anchor}"'
    return f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}"{align}>{escape(text)}</text>'


def line_element(x1: float, y1: float, x2: float, y2: float, cls: str) -> str:
    return f'<line class="{cls}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'


def row_rules(x: float, rows: list[float], cls: str) -> str:
    """A vertical rule through every bar row at ``x``, broken between rows (where the
    row labels are), as one path: a chart of 10 rows and 6 ticks had 60 <line>s."""
    steps = "".join(f"M{x:.1f} {y - 2:.1f}v18" for y in rows)
    return f'<path class="{cls}" fill="none" d="{steps}"/>'


class Canvas:
    """One layout being drawn: its width, the body, and a cursor going down."""

    def __init__(self, width: float) -> None:
        self.width = width
        self.body: list[str] = []
        self.y = 0.0

    def lines(self, text: str, cls: str, x: float = 0.0, anchor: str = "start") -> None:
        """``text`` wrapped to the width, one row per line, from the cursor down."""
        for line in wrap(text, self.width):
            self.body.append(text_element(x, self.y + FONT, line, cls, anchor))
            self.y += LINE

    def legend(self, entries: list[tuple[str, str]]) -> None:
        """Swatches with labels in rows, above the plot: (kind, label); kind is
        "line-N" (a series), "box-N" (a bar segment) or "limit" (a dashed rule)."""
        widths = [22 + text_width(label) for _, label in entries]
        for row in flow(widths, self.width, 2 * GAP):
            x = 0.0
            for index in row:
                kind, label = entries[index]
                mid = self.y + LINE / 2
                if kind.startswith("box-"):
                    self.body.append(f'<rect class="bm-fill-{kind[4:]}" x="{x:.1f}" '
                                     f'y="{mid - 5:.1f}" width="16" height="10"/>')
                else:
                    cls = "bm-marker" if kind == "limit" else f"bm-series-{kind[5:]}"
                    self.body.append(line_element(x, mid, x + 16, mid, cls))
                self.body.append(text_element(x + 22, self.y + FONT, label, "bm-legend"))
                x += widths[index] + 2 * GAP
            self.y += LINE
        self.y += 4

    def layout(self, name: str, title: str, desc: str) -> str:
        height = math.ceil(self.y + 4)
        return (f'{LAYOUT_START.format(name=name)}viewBox="0 0 {self.width:g} {height}" '
                f'width="{self.width:g}" height="{height}"><title>{escape(title)}</title>'
                f"<desc>{escape(desc)}</desc>{''.join(self.body)}</svg>")


def value_ticks(axis: Axis, gap_px: float, horizontal: bool) -> list[tuple[float, str]]:
    """Tick positions and labels along ``axis``, thinned so that labels never touch."""
    ticks = [(axis(t), tick_label(t)) for t in tick_values(axis.low, axis.high, axis.log)]
    if horizontal:
        spans = [(p - text_width(s) / 2, p + text_width(s) / 2) for p, s in ticks]
    else:  # a vertical axis: positions grow downwards as values grow; sort by position
        ticks.sort()
        spans = [(p - LINE / 2, p + LINE / 2) for p, _ in ticks]
    return [ticks[i] for i in thin(spans, gap_px)]
