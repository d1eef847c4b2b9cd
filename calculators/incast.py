"""incast: a first-order fluid model of many senders into one switch port.

n senders start together at their line rate towards one receiver; the switch port
drains at the receiver's rate and queues the excess in its buffer. Three ways the
network reacts when the queue grows:

- none: a lossy drop-tail queue. Past the buffer, packets are dropped and are resent
  after a retransmission timeout; with TCP's 200 ms minimum that timeout, not the
  transfer, dominates (Vasudevan et al., SIGCOMM 2009; Chen et al., WREN 2009).
- pfc: priority flow control (IEEE 802.1Qbb). At the buffer limit the switch pauses
  its upstream links: nothing is lost, the senders wait, and the pause can spread to
  flows that are not part of the incast.
- dcqcn: ECN marks past a threshold K; the receiver NIC returns congestion
  notifications and each sender cuts its rate, at most once per CNP interval, by a
  factor 1 - alpha/2 = 1/2 while alpha is at its initial 1 (Zhu et al., SIGCOMM 2015,
  Sec. 3-4). PFC stays on as the backstop, as in that paper's deployment.

Left out: packets and their sizes, PFC headroom and the cable delay before a pause
takes effect, shared-buffer dynamic thresholds, DCQCN's marking probability and its
rate recovery (we let senders settle at their fair share after the last cut), other
traffic on the same ports, and retransmissions that overflow again.
"""

from __future__ import annotations

from calculators.core.spec import (
    Calculator,
    Choice,
    Computed,
    Inputs,
    Output,
    Param,
    Table,
    ValidationError,
)
from calculators.formulas.queueing import QueueRun, dcqcn_schedule, incast_run

__all__ = ["INCAST", "QueueRun", "dcqcn_schedule", "incast_run", "pattern_run"]

PATTERNS = ("incast", "alltoall_paced", "alltoall_synchronised")
MODES = ("none", "pfc", "dcqcn")


def pattern_run(inputs: Inputs, mode: str) -> tuple[QueueRun, float]:
    """One receiver port's run for the chosen pattern, and the alltoall-wide completion.

    incast: n senders at line rate into one port. alltoall_paced: every rank is the
    receiver of an n-to-1 incast at once, each sender splitting its link evenly over
    its n destinations (n simultaneous incasts at 1/n of line rate each).
    alltoall_synchronised: every sender targets the same receiver at once, one
    receiver after another: n full-rate incasts in sequence (the naive send order).
    """
    pattern = inputs.text("pattern")
    n = inputs.whole("senders")
    sender_rate = inputs.num("sender_link_bandwidth")
    per_destination = sender_rate / n if pattern == "alltoall_paced" else sender_rate
    run = incast_run(
        n, inputs.num("bytes_per_sender"), per_destination,
        drain=inputs.num("receiver_link_bandwidth"),
        buffer_bytes=inputs.num("switch_buffer_bytes"), mode=mode,
        ecn_threshold=inputs.num("ecn_threshold_bytes"),
        feedback_delay=inputs.num("feedback_delay"),
        cnp_interval=inputs.num("cnp_interval"),
        retransmission_timeout=inputs.num("retransmission_timeout"),
    )
    if pattern == "alltoall_synchronised":
        # Rounds hit different ports; a sender starts the next round once it has sent.
        return run, (n - 1) * run.send_end_s + run.completion_s
    return run, run.completion_s


def _incast(inputs: Inputs) -> Computed:
    pattern, mode = inputs.text("pattern"), inputs.text("flow_control")
    n, size = inputs.whole("senders"), inputs.num("bytes_per_sender")
    sender, receiver = inputs.num("sender_link_bandwidth"), inputs.num("receiver_link_bandwidth")
    threshold, buffer = inputs.num("ecn_threshold_bytes"), inputs.num("switch_buffer_bytes")
    if mode == "dcqcn" and threshold >= buffer:
        raise ValidationError(
            "ecn_threshold_bytes",
            f"{threshold:g} B is not allowed with dcqcn: it must be below "
            f"switch_buffer_bytes ({buffer:g} B), so that ECN marks before the buffer is full",
        )
    rounds = n if pattern == "alltoall_synchronised" else 1
    per_port_rate = sender if pattern != "alltoall_paced" else sender / n
    total = n * size
    # Lower bounds: the receiver port must take n S; each sender's link must carry its share.
    sender_bytes = n * size if pattern != "incast" else size
    ideal = max(total / receiver, sender_bytes / sender)
    runs = {m: pattern_run(inputs, m) for m in MODES}
    run, completion = runs[mode]
    notes: list[str] = []
    if mode == "dcqcn":
        first_cut = dcqcn_schedule(n * per_port_rate, receiver,
                                   inputs.num("ecn_threshold_bytes"),
                                   inputs.num("feedback_delay"), inputs.num("cnp_interval"))
        if len(first_cut) > 1 and runs["none"][0].send_end_s <= first_cut[1][0]:
            notes.append(
                f"At line rate the burst takes {runs['none'][0].send_end_s * 1e6:.3g} µs, "
                f"less than the {first_cut[1][0] * 1e6:.3g} µs before DCQCN's first rate "
                "cut: congestion control cannot react in time; only the buffer and PFC "
                "absorb it.")
    notes.append("First-order fluid model: no packets, no PFC headroom or cable delay, no "
                 "DCQCN rate recovery, no competing traffic (see the chapter).")
    rows = tuple(
        (m, f"{c * 1e6:.4g} µs", f"{r.peak_queue_bytes / 1e6:.4g} MB",
         f"{r.dropped_bytes * rounds / 1e6:.4g} MB", f"{r.pause_time_s * rounds * 1e6:.4g} µs")
        for m, (r, c) in runs.items()
    )
    return Computed(
        values={
            "fan_in_ratio": n * per_port_rate / receiver,
            "total_bytes_per_receiver": total,
            "ideal_completion_s": ideal,
            "completion_s": completion,
            "slowdown": completion / ideal,
            "peak_queue_bytes": run.peak_queue_bytes,
            "overflows": run.overflow_time_s is not None,
            "overflow_time_s": run.overflow_time_s,
            "dropped_bytes": run.dropped_bytes * rounds,
            "pause_time_s": run.pause_time_s * rounds,
        },
        notes=notes,
        table=Table(("flow control", "completion", "peak queue", "dropped", "pause per sender"),
                    rows, caption="The same traffic under each flow-control choice"),
    )


