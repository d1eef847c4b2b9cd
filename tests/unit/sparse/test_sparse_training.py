"""sparse_training: PS and collective traffic by hand, properties, and where each wins."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators

if TYPE_CHECKING:
    from calculators.core.calculator import Result


def step(**inputs: object) -> Result:
    return calculators.compute("sparse_training", **inputs)


def num(result: Result, name: str) -> float:
    value = result.value(name)
    assert isinstance(value, (int, float))
    return float(value)


def test_ps_bytes_by_hand() -> None:
    # 1,024 samples over 2 workers, 2 features x 1 ID, no repeats, dim 4, fp32:
    # each worker looks up 512 x 2 = 1,024 rows of 16 B (16 KiB) and sends their IDs
    # (8 B each). 1,000 dense fp32 parameters on the PS: 4,000 B each way.
    result = step(batch_size=1024, num_workers=2, num_ps_servers=1, num_sparse_features=2,
                  pooling_factor=1, unique_ratio=1, embedding_dim=4, dense_params=1000,
                  dense_on_ps=True, latency=0)
    assert num(result, "ps_pull_bytes_per_worker") == 1024 * 16 + 4000
    assert num(result, "ps_push_bytes_per_worker") == 1024 * 8 + 1024 * 16 + 4000
    # One server hears from both workers.
    assert num(result, "ps_server_ingress_bytes") == 2 * (1024 * 24 + 4000)
    assert num(result, "ps_fan_in") == 2


def test_collective_bytes_by_hand() -> None:
    # 4 GPUs in one node, 4 tables (one each), dim 8, fp32, global batch 1,000:
    # forward each GPU sends its table's pooled vectors for the batch, 1,000 x 8 x 4 B,
    # of which 3/4 leaves the GPU; backward the same. IDs: 250 x 4 x 8 B, 3/4 leaves.
    result = step(batch_size=1000, num_workers=4, gpus_per_node=4, num_sparse_features=4,
                  pooling_factor=1, embedding_dim=8, dense_params=100, latency=0)
    pooled = 1000 * 8 * 4
    assert num(result, "collective_alltoall_bytes_per_gpu") == pytest.approx(
        0.75 * (250 * 4 * 8 + 2 * pooled))
    # Ring allreduce: 2(n-1)/n of the buffer (nccl-tests' bus factor).
    assert num(result, "collective_allreduce_bytes_per_gpu") == pytest.approx(1.5 * 400)


@given(workers=st.integers(1, 4096), servers=st.integers(1, 512))
def test_ps_server_ingress_grows_with_workers(workers: int, servers: int) -> None:
    # Fixed global batch: the embedding traffic is shared out, but every extra worker
    # pushes a whole copy of the dense gradients to the servers.
    small = step(num_workers=workers, num_ps_servers=servers, batch_size=1 << 20)
    large = step(num_workers=2 * workers, num_ps_servers=servers, batch_size=1 << 20)
    assert num(large, "ps_server_ingress_bytes") > num(small, "ps_server_ingress_bytes")
    assert num(small, "ps_fan_in") == workers
    assert num(large, "ps_fan_in") == 2 * workers


@given(workers=st.integers(1, 1024), servers=st.integers(1, 1024))
def test_fan_in_is_the_workers_per_server(workers: int, servers: int) -> None:
    # Hashed keys: with thousands of IDs per worker, every worker reaches every server;
    # the fan-in never exceeds the number of workers.
    hybrid = step(num_workers=workers, num_ps_servers=servers, dense_on_ps=False)
    fan_in = num(hybrid, "ps_fan_in")
    assert fan_in <= workers + 1e-9
    assert fan_in == pytest.approx(workers, rel=1e-3)
    assert num(hybrid, "ps_incast_ratio") == pytest.approx(fan_in * 50e9 / 12.5e9)


def test_few_ids_reach_few_servers() -> None:
    # 2 unique IDs per worker over 1,000 servers: a server hears from a worker with
    # probability 1 - (1 - 1/1000)^2, so the fan-in is about 2 x 64 / 1000.
    result = step(batch_size=64, num_workers=64, num_sparse_features=1, pooling_factor=2,
                  unique_ratio=1, num_ps_servers=1000, dense_on_ps=False)
    assert num(result, "ps_fan_in") == pytest.approx(64 * (1 - 0.999**2))


def test_collective_wins_the_default_dlrm_hybrid_case() -> None:
    result = step()
    assert result.value("recommended_mode") == "collective"
    assert num(result, "collective_step_comm_time_s") < num(result, "ps_step_comm_time_s")


def test_ps_wins_when_tables_outgrow_gpu_memory() -> None:
    # 50 TB of tables and state on 64 H100s (80 GiB less TorchRec's 15%: 73.0 GB usable
    # each, 4.7 TB in all) does not fit: it needs ceil(50e12 / 73.0e9) = 685 GPUs; 72
    # hosts of 1 TB (700 GB usable) do.
    result = step(embedding_bytes="50TB", num_workers=64, num_ps_servers=80)
    assert num(result, "collective_min_gpus_memory") == 685
    assert num(result, "ps_min_hosts_memory") == 72
    assert result.value("recommended_mode") == "ps"
    assert "685" in str(result.value("recommendation"))


def test_ps_wins_when_asynchronous() -> None:
    result = step(asynchronous=True)
    assert result.value("recommended_mode") == "ps"


def test_ps_wins_with_heavy_deduplication_and_enough_servers() -> None:
    # One-hot features whose IDs repeat a lot in a batch (unique 10%): a PS moves one
    # row per distinct ID, a collective one pooled vector per sample and feature.
    result = step(num_sparse_features=26, pooling_factor=1, unique_ratio=0.1,
                  dense_on_ps=False, num_workers=64, num_ps_servers=64,
                  embedding_bytes="100GB")
    assert num(result, "ps_step_comm_time_s") < num(result, "collective_step_comm_time_s")
    assert result.value("recommended_mode") == "ps"


def test_matched_bandwidth_comparison() -> None:
    # The default compares 16 CPU servers on 100 GbE with 64 GPUs on 400 Gb/s, the dense
    # part on the PS: 57x in the collective's favour. Give the PS one server per worker at
    # the workers' 50 GB/s and allreduce the dense part, and the gap is 2.4x: what is
    # left is distinct rows (0.5 x 1,024 samples x 100 x 10 IDs) against pooled vectors.
    # The chapter quotes both ratios (57x, 2.4x) from the defaults: 56.8 and 2.37.
    result = step()
    matched = num(result, "ps_matched_step_comm_time_s")
    collective = num(result, "collective_step_comm_time_s")
    assert num(result, "ps_step_comm_time_s") / collective == pytest.approx(56.8, rel=0.01)
    assert matched / collective == pytest.approx(2.37, rel=0.01)
    by_hand = step(num_ps_servers=64, server_nic_bandwidth="50GB/s", dense_on_ps=False)
    assert matched == pytest.approx(num(by_hand, "ps_step_comm_time_s"), rel=1e-12)
    table = result.computed.table
    assert table is not None
    assert [row[0] for row in table.rows] == ["as configured", "matched bandwidth"]
    assert "57x" in table.rows[0][-1] and "2.4x" in table.rows[1][-1]
    assert "2.4x" in str(result.value("recommendation"))


@given(servers=st.integers(1, 512), port=st.floats(1e9, 1e11), dense_on_ps=st.booleans())
def test_matched_bandwidth_ignores_the_configured_servers(servers: int, port: float,
                                                          dense_on_ps: bool) -> None:
    result = step(num_ps_servers=servers, server_nic_bandwidth=port, dense_on_ps=dense_on_ps)
    assert num(result, "ps_matched_step_comm_time_s") == pytest.approx(
        num(step(), "ps_matched_step_comm_time_s"), rel=1e-12)


def test_servers_needed_meets_the_target_and_one_fewer_does_not() -> None:
    target = 0.2
    result = step(target_step_time=target)
    needed = int(num(result, "ps_servers_needed"))
    at = step(target_step_time=target, num_ps_servers=needed)
    below = step(target_step_time=target, num_ps_servers=needed - 1)
    assert num(at, "ps_step_comm_time_s") <= target < num(below, "ps_step_comm_time_s")


def test_unreachable_target_warns() -> None:
    result = step(target_step_time="1us")
    assert result.value("ps_servers_needed") is None
    assert result.computed.warnings


def test_chart_has_both_modes_against_workers() -> None:
    chart = step().computed.chart
    assert chart is not None
    assert "parameter server" in chart
    assert "collective" in chart
    assert "workers" in chart


@pytest.mark.parametrize(
    ("name", "value"),
    [("batch_size", 0), ("num_sparse_features", 0), ("pooling_factor", 0),
     ("unique_ratio", 0), ("unique_ratio", 1.5), ("embedding_dim", 0), ("dtype", "int8"),
     ("dense_params", -1), ("num_workers", 0), ("num_ps_servers", 0),
     ("server_nic_bandwidth", "0 Gb/s"), ("asynchronous", "maybe"),
     ("embedding_bytes", 0), ("target_step_time", 0), ("nic_bandwidth", "fast")],
)
def test_bad_inputs_raise_one_error_naming_the_input(name: str, value: object) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        step(**{name: value})
    assert caught.value.input_name == name
