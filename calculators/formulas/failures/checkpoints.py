"""Checkpoints: what one holds per parameter, how long it takes to persist and to
snapshot, and what it costs training when saved synchronously or asynchronously
(snapshot, then persist). Times in seconds, sizes in bytes, bandwidths in bytes per
second."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from calculators.formulas.parallel.memory import StateBytes


def checkpoint_bytes_per_param(per_param: StateBytes) -> float:
    """What a checkpoint keeps per parameter: the weights and the optimizer state
    (including the FP32 master copy), not the gradients, which the next step
    recomputes. BF16 mixed precision with AdamW: 2 + 12 = 14 B (ZeRO's K = 12,
    Rajbhandari et al. 2020, Sec. 3.1). A framework that keeps only FP32 parameters
    (FSDP's sharded master weights) saves 12. A low-precision recipe's quantized weight
    copies are remade from the 16-bit weights, so they are not saved."""
    return per_param.weights - per_param.quantized + per_param.optimizer


def _positive(name: str, value: float) -> None:
    if not value > 0 or math.isinf(value):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


def _non_negative(name: str, value: float) -> None:
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"{name} must be zero or a positive finite number, got {value!r}")


def checkpoint_write_time_s(
    checkpoint_bytes: float,
    nodes: int,
    node_write_bytes_per_s: float,
    storage_bytes_per_s: float,
) -> float:
    """Time to persist a checkpoint written by all nodes at once: bytes over the smaller
    of the nodes' summed write bandwidth and the storage's aggregate cap (Llama 3,
    Sec. 3.3.1: Tectonic sustains 2 TB/s, peaks at 7 TB/s)."""
    _positive("checkpoint_bytes", checkpoint_bytes)
    if nodes < 1:
        raise ValueError(f"nodes must be >= 1, got {nodes!r}")
    _positive("node_write_bytes_per_s", node_write_bytes_per_s)
    _positive("storage_bytes_per_s", storage_bytes_per_s)
    # One group of writers: bytes / min(nodes x bandwidth, cap).
    return sharded_transfer_time_s(
        (Writers(nodes, checkpoint_bytes, node_write_bytes_per_s),), storage_bytes_per_s)


@dataclass(frozen=True)
class Writers:
    """``count`` hosts that hold ``bytes_total`` of a checkpoint between them, in equal
    shares, each moving its share to or from storage at ``bytes_per_s``: the smaller of
    its link to storage and its NIC (a parameter server's one port carries its tables)."""

    count: int
    bytes_total: float
    bytes_per_s: float

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"count must be >= 1, got {self.count!r}")
        _non_negative("bytes_total", self.bytes_total)
        _positive("bytes_per_s", self.bytes_per_s)

    @property
    def alone_s(self) -> float:
        """Time for this group to move its bytes with the storage never in the way."""
        return self.bytes_total / (self.count * self.bytes_per_s)


def sharded_transfer_time_s(groups: tuple[Writers, ...], storage_bytes_per_s: float) -> float:
    """Time to write (or read back) a checkpoint sharded over groups of hosts that move
    their shares at once: max(total / storage cap, each group's bytes / its summed
    bandwidth). Derivation (a fluid bound, and reached): no schedule beats either term;
    running every group at its bytes / T, with T that maximum, keeps each group within
    its links and the sum within the cap. With one group (``checkpoint_write_time_s``)
    it is bytes / min(hosts x bandwidth, cap)."""
    if not groups:
        raise ValueError("give at least one group of writers")
    _positive("storage_bytes_per_s", storage_bytes_per_s)
    total = math.fsum(group.bytes_total for group in groups)
    _positive("checkpoint bytes", total)
    return max(total / storage_bytes_per_s, *(group.alone_s for group in groups))


def snapshot_time_s(checkpoint_bytes: float, gpus: int, gpu_to_host_bytes_per_s: float) -> float:
    """Time to copy each GPU's shard of the checkpoint to host memory, every GPU over
    its own PCIe link at once (``gpu_to_host_bytes_per_s`` per GPU, device to host):
    what an asynchronous save blocks training for (CheckFreq's snapshot phase, Mohan
    et al. 2021; PyTorch DCP ``async_save`` stages to CPU memory the same way)."""
    _positive("checkpoint_bytes", checkpoint_bytes)
    if gpus < 1:
        raise ValueError(f"gpus must be >= 1, got {gpus!r}")
    _positive("gpu_to_host_bytes_per_s", gpu_to_host_bytes_per_s)
    return checkpoint_bytes / gpus / gpu_to_host_bytes_per_s


@dataclass(frozen=True)
class CheckpointCost:
    """What one checkpoint costs: ``stall_s`` blocks training (Daly's δ); ``persist_s``
    passes before it is durable; ``extra_lost_s`` is the added rework per failure because
    the newest checkpoint may not be durable yet (add it to the recovery time)."""

    stall_s: float
    persist_s: float
    extra_lost_s: float


def checkpoint_cost(write_s: float, snapshot_s: float, asynchronous: bool) -> CheckpointCost:
    """Synchronous: training waits for the whole write. Asynchronous (e.g. PyTorch DCP
    async_save): training waits only for the snapshot, then the write runs in the
    background. Derivation of the async rework: a failure within the write window (about
    ``write_s`` of each segment) rolls back one more checkpoint, adding about a segment
    of work with probability write_s / segment: on average ``write_s`` per failure."""
    _non_negative("write_s", write_s)
    _non_negative("snapshot_s", snapshot_s)
    if asynchronous:
        return CheckpointCost(snapshot_s, snapshot_s + write_s, write_s)
    return CheckpointCost(write_s, write_s, 0.0)


def async_interval_ok(interval_s: float, cost: CheckpointCost) -> bool:
    """An asynchronous save must be durable before the next one starts: the segment
    τ + stall must cover the persist time, or saves queue up (or the interval grows)."""
    return interval_s + cost.stall_s >= cost.persist_s
