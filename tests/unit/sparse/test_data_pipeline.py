"""data_pipeline against TorchRec's published Criteo 1TB throughput, properties, bad input."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators
import published_checks

if TYPE_CHECKING:
    from calculators.core.calculator import Result


def pipeline(**inputs: object) -> Result:
    return calculators.compute("data_pipeline", **inputs)


def num(result: Result, name: str) -> float:
    value = result.value(name)
    assert isinstance(value, (int, float))
    return float(value)


def test_torchrec_criteo_1tb_epoch_time() -> None:
    # facebookresearch/dlrm torchrec_dlrm/README.MD: 8 x A100, global batch 16,384,
    # ~1,671,168 records/s, "Time to Train 1 Epoch" 43m24s (2,604 s). Training reads days
    # 0-22, 4,195,196,928 samples (HugeCTR's MLPerf config): 2,510 s at that rate, 3.6%
    # under the README's wall time, which also covers evaluating day 23 (178,274,637
    # samples, mlcommons/inference README): with it, 2,617 s, within 0.5%.
    # The two comparisons with 2,604 s are published checks (published_checks.sparse:
    # torchrec-criteo-epoch, -with-eval); here, that training alone comes in under it.
    readme = published_checks.get("torchrec-criteo-epoch")
    assert num(pipeline(**readme.inputs), "epoch_time_s") < readme.published


def test_criteo_binary_read_rate() -> None:
    # DLRM's binary Criteo: 40 fields x 4 B = 160 B a sample; 1.67M samples/s is 267 MB/s
    # for the cluster, 33 MB/s a GPU: loading is no load on a 400 Gb/s NIC for DLRM.
    result = pipeline()
    assert num(result, "read_bandwidth") == pytest.approx(1_671_168 * 160)
    assert num(result, "dataset_bytes") == pytest.approx(4_195_196_928 * 160)
    assert num(result, "per_worker_bandwidth") == pytest.approx(1_671_168 * 160 / 8)
    assert num(result, "per_worker_nic_share") < 0.001


def test_rate_from_batch_and_step_time() -> None:
    result = pipeline(samples_per_second="", batch_size=65536, step_time="50ms")
    assert num(result, "samples_per_second") == pytest.approx(65536 / 0.05)
    assert num(result, "steps_per_epoch") == -(-4_195_196_928 // 65536)


def test_heavy_samples_warn_about_the_nic() -> None:
    # 10 kB samples at 10M samples/s over 64 GPUs: 1.56 GB/s a GPU, 3% of 400 Gb/s;
    # at 100 kB, 31%: worth a warning.
    light = pipeline(samples_per_second="10M", bytes_per_sample="10kB", num_workers=64)
    heavy = pipeline(samples_per_second="10M", bytes_per_sample="100kB", num_workers=64)
    assert not light.computed.warnings
    assert heavy.computed.warnings
    assert num(heavy, "per_worker_nic_share") == pytest.approx(1e12 / 64 / 50e9)


def test_neither_rate_nor_step_time_is_an_error() -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        pipeline(samples_per_second="")
    assert caught.value.input_name == "samples_per_second"


@given(
    rate=st.floats(1, 1e10), size=st.floats(1, 1e6), samples=st.floats(1, 1e13),
    epochs=st.floats(0.01, 100), workers=st.integers(1, 100_000),
)
def test_invariants(rate: float, size: float, samples: float, epochs: float,
                    workers: int) -> None:
    result = pipeline(samples_per_second=rate, bytes_per_sample=size, dataset_samples=samples,
                      epochs=epochs, num_workers=workers)
    assert num(result, "per_worker_bandwidth") * workers == pytest.approx(
        num(result, "read_bandwidth"))
    assert num(result, "total_time_s") == pytest.approx(num(result, "epoch_time_s") * epochs)
    assert num(result, "dataset_bytes") / num(result, "read_bandwidth") == pytest.approx(
        num(result, "epoch_time_s"))


@pytest.mark.parametrize(
    ("name", "value"),
    [("samples_per_second", 0), ("batch_size", 0), ("step_time", 0), ("bytes_per_sample", 0),
     ("dataset_samples", 0), ("epochs", 0), ("num_workers", 0), ("nic_bandwidth", "-1GB/s"),
     ("bytes_per_sample", "lots")],
)
def test_bad_inputs_raise_one_error_naming_the_input(name: str, value: object) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        pipeline(**{name: value})
    assert caught.value.input_name == name
