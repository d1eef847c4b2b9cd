"""incast: the fluid model against closed forms, its invariants and bad inputs.

Mechanisms: DCQCN (Zhu et al., SIGCOMM 2015), TCP incast and its 200 ms minimum
retransmission timeout (Vasudevan et al., SIGCOMM 2009; Chen et al., WREN 2009).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.formulas.fabric.queueing import dcqcn_schedule, incast_run

GBPS = 50e9  # 400 Gb/s in B/s


def test_closed_form_lossy_overflow() -> None:
    # n senders at B into a port draining at B: the queue grows at (n-1)B for S/B
    # seconds; it fills at Q/((n-1)B) and drops the rest: (n-1)S - Q.
    n, size, buffer = 8, 1e6, 2e5
    run = incast_run(n, size, GBPS, drain=GBPS, buffer_bytes=buffer, mode="none",
                     retransmission_timeout=0.2)
    assert run.overflow_time_s == pytest.approx(buffer / ((n - 1) * GBPS))
    assert run.dropped_bytes == pytest.approx((n - 1) * size - buffer)
    assert run.peak_queue_bytes == pytest.approx(buffer)
    # Vasudevan et al. 2009: the 200 ms timeout, not the transfer, sets the time.
    assert run.completion_s > 0.2


def test_pfc_is_lossless_and_receiver_bound() -> None:
    n, size = 31, 2**20
    run = incast_run(n, size, GBPS, drain=GBPS, buffer_bytes=1e6, mode="pfc")
    assert run.dropped_bytes == 0
    assert run.completion_s == pytest.approx(n * size / GBPS)
    # Each sender needed S/B of link time; it was paused for the rest of the sending.
    assert run.pause_time_s == pytest.approx(run.send_end_s - size / GBPS, rel=1e-6)


def test_no_queue_when_fan_in_is_at_most_one() -> None:
    run = incast_run(4, 1e6, GBPS / 4, drain=GBPS, buffer_bytes=1e5, mode="none")
    assert run.peak_queue_bytes == 0
    assert run.overflow_time_s is None
    assert run.completion_s == pytest.approx(4e6 / GBPS)


def test_dcqcn_halves_every_cnp_interval_until_fair_share() -> None:
    # Zhu et al. 2015: on a CNP, rate *= 1 - alpha/2 with alpha starting at 1; at most
    # one CNP per flow per 50 us. 32x fan-in needs five halvings.
    schedule = dcqcn_schedule(32 * GBPS, GBPS, 1e5, 5e-6, 50e-6)
    rates = [rate for _, rate in schedule]
    assert rates == pytest.approx([32 * GBPS, 16 * GBPS, 8 * GBPS, 4 * GBPS, 2 * GBPS, GBPS])
    times = [t for t, _ in schedule]
    assert times[1] == pytest.approx(1e5 / (31 * GBPS) + 5e-6)
    assert times[2] - times[1] == pytest.approx(50e-6)


def test_dcqcn_cuts_pause_time_compared_with_pfc_alone() -> None:
    pfc = incast_run(31, 2**26, GBPS, drain=GBPS, buffer_bytes=1e6, mode="pfc")
    dcqcn = incast_run(31, 2**26, GBPS, drain=GBPS, buffer_bytes=1e6, mode="dcqcn",
                       ecn_threshold=1e5, feedback_delay=5e-6)
    assert dcqcn.pause_time_s < pfc.pause_time_s / 10
    assert dcqcn.completion_s == pytest.approx(pfc.completion_s)


def test_short_burst_ends_before_dcqcn_reacts() -> None:
    result = calculators.compute("incast", bytes_per_sender="64KiB", flow_control="dcqcn")
    assert any("before DCQCN's first rate cut" in n for n in result.computed.notes)
    longer = calculators.compute("incast", bytes_per_sender="64MiB", flow_control="dcqcn")
    assert not any("before DCQCN's first rate cut" in n for n in longer.computed.notes)


def test_alltoall_as_n_simultaneous_incasts() -> None:
    # Paced: each sender splits its link over n peers, so every port sees n x B/n = B.
    paced = calculators.compute("incast", pattern="alltoall_paced", senders=15)
    assert paced.value("fan_in_ratio") == pytest.approx(1.0)
    assert paced.value("overflows") is False
    # Synchronised: n full incasts in turn; far slower than the paced ideal.
    sync = calculators.compute("incast", pattern="alltoall_synchronised", senders=15)
    assert sync.value("fan_in_ratio") == pytest.approx(15.0)
    assert sync.value("completion_s") > 5 * paced.value("completion_s")  # type: ignore[operator]


@settings(deadline=None)
@given(
    senders=st.integers(1, 512),
    size=st.floats(1e3, 1e9),
    sender=st.floats(1e9, 1e12),
    receiver=st.floats(1e9, 1e12),
    buffer=st.floats(1e4, 1e8),
    mode=st.sampled_from(["none", "pfc", "dcqcn"]),
    pattern=st.sampled_from(["incast", "alltoall_paced", "alltoall_synchronised"]),
)
def test_completion_at_least_total_over_receiver_bandwidth(  # noqa: PLR0917
    senders: int, size: float, sender: float, receiver: float, buffer: float, mode: str,
    pattern: str,
) -> None:
    result = calculators.compute(
        "incast", senders=senders, bytes_per_sender=size, sender_link_bandwidth=sender,
        receiver_link_bandwidth=receiver, switch_buffer_bytes=buffer, flow_control=mode,
        pattern=pattern, ecn_threshold_bytes=buffer / 2,
    )
    completion = result.value("completion_s")
    assert isinstance(completion, float)
    assert completion >= senders * size / receiver * (1 - 1e-9)
    assert completion >= result.value("ideal_completion_s") * (1 - 1e-9)  # type: ignore[operator]
    if mode != "none":
        assert result.value("dropped_bytes") == 0
    peak = result.value("peak_queue_bytes")
    assert isinstance(peak, float)
    assert peak <= buffer * (1 + 1e-9)


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ({"senders": 0}, "senders"),
        ({"bytes_per_sender": 0}, "bytes_per_sender"),
        ({"receiver_link_bandwidth": "0 Gb/s"}, "receiver_link_bandwidth"),
        ({"switch_buffer_bytes": -1}, "switch_buffer_bytes"),
        ({"flow_control": "ecn"}, "flow_control"),
        ({"pattern": "broadcast"}, "pattern"),
        ({"ecn_threshold_bytes": "2MB"}, "ecn_threshold_bytes"),
        ({"cnp_interval": 0}, "cnp_interval"),
    ],
)
def test_bad_inputs_name_the_input(raw: dict[str, object], name: str) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("incast", **raw)
    assert caught.value.input_name == name
