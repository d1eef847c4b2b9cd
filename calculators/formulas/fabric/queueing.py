"""The fluid queue behind the incast calculator: one switch port, three reactions.

See ``calculators.incast`` for the model, its sources and what it leaves out. Kept
apart so that the calculator's declaration and the integration each stay short.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators.formulas.fabric import loss_recovery

EPS = 1e-15
#: A guard on the event loop; a run needs a few events per rate change.
MAX_STEPS = 100_000


@dataclass(frozen=True)
class QueueRun:
    """One fluid run of a switch port: times in s, bytes in B."""

    completion_s: float
    send_end_s: float
    peak_queue_bytes: float
    overflow_time_s: float | None
    dropped_bytes: float
    pause_time_s: float
    #: Bytes the senders put on the wire more than once (lossy runs).
    resent_bytes: float = 0.0
    #: Time the run waited on a lost tail's retransmission timer (RDMA recovery).
    tail_wait_s: float = 0.0


@dataclass(frozen=True)
class NakRecovery:
    """How an RDMA NIC repairs drops at a full port (formulas.fabric.loss_recovery).

    ``loop_s``: from a drop to the sender hearing of it, a NAK round trip (the fabric's
    round trip plus the full buffer's queueing delay, which the next packet must cross
    to reveal the gap). ``window_packets``: what one flow sends in that loop, the W of
    go-back-N. ``tail_timeout_s``: what a lost last packet waits, no packet behind it
    revealing the gap (the InfiniBand local ACK timeout).
    """

    scheme: str
    loop_s: float
    window_packets: float
    tail_timeout_s: float
    flows: int  # flows into the port, each with a last packet to lose


def _tail_lost(loss: float, recovery: NakRecovery) -> bool:
    """Whether the median run loses some flow's last packet: 1 - (1 - p)^n >= 1/2."""
    return 1.0 - (1.0 - loss) ** recovery.flows >= 0.5


def fluid_port(
    total_bytes: float,
    schedule: list[tuple[float, float]],
    drain: float,
    buffer_bytes: float,
    *,
    lossless: bool,
    retransmission_timeout: float = 0.0,
    recovery: NakRecovery | None = None,
) -> QueueRun:
    """Integrate one queue fed at the offered rate of ``schedule`` [(start time,
    aggregate rate)] until ``total_bytes`` have arrived and drained at ``drain``.

    At the buffer limit a lossless port admits only ``drain`` (the senders are paused
    for the rest: ``pause_time_s`` is how long each sender's link stood still); a lossy
    one drops the excess. Without ``recovery`` (TCP's way, the labelled variant) the
    senders finish and the dropped bytes are resent once, after
    ``retransmission_timeout``. With ``recovery`` (an RDMA NIC) NAKs repair drops as the
    senders go: a full port drops a fraction p = 1 - drain/rate of what arrives, and
    ``unsent`` (the bytes still to deliver) shrinks only at the rate the receiver can
    use, rate x loss_recovery.goodput_fraction(p, W, scheme): drain for selective
    repeat, drain / (1 + (W-1)p) for go-back-N, which discards what follows a gap. The
    run then ends at the later of the drained queue and the lost tail's timer, plus one
    loop for that last repair. A tail is counted lost when that is more likely than not
    for at least one of the flows: each flow's last packet meets the full port and
    survives with probability 1 - p, so P = 1 - (1 - p)^n over the n
    flows (the median run, not the mean).
    """
    t, queue, unsent = 0.0, 0.0, total_bytes
    peak, dropped, paused, wasted = 0.0, 0.0, 0.0, 0.0
    last_loss = 0.0
    overflow: float | None = None
    index = 0
    for _ in range(MAX_STEPS):
        if unsent <= EPS * total_bytes:
            break
        while index + 1 < len(schedule) and schedule[index + 1][0] <= t * (1 + 1e-12) + EPS:
            index += 1
        rate = schedule[index][1]
        horizon = schedule[index + 1][0] - t if index + 1 < len(schedule) else math.inf
        full = queue >= buffer_bytes * (1 - 1e-12) and rate > drain
        if full:
            if overflow is None:
                overflow = t
            admitted = drain if lossless else rate
            if recovery is not None and not lossless:
                last_loss = 1.0 - drain / rate
                admitted = rate * loss_recovery.goodput_fraction(
                    last_loss, recovery.window_packets, recovery.scheme)
            dt = min(unsent / admitted, horizon)
            if lossless:
                # Fluid pausing: every sender's link stands still this share of the time.
                paused += dt * (1 - drain / rate)
            else:
                dropped += (rate - drain) * dt
                wasted += (rate - admitted) * dt
            queue = buffer_bytes
        else:
            growth = rate - drain if (queue > 0 or rate > drain) else 0.0
            events = [unsent / rate, horizon]
            if growth > 0:
                events.append((buffer_bytes - queue) / growth)
            elif growth < 0:
                events.append(queue / -growth)
            dt = min(events)
            queue = min(buffer_bytes, max(0.0, queue + growth * dt))
            admitted = rate
        unsent -= admitted * dt
        peak = max(peak, queue)
        t += dt
    send_end = t
    # The port carries at most ``drain``: however the steps above rounded (a rate many
    # decades above the drain leaves a sum of tiny steps), never done before total/drain.
    done = max(t + queue / drain, total_bytes / drain)
    if dropped <= 0 or overflow is None:
        return QueueRun(done, send_end, peak, overflow, dropped, paused)
    if recovery is None:
        done = max(done, overflow + retransmission_timeout) + dropped / drain
        return QueueRun(done, send_end, peak, overflow, dropped, paused, dropped)
    tail = send_end + recovery.tail_timeout_s if _tail_lost(last_loss, recovery) else 0.0
    end = max(done, tail) + recovery.loop_s
    return QueueRun(end, send_end, peak, overflow, dropped, paused, wasted,
                    max(0.0, tail - done))


