"""The fluid queue behind the incast calculator: one switch port, three reactions.

See ``calculators.incast`` for the model, its sources and what it leaves out. Kept
apart so that the calculator's declaration and the integration each stay short.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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


def fluid_port(
    total_bytes: float,
    schedule: list[tuple[float, float]],
    drain: float,
    buffer_bytes: float,
    *,
    lossless: bool,
    retransmission_timeout: float = 0.0,
) -> QueueRun:
    """Integrate one queue fed at the offered rate of ``schedule`` [(start time,
    aggregate rate)] until ``total_bytes`` have arrived and drained at ``drain``.

    At the buffer limit a lossless port admits only ``drain`` (the senders are paused
    for the rest: ``pause_time_s`` is how long each sender's link stood still); a lossy
    one drops the excess, which is resent after ``retransmission_timeout``.
    """
    t, queue, unsent = 0.0, 0.0, total_bytes
    peak, dropped, paused = 0.0, 0.0, 0.0
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
            dt = min(unsent / admitted, horizon)
            if lossless:
                # Fluid pausing: every sender's link stands still this share of the time.
                paused += dt * (1 - drain / rate)
            else:
                dropped += (rate - drain) * dt
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
    done = t + queue / drain
    if dropped > 0 and overflow is not None:
        done = max(done, overflow + retransmission_timeout) + dropped / drain
    return QueueRun(done, send_end, peak, overflow, dropped, paused)


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
) -> QueueRun:
    """``senders`` each send ``bytes_per_sender`` at ``sender_rate`` into one port."""
    offered = senders * sender_rate
    total = senders * bytes_per_sender
    if mode == "dcqcn":
        schedule = dcqcn_schedule(offered, drain, ecn_threshold, feedback_delay,
                                  cnp_interval)
    else:
        schedule = [(0.0, offered)]
    return fluid_port(total, schedule, drain, buffer_bytes, lossless=mode != "none",
                      retransmission_timeout=retransmission_timeout)
