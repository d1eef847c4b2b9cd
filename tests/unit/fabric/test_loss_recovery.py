"""Loss recovery on RDMA NICs: timers against their published definitions and defaults,
go-back-N against selective repeat (IRN, Mittal et al., SIGCOMM 2018), TCP's 200 ms
minimum RTO (Linux include/net/tcp.h; Vasudevan et al., SIGCOMM 2009)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculators.formulas.fabric import loss_recovery as lr

RATE = 400e9 / 8  # 400 Gb/s
RTT = 10e-6
MiB = 2**20


def test_ib_ack_timeout_definition() -> None:
    # rdma_set_ack_timeout(): "4.096 * 2^(timeout) usec"; 0 disables the timer.
    assert lr.ib_ack_timeout_s(1) == pytest.approx(8.192e-6)
    assert math.isinf(lr.ib_ack_timeout_s(0))
    # Linux bnxt_re (commit 601577b7): default 16 is "approx. 260ms (4 usec * 2^16)";
    # 4% covers their rounding of 4.096 us to 4 us (262 ms) and of that to 260 ms.
    assert lr.ib_ack_timeout_s(16) == pytest.approx(0.260, rel=0.04)
    assert lr.ib_ack_timeout_s(16) == pytest.approx(0.2684, rel=1e-3)
    assert lr.ib_ack_timeout_s(31) == pytest.approx(8796.1, rel=1e-4)
    with pytest.raises(ValueError, match="exponent"):
        lr.ib_ack_timeout_s(32)


def test_nccl_defaults() -> None:
    # NVIDIA/nccl net_ib: IB_TIMEOUT 20, IB_RETRY_CNT 7.
    # The InfiniBand spec's local ACK timeout: 4.096 us x 2^timeout.
    assert lr.ib_ack_timeout_s(lr.NCCL_IB_TIMEOUT_DEFAULT) == pytest.approx(4.096e-6 * 2**20)
    assert lr.qp_error_after_s(20, 7) == pytest.approx(8 * 4.096e-6 * 2**20)
    with pytest.raises(ValueError, match="retry"):
        lr.qp_error_after_s(20, 8)


def test_go_back_n_resends_a_bdp_selective_repeat_one_packet() -> None:
    message = 16 * MiB
    bdp = lr.bdp_bytes(RATE, RTT)
    assert bdp == pytest.approx(500e3)  # 400 Gb/s x 10 us
    gbn = lr.recover(message, RATE, RTT, scheme="go_back_n", timeout_s=1.0)
    sr = lr.recover(message, RATE, RTT, scheme="selective_repeat", timeout_s=1.0)
    assert gbn.detection == sr.detection == "nak"
    assert gbn.retransmitted_bytes == pytest.approx(4096 + bdp)
    assert gbn.delay_s == pytest.approx(RTT)
    assert sr.retransmitted_bytes == 4096
    assert sr.delay_s == 0.0  # early loss, repaired while the rest streams
    assert gbn.amplification == pytest.approx(1 + (4096 + bdp) / message)


def test_selective_repeat_near_the_end_costs_about_an_rtt() -> None:
    message = 16 * MiB
    sr = lr.recover(message, RATE, RTT, scheme="selective_repeat", timeout_s=1.0,
                    lost_offset_bytes=message - 2 * 4096)
    assert sr.delay_s == pytest.approx(RTT - 4096 / RATE)
    gbn = lr.recover(message, RATE, RTT, scheme="go_back_n", timeout_s=1.0,
                     lost_offset_bytes=message - 2 * 4096)
    assert gbn.retransmitted_bytes == 2 * 4096  # only what was left to send


@pytest.mark.parametrize("scheme", lr.SCHEMES)
def test_tail_loss_waits_for_the_timer(scheme: str) -> None:
    timeout = lr.ib_ack_timeout_s(lr.NCCL_IB_TIMEOUT_DEFAULT)
    tail = lr.recover(MiB, RATE, RTT, scheme=scheme, timeout_s=timeout,
                      lost_offset_bytes=MiB - 4096)
    assert tail.detection == "timeout"
    assert tail.delay_s == timeout
    # Four seconds against a 21 us message: the tail, not the data, sets the time.
    assert tail.delay_s / (MiB / RATE) > 1e5


def test_tcp_min_rto_is_200ms_and_collapses_incast() -> None:
    # TCP_RTO_MIN = HZ/5 = 200 ms: published_checks.communication (linux-tcp-min-rto).
    tcp = lr.tcp_min_rto_recovery(MiB, 1e9 / 8, 100e-6)
    assert tcp.detection == "timeout" and tcp.delay_s == lr.LINUX_TCP_RTO_MIN_S
    # Vasudevan et al. 2009: barrier-synchronised reads lose "up to 90%" of throughput.
    # One RTO on a 1 MB block at 1 Gb/s (8.4 ms) leaves under 5%: at least as bad.
    assert lr.goodput_with_stall(MiB / (1e9 / 8), tcp.delay_s) < 0.10


def test_goodput_under_random_loss() -> None:
    assert lr.goodput_fraction(0.0, 100, "go_back_n") == 1.0
    assert lr.goodput_fraction(0.01, 1, "go_back_n") == pytest.approx(0.99)
    # W = 122 packets (500 kB / 4096 B) at 1% loss: go-back-N keeps ~45%.
    gbn = lr.goodput_fraction(0.01, 122, "go_back_n")
    assert gbn == pytest.approx(0.99 / 2.21)
    assert lr.goodput_fraction(0.01, 122, "selective_repeat") == pytest.approx(0.99)


@settings(max_examples=200, deadline=None)
@given(message=st.floats(4096, 1e9), offset_frac=st.floats(0, 0.999999),
       rtt=st.floats(1e-6, 1e-3), p=st.floats(0, 0.5), window=st.floats(1, 1e4))
def test_selective_repeat_never_worse(message: float, offset_frac: float, rtt: float,
                                      p: float, window: float) -> None:
    kw = {"timeout_s": 0.1, "lost_offset_bytes": offset_frac * message}
    gbn = lr.recover(message, RATE, rtt, scheme="go_back_n", **kw)
    sr = lr.recover(message, RATE, rtt, scheme="selective_repeat", **kw)
    assert sr.delay_s <= gbn.delay_s + 1e-15
    assert sr.retransmitted_bytes <= gbn.retransmitted_bytes
    assert 1.0 < sr.amplification <= gbn.amplification
    assert (lr.goodput_fraction(p, window, "go_back_n")
            <= lr.goodput_fraction(p, window, "selective_repeat") + 1e-15)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"scheme": "go_back_0"}, "scheme"),
    ({"lost_offset_bytes": float(MiB)}, "lost_offset"),
    ({"timeout_s": 0.0}, "timeout"),
])
def test_bad_inputs(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"scheme": "go_back_n", "timeout_s": 1.0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        lr.recover(MiB, RATE, RTT, **args)  # type: ignore[arg-type]