INCAST = Calculator(
    id="incast",
    advanced=("ecn_threshold_bytes", "feedback_delay", "cnp_interval", "retransmission_timeout"),
    title="Incast at a switch port: queue, drops, PFC pauses, DCQCN",
    summary="Fluid model of n senders into one port (or an alltoall as n incasts), with "
            "and without PFC / ECN back-pressure.",
    chapter="communication.md",
    params=(
        Param("pattern", "Traffic pattern", "choice", "incast",
              choices=(Choice("incast", "incast: n senders to one receiver"),
                       Choice("alltoall_paced", "alltoall, paced: n simultaneous incasts"),
                       Choice("alltoall_synchronised",
                              "alltoall, synchronised: n incasts one after another")),
              help="How the senders' bytes meet at receiver ports; see the chapter."),
        Param("senders", "Senders per receiver n", "int", 31, minimum=1, maximum=100_000,
              help="For an alltoall over p ranks, n = p - 1 peers."),
        Param("bytes_per_sender", "Bytes each sender sends to the receiver", "float",
              float(2**20), unit="B", minimum=1, maximum=1e13,
              help="For an alltoall, the block each rank sends to each peer."),
        Param("sender_link_bandwidth", "Sender link bandwidth", "float", 50e9, unit="B/s",
              minimum=1e6, maximum=1e14,
              help="400 Gb/s NIC = 50 GB/s per direction."),
        Param("receiver_link_bandwidth", "Receiver link bandwidth", "float", 50e9,
              unit="B/s", minimum=1e6, maximum=1e14,
              help="The switch port towards the receiver drains at this rate."),
        Param("switch_buffer_bytes", "Buffer the port can use", "float", 1e6, unit="B",
              minimum=1, maximum=1e12,
              help="An assumption: 1 MB. Shallow-buffer data-centre switches share tens "
                   "of MB across 32-64 ports (e.g. 42 MB on a 64 x 100G Tomahawk 2, "
                   "a secondary source); what one port may take depends on "
                   "the switch's dynamic thresholds."),
        Param("flow_control", "Flow control", "choice", "dcqcn",
              choices=(Choice("none", "none: lossy, drop-tail"),
                       Choice("pfc", "PFC: lossless pause"),
                       Choice("dcqcn", "ECN/DCQCN rate control + PFC")),
              help="DCQCN with PFC as backstop is the RoCE deployment of Zhu et al. 2015."),
        Param("ecn_threshold_bytes", "ECN marking threshold K", "float", 100e3, unit="B",
              minimum=0, maximum=1e12,
              help="An assumption: 100 KB. The DCQCN paper marked between Kmin = 5 KB and "
                   "Kmax = 200 KB at 40 Gb/s; operators scale K with link speed."),
        Param("feedback_delay", "Delay to the first rate cut", "float", 5e-6, unit="s",
              minimum=0, maximum=1,
              help="An assumption: 5 µs, a fabric round trip plus the NIC's CNP turnaround."),
        Param("cnp_interval", "Time between rate cuts", "float", 50e-6, unit="s",
              minimum=0, exclusive_minimum=True, maximum=1,
              help="DCQCN (Zhu et al. 2015): at most one CNP per flow every 50 µs."),
        Param("retransmission_timeout", "Retransmission timeout (lossy)", "float", 0.2,
              unit="s", minimum=0, maximum=100,
              help="TCP's 200 ms minimum RTO (Vasudevan et al. 2009, who argue for "
                   "microseconds). An RDMA NIC waits 4.096 µs x 2^timeout (InfiniBand)."),
    ),
    outputs=(
        Output("fan_in_ratio", "Fan-in: offered rate / port rate", "1", "fixed"),
        Output("total_bytes_per_receiver", "Bytes into each receiver", "B"),
        Output("ideal_completion_s", "Ideal completion (no loss, no idling)", "s"),
        Output("completion_s", "Modelled completion", "s"),
        Output("slowdown", "Completion / ideal", "1", "fixed"),
        Output("peak_queue_bytes", "Peak queue at the port", "B"),
        Output("overflows", "Buffer fills up", "", "bool"),
        Output("overflow_time_s", "Time until the buffer is full", "s"),
        Output("dropped_bytes", "Bytes dropped (lossy)", "B"),
        Output("pause_time_s", "Pause time per sender link (PFC)", "s"),
    ),
    function=_incast,
    sources=(
        "Zhu et al. 2015, Congestion Control for Large-Scale RDMA Deployments (DCQCN), "
        "SIGCOMM, Sec. 3-5",
        "Vasudevan et al. 2009, Safe and Effective Fine-grained TCP Retransmissions for "
        "Datacenter Communication, SIGCOMM",
        "Chen et al. 2009, Understanding TCP Incast Throughput Collapse in Datacenter "
        "Networks, WREN",
        "IEEE 802.1Qbb, Priority-based Flow Control",
    ),
)
