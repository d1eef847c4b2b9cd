"""Charts: well-formed SVG whatever the labels say, and a light import for the browser."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from itertools import pairwise
from pathlib import Path

import pytest

from calculators.core import chart_canvas, charts

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = 'a < b & c > d "quoted" \'single\' </svg><script>x</script>'


def test_line_chart_escapes_every_label() -> None:
    svg = charts.line_chart(
        HOSTILE,
        [charts.Series(HOSTILE, ((1.0, 2.0), (3.0, 4.0)))],
        HOSTILE,
        HOSTILE,
        markers=(charts.Marker(2.0, HOSTILE),),
    )
    root = ET.fromstring(svg)  # raises on anything that is not well-formed XML
    assert root.find("{http://www.w3.org/2000/svg}script") is None
    texts = [el.text for el in root.iter() if el.text]
    assert HOSTILE in texts  # the text survives intact, as character data


def test_stacked_bar_chart_escapes_every_label() -> None:
    svg = charts.stacked_bar_chart(
        HOSTILE, [(HOSTILE, [(HOSTILE, 1.0), ("b", 2.0)])], HOSTILE, limit=2.5,
        limit_label=HOSTILE,
    )
    root = ET.fromstring(svg)
    assert not any(el.tag.endswith("script") for el in root.iter())


def test_escape_matches_xml_character_data_rules() -> None:
    assert chart_canvas.escape("<&>\"'") == "&lt;&amp;&gt;\"'"


def test_calculators_import_nothing_heavy() -> None:
    """Every calculator, computed once, pulls in no network or e-mail modules.

    They are shipped to the browser, where each module costs import time: a chart
    helper that once imported xml.sax.saxutils brought in urllib.request, http.client,
    email and ssl, about 0.4 s of a reader's first chart under Pyodide.
    """
    code = (
        "import sys, calculators\n"
        "from calculators.core import bridge\n"
        "for calc_id in calculators.REGISTRY: calculators.compute(calc_id)\n"
        "heavy = ('urllib.request', 'http.client', 'email', 'ssl', 'xml.sax')\n"
        "print(sorted(m for m in sys.modules if m in heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout


SVG = "{http://www.w3.org/2000/svg}"
PARTS = ["compute", "recompute", "bubble", "TP comm", "CP comm", "PP comm", "DP comm",
         "EP alltoall"]


def _legend_classes(layout: ET.Element) -> dict[str, str]:
    """Legend label -> the class of the swatch drawn just before it."""
    found: dict[str, str] = {}
    children = list(layout)
    for before, el in pairwise(children):
        if el.get("class") == "bm-legend" and el.text:
            found[el.text] = before.get("class", "")
    return found


def test_every_series_of_a_chart_has_a_colour_of_its_own() -> None:
    """The MoE planner's bars have 8 parts; with 6 colours its 'EP alltoall' was drawn
    in recompute's colour and 'DP comm' in compute's."""
    bars = [(f"#{i}", [(name, float(i + k)) for k, name in enumerate(PARTS)])
            for i in range(3)]
    root = ET.fromstring(charts.stacked_bar_chart("t", bars, "s"))
    for layout in root.iter(f"{SVG}svg"):
        if layout.get("data-layout"):
            classes = _legend_classes(layout)
            assert sorted(classes) == sorted(PARTS)
            assert len(set(classes.values())) == len(PARTS), classes
    lines = [charts.Series(f"s{i}", ((1.0, float(i)), (2.0, 3.0))) for i in range(8)]
    svg = charts.line_chart("t", lines, "x", "y")
    polylines = ET.fromstring(svg).iter(f"{SVG}polyline")
    assert len({p.get("class") for p in polylines}) == 8


def test_a_chart_with_more_series_than_colours_is_refused() -> None:
    bars = [("a", [(f"part {k}", 1.0) for k in range(chart_canvas.PALETTE + 1)])]
    with pytest.raises(ValueError, match="colours would repeat"):
        charts.stacked_bar_chart("t", bars, "s")


def test_the_stylesheet_defines_every_palette_colour_in_both_schemes() -> None:
    css = (ROOT / "docs" / "assets" / "calculators.css").read_text()
    light, dark = css.split('[data-md-color-scheme="slate"]', 1)
    for n in range(chart_canvas.PALETTE):
        assert f"--bm-c{n}:" in light and f"--bm-c{n}:" in dark.split("}", 1)[0], n
        assert f".bm-fill-{n} {{ fill: var(--bm-c{n}); }}" in css
        assert f".bm-series-{n} {{ stroke: var(--bm-c{n}); }}" in css


def test_a_stacked_bar_draws_its_nonzero_parts_under_one_title() -> None:
    bars = [("4x1x1x256", [("compute", 3.1), ("recompute", 0.0), ("TP comm", 0.377),
                           ("DP comm", 0.585)])]
    root = ET.fromstring(charts.stacked_bar_chart("t", bars, "s"))
    wide = next(el for el in root.iter(f"{SVG}svg") if el.get("data-layout") == "wide")
    groups = [g for g in wide.iter(f"{SVG}g") if g.find(f"{SVG}title") is not None]
    assert len(groups) == 1
    title = groups[0].find(f"{SVG}title")
    assert title is not None
    assert title.text == "4x1x1x256: compute 3.1, TP comm 0.377, DP comm 0.585"
    rects = groups[0].findall(f"{SVG}rect")
    assert len(rects) == 3  # recompute, 0, draws nothing
    # Stacked base upwards: each part starts where the one below it ends.
    tops = [(float(r.get("y", 0)), float(r.get("height", 0))) for r in rects]
    for (y_low, _), (y_high, h_high) in pairwise(tops):
        assert y_high + h_high == pytest.approx(y_low, abs=0.11)


def test_a_bar_of_one_part_holds_its_title_itself() -> None:
    root = ET.fromstring(charts.stacked_bar_chart("t", [("GPU 0", [("weights", 2.0)])], "s"))
    wide = next(el for el in root.iter(f"{SVG}svg") if el.get("data-layout") == "wide")
    assert not [g for g in wide.iter(f"{SVG}g") if g.find(f"{SVG}title") is not None]
    titled = [r for r in wide.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    assert len(titled) == 1
    title = titled[0].find(f"{SVG}title")
    assert title is not None and title.text == "GPU 0: weights 2"
