"""The plot of a stacked bar chart, drawn on a layout's canvas: bars standing upright
over a value axis, or lying down, each under its own label, when their labels are long.

Each bar carries one <title> listing its parts (the tooltip on any segment); colours
are the CSS classes ``bm-fill-N`` of ``chart_canvas``.
"""

from __future__ import annotations

from calculators.core.chart_canvas import (
    GAP,
    Axis,
    Canvas,
    escape,
    line_element,
    row_rules,
    text_element,
    tick_label,
    tick_values,
    value_ticks,
)
from calculators.core.chart_text import FONT, LINE, text_width, thin

#: Bars as a stacked bar chart takes them: [(bar label, [(segment label, value), ...])].
Bars = list[tuple[str, list[tuple[str, float]]]]


def _segments(bars: Bars, colours: dict[str, int], rect: object) -> list[str]:
    """Each bar's segments, base upwards, drawn by ``rect(index, base, value)``, under
    one <title> listing the bar's parts (the tooltip on any of them). Parts of zero
    draw nothing: a planner's bar has 7-8 parts, often most of them 0, and every
    element costs the page that parses it (the dense chapter had 2,661 in its charts)."""
    body = []
    for index, (label, segments) in enumerate(bars):
        drawn = [(name, value) for name, value in segments if value]
        parts = ", ".join(f"{name} {tick_label(value)}" for name, value in drawn)
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


def bars_upright(canvas: Canvas, bars: Bars, colours: dict[str, int], value_range: Axis,
                 *, plot_height: float, limit: float | None) -> None:
    """Bars standing on a value axis that rises up the canvas, labels under them."""
    ticks = [tick_label(t) for t in tick_values(value_range.low, value_range.high, False)]
    left = max(24.0, *(text_width(t) for t in ticks)) + GAP
    right = canvas.width - GAP
    top = canvas.y + 8
    bottom = top + plot_height
    axis = value_range.at(bottom, top)
    slot = (right - left) / max(1, len(bars))
    body = canvas.body
    body.append(line_element(left, bottom, right, bottom, "bm-axis"))
    for y, text in value_ticks(axis, 0.0, horizontal=False):
        body.append(line_element(left, y, right, y, "bm-grid"))
        body.append(text_element(left - 6, y + 4, text, "bm-tick", "end"))

    def rect(index: int, base: float, value: float) -> str:
        y0, y1 = axis(base), axis(base + value)
        return (f'x="{left + index * slot + slot * 0.2:.1f}" y="{y1:.1f}" '
                f'width="{slot * 0.6:.1f}" height="{max(0.0, y0 - y1):.1f}"')

    body += _segments(bars, colours, rect)
    centres = [left + (i + 0.5) * slot for i in range(len(bars))]
    spans = [(c - text_width(label) / 2, c + text_width(label) / 2)
             for c, (label, _) in zip(centres, bars, strict=True)]
    for i in thin(spans, GAP):
        body.append(text_element(centres[i], bottom + 8 + FONT, bars[i][0], "bm-tick", "middle"))
    if limit is not None:
        body.append(line_element(left, axis(limit), right, axis(limit), "bm-marker"))
    canvas.y = bottom + LINE + 8


def bars_across(canvas: Canvas, bars: Bars, colours: dict[str, int], value_range: Axis,
                *, value_label: str, limit: float | None) -> None:
    """Bars lying down, each under its label, over a value axis along the bottom."""
    ticks = [tick_label(t) for t in tick_values(value_range.low, value_range.high, False)]
    left = 1.0
    right = canvas.width - max(GAP, text_width(ticks[-1]) / 2 + 2)
    axis = value_range.at(left, right)
    rows: list[float] = []
    for label, _ in bars:
        canvas.lines(label, "bm-tick")
        rows.append(canvas.y)
        canvas.y += 14 + 6
    body = canvas.body
    for x, _ in value_ticks(axis, GAP, horizontal=True):
        body.append(row_rules(x, rows, "bm-grid"))

    def rect(index: int, base: float, value: float) -> str:
        x0, x1 = axis(base), axis(base + value)
        return (f'x="{x0:.1f}" y="{rows[index]:.1f}" width="{max(0.0, x1 - x0):.1f}" '
                'height="14"')

    body += _segments(bars, colours, rect)
    if limit is not None:
        x = axis(limit)
        body.append(row_rules(x, rows, "bm-marker"))
    body.append(line_element(left, canvas.y, right, canvas.y, "bm-axis"))
    for x, text in value_ticks(axis, GAP, horizontal=True):
        anchor = "start" if x - text_width(text) / 2 < 0 else "middle"
        body.append(text_element(x, canvas.y + 4 + FONT, text, "bm-tick", anchor))
    canvas.y += LINE + 6
    canvas.lines(value_label, "bm-label")
