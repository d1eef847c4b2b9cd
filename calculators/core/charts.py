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

This module holds the charts callers draw and the SVG root that holds the layouts; the
pieces they are drawn with are in ``chart_canvas``, the bar plots in ``chart_bars``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from calculators.core.chart_bars import bars_across, bars_upright
from calculators.core.chart_canvas import (
    GAP,
    LAYOUT_START,
    Axis,
    Canvas,
    escape,
    line_element,
    series_colour,
    text_element,
    tick_label,
    tick_values,
    value_ticks,
)
from calculators.core.chart_text import FONT, LINE, text_width

#: Width and plot height of each layout, in user units.
LAYOUTS: tuple[tuple[str, float, float], ...] = (("wide", 640.0, 220.0),
                                                 ("narrow", 340.0, 200.0))
WIDTH = 640  # the wide layout's width, kept for callers that size things by it
_SET = '<svg class="bm-chart-set" xmlns="http://www.w3.org/2000/svg" '


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
    x_range = Axis(min(xs), max(xs), log_x, 0.0, 1.0)
    y_range = Axis(min(ys) if log_y else min(0.0, *ys), max(ys), log_y, 1.0, 0.0)
    desc = "; ".join(
        f"{s.label}: "
        + ", ".join(
            f"({tick_label(x)}, {tick_label(y)})"
            for x, y in s.points[:: max(1, len(s.points) // 8)]
        )
        for s in series
    )
    desc = f"{x_label} against {y_label}. {desc}"
    drawn = []
    for name, width, plot_height in LAYOUTS:
        canvas = Canvas(width)
        canvas.legend([(f"line-{series_colour(i)}", s.label) for i, s in enumerate(series)])
        canvas.lines(y_label, "bm-label")
        y_labels = [tick_label(t) for t in tick_values(y_range.low, y_range.high, log_y)]
        left = max(24.0, *(text_width(s) for s in y_labels)) + GAP
        x_labels = [tick_label(t) for t in tick_values(x_range.low, x_range.high, log_x)]
        right = max(GAP, text_width(x_labels[-1]) / 2 + 2) if x_labels else GAP
        x_axis = x_range.at(left, width - right)
        _marker_rows(canvas, x_axis, markers)
        top = canvas.y + 8
        bottom = top + plot_height
        y_axis = y_range.at(bottom, top)
        body = canvas.body
        body += [line_element(left, bottom, width - right, bottom, "bm-axis"),
                 line_element(left, top, left, bottom, "bm-axis")]
        for y, text in value_ticks(y_axis, 0.0, horizontal=False):
            body.append(line_element(left, y, width - right, y, "bm-grid"))
            body.append(text_element(left - 6, y + 4, text, "bm-tick", "end"))
        for x, text in value_ticks(x_axis, GAP, horizontal=True):
            body.append(text_element(x, bottom + 8 + FONT, text, "bm-tick", "middle"))
        for marker in markers:
            x = x_axis(marker.x)
            body.append(line_element(x, top, x, bottom, "bm-marker"))
        for index, s in enumerate(series):
            points = " ".join(f"{x_axis(x):.1f},{y_axis(y):.1f}" for x, y in s.points)
            body.append(f'<polyline class="bm-series-{series_colour(index)}" fill="none" '
                        f'points="{points}"/>')
        canvas.y = bottom + LINE + 10
        canvas.lines(x_label, "bm-label", (left + width - right) / 2, "middle")
        drawn.append(canvas.layout(name, title, desc))
    return _chart_set(drawn)


def _marker_rows(canvas: Canvas, x_axis: Axis, markers: tuple[Marker, ...]) -> None:
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
        canvas.body.append(text_element(start, y, label, "bm-tick", anchor))
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
    entries = [(f"box-{series_colour(c)}", name) for name, c in colours.items()]
    if limit is not None:
        entries.append(("limit", limit_label or tick_label(limit)))
    desc = "; ".join(
        f"{label}: " + ", ".join(f"{n} {tick_label(v)}" for n, v in segments)
        for label, segments in bars
    )
    desc = f"{y_label}. {desc}"
    value_range = Axis(0.0, top * 1.05, False, 0.0, 1.0)
    drawn = []
    for name, width, plot_height in LAYOUTS:
        canvas = Canvas(width)
        canvas.legend(entries)
        tick_width = max(text_width(tick_label(t))
                         for t in tick_values(value_range.low, value_range.high, False))
        slot = (width - tick_width - GAP - GAP) / max(1, len(bars))
        widest = max((text_width(label) for label, _ in bars), default=0.0)
        if len(bars) <= 12 and widest > slot - 4:
            bars_across(canvas, bars, colours, value_range, value_label=y_label, limit=limit)
        else:
            canvas.lines(y_label, "bm-label")
            bars_upright(canvas, bars, colours, value_range, plot_height=plot_height,
                          limit=limit)
        drawn.append(canvas.layout(name, title, desc))
    return _chart_set(drawn)


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
            f'{LAYOUT_START.format(name=name)}viewBox="0 0 {width:g} {y}" width="{width:g}" '
            f'height="{y}"><title>{escape(title)}</title><desc>{len(charts)} charts: '
            f"{titles}</desc>{''.join(panels)}</svg>")
    return _chart_set(drawn)
