"""Text metrics for the SVG charts: how wide a label will be, how to wrap and thin them.

Charts are laid out in Python, before any browser measures a glyph, so widths are
estimated from a table of advance widths. The table is DejaVu Sans (1/1000 em), one of
the widest common sans-serif faces and the one Linux falls back to: an estimate from it
errs on the wide side for Arial, Liberation Sans, Helvetica or Roboto, so labels placed
apart here stay apart on screen.
"""

from __future__ import annotations

import itertools
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

#: Chart text size in SVG user units; calculators.css sets the same size. A layout is
#: drawn at about one user unit per CSS pixel, so this is close to the rendered size.
FONT = 12.0
#: Height of one line of chart text.
LINE = 16.0

_GROUPS: dict[int, str] = {
    278: "ijl'|",
    295: "IJ",
    318: " .,:;·",
    337: "/\\",
    352: "f",
    361: "-",
    390: "()[]{}!",
    392: "t",
    411: "r",
    460: '"^`',
    500: "*_–°¹²³",
    521: "s",
    525: "z",
    550: "c",
    557: "L",
    575: "F",
    579: "k",
    592: "vxy",
    603: "P",
    611: "TY",
    632: "E",
    636: "abdeghnopqu0123456789µ$?",
    656: "K",
    684: "AV",
    686: "BXZ",
    695: "R",
    698: "C",
    732: "U",
    752: "HN",
    770: "D",
    787: "GOQ",
    818: "w",
    838: "+<=>#×≈→~",
    863: "M",
    950: "%",
    974: "m",
    1000: "@—…W",
}
_WIDTH: dict[str, int] = {char: width for width, chars in _GROUPS.items() for char in chars}
_DEFAULT = 720  # anything else (letters of other scripts, symbols): a wide guess


def _wide(char: str) -> bool:
    """A Chinese (CJK) character or full-width punctuation: one em wide."""
    return unicodedata.east_asian_width(char) in "WF"


def text_width(text: str, size: float = FONT) -> float:
    """The estimated advance width of ``text`` at ``size`` user units."""
    return size * sum(1000 if _wide(char) else _WIDTH.get(char, _DEFAULT)
                      for char in text) / 1000.0


def _pieces(text: str) -> list[tuple[str, bool]]:
    """(piece, follows a space) in reading order: words, and each Chinese character on
    its own, since Chinese breaks between any two characters and has no spaces."""
    pieces: list[tuple[str, bool]] = []
    for word in text.split():
        spaced = True
        run = ""
        for char in word:
            if _wide(char):
                if run:
                    pieces.append((run, spaced))
                    spaced, run = False, ""
                pieces.append((char, spaced))
                spaced = False
            else:
                run += char
        if run:
            pieces.append((run, spaced))
    return pieces


def wrap(text: str, width: float, size: float = FONT) -> list[str]:
    """``text`` in lines no wider than ``width``, broken at spaces (and between Chinese
    characters); a single word wider than ``width`` gets a line of its own."""
    lines: list[str] = []
    current = ""
    for piece, spaced in _pieces(text):
        trial = f"{current}{' ' if spaced else ''}{piece}" if current else piece
        if current and text_width(trial, size) > width:
            lines.append(current)
            current = piece
        else:
            current = trial
    if current or not lines:
        lines.append(current)
    return lines


def flow(widths: Sequence[float], width: float, gap: float) -> list[list[int]]:
    """Items of these widths in rows no wider than ``width`` (at least one per row)."""
    rows: list[list[int]] = []
    used = 0.0
    for index, item in enumerate(widths):
        if rows and used + gap + item <= width:
            rows[-1].append(index)
            used += gap + item
        else:
            rows.append([index])
            used = item
    return rows


def thin(spans: Sequence[tuple[float, float]], gap: float) -> list[int]:
    """Indices of evenly spaced spans (start, end) to keep, every k-th from the first,
    with the smallest k at which each kept span clears the previous one by ``gap``."""
    for step in range(1, len(spans) + 1):
        kept = list(range(0, len(spans), step))
        if all(spans[b][0] >= spans[a][1] + gap for a, b in itertools.pairwise(kept)):
            return kept
    return [0] if spans else []
