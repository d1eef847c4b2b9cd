"""Chart layouts: each chart comes as a wide and a narrow layout, and in each no two
labels overlap by the widths the layout assumed (the browser tier measures the real
glyphs: tests/e2e/test_reading.py)."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET

import pytest

import calculators
from calculators.core import charts
from calculators.core.chart_text import FONT, flow, text_width, thin, wrap

SVG = "{http://www.w3.org/2000/svg}"


def _boxes(svg: str) -> list[tuple[float, float, float, float, str]]:
    """Each text's box (x0, y0, x1, y1) from its position, anchor and estimated width;
    nested panels (stack_charts) are offset by their y."""
    boxes = []

    def walk(node: ET.Element, dy: float) -> None:
        for child in node:
            if child.tag == f"{SVG}svg":
                walk(child, dy + float(child.get("y", "0")))
            elif child.tag == f"{SVG}text":
                text = child.text or ""
                x, y = float(child.get("x", "0")), float(child.get("y", "0")) + dy
                width = text_width(text)
                anchor = child.get("text-anchor", "start")
                x0 = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
                boxes.append((x0, y - 0.93 * FONT, x0 + width, y + 0.24 * FONT, text))
            elif child.tag not in (f"{SVG}title", f"{SVG}desc"):
                walk(child, dy)

    walk(ET.fromstring(svg), 0.0)
    return boxes


def _overlaps(svg: str) -> list[tuple[str, str]]:
    return [(a[4], b[4]) for a, b in itertools.combinations(_boxes(svg), 2)
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]


def _charts() -> list[tuple[str, str]]:
    found = []
    for calc_id in calculators.REGISTRY:
        try:
            chart = calculators.compute(calc_id).computed.chart
        except Exception:  # noqa: BLE001 - a calculator broken elsewhere is not this test's
            continue
        if chart:
            found.append((calc_id, chart))
    long_bars = [(f"#{i} tp8·pp{2 ** i}·dp{64 // 2 ** i} mb2 zero1 selective",
                  [("compute", 3.0 + i), ("bubble", 0.5 * i), ("TP comm", 0.3)])
                 for i in range(1, 6)]
    found += [
        ("many bars", charts.stacked_bar_chart(
            "t", [(str(g), [("weights", float(g % 7))]) for g in range(64)], "GB per GPU",
            limit=5.0, limit_label="usable memory")),
        ("long bar labels", charts.stacked_bar_chart(
            "t", long_bars, "seconds per step", limit=9.0,
            limit_label="NVIDIA A100 80GB SXM: 80 GB")),
        ("close markers", charts.line_chart(
            "t", [charts.Series("time (µs)", tuple((10.0**k, k + 1.0) for k in range(10))),
                  charts.Series("busbw (GB/s)", tuple((10.0**k, 2.0**k) for k in range(10)))],
            "message size S (bytes)", "time in µs; busbw in GB/s", log_x=True, log_y=True,
            markers=(charts.Marker(1e4, "latency = bandwidth term"),
                     charts.Marker(2e4, "this message"), charts.Marker(1e9, "far right")))),
    ]
    return found


CHARTS = _charts()


@pytest.mark.parametrize(("name", "chart"), CHARTS, ids=[c[0] for c in CHARTS])
def test_each_layout_has_no_overlapping_labels(name: str, chart: str) -> None:
    parts = charts.layouts(chart)
    assert set(parts) == {"wide", "narrow"}
    for layout, svg in parts.items():
        root = ET.fromstring(svg)
        assert root.get("data-layout") == layout and root.get("display") is None
        width = float((root.get("viewBox") or "").split()[2])
        assert width == {n: w for n, w, _ in charts.LAYOUTS}[layout]
        assert _overlaps(svg) == [], (name, layout)
        for x0, _, x1, _, text in _boxes(svg):
            assert x0 >= -1 and x1 <= width + 1, (name, layout, text)


def test_the_set_is_one_document_showing_the_wide_layout() -> None:
    chart = CHARTS[0][1]
    root = ET.fromstring(chart)
    inner = [child for child in root if child.tag == f"{SVG}svg"]
    assert [child.get("data-layout") for child in inner] == ["wide", "narrow"]
    assert inner[0].get("display") is None and inner[1].get("display") == "none"
    assert root.get("viewBox") == inner[0].get("viewBox")


def test_stacked_charts_keep_both_layouts() -> None:
    one, two = CHARTS[-1][1], CHARTS[-2][1]
    stacked = charts.stack_charts("both", [one, two])
    for layout, svg in charts.layouts(stacked).items():
        root = ET.fromstring(svg)
        panels = [child for child in root if child.tag == f"{SVG}svg"]
        assert len(panels) == 2, layout
        assert float(panels[1].get("y", "0")) == float(panels[0].get("height", "0"))
        assert _overlaps(svg) == []
    with pytest.raises(ValueError, match="this module"):
        charts.stack_charts("x", ["<svg/>"])


def test_text_helpers() -> None:
    assert text_width("0000") == pytest.approx(4 * 0.636 * FONT)
    assert text_width("mW") > text_width("il") * 3
    assert all(text_width(line) <= 100 for line in wrap("a b c d e f g h i j k l m n o p", 100))
    assert wrap("", 50) == [""]
    assert flow([40, 40, 40], 100, 10) == [[0, 1], [2]]
    assert thin([(0, 10), (5, 15), (20, 30), (25, 35), (40, 50)], 2) == [0, 2, 4]
