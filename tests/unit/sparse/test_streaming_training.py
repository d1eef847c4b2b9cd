"""streaming_training: identities of keep-up, rows touched and checkpoints, how they
move with the stream, and the combinations it refuses."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.formulas.sparse import checkpoints as ckpt
from calculators.formulas.sparse import streaming
from calculators.formulas.sparse.sharding import Network
from calculators.formulas.sparse.step import Job

if TYPE_CHECKING:
    from calculators.core.calculator import Result


def run(**inputs: object) -> Result:
    return calculators.compute("streaming_training", **inputs)


def num(result: Result, name: str) -> float:
    value = result.value(name)
    assert isinstance(value, (int, float))
    return float(value)


def _job(workers: int = 8, batch: float = 8192.0) -> Job:
    return Job(batch=batch, features=20, pooling=2.0, unique=0.5, dim=64, value_bytes=4,
               dense_params=1e6, workers=workers, servers=4, server_nic=12.5e9,
               dense_on_ps=False, net=Network(50e9, 450e9, 8, 5e-6))


@pytest.mark.parametrize("mode", streaming.MODES)
@pytest.mark.parametrize("overlap", [True, False])
def test_keep_up_is_batch_over_step(mode: str, overlap: bool) -> None:
    job = _job()
    tp = streaming.throughput(job, mode, 1e-6, overlap=overlap)
    assert tp.samples_per_s == pytest.approx(job.batch / tp.step_s)
    expected = max(tp.compute_s, tp.comm_s) if overlap else tp.compute_s + tp.comm_s
    assert tp.step_s == pytest.approx(expected)
    assert tp.compute_s == pytest.approx(1e-6 * job.batch / job.workers)


def test_calculator_throughput_is_batch_over_step() -> None:
    result = run(batch_size=4096, num_workers=16)
    for mode in streaming.MODES:
        assert num(result, f"{mode}_samples_per_s") == pytest.approx(
            4096 / num(result, f"{mode}_step_time_s"))
        assert num(result, f"{mode}_headroom") == pytest.approx(
            num(result, f"{mode}_samples_per_s") / num(result, "peak_samples_per_s"))


def test_workers_found_are_the_fewest_that_keep_up() -> None:
    job, per_sample, target = _job(), 5e-6, 3e6
    for mode in streaming.MODES:
        w = streaming.workers_to_keep_up(job, mode, per_sample, target, overlap=True)
        assert w is not None
        at = streaming.throughput(streaming.scaled(job, w, mode), mode, per_sample,
                                  overlap=True)
        assert at.samples_per_s >= target
        if w > 1:
            below = streaming.throughput(streaming.scaled(job, w - 1, mode), mode,
                                         per_sample, overlap=True)
            assert below.samples_per_s < target


def test_unreachable_peak_gives_none() -> None:
    # The busiest GPU sends one table's pooled vectors for the whole (growing) global
    # batch: the collective saturates, whatever the workers.
    assert streaming.workers_to_keep_up(_job(), "collective", 1e-9, 1e15,
                                        overlap=True) is None


@given(rate=st.floats(1e3, 1e7), factor=st.floats(1.5, 10))
@settings(max_examples=20, deadline=None)
def test_more_events_need_more_workers(rate: float, factor: float) -> None:
    small, large = run(events_per_s=rate), run(events_per_s=rate * factor)
    for name in ("ps_workers_needed", "collective_workers_needed"):
        a, b = small.value(name), large.value(name)
        if a is not None and b is not None:
            assert isinstance(a, int) and isinstance(b, int)
            assert b >= a


def test_staleness_is_workers_minus_one_when_asynchronous() -> None:
    assert streaming.staleness_updates(64, asynchronous=True) == 63
    assert streaming.staleness_updates(64, asynchronous=False) == 0
    assert streaming.staleness_seconds(64, 0.1, asynchronous=True) == pytest.approx(
        63 * 0.1 / 64)
    sync = run(asynchronous=False)
    assert num(sync, "ps_staleness_updates") == 0
    async_ = run(asynchronous=True)
    assert num(async_, "ps_staleness_updates") == num(async_, "ps_workers_needed") - 1


@given(rows=st.floats(1, 1e12), exponent=st.floats(0, 2), lookups=st.floats(0, 1e14))
@settings(max_examples=60, deadline=None)
def test_rows_touched_at_most_lookups_and_rows(rows: float, exponent: float,
                                               lookups: float) -> None:
    touched = ckpt.rows_touched(rows, exponent, lookups)
    assert 0 <= touched <= min(rows, lookups) * (1 + 1e-12)


def test_more_lookups_touch_more_rows() -> None:
    few, many = (ckpt.rows_touched(1e9, 1.0, k) for k in (1e8, 1e10))
    assert few < many <= 1e9


def test_checkpoint_reduction_is_the_ratio_of_bytes() -> None:
    result = run()
    assert num(result, "checkpoint_reduction") == pytest.approx(
        num(result, "checkpoint_full_bytes") / num(result, "checkpoint_incremental_bytes"))
    assert num(result, "checkpoint_write_time_s") == pytest.approx(
        num(result, "checkpoint_incremental_bytes") / 10e9)


def test_checkpoint_bytes_by_hand() -> None:
    # 1,000 rows of dim 8, SGD, 4 bits with 4 B of scale and bias, 100 rows modified,
    # no dense part: full 1,000 x 32 B; increment 100 x (8 B ID + 4 B + 4 B).
    plan = ckpt.checkpoint_plan(live_rows=1000, rows_modified=100, dim=8, optimizer="sgd",
                                bits=4, qparam_bytes=4, dense_params=0, interval_s=10,
                                full_every=4, storage_bandwidth=1e3)
    assert plan.full_bytes == 32_000
    assert plan.incremental_bytes == 1_600
    assert plan.reduction == 20
    assert plan.average_bandwidth == pytest.approx((32_000 + 3 * 1_600) / 40)
    assert plan.bandwidth_reduction == pytest.approx(32_000 * 4 / (32_000 + 3 * 1_600))


def test_only_full_checkpoints_save_nothing() -> None:
    assert num(run(full_every=1), "checkpoint_bandwidth_reduction") == pytest.approx(1.0)


def test_sync_bytes_are_rows_times_serving_row() -> None:
    result = run(serving_dtype="fp16", embedding_dim=64)
    assert num(result, "sync_bytes") == pytest.approx(
        num(result, "sync_rows") * (8 + 64 * 2))
    assert num(result, "sync_link_load") == pytest.approx(
        num(result, "sync_transfer_time_s") / 60)


def test_freshness_adds_up() -> None:
    fresh = streaming.freshness(ingest_s=30, global_batch=1e4, mean_rate=1e5, step_s=0.01,
                                sync_interval_s=60, sync_transfer_s=5)
    assert fresh.trained_s == pytest.approx(30 + 0.05 + 0.01)
    assert fresh.serving_s == pytest.approx(fresh.trained_s + 30 + 5)


def test_huge_tables_turn_the_verdict_to_the_ps() -> None:
    assert run().value("recommended_mode") == "collective"
    huge = run(embedding_bytes="48.4TB")
    assert huge.value("recommended_mode") == "ps"
    assert num(huge, "collective_workers_needed") >= num(huge, "collective_min_gpus_memory")


def test_ps_servers_cover_the_tables() -> None:
    result = run(embedding_bytes="48.4TB", num_ps_servers=1)
    assert num(result, "ps_servers_needed") >= num(result, "ps_min_hosts_memory")


def test_fewer_samples_than_workers_is_refused() -> None:
    with pytest.raises(calculators.ValidationError) as err:
        run(batch_size=10, num_workers=64)
    assert err.value.input_name == "batch_size"


@pytest.mark.parametrize(("name", "value"), [("zipf_exponent", 5), ("checkpoint_bits", 0),
                                             ("peak_to_mean", 0.5), ("passes", 0)])
def test_out_of_range_inputs_are_refused(name: str, value: float) -> None:
    with pytest.raises(calculators.ValidationError) as err:
        run(**{name: value})
    assert err.value.input_name == name


def test_scaled_job_keeps_local_batch() -> None:
    job = replace(_job(), servers=4)
    big = streaming.scaled(job, 32, "ps")
    assert big.batch / big.workers == job.batch / job.workers
    assert big.servers == 16


def test_no_dense_part_is_refused() -> None:
    with pytest.raises(calculators.ValidationError) as err:
        run(dense_params=0)
    assert err.value.input_name == "dense_params"
