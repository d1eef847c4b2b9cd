"""DeepEP's published dispatch and combine measurements on H800 (deepseek-ai/DeepEP), the
kernels DeepSeek-V3's expert alltoall runs on: the figures, the setting each table was
measured in, and how DeepEP counts the bytes its bandwidths divide.

Source: deepseek-ai/DeepEP, ``docs/legacy.md`` (the V1 documentation, moved there from
``README.md`` on 2026-04-30), section "Performance": the table "Normal kernels with NVLink
and RDMA forwarding" (revised 2025-04-22, "Fix the performance data") and the table
"Low-latency kernels with pure RDMA" (revised 2025-06-05, after "Allow NVLink traffic for
low-latency kernels by default", 2025-05-23: inside a node the low-latency kernels use
NVLink, which is why EP 8 reports more than a NIC carries). Hardware, both tables: H800
(~160 GB/s NVLink), one ConnectX-7 400 Gb/s InfiniBand NIC per GPU (~50 GB/s).

How the figures are counted (DeepEP V1's ``tests/test_internode.py``, ``test_intranode.py``
and ``test_low_latency.py`` at the same revision): a normal kernel's "bottleneck
bandwidth" is the bytes of the link named in the row divided by the kernel's time, where
the RDMA bytes are one copy per token per distinct node holding its experts, the token's
own node included, and the NVLink bytes one copy per token per distinct GPU, the
receiving GPU's own tokens included ("logical" bandwidths, as DeepEP V2's README calls
them); FP8 bytes count the per-128-element FP32 scales, (1 + 4/128) bytes per element.
A low-latency figure is every (token, expert) copy's bytes (FP8: h + 4h/128 + 16; BF16:
2h) divided by the kernel's time. The test's router picks min(nodes, 4) groups of
experts, one group per node, then the top 8 experts among them, from random scores:
uniform routing, as formulas.moe.deepep models it.
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1e9
US = 1e-6

SOURCE = ("deepseek-ai/DeepEP, docs/legacy.md (formerly README.md), \"Performance\"")
URL = "https://github.com/deepseek-ai/DeepEP/blob/main/docs/legacy.md#performance"


@dataclass(frozen=True)
class KernelSetting:
    """What one table was measured with, per GPU per call."""

    tokens: int  # tokens per GPU per call
    hidden: int
    top_k: int
    experts: int  # routed experts of the EP group
    max_groups: int  # groups (one per node) a token's experts come from, at most
    gpus_per_node: int
    nvlink_bytes_per_s: float  # line rate per direction (catalogues.accelerators: H800)
    nic_bytes_per_s: float  # ConnectX-7 400 Gb/s
    dispatch_bytes_per_element: float
    combine_bytes_per_element: float
    #: Bytes a low-latency FP8 message adds to its elements (its scales' 4h/128 are in
    #: ``dispatch_bytes_per_element``; 16 bytes of metadata on top).
    message_overhead_bytes: float = 0.0


#: "4096 tokens per batch, 7168 hidden, top-4 groups, top-8 experts, FP8 dispatching and
#: BF16 combining" (the table's heading); 256 experts and min(nodes, 4) groups from the
#: test (``num_experts = (256 // num_ranks) * num_ranks``, ``num_topk_groups =
#: min(num_nodes, 4)``). H800 NVLink: 200 GB/s per direction (catalogues.accelerators).
NORMAL_SETTING = KernelSetting(
    tokens=4096, hidden=7168, top_k=8, experts=256, max_groups=4, gpus_per_node=8,
    nvlink_bytes_per_s=200 * GB, nic_bytes_per_s=50 * GB,
    dispatch_bytes_per_element=1.0 + 4.0 / 128, combine_bytes_per_element=2.0)

#: "128 tokens per batch, 7168 hidden, top-8 experts, FP8 dispatching and BF16 combining";
#: 288 experts in the test (their number does not change the bytes: every copy travels).
LOW_LATENCY_SETTING = KernelSetting(
    tokens=128, hidden=7168, top_k=8, experts=288, max_groups=10_000, gpus_per_node=8,
    nvlink_bytes_per_s=200 * GB, nic_bytes_per_s=50 * GB,
    dispatch_bytes_per_element=1.0 + 4.0 / 128, combine_bytes_per_element=2.0,
    message_overhead_bytes=16.0)


@dataclass(frozen=True)
class NormalRow:
    """One row of the normal kernels' table: the EP size and the dispatch and combine
    bottleneck bandwidths (B/s) on the link the row names ("NVLink" or "RDMA")."""

    ep: int
    link: str
    dispatch_bytes_per_s: float
    combine_bytes_per_s: float


@dataclass(frozen=True)
class LowLatencyRow:
    """One row of the low-latency kernels' table: time per call and bandwidth of each."""

    ep: int
    dispatch_s: float
    dispatch_bytes_per_s: float
    combine_s: float
    combine_bytes_per_s: float


#: "Normal kernels with NVLink and RDMA forwarding" (Intranode: EP 8; Internode: 16-64).
NORMAL: tuple[NormalRow, ...] = (
    NormalRow(8, "NVLink", 153 * GB, 158 * GB),
    NormalRow(16, "RDMA", 43 * GB, 43 * GB),
    NormalRow(32, "RDMA", 58 * GB, 57 * GB),
    NormalRow(64, "RDMA", 51 * GB, 50 * GB),
)

#: "Low-latency kernels with pure RDMA".
LOW_LATENCY: tuple[LowLatencyRow, ...] = (
    LowLatencyRow(8, 77 * US, 98 * GB, 114 * US, 127 * GB),
    LowLatencyRow(16, 118 * US, 63 * GB, 195 * US, 74 * GB),
    LowLatencyRow(32, 155 * US, 48 * GB, 273 * US, 53 * GB),
    LowLatencyRow(64, 173 * US, 43 * GB, 314 * US, 46 * GB),
    LowLatencyRow(128, 192 * US, 39 * GB, 369 * US, 39 * GB),
    LowLatencyRow(256, 194 * US, 39 * GB, 360 * US, 40 * GB),
)


def normal_row(ep: int) -> NormalRow:
    """The normal kernels' row for ``ep``."""
    return next(r for r in NORMAL if r.ep == ep)


def low_latency_row(ep: int) -> LowLatencyRow:
    """The low-latency kernels' row for ``ep``."""
    return next(r for r in LOW_LATENCY if r.ep == ep)
