"""Showing quantities to people: SI base units inside, text with prefixes at the edges.

Decimal (SI) and binary (IEC) prefixes are kept apart: 80e9 bytes are "80 GB" and
80 x 2**30 bytes "80 GiB"; counts (parameters, tokens, samples) read as words ("175
billion"), and a form field's text parses back (``unit_parsing``) to the exact value.

In Chinese (the active language, ``i18n``) counts read the way Chinese engineers write
them, in 万 (10^4), 亿 (10^8) and 万亿 (10^12): "1750 亿", "70.1 万卡时"; dollars as
"140 万美元"; durations in 秒/分钟/小时/天; unit words through the catalogue (context
"unit"). Symbols (GB, GiB, FLOP/s, kWh) and every number's value stay as in English.
"""

from __future__ import annotations

import math
from typing import Literal

from calculators.core.i18n import N_, _, current_language, unit_word

Format = Literal[
    "si", "iec", "sci", "count", "percent", "usd", "fixed", "bool", "text", "duration"
]
#: Units whose values are plain numbers with no prefix grammar of their own.
PHYSICAL = {"B", "B/s", "FLOP", "FLOP/s", "s", "W", "USD", "USD/h", "1"}


def _sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures, without trailing zeros after 0."""
    if value == 0:
        return "0"
    text = f"{value:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{int(exponent)}"
    return text


def _si(value: float, unit: str) -> str:
    magnitude = abs(value)
    if magnitude == 0 or not math.isfinite(value):
        return f"{_sig(value)} {unit}".strip()
    for prefix, scale in (
        ("Y", 1e24),
        ("Z", 1e21),
        ("E", 1e18),
        ("P", 1e15),
        ("T", 1e12),
        ("G", 1e9),
        ("M", 1e6),
        ("k", 1e3),
        ("", 1.0),
        ("m", 1e-3),
        ("µ", 1e-6),
        ("n", 1e-9),
    ):
        if magnitude >= scale * 0.9995:
            return f"{_sig(value / scale)} {prefix}{unit}".strip()
    return f"{_sig(value)} {unit}".strip()


def _iec(value: float, unit: str) -> str:
    for prefix, scale in (
        ("Ei", 2.0**60),
        ("Pi", 2.0**50),
        ("Ti", 2.0**40),
        ("Gi", 2.0**30),
        ("Mi", 2.0**20),
        ("Ki", 2.0**10),
    ):
        if abs(value) >= scale * 0.9995:
            return f"{_sig(value / scale)} {prefix}{unit}"
    return f"{_sig(value)} {unit}"


#: Chinese count scales, largest first; beyond 10^16 a count is shown in scientific form.
_ZH_SCALES = (("万亿", 1e12), ("亿", 1e8), ("万", 1e4))


def _zh_count(value: float, unit: str) -> str:
    magnitude = abs(value)
    word = unit_word(unit)
    gap = " " if word[:1].isascii() and word else ""  # "70.1 万卡时", "3.5 万亿 token"
    if magnitude >= 1e16 or (0 < magnitude < 1e-3):
        return f"{_sig(value)} {word}".strip()
    for scale_word, scale in _ZH_SCALES:
        if magnitude >= scale * 0.9995:
            scaled = value / scale
            digits = 4 if abs(scaled) >= 999.5 else 3  # "1750 亿", not "1.75e3 亿"
            return f"{_sig(scaled, digits)} {scale_word}{gap}{word}".strip()
    if magnitude >= 100:
        exact = value == int(value)
        shown = f"{int(value) if exact else round(float(_sig(value))):,}"
    else:
        shown = _sig(value)
    return f"{shown} {word}".strip()


def _count(value: float, unit: str) -> str:
    if current_language() == "zh":
        return _zh_count(value, unit)
    magnitude = abs(value)
    words = (
        ("quintillion", 1e18),
        ("quadrillion", 1e15),
        ("trillion", 1e12),
        ("billion", 1e9),
        ("million", 1e6),
    )
    for word, scale in words:
        if magnitude >= scale * 0.9995:
            return f"{_sig(value / scale)} {word} {unit}".strip()
    if magnitude >= 100:
        exact = value == int(value)  # whole counts (GPUs, layers) are shown exactly
        return f"{int(value) if exact else round(float(_sig(value))):,} {unit}".strip()
    return f"{_sig(value)} {unit}".strip()


def format_value(value: float | bool | str | None, unit: str, fmt: Format) -> str:
    """Text for people; ``data-value`` and JSON keep the raw number."""
    zh = current_language() == "zh"
    if value is None:
        return _("n/a")
    if isinstance(value, bool) or fmt == "bool":
        return _("yes") if value else _("no")
    if isinstance(value, str) or fmt == "text":
        return str(value)
    if not math.isfinite(value):
        return _("n/a")
    shown_unit = "" if unit == "1" else unit
    if fmt == "percent":
        return f"{value * 100:.3g}%"
    if fmt == "usd":
        if zh:
            amount = _count(value, "")
            return f"{amount}{' ' if amount[-1:].isdigit() else ''}美元"  # "2 美元", "140 万美元"
        return "$" + _count(value, "")
    if zh and fmt == "si" and shown_unit not in PHYSICAL:
        return _count(value, shown_unit)  # "1.23 万样本/秒", not "12.3 k样本/秒"
    if zh and fmt in ("sci", "fixed") and shown_unit not in PHYSICAL:
        shown_unit = unit_word(shown_unit)  # "样本/秒"; symbols (GB, FLOP/s) stay
    if fmt == "sci":
        return f"{_sig(value)} {shown_unit}".strip()
    if fmt == "iec":
        return _iec(value, shown_unit)
    if fmt == "count":
        return _count(value, shown_unit)
    if fmt == "fixed":
        return f"{_sig(value)} {shown_unit}".strip()
    if fmt == "duration":
        return _duration(value)
    return _si(value, shown_unit)


#: (largest value shown in this unit, seconds per unit, unit) for ``duration``.
_DURATION_STEPS = ((120.0, 1.0, N_("{n} s")), (7_200.0, 60.0, N_("{n} min")),
                   (172_800.0, 3_600.0, N_("{n} h")))
_DAYS = N_("{n} days")


def _duration(seconds: float) -> str:
    """A time in seconds in the unit a person reads it in: s below 2 min, min below
    2 h, h below 2 days, days beyond ("4.2 min", "3.09 h", "68 days"; "4.2 分钟")."""
    for limit, scale, words in _DURATION_STEPS:
        if abs(seconds) < limit:
            return _(words).format(n=_sig(seconds / scale))
    return _(_DAYS).format(n=_sig(seconds / 86_400.0))


def format_plain(value: float, unit: str) -> str:
    """Compact text for bounds in messages; counts (parameters, tokens) show no unit."""
    shown = unit if unit in PHYSICAL and unit != "1" else ""
    return f"{value:g} {shown}".strip()


def input_text(value: float, unit: str) -> str:
    """Text for a form field that a reader can read and that parses back to ``value``.

    175e9 parameters become "175B"; 80e9 bytes "80GB"; anything without a short exact
    spelling keeps Python's round-trip repr, so pre-rendered and live results agree.
    """
    candidates: list[tuple[str, float]] = []
    if unit in ("B", "B/s"):
        tail = "B" if unit == "B" else "B/s"
        candidates = [
            (p + tail, s)
            for p, s in (
                ("T", 1e12),
                ("G", 1e9),
                ("M", 1e6),
                ("Ti", 2.0**40),
                ("Gi", 2.0**30),
                ("Mi", 2.0**20),
                ("Ki", 2.0**10),
            )
        ]
    elif unit == "FLOP/s":
        candidates = [("PFLOP/s", 1e15), ("TFLOP/s", 1e12)]
    elif unit not in PHYSICAL:
        candidates = [("T", 1e12), ("B", 1e9), ("M", 1e6)]
    for suffix, scale in candidates:
        scaled = value / scale
        short = f"{scaled:.4g}"
        if abs(scaled) >= 1 and "e" not in short and float(short) * scale == value:
            space = " " if len(suffix) > 1 else ""
            return f"{short}{space}{suffix}"
    short = f"{value:g}"
    if float(short) == value:
        return short
    # A whole number reads as one ("1671168", not "1671168.0"); 2**53 keeps it exact.
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def echo(value: float, unit: str) -> str:
    """How a field's parsed value is echoed to the reader ("175 billion", "85.9 GB =
    80 GiB", "50 GB/s = 400 Gb/s"), so that a unit slip shows before it misleads."""
    if unit == "1":
        return format_value(value, unit, "percent")
    if unit == "B":
        return f"{_si(value, 'B')} = {_iec(value, 'B')}"
    if unit == "B/s":
        return f"{_si(value, 'B/s')} = {_si(value * 8, 'b/s')}"
    if unit in ("USD", "USD/h"):
        per_hour = "/" + unit_word("h") if unit == "USD/h" else ""
        return format_value(value, unit, "usd") + per_hour
    if unit in PHYSICAL:
        return _si(value, unit)
    return _count(value, "")  # counts: "175 billion" reads right for any noun
