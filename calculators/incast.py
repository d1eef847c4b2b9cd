"""incast: a first-order fluid model of many senders into one switch port.

n senders start together at their line rate towards one receiver; the switch port
drains at the receiver's rate and queues the excess in its buffer. Three ways the
network reacts when the queue grows:

- none: a lossy drop-tail queue. Past the buffer, packets are dropped. An RDMA NIC
  hears of a drop from a NAK about a round trip later and repairs it by go-back-N or
  selective repeat (Mittal et al., IRN, SIGCOMM 2018); only a lost tail waits for the
  hardware timer. The labelled TCP variant resends after a retransmission timeout; with
  TCP's 200 ms minimum that timeout, not the transfer, dominates (Vasudevan et al.,
  SIGCOMM 2009; Chen et al., WREN 2009).
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
traffic on the same ports, and (TCP variant) retransmissions that overflow again. The
RDMA variants treat loss at a full port as independent per packet (the ARQ argument of
formulas.fabric.loss_recovery), which real drop-tail bursts are not.
"""

from __future__ import annotations

from calculators.core import units
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import N_, _
from calculators.core.spec import Choice, Output, Param, ValidationError, When
from calculators.formulas.fabric.loss_recovery import NCCL_IB_TIMEOUT_DEFAULT, ib_ack_timeout_s
from calculators.formulas.fabric.queueing import QueueRun, dcqcn_schedule, incast_run

__all__ = ["INCAST", "QueueRun", "dcqcn_schedule", "incast_run", "pattern_run"]

PATTERNS = ("incast", "alltoall_paced", "alltoall_synchronised")
MODES = ("none", "pfc", "dcqcn")
#: How a lossy port's drops are repaired: RDMA NAK recovery, or TCP's timeout.
RECOVERIES = {
    "go_back_n": "RDMA go-back-N (RoCE / InfiniBand RC as specified)",
    "selective_repeat": "RDMA selective repeat (IRN-style NIC)",
    "tcp_rto": "TCP: resend after the retransmission timeout",
}
#: The InfiniBand local ACK timeout at NCCL's default exponent (NCCL_IB_TIMEOUT = 20):
#: 4.096 us x 2^20 = 4.29 s (formulas.fabric.loss_recovery).
DEFAULT_ACK_TIMEOUT_S = ib_ack_timeout_s(NCCL_IB_TIMEOUT_DEFAULT)


def pattern_run(inputs: Inputs, mode: str,
                recovery: str | None = None) -> tuple[QueueRun, float]:
    """One receiver port's run for the chosen pattern, and the alltoall-wide completion.

    incast: n senders at line rate into one port. alltoall_paced: every rank is the
    receiver of an n-to-1 incast at once, each sender splitting its link evenly over
    its n destinations (n simultaneous incasts at 1/n of line rate each).
    alltoall_synchronised: every sender targets the same receiver at once, one
    receiver after another: n full-rate incasts in sequence (the naive send order).
    ``recovery`` (lossy mode only): one of ``RECOVERIES``; default the chosen input.
    """
    scheme = recovery or inputs.text("loss_recovery")
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
        recovery=None if scheme == "tcp_rto" else scheme,
        round_trip_s=inputs.num("round_trip_time"),
        tail_timeout_s=inputs.num("rdma_ack_timeout"),
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
            _("{threshold:g} B is not allowed with dcqcn: it must be below switch_buffer_bytes "
              "({buffer:g} B), so that ECN marks before the buffer is full").format(
                threshold=threshold, buffer=buffer),
        )
    rounds = n if pattern == "alltoall_synchronised" else 1
    per_port_rate = sender if pattern != "alltoall_paced" else sender / n
    total = n * size
    # Lower bounds: the receiver port must take n S; each sender's link must carry its share.
    sender_bytes = n * size if pattern != "incast" else size
    ideal = max(total / receiver, sender_bytes / sender)
    runs = {m: pattern_run(inputs, m) for m in MODES}
    lossy = {r: pattern_run(inputs, "none", r) for r in RECOVERIES}
    run, completion = runs[mode]
    notes: list[str] = []
    if mode == "none" and run.dropped_bytes > 0:
        notes.append(_loss_note(inputs, run))
    if mode == "dcqcn":
        first_cut = dcqcn_schedule(n * per_port_rate, receiver,
                                   inputs.num("ecn_threshold_bytes"),
                                   inputs.num("feedback_delay"), inputs.num("cnp_interval"))
        burst_s = size / per_port_rate  # each sender's bytes at its line rate
        if len(first_cut) > 1 and burst_s <= first_cut[1][0]:
            notes.append(_(
                "At line rate the burst takes {burst:.3g} µs, less than the {cut:.3g} µs "
                "before DCQCN's first rate cut: congestion control cannot react in time; "
                "only the buffer and PFC absorb it.").format(
                burst=burst_s * 1e6, cut=first_cut[1][0] * 1e6))
    notes.append(_("First-order fluid model: no packets, no PFC headroom or cable delay, no "
                   "DCQCN rate recovery, no competing traffic (see the chapter)."))
    labelled = [(f"none, {_(ROW_LABELS[r])}", lossy[r]) for r in RECOVERIES]
    labelled += [(m, runs[m]) for m in MODES if m != "none"]
    rows = tuple(
        (label, units.format_value(c, "s", "si"), f"{r.peak_queue_bytes / 1e6:.4g} MB",
         units.format_value(r.dropped_bytes * rounds, "B", "si"),
         units.format_value(r.resent_bytes * rounds, "B", "si"),
         units.format_value(r.pause_time_s * rounds, "s", "si"))
        for label, (r, c) in labelled
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
            "resent_bytes": run.resent_bytes * rounds,
            "tail_wait_s": run.tail_wait_s,
        },
        notes=notes,
        table=Table((_("flow control"), _("completion"), _("peak queue"), _("dropped"),
                     _("sent again"), _("pause per sender")), rows,
                    caption=_("The same traffic under each flow-control choice and, without "
                              "flow control, each way of recovering from loss")),
    )


