"""Parsing and formatting quantities at the edges; everything inside is SI base units.

Decimal (SI) and binary (IEC) prefixes are kept apart: "80 GB" is 80e9 bytes and
"80 GiB" is 80 x 2**30 bytes. Lower-case "b" is bits: "400 Gb/s" is 50e9 bytes/s.
For counts (parameters, tokens, samples) the familiar K / M / B / T suffixes mean
thousand, million, billion and trillion, so "175B" parameters is 175e9.
"""

from __future__ import annotations

import math
import re
from typing import Literal

Format = Literal[
    "si", "iec", "sci", "count", "percent", "usd", "fixed", "bool", "text", "duration"
]


class UnitError(ValueError):
    """Text that is not a number in a unit this input understands."""


SI_PREFIXES: dict[str, float] = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Z": 1e21,
    "Y": 1e24,
    "m": 1e-3,
    "u": 1e-6,
    "µ": 1e-6,
    "n": 1e-9,
}
IEC_PREFIXES: dict[str, float] = {
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
}
COUNT_SUFFIXES: dict[str, float] = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "B": 1e9,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
}
TIME_UNITS: dict[str, float] = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "min": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
}

_NUMBER = re.compile(
    r"^\s*(?P<sign>[-+]?)\s*\$?\s*(?P<num>(?:\d[\d,_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<rest>.*?)\s*$"
)
#: Units whose values are plain numbers with no prefix grammar of their own.
PHYSICAL = {"B", "B/s", "FLOP", "FLOP/s", "s", "W", "USD", "USD/h", "1"}


def _number(text: str) -> tuple[float, str]:
    match = _NUMBER.match(text)
    if not match:
        raise UnitError("not a number")
    digits = match["num"].replace(",", "").replace("_", "")
    try:
        value = float(digits)
    except ValueError:
        raise UnitError("not a number") from None
    if match["sign"] == "-":
        value = -value
    return value, match["rest"]


def _prefixed(rest: str, base: str) -> float | None:
    """Scale for ``rest`` = <SI or IEC prefix><base>, or None if it is not that form."""
    if not rest.endswith(base):
        return None
    prefix = rest[: len(rest) - len(base)].strip()
    if prefix in IEC_PREFIXES:
        return IEC_PREFIXES[prefix]
    return SI_PREFIXES.get(prefix)


def _bytes_scale(rest: str, per_second: bool) -> float | None:
    """Bytes or bits (optionally per second), with decimal or binary prefixes."""
    tail = rest
    if per_second:
        for spelling, canonical in (("bps", "b/s"), ("Bps", "B/s"), ("/sec", "/s")):
            if tail.endswith(spelling):
                tail = tail[: -len(spelling)] + canonical
        if not tail.endswith("/s"):
            return None
        tail = tail[:-2]
    for base, factor in (("B", 1.0), ("b", 0.125)):
        scale = _prefixed(tail, base)
        if scale is not None:
            return scale * factor
    return None


def parse_quantity(text: str, unit: str) -> float:
    """Parse ``text`` as a value of ``unit`` and return it in SI base units."""
    value, rest = _number(text)
    rest = rest.strip()
    if not rest:
        return value
    scale: float | None = None
    if unit == "1":
        scale = 0.01 if rest == "%" else None
    elif unit == "B":
        scale = _bytes_scale(rest, per_second=False)
    elif unit == "B/s":
        scale = _bytes_scale(rest, per_second=True)
    elif unit == "FLOP":
        scale = _prefixed(rest.replace("FLOPs", "FLOP"), "FLOP")
    elif unit == "FLOP/s":
        spelled = rest.replace("FLOPS", "FLOP/s").replace("FLOPs/s", "FLOP/s")
        scale = _prefixed(spelled, "FLOP/s")
        if scale is None:
            scale = SI_PREFIXES.get(rest) if rest in ("T", "P", "G") else None
    elif unit == "s":
        scale = TIME_UNITS.get(rest)
    elif unit == "W":
        scale = _prefixed(rest, "W")
    elif unit in ("USD", "USD/h"):
        scale = 1.0 if rest in ("USD", "$", "USD/h", "$/h") else None
    else:
        word = rest
        for name in (unit, unit + "s"):
            if name and word.endswith(name):
                word = word[: -len(name)].strip()
                break
        scale = COUNT_SUFFIXES.get(word)
    if scale is None:
        raise UnitError(f"unknown unit {rest[:20]!r} (expected {describe_unit(unit)})")
    return value * scale


def describe_unit(unit: str) -> str:
    """What a reader may type for ``unit``, for error messages and help."""
    hints = {
        "1": "a fraction such as 0.4 or a percentage such as 40%",
        "B": "bytes, e.g. 80GB, 80 GiB, 512MiB",
        "B/s": "bytes/s or bits/s, e.g. 50 GB/s, 400 Gb/s",
        "FLOP": "FLOP, e.g. 3.14e23 or 314 ZFLOP",
        "FLOP/s": "FLOP/s, e.g. 312 TFLOP/s or 3.12e14",
        "s": "a time such as 1.5 s, 300 ms, 2 h",
        "W": "watts, e.g. 700 W or 1.2 kW",
        "USD": "US dollars, e.g. 2.50",
        "USD/h": "US dollars per hour, e.g. 2.50",
    }
    return hints.get(unit, "a number, optionally with K, M, B or T (thousand to trillion)")


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


def _count(value: float, unit: str) -> str:
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
    if value is None:
        return "n/a"
    if isinstance(value, bool) or fmt == "bool":
        return "yes" if value else "no"
    if isinstance(value, str) or fmt == "text":
        return str(value)
    if not math.isfinite(value):
        return "n/a"
    shown_unit = "" if unit == "1" else unit
    if fmt == "percent":
        return f"{value * 100:.3g}%"
    if fmt == "usd":
        return "$" + _count(value, "")
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
_DURATION_STEPS = ((120.0, 1.0, "s"), (7_200.0, 60.0, "min"), (172_800.0, 3_600.0, "h"))


def _duration(seconds: float) -> str:
    """A time in seconds in the unit a person reads it in: s below 2 min, min below
    2 h, h below 2 days, days beyond ("4.2 min", "3.09 h", "68 days")."""
    for limit, scale, name in _DURATION_STEPS:
        if abs(seconds) < limit:
            return f"{_sig(seconds / scale)} {name}"
    return f"{_sig(seconds / 86_400.0)} days"


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
        return format_value(value, unit, "usd") + ("/h" if unit == "USD/h" else "")
    if unit in PHYSICAL:
        return _si(value, unit)
    return _count(value, "")  # counts: "175 billion" reads right for any noun
