"""Does a page's Chinese edition (``page.zh.md``) keep what links and widgets rely on?

A design-review link names a page, a section anchor and a widget's inputs; it must work
in either edition. So a zh page keeps its English page's section anchors (explicit
``{ #id }`` on every translated heading), its calculator fences byte for byte and in the
same order, and its internal link targets. The prose is free.

Run ``python -m bigmodel_guide.edition_parity docs/compute.md`` to see what differs.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import markdown

FENCE = re.compile(r"^```calculator\n.*?^```", re.MULTILINE | re.DOTALL)
#: Internal links: ``page.md``, ``page.md#anchor``, ``page.md?state#anchor``, ``#anchor``.
LINK = re.compile(r"\]\(((?:[a-z0-9_/-]+\.md)?(?:\?[^)#\s]*)?(?:#[^)\s]*)?)\)")
ID = re.compile(r'\bid="([^"]+)"')


def zh_path(english: Path) -> Path:
    """The Chinese edition's source beside an English page (the i18n plugin's suffix)."""
    return english.with_suffix(".zh.md")


def _strip_fences(text: str) -> str:
    return FENCE.sub("", text)


def anchor_ids(text: str) -> set[str]:
    """Every id the page's Markdown gives an element: headings (slugged or explicit)
    and explicit attribute lists, as the site's toc and attr_list extensions make them.
    A Chinese heading without an explicit id would get a slug of its own, not the
    English one: that is what this catches."""
    html = markdown.markdown(
        _strip_fences(text),
        extensions=["toc", "attr_list", "def_list", "admonition", "md_in_html", "tables",
                    "footnotes", "pymdownx.details", "pymdownx.superfences"],
    )
    return {i for i in ID.findall(html) if not i.startswith(("fn:", "fnref:"))}


def fences(text: str) -> list[str]:
    return FENCE.findall(text)


def link_targets(text: str) -> set[str]:
    """Internal link targets without their share-link state (a problem's answer link
    keeps its inputs in both editions, but the check only needs where it lands)."""
    targets = set()
    for target in LINK.findall(_strip_fences(text)):
        page, _, anchor = target.partition("#")
        targets.add(f"{page.split('?')[0]}#{anchor}" if anchor else page.split("?")[0])
    return targets - {""}


@dataclass(frozen=True)
class Parity:
    """What a zh page lacks or adds against its English page."""

    missing_anchors: frozenset[str]
    extra_anchors: frozenset[str]
    fences_equal: bool
    missing_links: frozenset[str]

    @property
    def ok(self) -> bool:
        return not (self.missing_anchors or self.extra_anchors or self.missing_links) \
            and self.fences_equal

    def report(self) -> list[str]:
        lines = []
        if self.missing_anchors:
            lines.append(f"anchors missing in zh: {sorted(self.missing_anchors)}")
        if self.extra_anchors:
            lines.append(f"anchors only in zh: {sorted(self.extra_anchors)}")
        if not self.fences_equal:
            lines.append("calculator fences differ (they must be copied byte for byte, "
                         "in the same order)")
        if self.missing_links:
            lines.append(f"link targets missing in zh: {sorted(self.missing_links)}")
        return lines


def compare(english: str, chinese: str) -> Parity:
    en_ids, zh_ids = anchor_ids(english), anchor_ids(chinese)
    return Parity(
        missing_anchors=frozenset(en_ids - zh_ids),
        extra_anchors=frozenset(zh_ids - en_ids),
        fences_equal=fences(english) == fences(chinese),
        missing_links=frozenset(link_targets(english) - link_targets(chinese)),
    )


def main(argv: list[str]) -> int:
    failed = 0
    for name in argv:
        english = Path(name)
        parity = compare(english.read_text(encoding="utf-8"),
                         zh_path(english).read_text(encoding="utf-8"))
        for line in parity.report():
            print(f"{english}: {line}")
        failed += not parity.ok
        if parity.ok:
            print(f"{english}: the zh edition keeps every anchor, fence and link target")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
