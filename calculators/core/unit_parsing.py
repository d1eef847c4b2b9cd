"""Reading quantities people type: a number with an optional unit, in SI base units.

Decimal (SI) and binary (IEC) prefixes are kept apart: "80 GB" is 80e9 bytes and
"80 GiB" is 80 x 2**30 bytes. Lower-case "b" is bits: "400 Gb/s" is 50e9 bytes/s.
For counts (parameters, tokens, samples) the familiar K / M / B / T suffixes mean
thousand, million, billion and trillion, so "175B" parameters is 175e9.
"""

from __future__ import annotations

import re

from calculators.core.i18n import N_, _


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
    # How Chinese engineers write counts (the zh edition shows them so: units.py).
    "万": 1e4,
    "亿": 1e8,
    "万亿": 1e12,
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

#: The number at the head of a field's text, anchored at a non-space character so that
#: no two runs of spaces compete for the same characters: each part is matched once and
#: the regular expression runs in linear time on any text (a pattern with several
#: optional runs of spaces around an optional sign backtracked with the cube of the
#: length on hostile text: 800 spaces took seconds).
_SIGN = re.compile(r"[-+]")
_NUMBER = re.compile(r"(?:\d[\d,_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _number(text: str) -> tuple[float, str]:
    """The leading number of ``text`` (a sign, an optional "$", the digits) and the rest.
    Each step skips spaces with str.lstrip and matches a fixed pattern at one place."""
    rest = text.strip()
    sign = _SIGN.match(rest)
    negative = sign is not None and sign.group() == "-"
    if sign is not None:
        rest = rest[1:].lstrip()
    if rest.startswith("$"):
        rest = rest[1:].lstrip()
    match = _NUMBER.match(rest)
    if not match:
        raise UnitError(_("not a number"))
    digits = match.group().replace(",", "").replace("_", "")
    try:
        value = float(digits)
    except ValueError:
        raise UnitError(_("not a number")) from None
    return (-value if negative else value), rest[match.end():].strip()


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
        raise UnitError(_("unknown unit {unit} (expected {expected})").format(
            unit=repr(rest[:20]), expected=describe_unit(unit)))
    return value * scale


def describe_unit(unit: str) -> str:
    """What a reader may type for ``unit``, for error messages and help."""
    hints = {
        "1": N_("a fraction such as 0.4 or a percentage such as 40%"),
        "B": N_("bytes, e.g. 80GB, 80 GiB, 512MiB"),
        "B/s": N_("bytes/s or bits/s, e.g. 50 GB/s, 400 Gb/s"),
        "FLOP": N_("FLOP, e.g. 3.14e23 or 314 ZFLOP"),
        "FLOP/s": N_("FLOP/s, e.g. 312 TFLOP/s or 3.12e14"),
        "s": N_("a time such as 1.5 s, 300 ms, 2 h"),
        "W": N_("watts, e.g. 700 W or 1.2 kW"),
        "USD": N_("US dollars, e.g. 2.50"),
        "USD/h": N_("US dollars per hour, e.g. 2.50"),
    }
    return _(hints.get(unit, N_(
        "a number, optionally with K, M, B or T (thousand to trillion)")))
