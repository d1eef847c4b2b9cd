"""The fuzz findings of issue 36 that crashed a calculator or froze the worker, kept as
reproducers: text that made the number parser backtrack, a link state built from it,
an integer beyond float range, and two in-bounds inputs that raised a bare error."""

from __future__ import annotations

import time

import pytest

import calculators
from calculators.core.share import decode_state
from calculators.core.unit_parsing import UnitError, parse_quantity

#: Texts on which the old pattern backtracked with the cube of their length (800 spaces
#: before a letter: seconds; with a newline, longer).
HOSTILE = (" " * 5000 + "x", "1" + " " * 5000 + "\nx", "- " * 5000, "$ " * 5000 + "\n",
           "1" * 5000 + "e" + " " * 5000)
#: Far above what linear parsing needs (microseconds here); the cubic pattern took
#: minutes on these lengths.
BOUND_S = 0.5


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: f"{len(t)} chars")
def test_hostile_text_is_parsed_in_linear_time(text: str) -> None:
    started = time.perf_counter()
    with pytest.raises(UnitError):
        parse_quantity(text, "B")
    assert time.perf_counter() - started < BOUND_S


def test_a_hostile_link_state_decodes_quickly() -> None:
    calc = calculators.REGISTRY["training_compute"]
    state = "params:" + "%20" * 2600 + "x"
    started = time.perf_counter()
    inputs, notices = decode_state(calc, state)
    assert time.perf_counter() - started < BOUND_S
    assert "params" not in inputs and notices


def test_parsing_keeps_its_grammar() -> None:
    assert parse_quantity(" - $ 2.50 ", "USD") == -2.5
    assert parse_quantity("+3.5 TFLOP/s", "FLOP/s") == 3.5e12
    assert parse_quantity("1,000_000", "1") == 1e6
    assert parse_quantity(".5", "1") == 0.5
    assert parse_quantity("80 GiB", "B") == 80 * 2**30


def test_an_integer_beyond_float_range_is_refused_by_name() -> None:
    with pytest.raises(calculators.ValidationError, match=r"^num_gpus: ") as err:
        calculators.compute("parallel_plan", num_gpus=10**400)
    assert len(str(err.value)) < 200  # the 401 digits are not echoed back


def test_a_leaf_with_more_uplink_than_downlink_is_sized() -> None:
    # A 550 GB/s NIC takes several ports of a 140-port switch: the leaf's down:up ratio
    # falls below 1, which never limits the alltoall (it raised a bare ValueError).
    result = calculators.compute("fabric_sizing", nics_per_node=1,
                                 nic_port_bandwidth="550GB/s", switch_radix=140,
                                 topology="leaf_spine")
    assert float(result.value("alltoall_bandwidth_per_gpu")) > 0


def test_a_sparse_design_that_fits_nowhere_says_so_once() -> None:
    # It divided by a run time of zero (ZeroDivisionError).
    result = calculators.compute("cluster_sizing", model_kind="sparse", gpus_per_node=1,
                                 dense_params=0, epochs=1000, num_ps_servers=13388,
                                 host_memory=1e6)
    warnings = result.to_dict()["warnings"]
    assert isinstance(warnings, list)
    assert any(w.startswith("Neither fits") for w in warnings)
    assert not any("takes 0 s per step" in w for w in warnings)
    # No run, so no time, GPU-hours or cost: none rather than a run of 0 days.
    for name in ("wall_clock_days", "gpu_hours", "cost_usd", "energy_kwh"):
        assert result.value(name) is None, name
    rows = {row[0]: row[1] for row in result.computed.table.rows}  # type: ignore[union-attr]
    assert rows["Wall-clock time"] == "none"


def test_a_sparse_design_with_nothing_to_time_is_refused() -> None:
    # No dense parameters and one GPU: no compute and no communication, a run of 0 days.
    with pytest.raises(calculators.ValidationError, match="dense_params"):
        calculators.compute("cluster_sizing", model_kind="sparse", gpus_per_node=1,
                            dense_params=0, gpu_memory=64585569815817.17)


@pytest.mark.parametrize("params", ["256", "7B", "70B"])
def test_memory_never_rises_with_the_zero_stage_under_a_params_override(params: str) -> None:
    # The gathered-weights buffer of stage 3 followed the architecture while the states
    # followed the override: 84.7 GB at stage 3 against 77.9 at stage 2 for 256 weights.
    totals = [float(calculators.compute("model_memory", params=params, dp=16,  # type: ignore[arg-type]
                                        zero_stage=z).value("total_bytes")) for z in range(4)]
    assert totals == sorted(totals, reverse=True)
