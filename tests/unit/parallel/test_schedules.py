"""Pipeline schedules against Narayanan et al. 2021, Qi et al. 2024 and DeepSeek-V3."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculators.formulas.parallel.schedules import (
    EQUAL_PASSES,
    SCHEDULES,
    PassTimes,
    dualpipe,
    interleaved_1f1b,
    interleaved_in_flight,
    one_f_one_b,
    schedule_cost,
    zero_bubble_h1,
    zero_bubble_h2,
)

if TYPE_CHECKING:
    from collections.abc import Callable

times = st.builds(PassTimes, st.floats(0.1, 10), st.floats(0.1, 10), st.floats(0.1, 10))


@pytest.mark.parametrize(("p", "m", "expected"), [(4, 8, 3 / 8), (8, 64, 7 / 64), (1, 4, 0.0)])
def test_narayanan_1f1b_bubble(p: int, m: int, expected: float) -> None:
    # Narayanan et al. 2021, Sec. 2.2.1: bubble time fraction = (p - 1) / m; at most p
    # micro-batches in flight on the first stage.
    cost = one_f_one_b(p, m)
    assert cost.bubble_fraction == pytest.approx(expected, rel=1e-12)
    assert cost.in_flight == min(p, m)
    assert cost.sends_per_micro_batch == 2


@pytest.mark.parametrize(("p", "m", "v"), [(4, 8, 2), (8, 64, 4), (16, 128, 3)])
def test_narayanan_interleaved_bubble(p: int, m: int, v: int) -> None:
    # Narayanan et al. 2021, Sec. 2.2.2: interleaving v chunks per device divides the
    # bubble by v, (p - 1) / (v m), and multiplies pipeline communication by v.
    cost = interleaved_1f1b(p, m, v)
    assert cost.bubble_fraction == pytest.approx((p - 1) / (v * m), rel=1e-12)
    assert cost.sends_per_micro_batch == 2 * v


def test_megatron_interleaved_memory_penalty() -> None:
    # Megatron-LM theoretical_memory_usage.py (Korthikanti et al. 2022, Sec. 4.2.3):
    # penalty 1 + (p-1)/(p v); p = 8, v = 4 gives 1.21875 and ceil(9.75) = 10 in flight.
    assert interleaved_in_flight(8, 4) == pytest.approx(8 * 1.21875, rel=1e-12)
    assert math.ceil(interleaved_in_flight(8, 4)) == 10


@pytest.mark.parametrize(("p", "m"), [(4, 8), (8, 24), (16, 128)])
def test_zero_bubble_authors_table_at_equal_times(p: int, m: int) -> None:
    # Qi et al., sail/zero-bubble-pipeline-parallellism project page, table "assuming
    # T_F = T_B = T_W": bubble rate 1F1B (p-1)/m, ZB1P (p-1)/(3m), ZB2P 0; activation
    # memory 1x, 1x, 2x (ZB-H2 keeps 2p - 1 micro-batches, paper Sec. 2.2).
    assert one_f_one_b(p, m).bubble_fraction == pytest.approx((p - 1) / m, rel=1e-12)
    assert zero_bubble_h1(p, m).bubble_fraction == pytest.approx((p - 1) / (3 * m), rel=1e-12)
    assert zero_bubble_h2(p, m).bubble_fraction == 0.0
    assert zero_bubble_h1(p, m).in_flight == one_f_one_b(p, m).in_flight
    assert zero_bubble_h2(p, m).in_flight == min(2 * p - 1, m)


@given(times, st.integers(2, 64), st.integers(1, 256))
def test_qi_and_deepseek_tables_agree(t: PassTimes, p: int, m: int) -> None:
    # DeepSeek-V3 Table 2 writes 1F1B as (PP-1)(F+B) and ZB1P as (PP-1)(F+B-2W) with B the
    # full backward; Qi et al. Table 2 as (p-1)(T_F+T_B+T_W) and (p-1)(T_F+T_B-T_W).
    full_backward = t.backward_input + t.backward_weight
    assert one_f_one_b(p, m, t).bubble_time == pytest.approx(
        (p - 1) * (t.forward + full_backward), rel=1e-9)
    expected = max(0.0, (p - 1) * (t.forward + full_backward - 2 * t.backward_weight))
    assert zero_bubble_h1(p, m, t).bubble_time == pytest.approx(expected, rel=1e-9, abs=1e-12)


@given(times, st.integers(1, 64), st.integers(1, 256))
def test_schedules_never_worse_than_1f1b(t: PassTimes, p: int, m: int) -> None:
    base = one_f_one_b(p, m, t).bubble_time
    assert zero_bubble_h1(p, m, t).bubble_time <= base + 1e-9
    assert zero_bubble_h2(p, m, t).bubble_time <= zero_bubble_h1(p, m, t).bubble_time + 1e-9


def test_dualpipe_table_2_memory_and_bubble() -> None:
    # DeepSeek-V3 Table 2 / deepseek-ai/DualPipe README: DualPipe bubble
    # (PP/2 - 1)(F&B + B - 3W), parameters 2x, activations PP + 1.
    t = PassTimes(1.0, 1.0, 1.0)
    cost = dualpipe(8, 20, t, overlapped_forward_backward=2.5)
    assert cost.bubble_time == pytest.approx((8 / 2 - 1) * (2.5 + 2.0 - 3.0), rel=1e-12)
    assert cost.weight_copies == 2
    assert cost.in_flight == 9
    # With equal times and no overlap gain (our default) DualPipe still beats ZB1P at
    # PP = 8: 3 x (3 + 2 - 3) = 6 against 7 x 1 = 7 (units of one pass).
    assert dualpipe(8, 20).bubble_time < zero_bubble_h1(8, 20).bubble_time


def test_bubble_share_of_step_matches_corrected_project_table() -> None:
    # The project page was corrected to (p-1)/(m+p-1) for the share of the whole step.
    assert one_f_one_b(8, 24).bubble_share_of_step == pytest.approx(7 / 31, rel=1e-12)


@pytest.mark.parametrize("name", SCHEDULES)
def test_dispatch(name: str) -> None:
    assert schedule_cost(name, 4, 8, times=EQUAL_PASSES).stages == 4


@pytest.mark.parametrize(
    "call",
    [lambda: one_f_one_b(0, 4), lambda: one_f_one_b(4, 0),
     lambda: interleaved_1f1b(4, 6, 2), lambda: interleaved_1f1b(4, 8, 0),
     lambda: dualpipe(3, 8), lambda: PassTimes(-1.0, 1.0, 1.0),
     lambda: PassTimes(0.0, 0.0, 0.0), lambda: schedule_cost("gpipe", 4, 8)])
def test_bad_inputs(call: Callable[[], object]) -> None:
    with pytest.raises(ValueError, match=r"."):
        call()
