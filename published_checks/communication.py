"""Communication (docs/communication.md): nccl-tests' bus-bandwidth factors, a measured
multi-node allreduce, and the TCP retransmission timeout that sets incast's tail."""

from __future__ import annotations

from calculators.formulas.fabric import loss_recovery
from published_checks import Check

_PERFORMANCE_MD = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"


def _tcp_min_rto_s() -> float:
    """The delay before TCP resends a lost segment with no duplicate ACKs to tell it:
    1 MiB at 1 Gb/s, 100 us round trip."""
    return loss_recovery.tcp_min_rto_recovery(2**20, 1e9 / 8, 100e-6).delay_s


CHECKS: tuple[Check, ...] = (
    Check(
        id="nccl-allreduce-bus-factor",
        chapter="communication.md",
        claim="Allreduce on 8 ranks: bus bandwidth over algorithm bandwidth, 2(n-1)/n",
        source="nccl-tests, doc/PERFORMANCE.md, \"Summary\": busbw = algbw x 2(n-1)/n "
               "(the factor at n = 8 is ours)",
        url=_PERFORMANCE_MD, derived=True,
        calculator="collective_time", inputs={"collective": "allreduce", "ranks": 8},
        output="bus_factor", published=1.75, rel_tol=1e-9,
        why_tolerance="2 x 7 / 8 is exactly 1.75",
    ),
    Check(
        id="nccl-alltoall-bus-factor",
        chapter="communication.md",
        claim="Alltoall on 8 ranks: the same factor, (n-1)/n",
        source="nccl-tests, doc/PERFORMANCE.md, \"Summary\": busbw = algbw x (n-1)/n "
               "(the factor at n = 8 is ours)",
        url=_PERFORMANCE_MD, derived=True,
        calculator="collective_time", inputs={"collective": "alltoall", "ranks": 8},
        output="bus_factor", published=0.875, rel_tol=1e-9,
        why_tolerance="7 / 8 is exactly 0.875",
    ),
    Check(
        id="nccl-tests-issue-212-busbw",
        chapter="communication.md",
        claim="Allreduce of 1 GiB on 8 H100s over NVLink (450 GB/s each way) at the "
              "default 80% efficiency: bus bandwidth",
        source="NVIDIA/nccl-tests issue #212 (2024), NVIDIA's maintainer: about 370 GB/s "
               "ring busbw on H100",
        url="https://github.com/NVIDIA/nccl-tests/issues/212",
        calculator="collective_time",
        inputs={"collective": "allreduce", "ranks": 8, "message_bytes": "1GiB"},
        output="busbw", published=370e9, rel_tol=0.05,
        why_tolerance="a measurement (\"about\") against line rate times an assumed "
                      "efficiency: within 5%",
    ),
    Check(
        id="nccl-tests-issue-149-busbw",
        chapter="communication.md",
        claim="Ring allreduce of 8 GiB on 8 A100s (12 NVLinks, 300 GB/s each way) at 80% "
              "efficiency: bus bandwidth",
        source="NVIDIA/nccl-tests issue #149 (2023): about 230 GB/s busbw at 8 GB",
        url="https://github.com/NVIDIA/nccl-tests/issues/149",
        calculator="collective_time",
        inputs={"collective": "allreduce", "algorithm": "ring", "ranks": 8,
                "message_bytes": "8GiB", "bandwidth": "300GB/s", "latency": "2us"},
        output="busbw", published=230e9, rel_tol=0.05,
        why_tolerance="a measurement (\"about\") against line rate times an assumed "
                      "efficiency: within 5%",
    ),
    Check(
        id="nccl-tests-issue-119-busbw",
        chapter="communication.md",
        claim="Allreduce of 128 MiB over 3 nodes of 8 A100s with 4 HDR NICs each "
              "(12.5 GB/s of NIC per GPU), at 96% of line rate: bus bandwidth",
        source="NVIDIA/nccl-tests issue #119: 96 GB/s busbw at the peak (128 MB), "
               "84.8 GB/s on average, 100 GB/s expected",
        url="https://github.com/NVIDIA/nccl-tests/issues/119",
        calculator="collective_time",
        inputs={"ranks": 24, "ranks_per_node": 8, "intra_node_bandwidth": "300GB/s",
                "inter_node_bandwidth": "12.5GB/s", "efficiency": 0.96,
                "message_bytes": "128MiB"},
        output="busbw", published=96e9, rel_tol=0.05,
        why_tolerance="a measurement on one cluster, against a model of line rate times "
                      "an assumed 96% efficiency: within 5% of the peak",
    ),
    Check(
        id="linux-tcp-min-rto",
        chapter="communication.md",
        claim="TCP's shortest retransmission timeout on Linux: the wait before a lost "
              "last segment is sent again",
        source="Linux, include/net/tcp.h: TCP_RTO_MIN = HZ/5 (200 ms), the floor behind "
               "TCP incast collapse (Vasudevan et al., SIGCOMM 2009)",
        url="https://github.com/torvalds/linux/blob/master/include/net/tcp.h",
        formula=_tcp_min_rto_s,
        formula_name="loss_recovery.tcp_min_rto_recovery(1 MiB, 1 Gb/s, 100 µs).delay_s",
        published=0.2, rel_tol=0.0, unit="s", why_tolerance="a kernel constant: exact",
    ),
)
