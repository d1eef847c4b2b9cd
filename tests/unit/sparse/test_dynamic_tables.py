"""dynamic_tables: Little's law against a simulated ID stream, collisions against hashing
IDs into rows, the two table kinds' bytes, warnings and bad input."""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.formulas.sparse.embeddings import optimizer_bytes, shard_bytes, weight_bytes
from calculators.formulas.sparse.hash_tables import (
    collisionless_table,
    fixed_table,
    live_rows,
    occupied_rows,
    rows_without_eviction,
    shared_share,
)
from calculators.inputs.hash_tables import DEFAULT_LIVE_ROWS

if TYPE_CHECKING:
    from calculators.core.calculator import Result


def compute(**inputs: object) -> Result:
    return calculators.compute("dynamic_tables", **inputs)


def num(result: Result, name: str) -> float:
    value = result.value(name)
    assert isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value)


def test_littles_law_against_a_simulated_id_stream() -> None:
    # Each day 400 new IDs; each admitted with probability 1/2, then seen for a random
    # number of days (mean 20) and evicted 5 days after its last lookup.
    rng = random.Random(0)
    per_day, admit, expiry, days = 400, 0.5, 5, 400
    leave_on: list[int] = [0] * (days + 200)
    live_by_day = []
    live = 0
    for day in range(days):
        live -= leave_on[day]
        for _ in range(per_day):
            if rng.random() < admit:
                active = rng.randint(0, 40)  # uniform, mean 20 days
                live += 1
                leave_on[day + active + expiry] += 1
        live_by_day.append(live)
    steady = live_by_day[100:]
    expected = live_rows(per_day, admit, 20, expiry)
    assert sum(steady) / len(steady) == pytest.approx(expected, rel=0.02)


def test_littles_law_and_growth_are_linear() -> None:
    assert live_rows(400e6, 0.5, 30, 7) == pytest.approx(400e6 * 0.5 * 37)
    assert live_rows(1e6, 1.0, 0, 1, base_ids=5e6) == pytest.approx(6e6)
    assert rows_without_eviction(1e6, 0.5, 100) == pytest.approx(5e7)


@pytest.mark.parametrize(("ids", "rows"), [(5000, 8000), (8000, 8000), (2000, 20000)])
def test_collisions_against_hashing_ids_into_rows(ids: int, rows: int) -> None:
    rng = random.Random(1)
    occupied, shared = [], []
    for _ in range(40):
        bins: dict[int, int] = {}
        for _ in range(ids):
            slot = rng.randrange(rows)
            bins[slot] = bins.get(slot, 0) + 1
        occupied.append(len(bins))
        shared.append(sum(n for n in bins.values() if n > 1) / ids)
    assert sum(occupied) / len(occupied) == pytest.approx(occupied_rows(ids, rows), rel=0.01)
    assert sum(shared) / len(shared) == pytest.approx(shared_share(ids, rows), rel=0.02)


def test_table_bytes_of_each_kind() -> None:
    row = shard_bytes(1, 128, "fp32", "rowwise_adagrad")
    assert row == weight_bytes(1, 128, "fp32") + optimizer_bytes(1, 128, "rowwise_adagrad")
    open_table = collisionless_table(1000.0, 0.5, 8, 9, row)
    assert open_table.slots == 2000
    assert open_table.total_bytes == 2000 * (8 + 9 + row)
    assert open_table.overhead_bytes == pytest.approx(2000 * (17 + row) - 1000 * row)
    hashed = fixed_table(1000.0, 4000.0, row)
    assert hashed.total_bytes == 4000 * row
    assert hashed.row_payload_bytes + hashed.overhead_bytes == pytest.approx(4000 * row)
    full = collisionless_table(1000.0, 1.0, 0, 0, row)
    assert full.overhead_ratio == 0.0


def test_defaults_are_a_trillion_parameter_class_table() -> None:
    result = compute()
    assert result.value("live_rows") == pytest.approx(DEFAULT_LIVE_ROWS)
    assert 0.9e12 < num(result, "live_params") < 1e12
    # Half the slots empty at a load factor of 1/2: overhead a little over 100%.
    assert 1.0 < num(result, "overhead_ratio") < 1.1
    assert result.value("collision_share") == 0.0
    table = result.to_dict()["table"]
    assert isinstance(table, dict) and table["rows"][-1][0] == "total"


def test_bytes_per_id_and_holders_follow_the_total() -> None:
    result = compute(hashing="fixed", table_rows="20B")
    total = num(result, "total_bytes")
    assert total == pytest.approx(20e9 * num(result, "row_bytes"))
    assert num(result, "bytes_per_live_id") == pytest.approx(total / num(result, "live_rows"))
    gpus = result.value("min_gpus")
    assert isinstance(gpus, int) and gpus >= 1


def test_growth_without_eviction_is_horizon_over_stay() -> None:
    result = compute(active_days=30, expiry_days=7, horizon_days=370)
    assert result.value("growth_without_eviction") == pytest.approx(10.0)


def test_warnings_for_a_full_table_and_for_collisions() -> None:
    assert any("probe" in w for w in compute(load_factor=0.95).computed.warnings)
    assert compute(load_factor=0.5).computed.warnings == []
    crowded = compute(hashing="fixed", table_rows="1B").computed.warnings
    assert any("share their row" in w for w in crowded)
    assert compute(hashing="fixed", table_rows="10T").computed.warnings == []


@pytest.mark.parametrize(("name", "value"), [
    ("admit_share", 0), ("admit_share", 1.5), ("expiry_days", 0), ("load_factor", 0.01),
    ("load_factor", 1.2), ("hashing", "cuckoo"), ("table_rows", 0), ("embedding_dim", 0),
])
def test_bad_input_is_refused_by_name(name: str, value: object) -> None:
    with pytest.raises(calculators.ValidationError) as err:
        compute(**{name: value})
    assert err.value.input_name == name


@settings(max_examples=40, deadline=None)
@given(ids=st.floats(1, 1e12), rows=st.floats(1, 1e12))
def test_collision_shares_are_shares(ids: float, rows: float) -> None:
    occupied = occupied_rows(ids, rows)
    assert 0.0 <= occupied <= min(ids, rows) * (1 + 1e-12)
    assert 0.0 <= shared_share(ids, rows) < 1.0 or math.isclose(shared_share(ids, rows), 1.0)
