"""Charts: well-formed SVG whatever the labels say, and a light import for the browser."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from calculators.core import charts

ROOT = Path(__file__).resolve().parents[2]
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
    assert charts.escape("<&>\"'") == "&lt;&amp;&gt;\"'"


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
