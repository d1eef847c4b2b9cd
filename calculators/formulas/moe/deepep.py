"""DeepEP's dispatch and combine kernels as the guide prices them: the bytes each link
carries per GPU, the time that sets, and the link speeds that time is calibrated with
(catalogues.deepep holds the published measurements).

**Normal kernels** (training and prefill; DeepSeek-V3 report, Sec. 3.2.2). A token goes
once over InfiniBand to each remote node holding its experts (at most M nodes), to the
GPU with its own index there, which forwards it over NVLink once to each GPU holding its
experts (formulas.moe.step_costs.per_node_copies counts both). Both links run at once,
so a call takes the longer of the two: bytes over achieved bandwidth. Two physical
parameters, each the share of a line rate the kernels reach, come from one row each:

- NVLink: the intranode EP 8 row (153 GB/s dispatch, 158 combine); the row counts the
  copies a GPU sends itself, 1/8 of them, which cross no link: 155.5 x 7/8 of 200 GB/s.
- RDMA: the internode EP 64 row (51 and 50 GB/s), DeepSeek-V3's own EP size; the row
  counts the copies to the token's own node too: 50.5 x (n - 1)/n of 50 GB/s. The model
  finds EP 64 network-bound (its NVLink needs less than its share).

The EP 16 and EP 32 rows are then predictions (validated in published_checks.moe): at
EP 16 the model finds the NVLink forwarding the bottleneck, at EP 32 the NIC.

**Low-latency kernels** (decoding): every (token, expert) copy goes straight to its
expert's GPU, over NVLink inside the node, over RDMA otherwise, with no deduplication, and
a fixed cost per call. Time = latency + bytes over the same achieved bandwidths; the
latency of each kernel comes from the EP 8 row (NVLink only); every other row is a
prediction.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import cache

from calculators.catalogues import deepep as published
from calculators.formulas.moe.step_costs import Copies, direct_copies, per_node_copies

KINDS = ("dispatch", "combine")


@dataclass(frozen=True)
class Calibration:
    """Shares of the line rates DeepEP's kernels reach, and each low-latency kernel's
    fixed time per call (s)."""

    nvlink_share: float
    rdma_share: float
    dispatch_latency_s: float
    combine_latency_s: float

    def latency_s(self, kind: str) -> float:
        """The fixed time of one low-latency ``kind`` call."""
        return self.dispatch_latency_s if kind == "dispatch" else self.combine_latency_s


def normal_copies(setting: published.KernelSetting, ep: int) -> Copies:
    """Copies per token per link under DeepEP's normal kernels in ``setting``: one per
    remote node, M = min(nodes, groups), and one per other GPU (per_node_copies)."""
    nodes = max(1, ep // setting.gpus_per_node)
    return per_node_copies(setting.experts, ep, setting.gpus_per_node, setting.top_k,
                           min(nodes, setting.max_groups) if nodes > 1 else None)


def _logical(setting: published.KernelSetting, ep: int, copies: Copies) -> tuple[float, float]:
    """(RDMA, NVLink) copies per token as DeepEP counts them: its own node's and its own
    GPU's included (catalogues.deepep): physical x n/(n - 1) and x g/(g - 1)."""
    g = min(ep, setting.gpus_per_node)
    nodes = ep // g
    rdma = copies.inter_node * nodes / (nodes - 1) if nodes > 1 else 0.0
    return rdma, copies.intra_node * g / (g - 1) if g > 1 else 0.0


def normal_time_s(setting: published.KernelSetting, ep: int, bytes_per_element: float,
                  calibration: Calibration) -> float:
    """One normal dispatch or combine: per GPU, the longer of T x copies x h x bytes over
    each link's achieved bandwidth (share x line rate)."""
    copies = normal_copies(setting, ep)
    per_copy = setting.tokens * setting.hidden * bytes_per_element
    return max(copies.intra_node * per_copy
               / (calibration.nvlink_share * setting.nvlink_bytes_per_s),
               copies.inter_node * per_copy / (calibration.rdma_share * setting.nic_bytes_per_s))


