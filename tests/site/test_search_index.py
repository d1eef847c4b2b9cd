"""Search indexes the guide's prose, not its widgets: no button, field, preset list,
result table or chart point list of a calculator reaches the search index."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest

import calculators

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.site

#: Text that only a widget holds (its row of buttons, the status line, the preset
#: picker, the folded inputs, the chart's SVG); the prose may name one button.
WIDGET_TEXT = ("Copy link Copy Markdown", "Pin baseline Unpin", "none applied",
               "Fill from a published configuration", "Numbers computed at build time",
               "More inputs (", "points=", "<svg", "polyline", "Stale: these")


@pytest.fixture(scope="module")
def entries(built_site: Path) -> list[dict[str, str]]:
    docs: list[dict[str, str]] = json.loads(
        (built_site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    return docs


def test_no_widget_text_in_the_search_index(entries: list[dict[str, str]]) -> None:
    for entry in entries:
        for text in WIDGET_TEXT:
            assert text not in entry["text"], (entry["location"], text)


def test_no_calculator_help_or_result_label_in_the_search_index(
        entries: list[dict[str, str]]) -> None:
    """Long help texts and result labels appear only in widgets (the reference page's
    own tables quote help texts, so it is left out)."""
    prose = [e for e in entries if not e["location"].startswith("reference/")]
    for calc in calculators.REGISTRY.values():
        for param in calc.params:
            if len(param.help) > 80:
                head = re.escape(param.help[:60])
                assert not any(re.search(head, e["text"]) for e in prose), (calc.id, param.name)


def test_prose_is_indexed(entries: list[dict[str, str]]) -> None:
    text = " ".join(e["text"] for e in entries)
    assert "6" in text and len(entries) > 20
    assert any("Llama" in e["text"] for e in entries)
