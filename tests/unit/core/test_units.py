"""Parsing and formatting at the edges: SI vs IEC, bits vs bytes, count suffixes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculators.core.unit_parsing import UnitError, parse_quantity
from calculators.core.units import format_value, input_text


@pytest.mark.parametrize(
    ("text", "unit", "value"),
    [
        ("175B", "param", 175e9),
        ("2T", "token", 2e12),
        ("1,024", "GPU", 1024),
        ("300B tokens", "token", 300e9),
        ("3e23", "FLOP", 3e23),
        ("314 ZFLOP", "FLOP", 314e21),
        ("80GB", "B", 80e9),
        ("80 GiB", "B", 80 * 2**30),
        ("512MiB", "B", 512 * 2**20),
        ("400 Gb/s", "B/s", 50e9),
        ("400Gbps", "B/s", 50e9),
        ("50 GB/s", "B/s", 50e9),
        ("312 TFLOP/s", "FLOP/s", 312e12),
        ("312 TFLOPS", "FLOP/s", 312e12),
        ("40%", "1", 0.4),
        ("0.4", "1", 0.4),
        ("300 ms", "s", 0.3),
        ("2 h", "s", 7200),
        ("700 W", "W", 700),
        ("1.2 kW", "W", 1200),
        ("$2.50", "USD/h", 2.5),
        ("-3", "param", -3),
    ],
)
def test_parse(text: str, unit: str, value: float) -> None:
    assert parse_quantity(text, unit) == pytest.approx(value)


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("nan", "param"),
        ("inf", "B"),
        ("80 GB", "param"),
        ("12 parsecs", "FLOP/s"),
        ("", "B"),
        ("B", "param"),
        ("1e", "param"),
        ("80 GX", "B"),
        ("40%", "param"),
    ],
)
def test_parse_rejects(text: str, unit: str) -> None:
    with pytest.raises(UnitError):
        parse_quantity(text, unit)


def test_gigabytes_and_gibibytes_differ_by_7_percent() -> None:
    assert parse_quantity("80 GiB", "B") / parse_quantity("80 GB", "B") == pytest.approx(
        1.0737, rel=1e-4
    )


@pytest.mark.parametrize(
    ("value", "unit", "fmt", "text"),
    [
        (3.15e23, "FLOP", "sci", "3.15e23 FLOP"),
        (312e12, "FLOP/s", "si", "312 TFLOP/s"),
        (80e9, "B", "si", "80 GB"),
        (80 * 2**30, "B", "iec", "80 GiB"),
        (0.4, "1", "percent", "40%"),
        (3.5e12, "tokens", "count", "3.5 trillion tokens"),
        (701_121.8, "GPU-h", "count", "701,000 GPU-h"),
        (1.4e6, "USD", "usd", "$1.4 million"),
        (None, "B", "si", "n/a"),
        (True, "", "bool", "yes"),
    ],
)
def test_format(value: float, unit: str, fmt: str, text: str) -> None:
    assert format_value(value, unit, fmt) == text  # type: ignore[arg-type]


@given(
    st.floats(min_value=1e-6, max_value=1e24, allow_nan=False),
    st.sampled_from(["param", "B", "B/s", "FLOP/s", "1", "W", "s"]),
)
def test_input_text_round_trips_exactly(value: float, unit: str) -> None:
    assert parse_quantity(input_text(value, unit), unit) == value


def test_input_text_of_a_whole_number_has_no_trailing_point_zero() -> None:
    # TorchRec's 1,671,168 samples/s (a float default) used to show as "1671168.0".
    assert input_text(1671168.0, "sample/s") == "1671168"
    assert parse_quantity("1671168", "sample/s") == 1671168.0
    assert input_text(4195196928.0, "sample") == "4195196928"
    assert input_text(0.1 + 0.2, "1") == repr(0.1 + 0.2)  # not whole: the exact repr
