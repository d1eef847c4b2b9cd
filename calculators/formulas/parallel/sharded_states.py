"""What ZeRO/FSDP sharding does to a GPU's memory beyond dividing the states: the
gathered weights stage 3 holds while a unit runs, and the smallest shard group at which
a breakdown fits. formulas.parallel.memory uses the first and re-exports it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol

from calculators.formulas.model.architecture import layer_params, total_params

if TYPE_CHECKING:
    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.model.model_states import StateBytes


class StateParts(Protocol):
    """What ``min_dp_to_fit`` reads of a memory breakdown (formulas.parallel.memory)."""

    @property
    def weights(self) -> float: ...
    @property
    def gradients(self) -> float: ...
    @property
    def optimizer(self) -> float: ...
    @property
    def total(self) -> float: ...


def gathered_weight_bytes(arch: Architecture, tp: int, per_param: StateBytes,
                          shard: int, *, with_output: bool = False,
                          params: float | None = None) -> float:
    """ZeRO-3 / FSDP: the gathered weights of the unit running and of the one being
    prefetched (FSDP's one-unit prefetch, Zhao et al. 2023, Sec. 3.3), less the shard
    of them the GPU holds anyway: nothing when nothing is sharded. The units are the
    layers and, on the GPU that holds it (``with_output``), the output layer, V x h
    weights split over TP, which with a large vocabulary outweighs a layer (Llama 3 8B:
    1.05 GB against 0.44 in BF16), gathered with the last layer prefetched. ``params``,
    an override of the model's count, scales the units as it scales the states (spread
    as ``arch`` spreads its own): otherwise stage 3 could need more than stage 2. Never
    more than the whole model (a one-layer model has no next layer to prefetch)."""
    layer = layer_params(arch)
    units = max(2.0 * layer, layer + arch.vocab * arch.hidden) if with_output else 2.0 * layer
    whole = float(max(1, total_params(arch)))
    units = min(units, whole) * (1.0 if params is None else params / whole)
    return units / tp * per_param.weights * (1.0 - 1.0 / shard)


def min_dp_to_fit(breakdown: StateParts, zero_stage: int, dp: int, capacity: float,
                  gathered: float = 0.0) -> int | None:
    """Smallest data-parallel (shard) size at which ``breakdown`` (computed at ``dp``)
    fits in ``capacity``: what ZeRO partitions (S) shrinks as 1/d, ZeRO-3's gathered
    layers (``gathered`` = G, gathered_weight_bytes for an unbounded shard) grow as
    1 - 1/d, so total(d) = (fixed + G) + (S - G)/d. None if no d suffices."""
    shared = (breakdown.optimizer * (zero_stage >= 1) + breakdown.gradients * (zero_stage >= 2)
              + breakdown.weights * (zero_stage >= 3)) * dp
    fixed = breakdown.total - shared / dp - gathered * (1.0 - 1.0 / dp)
    floor, shrinking = fixed + gathered, shared - gathered
    if shrinking <= 0:  # more ranks never help: d = 1 or nothing
        return 1 if fixed + shared <= capacity else None
    if floor >= capacity:
        return None
    return max(1, math.ceil(shrinking / (capacity - floor)))
