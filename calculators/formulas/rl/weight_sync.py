"""Moving the updated policy from the trainer to the generators after each update.

Every generation engine needs the whole model in its own layout, so each of its GPUs
receives its shard, ``model bytes / engine GPUs``, and loads it into the inference engine.

- **Transfer.** Colocated, the training shards are on the same GPUs or in the same node:
  the shard crosses the scale-up links (NVLink). Otherwise it crosses the network:
  every receiving GPU takes its shard through its NIC, and the trainers send the model
  once into a pipelined broadcast (each trainer GPU its own shard), so the slower of
  the two sides sets the time (NCCL broadcast: busbw = algbw). The achieved share of
  each link is the collective model's (catalogues.link_speeds).
- **Reload.** Writing the received tensors into the engine's weights (resharding,
  format conversion, the engine's weight loaders) runs at its own rate: a fixed cost and
  bytes per second per GPU, fitted (``fit_reload``) to the single-engine rows of
  catalogues.weight_updates, two per accelerator: the measured time less the modelled
  transfer (inputs.rl.reload_for). Hopper parts without rows of their own (H100, H200)
  take the H800's: the same GPU and host path. Others take the H800's too, an
  assumption the page states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from calculators.formulas.collectives.achieved import Fabric

@dataclass(frozen=True)
class Reload:
    """The engine's weight-loading cost: fixed seconds plus bytes at a rate, per GPU."""

    fixed_s: float
    bytes_per_s: float
    accelerator: str  # whose measurements

    def seconds(self, bytes_per_gpu: float) -> float:
        return self.fixed_s + bytes_per_gpu / self.bytes_per_s


@dataclass(frozen=True)
class Sync:
    """One weight sync: bytes each generating GPU receives, and the time's two parts."""

    bytes_per_receiver: float
    transfer_s: float
    reload_s: float

    @property
    def total_s(self) -> float:
        return self.transfer_s + self.reload_s


def transfer_s(model_bytes: float, *, engine_gpus: int, trainer_gpus: int, fabric: Fabric,
               colocated: bool) -> float:
    """Seconds to move each engine GPU's shard to it (see the module docstring)."""
    per_receiver = model_bytes / engine_gpus
    if colocated and engine_gpus <= fabric.domain:
        return per_receiver / (fabric.intra_bandwidth * fabric.intra.ring_efficiency)
    per_sender = model_bytes / trainer_gpus
    return max(per_receiver, per_sender) / (
        fabric.inter_bandwidth * fabric.inter.ring_efficiency)


def fit_reload(points: list[tuple[float, float]], accelerator: str) -> Reload:
    """The reload through two measured points (bytes per receiving GPU, seconds left
    after the modelled transfer)."""
    (b1, t1), (b2, t2) = points
    rate = (b2 - b1) / (t2 - t1)
    return Reload(t1 - b1 / rate, rate, accelerator)


def weight_sync(model_bytes: float, *, engine_gpus: int, trainer_gpus: int,
                fabric: Fabric, colocated: bool, reload: Reload) -> Sync:
    """The sync of ``model_bytes`` to engines of ``engine_gpus`` GPUs from
    ``trainer_gpus`` trainer GPUs."""
    per_receiver = model_bytes / engine_gpus
    moved = transfer_s(model_bytes, engine_gpus=engine_gpus, trainer_gpus=trainer_gpus,
                       fabric=fabric, colocated=colocated)
    return Sync(per_receiver, moved, reload.seconds(per_receiver))
