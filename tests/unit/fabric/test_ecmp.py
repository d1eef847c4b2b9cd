"""ecmp_collisions: balls into bins, computed exactly, against enumeration and closed forms."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.formulas.fabric import flow_collisions as ecmp


def _enumerate_expected_max(k: int, m: int) -> Fraction:
    counts = Counter(max(Counter(a).values()) for a in itertools.product(range(m), repeat=k))
    return Fraction(sum(c * v for c, v in counts.items()), m**k)


@pytest.mark.parametrize(("k", "m"), [(2, 2), (3, 3), (4, 2), (5, 4), (6, 3), (7, 5),
                                      (2, 8), (8, 4), (6, 6)])
def test_expected_max_load_equals_enumeration(k: int, m: int) -> None:
    dist = ecmp.max_load_distribution(k, m)
    assert dist.exact
    assert dist.expected == pytest.approx(float(_enumerate_expected_max(k, m)), rel=1e-12)
    assert sum(dist.probabilities) == pytest.approx(1.0)


def test_three_flows_three_links_is_17_over_9() -> None:
    # 27 equally likely placements: 6 with max 1, 18 with max 2, 3 with max 3.
    assert ecmp.max_load_distribution(3, 3).expected == pytest.approx(17 / 9)


def test_collision_probability_is_the_birthday_problem() -> None:
    # 1 - m!/((m-k)! m^k); 23 people, 365 days: 0.5073 (the classic figure).
    assert ecmp.collision_probability(23, 365) == pytest.approx(0.507297, rel=1e-5)
    assert ecmp.collision_probability(2, 4) == pytest.approx(0.25)
    assert ecmp.collision_probability(5, 4) == 1.0
    assert ecmp.collision_probability(1, 4) == 0.0


def test_default_leaf_32_flows_on_32_uplinks() -> None:
    # A 1:1 leaf: 32 NIC-rate flows on 32 uplinks collide almost surely; the busiest
    # link carries ~3.5 flows, so the slowest flow gets well under half its rate.
    result = calculators.compute("ecmp_collisions")
    assert result.value("exact") is True
    assert result.value("expected_max_load") == pytest.approx(3.533, abs=0.01)
    assert result.value("collision_probability") == pytest.approx(1.0)
    assert result.value("ideal_flow_throughput") == pytest.approx(50e9)
    assert result.value("ecmp_efficiency") < 0.35  # type: ignore[operator]


def test_approximation_is_close_to_exact_and_labelled(monkeypatch: pytest.MonkeyPatch) -> None:
    exact = ecmp.max_load_distribution(64, 64)
    monkeypatch.setattr(ecmp, "EXACT_BUDGET", 0)
    approx = ecmp.max_load_distribution(64, 64)
    assert not approx.exact
    assert approx.expected == pytest.approx(exact.expected, rel=0.03)


def test_large_cases_are_deterministic_and_fast_enough() -> None:
    first = calculators.compute("ecmp_collisions", flows=4096, uplinks=1024).to_dict()
    again = calculators.compute("ecmp_collisions", flows=4096, uplinks=1024).to_dict()
    assert first == again


@settings(deadline=None, max_examples=40)
@given(k=st.integers(1, 200), m=st.integers(1, 64), demand=st.floats(1e9, 1e11))
def test_slowest_flow_never_beats_ideal_spraying(k: int, m: int, demand: float) -> None:
    result = calculators.compute("ecmp_collisions", flows=k, uplinks=m, flow_demand=demand)
    slowest, ideal = result.value("slowest_flow_throughput"), result.value("ideal_flow_throughput")
    assert isinstance(slowest, float)
    assert isinstance(ideal, float)
    assert slowest <= ideal * (1 + 1e-9)
    assert result.value("expected_max_load") >= k / m - 1e-9  # type: ignore[operator]


@pytest.mark.parametrize(
    ("name", "value"),
    [("flows", 0), ("flows", 5000), ("uplinks", 0), ("uplinks", 1.5),
     ("uplink_bandwidth", 0), ("flow_demand", "fast")],
)
def test_bad_inputs_name_the_input(name: str, value: object) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("ecmp_collisions", **{name: value})
    assert caught.value.input_name == name
