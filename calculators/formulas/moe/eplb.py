"""Redundant experts (DeepSeek's EPLB, expert-parallel load balancer): copies of the hottest
experts placed on other GPUs, so that a hot expert's tokens split between its copies, and
the copies packed onto GPUs by their measured loads.

DeepSeek-V3 report, Sec. 3.4.1 (prefilling): "we introduce a deployment strategy of
redundant experts, which duplicates high-load experts and deploys them redundantly ...
we set 32 redundant experts", with "each GPU ... one additional redundant expert" on
its EP 32; the set is recomputed from the serving statistics periodically (every ten
minutes). deepseek-ai/EPLB (``eplb.py``): the copies go one at a time to the expert with
the most load per copy, then the copies are packed so that GPUs carry equal loads.

The model, first order: expert loads normal with coefficient of variation cv (as
formulas.moe.step_costs has them), the E expected order statistics by Blom's
approximation; the greedy replication above; and the packing's guarantee, greedy list
scheduling's bound (Graham 1969): no GPU gets more than the mean plus the largest item,
here the largest load per copy. Without redundant experts nothing is packed: experts sit
where the EP layout puts them, and the busiest GPU is formulas.moe.step_costs's expected
maximum of independent GPU loads. The bound is an upper one: a packing usually does
better, and the loads it packs by are last period's, which it does not model.
"""

from __future__ import annotations

import heapq
import math

from calculators.formulas.moe.step_costs import (
    busiest_load_factor,
    expected_normal_order_statistic,
    gpu_load_cv,
)


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def largest_load_per_copy(load_cv: float, experts: int, redundant: int) -> float:
    """The largest load one copy carries, over the mean expert load, after ``redundant``
    copies go greedily to the expert with the most load per copy (EPLB's rule). The
    expected j-th largest of E normal loads: 1 + cv Phi^-1((E - j + 1 - 0.375)/(E + 0.25))
    (Blom 1958); only the R + 1 largest can matter."""
    _check(load_cv >= 0 and experts >= 1 and redundant >= 0, "cv >= 0, experts >= 1, R >= 0")
    top = min(experts, redundant + 1)
    loads = [1.0 + load_cv * expected_normal_order_statistic(experts, j)
             for j in range(1, top + 1)]
    heap = [(-load, load, 1) for load in loads]  # by load per copy, largest first
    heapq.heapify(heap)
    for _ in range(redundant):
        _, load, copies = heapq.heappop(heap)
        heapq.heappush(heap, (-load / (copies + 1), load, copies + 1))
    return -heap[0][0]


def busiest_gpu_factor(load_cv: float, experts: int, ep: int, redundant: int = 0) -> float:
    """The busiest GPU's load over the mean, for E experts over an EP group of P GPUs and
    R redundant copies in the group (see the module docstring): without copies, the
    expected maximum of P normal GPU loads; with them, the smaller of that and the packing
    bound 1 + (largest load per copy) P / E."""
    _check(ep >= 1 and experts % ep == 0, "the EP group must divide the experts")
    spread = busiest_load_factor(gpu_load_cv(load_cv, experts // ep), ep)
    if redundant == 0 or ep == 1:
        return spread
    packed = 1.0 + largest_load_per_copy(load_cv, experts, redundant) * ep / experts
    return min(spread, packed)


def copies_per_gpu(redundant: int, ep: int) -> int:
    """Redundant copies the fullest GPU of the EP group holds per MoE layer: ceil(R / P)."""
    _check(redundant >= 0 and ep >= 1, "R >= 0 and P >= 1")
    return math.ceil(redundant / ep)
