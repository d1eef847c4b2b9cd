"""The ```calculator fence: its YAML body, validated against the declarations.

A fence picks a calculator by ``id`` and overrides inputs for a worked example; an
optional ``anchor`` gives the widget a stable HTML id for links; an optional ``takes``
says which of its inputs come from an output of a widget above it on the page
(``num_gpus: llama3-70b-30-days.num_gpus``): the build checks that the example's value
is that output's, and the page offers the new value when the reader changes the widget
above (docs/assets/calculators/takes.js). Errors carry the page and line so that a typo fails the
build where it was made.
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
    #: input name -> (the anchor of a widget above, the name of its output)
    takes: dict[str, tuple[str, str]] = field(default_factory=dict)


def _parse_takes(calc_id: str, data: object) -> dict[str, tuple[str, str]]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FenceError("`takes:` must map inputs to `anchor.output`")
    calc = calculators.REGISTRY[calc_id]
    names = {p.name for p in calc.params}
    takes: dict[str, tuple[str, str]] = {}
    for name, source in data.items():
        if name not in names:
            raise FenceError(f"`takes:` names {name!r}, not an input of {calc_id!r}")
        anchor, dot, output = str(source).rpartition(".")
        if not dot or not _ANCHOR.match(anchor) or not output:
            raise FenceError(f"`takes: {name}:` must be `anchor.output`, got {source!r}")
        takes[str(name)] = (anchor, output)
    return takes


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
    takes = _parse_takes(calc_id, data.pop("takes", None))
    if missing := set(takes) - {str(k) for k in data}:
        raise FenceError(f"`takes:` inputs {sorted(missing)} need their example value too")
    overrides = {str(k): v for k, v in data.items()}
    try:
        calculators.REGISTRY[calc_id].validate(overrides)
    except ValidationError as err:
        raise FenceError(
            f"calculator {calc_id!r}, input {err.input_name!r}: {err.message}"
        ) from None
    return Fence(calc_id, None if anchor is None else str(anchor), overrides, takes)


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