def normal_bottleneck_bandwidth(ep: int, kind: str, calibration: Calibration | None = None,
                                setting: published.KernelSetting = published.NORMAL_SETTING,
                                ) -> float:
    """The bandwidth DeepEP's normal-kernel table reports for ``ep``: the row's link's
    bytes as DeepEP counts them (NVLink inside a node, RDMA across) over the modelled
    time (B/s)."""
    calibration = calibration or calibrate()
    per_element = (setting.dispatch_bytes_per_element if kind == "dispatch"
                   else setting.combine_bytes_per_element)
    rdma, nvlink = _logical(setting, ep, normal_copies(setting, ep))
    counted = rdma if ep > setting.gpus_per_node else nvlink
    time = normal_time_s(setting, ep, per_element, calibration)
    return counted * setting.tokens * setting.hidden * per_element / time


def _message_bytes(setting: published.KernelSetting, kind: str) -> float:
    """One low-latency copy: FP8 elements with their scales and 16 bytes of metadata,
    or BF16 elements (DeepEP's test_low_latency.py)."""
    if kind == "dispatch":
        return (setting.hidden * setting.dispatch_bytes_per_element
                + setting.message_overhead_bytes)
    return setting.hidden * setting.combine_bytes_per_element


def _low_latency_transfer_s(setting: published.KernelSetting, ep: int, kind: str,
                            nvlink_share: float, rdma_share: float) -> float:
    """The bandwidth part of a low-latency call: every copy direct (direct_copies)."""
    copies = direct_copies(setting.top_k, ep, min(ep, setting.gpus_per_node))
    total = setting.tokens * _message_bytes(setting, kind)
    return max(copies.intra_node * total / (nvlink_share * setting.nvlink_bytes_per_s),
               copies.inter_node * total / (rdma_share * setting.nic_bytes_per_s))


def low_latency_time_s(ep: int, kind: str, calibration: Calibration | None = None,
                       setting: published.KernelSetting = published.LOW_LATENCY_SETTING,
                       ) -> float:
    """One low-latency call: its fixed latency plus its copies over the achieved links."""
    c = calibration or calibrate()
    return c.latency_s(kind) + _low_latency_transfer_s(setting, ep, kind, c.nvlink_share,
                                                       c.rdma_share)


def low_latency_bandwidth(ep: int, kind: str, calibration: Calibration | None = None,
                          setting: published.KernelSetting = published.LOW_LATENCY_SETTING,
                          ) -> float:
    """The bandwidth DeepEP's low-latency table reports: every copy's bytes over the
    call's time (B/s)."""
    total = setting.tokens * setting.top_k * _message_bytes(setting, kind)
    return total / low_latency_time_s(ep, kind, calibration, setting)


@cache
def calibrate() -> Calibration:
    """The four parameters from the published rows named in the module docstring (a
    mean of dispatch and combine where one link parameter serves both)."""
    s = published.NORMAL_SETTING
    intra, inter = published.normal_row(s.gpus_per_node), published.normal_row(64)
    shares = []
    for row in (intra, inter):
        counted = statistics.fmean((row.dispatch_bytes_per_s, row.combine_bytes_per_s))
        rdma, nvlink = _logical(s, row.ep, normal_copies(s, row.ep))
        copies = normal_copies(s, row.ep)
        physical = (copies.inter_node / rdma) if row.link == "RDMA" else (
            copies.intra_node / nvlink)
        rate = s.nic_bytes_per_s if row.link == "RDMA" else s.nvlink_bytes_per_s
        shares.append(counted * physical / rate)
    nvlink_share, rdma_share = shares
    low = published.LOW_LATENCY_SETTING
    first = published.low_latency_row(low.gpus_per_node)
    latency = [measured - _low_latency_transfer_s(low, first.ep, kind, nvlink_share,
                                                  rdma_share)
               for kind, measured in zip(KINDS, (first.dispatch_s, first.combine_s),
                                         strict=True)]
    return Calibration(nvlink_share, rdma_share, latency[0], latency[1])