def dcqcn_schedule(
    offered: float,
    drain: float,
    ecn_threshold: float,
    feedback_delay: float,
    cnp_interval: float,
) -> list[tuple[float, float]]:
    """Aggregate sending rate over time under DCQCN's multiplicative decrease.

    The queue first reaches the marking threshold K at t_K = K / (offered - drain);
    the first cut lands a feedback delay later, and each further cut one CNP interval
    after the previous (Zhu et al. 2015: at most one CNP per flow per 50 µs). Each cut
    halves the rate (alpha = 1); after the cut that reaches the fair share the rate is
    held at ``drain`` (the paper's recovery phases are not modelled).
    """
    if offered <= drain:
        return [(0.0, offered)]
    schedule = [(0.0, offered)]
    when = ecn_threshold / (offered - drain) + feedback_delay
    rate = offered
    while rate > drain:
        rate /= 2.0
        schedule.append((when, max(rate, drain)))
        when += cnp_interval
    return schedule


def incast_run(
    senders: int,
    bytes_per_sender: float,
    sender_rate: float,
    *,
    drain: float,
    buffer_bytes: float,
    mode: str,
    ecn_threshold: float = 0.0,
    feedback_delay: float = 0.0,
    cnp_interval: float = 50e-6,
    retransmission_timeout: float = 0.2,
    recovery: str | None = None,
    round_trip_s: float = 0.0,
    tail_timeout_s: float = math.inf,
    packet_bytes: float = loss_recovery.DEFAULT_PACKET_BYTES,
) -> QueueRun:
    """``senders`` each send ``bytes_per_sender`` at ``sender_rate`` into one port.

    ``recovery``: None for TCP's way (resend after ``retransmission_timeout``), or an
    RDMA scheme of loss_recovery.SCHEMES, repaired by NAKs within a loop of
    ``round_trip_s`` plus the full buffer's drain time, a lost tail after
    ``tail_timeout_s``; W = one flow's rate x that loop / ``packet_bytes``.
    """
    nak: NakRecovery | None = None
    if recovery is not None:
        loop = round_trip_s + buffer_bytes / drain
        nak = NakRecovery(recovery, loop, max(1.0, sender_rate * loop / packet_bytes),
                          tail_timeout_s, senders)
    offered = senders * sender_rate
    total = senders * bytes_per_sender
    if mode == "dcqcn":
        schedule = dcqcn_schedule(offered, drain, ecn_threshold, feedback_delay,
                                  cnp_interval)
    else:
        schedule = [(0.0, offered)]
    return fluid_port(total, schedule, drain, buffer_bytes, lossless=mode != "none",
                      retransmission_timeout=retransmission_timeout, recovery=nak)