ROW_LABELS = {"go_back_n": N_("go-back-N"), "selective_repeat": N_("selective repeat"),
              "tcp_rto": N_("TCP RTO")}


def _loss_note(inputs: Inputs, run: QueueRun) -> str:
    """What the chosen loss recovery cost, in words."""
    scheme = inputs.text("loss_recovery")
    if scheme == "tcp_rto":
        return _("TCP's way: the dropped bytes wait {timeout:g} s, then are resent; the "
                 "timer, not the transfer, sets the time.").format(
            timeout=inputs.num("retransmission_timeout"))
    tail = run.tail_wait_s > 0
    if scheme == "go_back_n":
        words = (_("RDMA NAKs report drops within a round trip; go-back-N resends everything "
                   "after each gap, so most of what the port forwards is discarded. Bytes "
                   "sent again: {resent}. A lost tail waited {wait} for the RDMA timer.")
                 if tail else
                 _("RDMA NAKs report drops within a round trip; go-back-N resends everything "
                   "after each gap, so most of what the port forwards is discarded. Bytes "
                   "sent again: {resent}."))
    else:
        words = (_("RDMA NAKs report drops within a round trip; selective repeat resends "
                   "only what was dropped, so the port forwards only useful bytes. Bytes "
                   "sent again: {resent}. A lost tail waited {wait} for the RDMA timer.")
                 if tail else
                 _("RDMA NAKs report drops within a round trip; selective repeat resends "
                   "only what was dropped, so the port forwards only useful bytes. Bytes "
                   "sent again: {resent}."))
    return words.format(resent=units.format_value(run.resent_bytes, "B", "si"),
                        wait=units.format_value(run.tail_wait_s, "s", "si"))


INCAST = Calculator(
    id="incast",
    headline=("completion_s", "slowdown", "peak_queue_bytes"),
    advanced=("ecn_threshold_bytes", "feedback_delay", "cnp_interval", "retransmission_timeout",
              "round_trip_time", "rdma_ack_timeout"),
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
        Param("loss_recovery", "Loss recovery (no flow control)", "choice", "go_back_n",
              choices=tuple(Choice(k, v) for k, v in RECOVERIES.items()),
              when=When("flow_control", ("none",)),
              help="How dropped bytes come back when flow control is none. RDMA NICs "
                   "learn of a drop from a NAK about a round trip later: go-back-N (RoCE "
                   "and InfiniBand RC) resends from the gap on, selective repeat only the "
                   "lost packets (Mittal et al., IRN, SIGCOMM 2018). TCP waits for its "
                   "retransmission timeout (the labelled variant)."),
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
        Param("retransmission_timeout", "TCP retransmission timeout", "float", 0.2,
              unit="s", minimum=0, maximum=100,
              help="For TCP loss recovery: Linux's 200 ms minimum RTO (TCP_RTO_MIN, "
                   "include/net/tcp.h; Vasudevan et al. 2009, who argue for microseconds)."),
        Param("round_trip_time", "Fabric round trip (NAK loop)", "float", 5e-6, unit="s",
              minimum=0, maximum=1,
              help="An assumption: 5 µs, as the feedback delay: a few switch hops and the "
                   "NICs' turnaround. A NAK also waits behind the full buffer (buffer / "
                   "port rate), which the model adds."),
        Param("rdma_ack_timeout", "RDMA timer for a lost tail", "float",
              DEFAULT_ACK_TIMEOUT_S, unit="s", minimum=0, exclusive_minimum=True,
              maximum=1e4,
              help="A lost last packet has nothing behind it to trigger a NAK; it waits "
                   "for the InfiniBand local ACK timeout, 4.096 µs x 2^n (rdma_set_ack_"
                   "timeout). NCCL sets n = 20 (NCCL_IB_TIMEOUT): 4.29 s. Huawei's HCCL "
                   "allows n from 5 (131 µs); NVIDIA's adaptive retransmission retries "
                   "sooner than the configured timer (firmware minimum base 4 µs)."),
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
        Output("resent_bytes", "Bytes sent again (lossy)", "B"),
        Output("tail_wait_s", "Wait on a lost tail's timer (RDMA)", "s"),
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
        "Mittal et al. 2018, Revisiting Network Support for RDMA (IRN), SIGCOMM: "
        "go-back-N against selective repeat on RDMA NICs",
        "NVIDIA/nccl src/transport/net_ib (NCCL_IB_TIMEOUT = 20); Linux "
        "rdma_set_ack_timeout(): 4.096 us x 2^timeout",
    ),
)
