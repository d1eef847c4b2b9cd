"""Small SVG charts drawn in pure Python, pre-rendered at build time and redrawn live.

Every chart is drawn twice, in one SVG root: a wide layout (640 user units) and a
narrow one (340) for phones, each with text at ``chart_text.FONT``. The page shows the
layout that fits its column (``layouts`` splits them), so text renders at about 12 CSS
px at any width instead of shrinking with the chart. Labels are laid out so that they
never overlap: tick labels are thinned, legends, the axis caption and marker labels
sit in their own rows outside the plot, and bar charts with long bar names turn
horizontal. Colours come from CSS classes (``bm-series-N``, ``bm-fill-N``,
``bm-axis``) that the site's stylesheet defines for light and dark schemes. Every
layout carries a <title> and a <desc> that state its data in words, for screen readers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from html import escape as _escape_html

from calculators.core.chart_text import FONT, LINE, flow, text_width, thin, wrap

#: Width and plot height of each layout, in user units.
LAYOUTS: tuple[tuple[str, float, float], ...] = (("wide", 640.0, 220.0),
                                                 ("narrow", 340.0, 200.0))
WIDTH = 640  # the wide layout's width, kept for callers that size things by it
#: Series colours the stylesheet defines (``--bm-c0`` .. ``--bm-c7``, light and dark):
#: a chart with more series than this is refused rather than drawing two series in one
#: colour (the planners' step-time bars have 7 parts, the MoE planner's 8).
PALETTE = 8
GAP = 8.0  # between labels
_SET = '<svg class="bm-chart-set" xmlns="http://www.w3.org/2000/svg" '
_LAYOUT = ('<svg class="bm-chart" data-layout="{name}" role="img" '
           'xmlns="http://www.w3.org/2000/svg" ')


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
        # The range's ends as plotted (logarithms on a log axis), worked out once: a
        # chart maps every point of every series through here, in each layout.
        self._from = math.log10(low) if log else low
        self._span = (math.log10(high) if log else high) - self._from

    def at(self, start: float, end: float) -> _Axis:
        """The same range drawn between other ends."""
        return _Axis(self.low, self.high, self.log, start, end)

    def __call__(self, value: float) -> float:
        plotted = math.log10(max(value, 1e-300)) if self.log else value
        return self.start + (plotted - self._from) / self._span * (self.end - self.start)


def _colour(index: int) -> int:
    if not 0 <= index < PALETTE:
        raise ValueError(f"a chart has more than {PALETTE} series: its colours would repeat")
    return index


def _text(x: float, y: float, text: str, cls: str, anchor: str = "start") -> str:
    align = "" if anchor == "start" else f' text-anchor="{anchor}"'
    return f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}"{align}>{escape(text)}</text>'


def _line(x1: float, y1: float, x2: float, y2: float, cls: str) -> str:
    return f'<line class="{cls}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'


def _row_rules(x: float, rows: list[float], cls: str) -> str:
    """A vertical rule through every bar row at ``x``, broken between rows (where the
    row labels are), as one path: a chart of 10 rows and 6 ticks had 60 <line>s."""
    steps = "".join(f"M{x:.1f} {y - 2:.1f}v18" for y in rows)
    return f'<path class="{cls}" fill="none" d="{steps}"/>'


class _Canvas:
    """One layout being drawn: its width, the body, and a cursor going down."""

    def __init__(self, width: float) -> None:
        self.width = width
        self.body: list[str] = []
        self.y = 0.0

    def lines(self, text: str, cls: str, x: float = 0.0, anchor: str = "start") -> None:
        """``text`` wrapped to the width, one row per line, from the cursor down."""
        for line in wrap(text, self.width):
            self.body.append(_text(x, self.y + FONT, line, cls, anchor))
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
                    self.body.append(_line(x, mid, x + 16, mid, cls))
                self.body.append(_text(x + 22, self.y + FONT, label, "bm-legend"))
                x += widths[index] + 2 * GAP
            self.y += LINE
        self.y += 4

    def layout(self, name: str, title: str, desc: str) -> str:
        height = math.ceil(self.y + 4)
        return (f'{_LAYOUT.format(name=name)}viewBox="0 0 {self.width:g} {height}" '
                f'width="{self.width:g}" height="{height}"><title>{escape(title)}</title>'
                f"<desc>{escape(desc)}</desc>{''.join(self.body)}</svg>")


def _value_ticks(axis: _Axis, gap_px: float, horizontal: bool) -> list[tuple[float, str]]:
    """Tick positions and labels along ``axis``, thinned so that labels never touch."""
    ticks = [(axis(t), _label(t)) for t in _ticks(axis.low, axis.high, axis.log)]
    if horizontal:
        spans = [(p - text_width(s) / 2, p + text_width(s) / 2) for p, s in ticks]
    else:  # a vertical axis: positions grow downwards as values grow; sort by position
        ticks.sort()
        spans = [(p - LINE / 2, p + LINE / 2) for p, _ in ticks]
    return [ticks[i] for i in thin(spans, gap_px)]


def _chart_set(layouts: list[str]) -> str:
    """The layouts in one SVG root; on its own, the root shows the first (wide)."""
    shown = re.search(r'viewBox="0 0 (\S+) (\S+)"', layouts[0])
    assert shown is not None
    rest = "".join(svg.replace(' role="img" ', ' role="img" display="none" ', 1)
                   for svg in layouts[1:])
    return (f'{_SET}viewBox="0 0 {shown[1]} {shown[2]}" width="{shown[1]}" '
            f'height="{shown[2]}">{layouts[0]}{rest}</svg>')


def layouts(chart: str) -> dict[str, str]:
    """Each layout of a chart from this module, by name, as an SVG document of its own
    (shown: no ``display="none"``). A plain SVG is its own wide layout."""
    if not chart.startswith(_SET):
        return {"wide": chart}
    found: dict[str, str] = {}
    starts = [m.start() for m in re.finditer('<svg class="bm-chart" data-layout="', chart)]
    ends = [*starts[1:], chart.rindex("</svg>")]
    for start, end in zip(starts, ends, strict=True):
        svg = chart[start:end].replace(' display="none"', "", 1)
        name = svg[len('<svg class="bm-chart" data-layout="'):].split('"', 1)[0]
        found[name] = svg
    return found


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
    """A line chart with one polyline per series, axes, ticks, a legend and markers."""
    xs = [x for s in series for x, _ in s.points] or [1.0]
    ys = [y for s in series for _, y in s.points] or [1.0]
    x_range = _Axis(min(xs), max(xs), log_x, 0.0, 1.0)
    y_range = _Axis(min(ys) if log_y else min(0.0, *ys), max(ys), log_y, 1.0, 0.0)
    desc = "; ".join(
        f"{s.label}: "
        + ", ".join(
            f"({_label(x)}, {_label(y)})" for x, y in s.points[:: max(1, len(s.points) // 8)]
        )
        for s in series
    )
    desc = f"{x_label} against {y_label}. {desc}"
    drawn = []
    for name, width, plot_height in LAYOUTS:
        canvas = _Canvas(width)
        canvas.legend([(f"line-{_colour(i)}", s.label) for i, s in enumerate(series)])
        canvas.lines(y_label, "bm-label")
        y_labels = [_label(t) for t in _ticks(y_range.low, y_range.high, log_y)]
        left = max(24.0, *(text_width(s) for s in y_labels)) + GAP
        x_labels = [_label(t) for t in _ticks(x_range.low, x_range.high, log_x)]
        right = max(GAP, text_width(x_labels[-1]) / 2 + 2) if x_labels else GAP
        x_axis = x_range.at(left, width - right)
        _marker_rows(canvas, x_axis, markers)
        top = canvas.y + 8
        bottom = top + plot_height
        y_axis = y_range.at(bottom, top)
        body = canvas.body
        body += [_line(left, bottom, width - right, bottom, "bm-axis"),
                 _line(left, top, left, bottom, "bm-axis")]
        for y, text in _value_ticks(y_axis, 0.0, horizontal=False):
            body.append(_line(left, y, width - right, y, "bm-grid"))
            body.append(_text(left - 6, y + 4, text, "bm-tick", "end"))
        for x, text in _value_ticks(x_axis, GAP, horizontal=True):
            body.append(_text(x, bottom + 8 + FONT, text, "bm-tick", "middle"))
        for marker in markers:
            x = x_axis(marker.x)
            body.append(_line(x, top, x, bottom, "bm-marker"))
        for index, s in enumerate(series):
            points = " ".join(f"{x_axis(x):.1f},{y_axis(y):.1f}" for x, y in s.points)
            body.append(f'<polyline class="bm-series-{_colour(index)}" fill="none" '
                        f'points="{points}"/>')
        canvas.y = bottom + LINE + 10
        canvas.lines(x_label, "bm-label", (left + width - right) / 2, "middle")
        drawn.append(canvas.layout(name, title, desc))
    return _chart_set(drawn)


def _marker_rows(canvas: _Canvas, x_axis: _Axis, markers: tuple[Marker, ...]) -> None:
    """Each marker's label in a row above the plot, starting at its rule (or ending at
    it, near the right edge); a label that would touch another goes a row higher."""
    rows: list[list[tuple[float, float]]] = []
    placed: list[tuple[int, float, str, str]] = []
    for marker in markers:
        x, size = x_axis(marker.x), text_width(marker.label)
        start, anchor = (x - 2, "start") if x - 2 + size <= canvas.width else (x + 2, "end")
        span = (start, start + size) if anchor == "start" else (start - size, start)
        if span[0] < 0:
            span, start, anchor = (0.0, size), 0.0, "start"
        row = next((i for i, used in enumerate(rows)
                    if all(span[0] >= b + GAP or span[1] + GAP <= a for a, b in used)), None)
        if row is None:
            rows.append([])
            row = len(rows) - 1
        rows[row].append(span)
        placed.append((row, start, marker.label, anchor))
    for row, start, label, anchor in placed:
        y = canvas.y + (len(rows) - 1 - row) * LINE + FONT
        canvas.body.append(_text(start, y, label, "bm-tick", anchor))
    canvas.y += len(rows) * LINE


def stacked_bar_chart(
    title: str,
    bars: list[tuple[str, list[tuple[str, float]]]],
    y_label: str,
    *,
    limit: float | None = None,
    limit_label: str = "",
    legend_right: bool = False,
) -> str:
    """Stacked bars: ``bars`` = [(bar label, [(segment label, value), ...])].

    The legend (with the limit, when given) sits above the plot, clear of the bars;
    ``legend_right`` is accepted for older callers and changes nothing. Bars stand
    upright when their labels fit under them (thinned when there are many); a few bars
    with long labels lie down, each label on its own row."""
    del legend_right
    totals = [math.fsum(v for _, v in segments) for _, segments in bars] or [1.0]
    top = max([*totals, limit or 0.0]) or 1.0
    colours: dict[str, int] = {}
    for _, segments in bars:
        for name, _ in segments:
            colours.setdefault(name, len(colours))
    entries = [(f"box-{_colour(c)}", name) for name, c in colours.items()]
    if limit is not None:
        entries.append(("limit", limit_label or _label(limit)))
    desc = "; ".join(
        f"{label}: " + ", ".join(f"{n} {_label(v)}" for n, v in segments)
        for label, segments in bars
    )
    desc = f"{y_label}. {desc}"
    value_range = _Axis(0.0, top * 1.05, False, 0.0, 1.0)
    drawn = []
    for name, width, plot_height in LAYOUTS:
        canvas = _Canvas(width)
        canvas.legend(entries)
        tick_width = max(text_width(_label(t))
                         for t in _ticks(value_range.low, value_range.high, False))
        slot = (width - tick_width - GAP - GAP) / max(1, len(bars))
        widest = max((text_width(label) for label, _ in bars), default=0.0)
        if len(bars) <= 12 and widest > slot - 4:
            _bars_across(canvas, bars, colours, value_range, value_label=y_label, limit=limit)
        else:
            canvas.lines(y_label, "bm-label")
            _bars_upright(canvas, bars, colours, value_range, plot_height=plot_height,
                          limit=limit)
        drawn.append(canvas.layout(name, title, desc))
    return _chart_set(drawn)


def _segments(bars: list[tuple[str, list[tuple[str, float]]]], colours: dict[str, int],
              rect: object) -> list[str]:
    """Each bar's segments, base upwards, drawn by ``rect(index, base, value)``, under
    one <title> listing the bar's parts (the tooltip on any of them). Parts of zero
    draw nothing: a planner's bar has 7-8 parts, often most of them 0, and every
    element costs the page that parses it (the dense chapter had 2,661 in its charts)."""
    body = []
    for index, (label, segments) in enumerate(bars):
        drawn = [(name, value) for name, value in segments if value]
        parts = ", ".join(f"{name} {_label(value)}" for name, value in drawn)
        title = f"<title>{escape(label)}: {escape(parts or '0')}</title>"
        rects, base = [], 0.0
        for name, value in drawn:  # parts of zero add nothing to the base either
            rects.append(f'<rect class="bm-fill-{colours[name]}" '
                         f'{rect(index, base, value)}')  # type: ignore[operator]
            base += value
        if len(rects) == 1:  # the title inside the one rect: no group needed
            body.append(f"{rects[0]}>{title}</rect>")
        else:
            body.append(f"<g>{title}{''.join(r + '/>' for r in rects)}</g>")
    return body


def _bars_upright(canvas: _Canvas, bars: list[tuple[str, list[tuple[str, float]]]],
                  colours: dict[str, int], value_range: _Axis, *, plot_height: float,
                  limit: float | None) -> None:
    ticks = [_label(t) for t in _ticks(value_range.low, value_range.high, False)]
    left = max(24.0, *(text_width(t) for t in ticks)) + GAP
    right = canvas.width - GAP
    top = canvas.y + 8
    bottom = top + plot_height
    axis = value_range.at(bottom, top)
    slot = (right - left) / max(1, len(bars))
    body = canvas.body
    body.append(_line(left, bottom, right, bottom, "bm-axis"))
    for y, text in _value_ticks(axis, 0.0, horizontal=False):
        body.append(_line(left, y, right, y, "bm-grid"))
        body.append(_text(left - 6, y + 4, text, "bm-tick", "end"))

    def rect(index: int, base: float, value: float) -> str:
        y0, y1 = axis(base), axis(base + value)
        return (f'x="{left + index * slot + slot * 0.2:.1f}" y="{y1:.1f}" '
                f'width="{slot * 0.6:.1f}" height="{max(0.0, y0 - y1):.1f}"')

    body += _segments(bars, colours, rect)
    centres = [left + (i + 0.5) * slot for i in range(len(bars))]
    spans = [(c - text_width(label) / 2, c + text_width(label) / 2)
             for c, (label, _) in zip(centres, bars, strict=True)]
    for i in thin(spans, GAP):
        body.append(_text(centres[i], bottom + 8 + FONT, bars[i][0], "bm-tick", "middle"))
    if limit is not None:
        body.append(_line(left, axis(limit), right, axis(limit), "bm-marker"))
    canvas.y = bottom + LINE + 8


def _bars_across(canvas: _Canvas, bars: list[tuple[str, list[tuple[str, float]]]],
                 colours: dict[str, int], value_range: _Axis, *, value_label: str,
                 limit: float | None) -> None:
    ticks = [_label(t) for t in _ticks(value_range.low, value_range.high, False)]
    left = 1.0
    right = canvas.width - max(GAP, text_width(ticks[-1]) / 2 + 2)
    axis = value_range.at(left, right)
    rows: list[float] = []
    for label, _ in bars:
        canvas.lines(label, "bm-tick")
        rows.append(canvas.y)
        canvas.y += 14 + 6
    body = canvas.body
    for x, _ in _value_ticks(axis, GAP, horizontal=True):
        body.append(_row_rules(x, rows, "bm-grid"))

    def rect(index: int, base: float, value: float) -> str:
        x0, x1 = axis(base), axis(base + value)
        return (f'x="{x0:.1f}" y="{rows[index]:.1f}" width="{max(0.0, x1 - x0):.1f}" '
                'height="14"')

    body += _segments(bars, colours, rect)
    if limit is not None:
        x = axis(limit)
        body.append(_row_rules(x, rows, "bm-marker"))
    body.append(_line(left, canvas.y, right, canvas.y, "bm-axis"))
    for x, text in _value_ticks(axis, GAP, horizontal=True):
        anchor = "start" if x - text_width(text) / 2 < 0 else "middle"
        body.append(_text(x, canvas.y + 4 + FONT, text, "bm-tick", anchor))
    canvas.y += LINE + 6
    canvas.lines(value_label, "bm-label")


def stack_charts(title: str, charts: list[str]) -> str:
    """Charts of this module one above the other, in one SVG root, layout by layout: a
    widget shows one chart, and the page parses it as a single XML document. Each chart
    becomes a nested <svg> panel keeping its own <title> and <desc>."""
    if not charts:
        raise ValueError("stack_charts needs at least one chart")
    parts = [layouts(chart) for chart in charts]
    if any(set(p) != {name for name, _, _ in LAYOUTS} for p in parts):
        raise ValueError("stack_charts takes charts drawn by this module")
    titles = "; ".join(p["wide"].split("<title>", 1)[1].split("</title>", 1)[0] for p in parts)
    drawn = []
    for name, width, _ in LAYOUTS:
        panels, y = [], 0
        for part in parts:
            svg = part[name]
            height = int(re.search(r'viewBox="0 0 \S+ (\d+)"', svg)[1])  # type: ignore[index]
            inner = svg[svg.index(">") + 1 : -len("</svg>")]
            panels.append(f'<svg x="0" y="{y}" width="{width:g}" height="{height}" '
                          f'viewBox="0 0 {width:g} {height}">{inner}</svg>')
            y += height
        drawn.append(
            f'{_LAYOUT.format(name=name)}viewBox="0 0 {width:g} {y}" width="{width:g}" '
            f'height="{y}"><title>{escape(title)}</title><desc>{len(charts)} charts: '
            f"{titles}</desc>{''.join(panels)}</svg>")
    return _chart_set(drawn)
