"""Recovering from a dropped packet on an RDMA NIC, and TCP's timeout as a contrast.

One packet of ``packet_bytes`` at byte offset x of an M-byte message is lost on a path
of rate R and round trip RTT (BDP = R x RTT). Two ways to learn of it:

- a NAK: the next packet reaches the receiver out of order, and the receiver says so;
  the sender hears it about one RTT after it sent the lost packet;
- a timeout: when the lost packet is the last one nothing follows to reveal the gap,
  and the sender waits for its retransmission timer (the IB "local ACK timeout").

Two ways to repair it:

- go-back-N (RoCE and InfiniBand RC as specified): the receiver drops everything after
  the gap, so the sender resends from the lost packet on, which includes the BDP it
  sent while the NAK was on its way (Mittal et al., "Revisiting Network Support for
  RDMA" (IRN), SIGCOMM 2018, background section);
- selective repeat (IRN's design section): the receiver keeps out-of-order packets and the
  sender resends only the lost one; IRN caps in-flight data at a BDP so this costs about
  one RTT at most.

Serialisation of single packets (P/R, 82 ns for 4 KiB at 400 Gb/s) is ignored, as are
repeated losses, ACK coalescing and congestion control's reaction to the loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SCHEMES = ("go_back_n", "selective_repeat")
#: InfiniBand local ACK timeout unit: timeout = 4.096 us x 2^n, n a 5-bit QP attribute
#: and n = 0 meaning no timeout (Linux rdma_set_ack_timeout(): "4.096 * 2^(timeout)
#: usec"; ibv_modify_qp(3); the IB spec's Local ACK Timeout). A minimum: the NIC may
#: wait longer (Huawei HCCL_RDMA_TIMEOUT docs call the formula the minimum too).
IB_ACK_TIMEOUT_UNIT_S = 4.096e-6
IB_ACK_TIMEOUT_MAX_EXPONENT = 31
#: NCCL's defaults: NCCL_PARAM(IbTimeout, "IB_TIMEOUT", 20) and
#: NCCL_PARAM(IbRetryCnt, "IB_RETRY_CNT", 7) (NVIDIA/nccl src/transport/net_ib).
NCCL_IB_TIMEOUT_DEFAULT = 20
NCCL_IB_RETRY_CNT_DEFAULT = 7
#: Linux TCP's minimum retransmission timeout: TCP_RTO_MIN = HZ/5 = 200 ms
#: (include/net/tcp.h). Vasudevan et al. (SIGCOMM 2009) show it stalls incast
#: "for hundreds of milliseconds in networks with round-trip-times in microseconds".
LINUX_TCP_RTO_MIN_S = 0.200
#: Default packet: a 4096-byte RoCE/IB MTU payload (an assumption; 1024-4096 is usual).
DEFAULT_PACKET_BYTES = 4096.0


@dataclass(frozen=True)
class Recovery:
    """What one loss costs a message."""

    scheme: str
    detection: str  # "nak" or "timeout"
    delay_s: float  # added to the message's completion time
    retransmitted_bytes: float  # bytes sent twice
    amplification: float  # bytes on the wire / message bytes


def bdp_bytes(rate_bytes_per_s: float, rtt_s: float) -> float:
    """Bandwidth-delay product R x RTT: what a sender has in flight at full rate."""
    if rate_bytes_per_s <= 0 or rtt_s <= 0:
        raise ValueError("rate and RTT must be > 0")
    return rate_bytes_per_s * rtt_s


def ib_ack_timeout_s(exponent: int) -> float:
    """4.096 us x 2^n for n in 1..31; n = 0 disables the timer (infinite)."""
    if not 0 <= exponent <= IB_ACK_TIMEOUT_MAX_EXPONENT:
        raise ValueError(f"IB ACK timeout exponent must be in [0, 31], got {exponent}")
    if exponent == 0:
        return math.inf
    return IB_ACK_TIMEOUT_UNIT_S * 2.0**exponent


def qp_error_after_s(exponent: int, retry_count: int) -> float:
    """Least time before an RC QP gives up on a silent peer: the first try plus
    ``retry_count`` retries (0-7, a 3-bit attribute), each waiting one timeout."""
    if not 0 <= retry_count <= 7:
        raise ValueError(f"retry count must be in [0, 7], got {retry_count}")
    return (retry_count + 1) * ib_ack_timeout_s(exponent)


def recover(message_bytes: float, rate_bytes_per_s: float, rtt_s: float, *, scheme: str,
            timeout_s: float, packet_bytes: float = DEFAULT_PACKET_BYTES,
            lost_offset_bytes: float = 0.0) -> Recovery:
    """The delay and retransmission of one loss. Bounds: message > 0, rate > 0,
    0 < RTT, 0 < packet, 0 <= offset < message, timeout > 0.

    Derivation. NAK, go-back-N: the NAK leaves when the next packet arrives and reaches
    the sender one RTT after the lost packet left; everything sent in that RTT, up to
    the end of the message, is discarded: min(BDP, M - x - P) bytes plus the lost
    packet are sent twice, and the sender restarts at x one RTT late, so delay = RTT.
    NAK, selective repeat: only P is resent, one RTT after it first left; the rest goes
    on, so the message ends at max(M/R, (x + P)/R + RTT): delay = max(0, that - M/R).
    Timeout (the lost packet is the message's tail): nothing reveals the gap; the sender
    resends P when the timer fires, delay = timeout for both schemes.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    if message_bytes <= 0 or packet_bytes <= 0 or timeout_s <= 0:
        raise ValueError("message, packet and timeout must be > 0")
    if not 0 <= lost_offset_bytes < message_bytes:
        raise ValueError(f"lost_offset_bytes must be in [0, message), got {lost_offset_bytes}")
    window = bdp_bytes(rate_bytes_per_s, rtt_s)
    lost = min(packet_bytes, message_bytes - lost_offset_bytes)
    behind = message_bytes - lost_offset_bytes - lost  # bytes after the lost packet
    if behind <= 0:
        return _recovery(scheme, "timeout", timeout_s, lost, message_bytes)
    if scheme == "go_back_n":
        return _recovery(scheme, "nak", rtt_s, lost + min(window, behind), message_bytes)
    late_s = (lost_offset_bytes + lost) / rate_bytes_per_s + rtt_s
    delay_s = max(0.0, late_s - message_bytes / rate_bytes_per_s)
    return _recovery(scheme, "nak", delay_s, lost, message_bytes)


def _recovery(scheme: str, detection: str, delay_s: float, resent: float,
              message_bytes: float) -> Recovery:
    return Recovery(scheme, detection, delay_s, resent, (message_bytes + resent) / message_bytes)


def tcp_min_rto_recovery(message_bytes: float, rate_bytes_per_s: float, rtt_s: float, *,
                         packet_bytes: float = 1460.0) -> Recovery:
    """The labelled TCP variant: a tail loss waits Linux's 200 ms minimum RTO (TCP
    repairs selectively, with SACK). 1460 B is the TCP payload of a 1500 B frame."""
    return recover(message_bytes, rate_bytes_per_s, rtt_s, scheme="selective_repeat",
                   timeout_s=LINUX_TCP_RTO_MIN_S, packet_bytes=packet_bytes,
                   lost_offset_bytes=max(0.0, message_bytes - packet_bytes))


def goodput_fraction(loss_probability: float, window_packets: float, scheme: str) -> float:
    """Useful fraction of the wire under independent per-packet loss p.

    Derivation (the classic ARQ argument): a packet needs on average p/(1-p) failed
    tries; under go-back-N each failure also discards the W - 1 packets behind it
    (W = BDP in packets), so the wire carries (1 + (W-1)p)/(1-p) packets per delivered
    one: efficiency (1-p)/(1 + (W-1)p). Selective repeat wastes only the lost copy:
    1 - p. Bounds: 0 <= p < 1, W >= 1.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    if not 0 <= loss_probability < 1:
        raise ValueError(f"loss_probability must be in [0, 1), got {loss_probability}")
    if window_packets < 1:
        raise ValueError(f"window_packets must be >= 1, got {window_packets}")
    if scheme == "selective_repeat":
        return 1.0 - loss_probability
    return (1.0 - loss_probability) / (1.0 + (window_packets - 1.0) * loss_probability)


def goodput_with_stall(transfer_s: float, stall_s: float) -> float:
    """Fraction of time a link does useful work when each transfer of ``transfer_s``
    suffers one stall: transfer / (transfer + stall). With a 200 ms RTO and millisecond
    transfers this is the incast throughput collapse (Vasudevan et al. 2009)."""
    if transfer_s <= 0 or stall_s < 0:
        raise ValueError("transfer must be > 0 and stall >= 0")
    return transfer_s / (transfer_s + stall_s)
