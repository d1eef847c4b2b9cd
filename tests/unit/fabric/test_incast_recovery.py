"""incast without flow control: RDMA loss recovery (go-back-N, selective repeat) against
closed forms, the lost-tail rule, and TCP's timeout kept as the labelled variant.

Mechanisms: Mittal et al., "Revisiting Network Support for RDMA" (IRN), SIGCOMM 2018
(go-back-N on RoCE NICs against selective repeat); the InfiniBand local ACK timeout
4.096 us x 2^n with NCCL's n = 20; Linux's 200 ms TCP_RTO_MIN (Vasudevan et al. 2009).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calculators
from calculators.formulas.fabric import loss_recovery as lr
from calculators.formulas.fabric.queueing import QueueRun, incast_run

B = 50e9  # 400 Gb/s per direction
Q = 1e6  # buffer
RTT = 5e-6


def _run(scheme: str | None, n: int = 31, size: float = 2**20, rate: float = B,
         tail: float = 1e-3) -> QueueRun:
    return incast_run(n, size, rate, drain=B, buffer_bytes=Q, mode="none",
                      recovery=scheme, round_trip_s=RTT, tail_timeout_s=tail)


def _closed_form(n: int, size: float, useful: float) -> tuple[float, float]:
    """(time the last useful byte is admitted, bytes sent) for n senders at B into a
    port of rate B and buffer Q: the queue fills at Q / ((n-1)B), then the useful
    bytes enter at ``useful`` B/s while the senders keep sending at n B."""
    fill = Q / ((n - 1) * B)
    end = fill + (n * size - n * B * fill) / useful
    return end, n * B * end


def test_selective_repeat_delivers_at_the_port_rate() -> None:
    run = _run("selective_repeat")
    end, sent = _closed_form(31, 2**20, B)
    assert run.send_end_s == pytest.approx(end)
    # Each byte crosses the full port with probability 1/31: sent 31x what gets through.
    assert run.resent_bytes == pytest.approx(sent - 31 * 2**20)
    assert run.dropped_bytes == pytest.approx(run.resent_bytes)
    # Done when the last lost tail is repaired: its 1 ms timer, then one NAK loop.
    loop = RTT + Q / B
    assert run.completion_s == pytest.approx(end + 1e-3 + loop)
    assert run.tail_wait_s == pytest.approx(1e-3 - Q / B)


def test_go_back_n_goodput_is_the_arq_formula() -> None:
    # W = one flow's rate x the NAK loop (round trip + full buffer) / 4 KiB packets.
    loop = RTT + Q / B
    window = B * loop / lr.DEFAULT_PACKET_BYTES
    p = 30 / 31
    useful = 31 * B * lr.goodput_fraction(p, window, "go_back_n")
    assert useful == pytest.approx(B / (1 + (window - 1) * p))
    run = _run("go_back_n")
    end, sent = _closed_form(31, 2**20, useful)
    assert run.send_end_s == pytest.approx(end)
    assert run.resent_bytes == pytest.approx(sent - 31 * 2**20)
    # The discarded bytes dwarf the dropped ones: the port forwards mostly waste.
    assert run.resent_bytes > run.dropped_bytes
    assert run.completion_s > 100 * _run("selective_repeat").completion_s


def test_tail_counts_only_when_likely() -> None:
    # Two senders at B into B: p = 1/2, P(some tail lost) = 1 - 1/4: the timer waits.
    assert _run("selective_repeat", n=2, tail=0.01).tail_wait_s > 0
    # Four senders at B/3.5: fan-in 8/7, p = 1/8, P = 1 - (7/8)^4 = 0.41: no timer.
    mild = _run("selective_repeat", n=4, rate=B / 3.5, size=1e7, tail=0.01)
    assert mild.dropped_bytes > 0
    assert mild.tail_wait_s == 0


def test_tcp_variant_is_the_old_model() -> None:
    # Without recovery the senders finish at line rate and the drops wait one RTO
    # (Vasudevan et al. 2009): max(drained, overflow + RTO) + dropped / B.
    run = incast_run(31, 2**20, B, drain=B, buffer_bytes=Q, mode="none",
                     retransmission_timeout=0.2)
    assert run.overflow_time_s is not None
    assert run.completion_s == pytest.approx(
        run.overflow_time_s + 0.2 + run.dropped_bytes / B)
    assert run.resent_bytes == run.dropped_bytes


def test_calculator_rows_and_the_ps_push_over_tcp() -> None:
    # The sparse chapter's PS push (64 workers, 29 MB each, into 100 GbE) over TCP
    # keeps its 348 ms; with flow control it is the ideal 148 ms.
    ps = {"senders": 64, "bytes_per_sender": "29MB", "receiver_link_bandwidth": "100Gb/s"}
    tcp = calculators.compute("incast", **ps, flow_control="none", loss_recovery="tcp_rto")
    assert tcp.value("completion_s") == pytest.approx(0.348, abs=0.0005)
    table = calculators.compute("incast", **ps).computed.table
    assert table is not None
    assert [row[0] for row in table.rows] == [
        "none, go-back-N", "none, selective repeat", "none, TCP RTO", "pfc", "dcqcn"]


def test_rdma_default_timer_is_nccls() -> None:
    result = calculators.compute("incast", flow_control="none")
    assert result.inputs["rdma_ack_timeout"] == pytest.approx(4.096e-6 * 2**20)
    # NCCL's 4.3 s timer dominates a lost tail; a short one leaves round-trip repair.
    assert result.value("tail_wait_s") == pytest.approx(4.29, rel=0.01)
    fast = calculators.compute("incast", flow_control="none",
                               loss_recovery="selective_repeat", rdma_ack_timeout="131us")
    slowdown = fast.value("slowdown")
    assert isinstance(slowdown, float) and slowdown < 1.3
    assert any("selective repeat" in note for note in fast.computed.notes)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 256), size=st.floats(1e4, 1e8), buffer=st.floats(1e4, 1e7))
def test_selective_repeat_never_slower_than_go_back_n(n: int, size: float,
                                                      buffer: float) -> None:
    runs = {s: incast_run(n, size, B, drain=B, buffer_bytes=buffer, mode="none",
                          recovery=s, round_trip_s=RTT, tail_timeout_s=1e-3)
            for s in lr.SCHEMES}
    sr, gbn = runs["selective_repeat"], runs["go_back_n"]
    assert sr.completion_s <= gbn.completion_s * (1 + 1e-12)
    assert sr.resent_bytes <= gbn.resent_bytes * (1 + 1e-12)
    assert sr.completion_s >= n * size / B * (1 - 1e-9)


@pytest.mark.parametrize(("raw", "name"), [
    ({"loss_recovery": "go_back_0"}, "loss_recovery"),
    ({"rdma_ack_timeout": 0}, "rdma_ack_timeout"),
    ({"round_trip_time": -1e-6}, "round_trip_time"),
])
def test_bad_inputs_name_the_input(raw: dict[str, object], name: str) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("incast", **raw)
    assert caught.value.input_name == name
