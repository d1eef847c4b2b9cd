"""What the worked-problem tests share (tests/unit/test_worked_problems_a.py and _b.py):
the chapters' text as a reader sees a paragraph, their widgets, and the share links of
the answers opened as the page opens them."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import calculators
from bigmodel_guide.fence import find_fences, parse_fence
from calculators.core import share

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: A share link in an answer: ``(page.md?widget=name:value,...#widget)``.
LINK = re.compile(r"\]\((?P<page>[\w-]+\.md)\?(?P<widget>[\w-]+)=(?P<state>[^)#]+)"
                  r"#(?P<anchor>[\w-]+)\)")


@cache
def text(page: str) -> str:
    """The chapter with its line breaks folded, as a reader sees a paragraph."""
    return " ".join((DOCS / page).read_text("utf-8").split())


def says(page: str, *phrases: str) -> None:
    for phrase in phrases:
        assert phrase in text(page), f"docs/{page} should say: {phrase!r}"


@cache
def widgets(page: str) -> dict[str, tuple[str, dict[str, object]]]:
    """Each widget of ``page`` by its id: the fence's anchor, or calc-<calc id>."""
    found = {}
    for located in find_fences((DOCS / page).read_text("utf-8")):
        fence = parse_fence(located.source)
        widget = fence.anchor or "calc-" + fence.calc_id.replace("_", "-")
        found[widget] = (fence.calc_id, fence.overrides)
    return found


def opened(target: str, widget: str, state: str) -> Any:
    """The result ``widget`` on ``target`` shows when a link opens it with ``state``."""
    calc_id, example = widgets(target)[widget]
    calc = calculators.REGISTRY[calc_id]
    inputs, notices = share.decode_state(calc, state)
    assert not notices, notices
    return calc.compute({**example, **inputs})


def link(page: str, target: str, widget: str, state: str) -> Any:
    """The link ``page`` carries to ``widget`` on ``target``, opened."""
    says(page, f"({target}?{widget}={state}#{widget})")
    return opened(target, widget, state)


def same(linked: Any, computed: Any, *names: str) -> None:
    """The link's widget shows the figures the test computed."""
    for name in names:
        assert linked.value(name) == pytest.approx(computed.value(name), rel=1e-9), name


def check_share_links(page: str) -> None:
    """Every share link of ``page`` opens a widget that exists, with inputs that parse."""
    links = list(LINK.finditer((DOCS / page).read_text("utf-8")))
    assert links, f"docs/{page}: no share links"
    for found in links:
        assert found["anchor"] == found["widget"], found[0]
        assert found["widget"] in widgets(found["page"]), found[0]
        assert " " not in found["state"], found[0]
        opened(found["page"], found["widget"], found["state"])
