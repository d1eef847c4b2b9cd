"""The ```calculator fence: its YAML body, validated against the declarations.

A fence picks a calculator by ``id`` and overrides inputs for a worked example; an
optional ``anchor`` gives the widget a stable HTML id for links. Errors carry the
page and line so that a typo fails the build where it was made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

import calculators
from calculators.core.spec import ValidationError

FENCE_NAME = "calculator"
_OPENING = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*calculator\s*$")
_ANCHOR = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,80}$")


class FenceError(ValueError):
    """A fence that names an unknown calculator or input, or a bad value."""


@dataclass(frozen=True)
class Fence:
    """A parsed fence: which calculator, the widget's anchor, and input overrides."""

    calc_id: str
    anchor: str | None
    overrides: dict[str, object] = field(default_factory=dict)


def parse_fence(source: str) -> Fence:
    """Parse and validate a fence body; raise ``FenceError`` with a clear message."""
    try:
        data = yaml.safe_load(source) if source.strip() else None
    except yaml.YAMLError as err:
        raise FenceError(f"the fence body is not valid YAML: {err}") from None
    if not isinstance(data, dict) or "id" not in data:
        raise FenceError("the fence body must be YAML with an `id:` naming a calculator")
    calc_id = str(data.pop("id"))
    if calc_id not in calculators.REGISTRY:
        known = ", ".join(sorted(calculators.REGISTRY))
        raise FenceError(f"unknown calculator {calc_id!r}; known: {known}")
    anchor = data.pop("anchor", None)
    if anchor is not None and not _ANCHOR.match(str(anchor)):
        raise FenceError(f"anchor {anchor!r} must be letters, digits, '-' or '_'")
    overrides = {str(k): v for k, v in data.items()}
    try:
        calculators.REGISTRY[calc_id].validate(overrides)
    except ValidationError as err:
        raise FenceError(
            f"calculator {calc_id!r}, input {err.input_name!r}: {err.message}"
        ) from None
    return Fence(calc_id, None if anchor is None else str(anchor), overrides)


@dataclass(frozen=True)
class LocatedFence:
    """A fence found in a page's Markdown, with the line its body starts on."""

    line: int
    source: str


def find_fences(markdown: str) -> list[LocatedFence]:
    """Every ```calculator fence in ``markdown`` (1-based line of the opening fence)."""
    found: list[LocatedFence] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        match = _OPENING.match(lines[index])
        if not match:
            index += 1
            continue
        closing = re.compile(
            rf"^{re.escape(match['indent'])}{match['fence'][0]}{{{len(match['fence'])},}}\s*$"
        )
        body: list[str] = []
        end = index + 1
        while end < len(lines) and not closing.match(lines[end]):
            body.append(lines[end][len(match["indent"]) :])
            end += 1
        found.append(LocatedFence(index + 1, "\n".join(body)))
        index = end + 1
    return found


def check_page(markdown: str, page_path: str) -> list[Fence]:
    """Validate every fence of a page; the error names ``page_path:line``."""
    fences = []
    for located in find_fences(markdown):
        try:
            fences.append(parse_fence(located.source))
        except FenceError as err:
            raise FenceError(f"{page_path}:{located.line}: {err}") from None
    return fences
