"""The sparse chapter as its prose tests read it: the text with line breaks folded, a
check that a sentence is in it, and its calculator blocks by anchor."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from bigmodel_guide.fence import find_fences, parse_fence

CHAPTER = Path(__file__).resolve().parents[3] / "docs" / "sparse.md"


@cache
def text() -> str:
    """The chapter with its line breaks folded, as a reader sees a paragraph."""
    return " ".join(CHAPTER.read_text("utf-8").split())


def says(*phrases: str) -> None:
    for phrase in phrases:
        assert phrase in text(), f"docs/sparse.md should say: {phrase!r}"


@cache
def blocks() -> dict[str, tuple[str, dict[str, object]]]:
    """Every block with an anchor: anchor -> (calculator id, the block's inputs)."""
    found = {}
    for located in find_fences(CHAPTER.read_text("utf-8")):
        fence = parse_fence(located.source)
        if fence.anchor:
            found[fence.anchor] = (fence.calc_id, dict(fence.overrides))
    return found
