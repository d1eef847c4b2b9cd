"""What a restart costs, part by part: from the moment a failure is noticed to the first
step at full speed again. Times in seconds.

A restart is not one fixed number. Its parts scale differently with the job:

- rescheduling and start-up (the scheduler allocates nodes, containers and processes
  start, the framework builds the model and its CUDA contexts): about fixed;
- NCCL communicator initialisation: grows with the GPU count. Its bootstrap allgather is
  a ring over TCP of N - 1 steps (NVIDIA/nccl PR #1791, Meta, 2025), and each rank
  exchanges its peer information with every other;
- reading the checkpoint back: its bytes over what storage and each host's link give
  (``checkpoints.sharded_transfer_time_s``);
- warm-up: the first steps after a restart run slow (kernel autotuning and compilation
  caches, CUDA graph capture, the data loader refilling its buffers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators.core.i18n import _


def _non_negative(name: str, value: float) -> None:
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"{name} must be zero or a positive finite number, got {value!r}")


def comm_init_s(gpus: int, per_gpu_s: float) -> float:
    """NCCL communicator initialisation of a job of ``gpus`` GPUs, linear in the count:
    the bootstrap ring's N - 1 latency-bound steps dominate at scale (NVIDIA/nccl PR
    #1791). A first-order model: NCCL releases since 2.23 (``ncclCommInitRankScalable``,
    several bootstrap roots) and Meta's NCCLX flatten the growth."""
    if gpus < 1:
        raise ValueError(f"gpus must be >= 1, got {gpus!r}")
    _non_negative("per_gpu_s", per_gpu_s)
    return gpus * per_gpu_s


@dataclass(frozen=True)
class RestartParts:
    """One restart's parts, in seconds, and their sum."""

    startup_s: float
    comm_init_s: float
    checkpoint_read_s: float
    warmup_s: float

    @property
    def total_s(self) -> float:
        return self.startup_s + self.comm_init_s + self.checkpoint_read_s + self.warmup_s

    def rows(self) -> tuple[tuple[str, float], ...]:
        """(part, seconds) in the order they happen."""
        return ((_("reschedule and start"), self.startup_s),
                (_("NCCL communicators"), self.comm_init_s),
                (_("read the checkpoint"), self.checkpoint_read_s),
                (_("warm-up"), self.warmup_s))


@dataclass(frozen=True)
class RestartModel:
    """The parts that do not depend on the checkpoint: a fixed start-up, NCCL's
    initialisation per GPU in the job, and a fixed warm-up."""

    startup_s: float
    comm_init_per_gpu_s: float
    warmup_s: float

    def __post_init__(self) -> None:
        _non_negative("startup_s", self.startup_s)
        _non_negative("comm_init_per_gpu_s", self.comm_init_per_gpu_s)
        _non_negative("warmup_s", self.warmup_s)

    def parts(self, gpus: int, checkpoint_read_s: float) -> RestartParts:
        """The restart of a job of ``gpus`` GPUs whose checkpoint reads back in
        ``checkpoint_read_s``."""
        _non_negative("checkpoint_read_s", checkpoint_read_s)
        return RestartParts(self.startup_s, comm_init_s(gpus, self.comm_init_per_gpu_s),
                            checkpoint_read_s, self.warmup_s)
