"""One RL step and where its phases run.

A step generates a batch of rollouts, scores them (reward, reference and, for PPO, the
critic: forward passes), updates the policy (and the critic), and moves the new weights to
the generators. The compute of the training side, per token of prompt and response
(Kaplan et al. 2020's 2N forward and 6N forward + backward, N the active parameters):

- policy update: 6 N per epoch over the batch; recomputing the old policy's
  log-probabilities, 2 N (PPO's ratio needs them; veRL recomputes them on the trainer);
- reference model (for the KL penalty): 2 N; a reward model: 2 N_r; GRPO has no critic
  (Shao et al. 2024, DeepSeekMath, arXiv 2402.03300, Sec. 4.1.1: the group's mean reward
  is the baseline); PPO's critic adds a forward, 2 N_c, and its own update, 6 N_c per
  epoch. Critic and reward model are taken as the policy's size (HybridFlow's setup,
  Sheng et al. 2024, arXiv 2409.19256, Sec. 8.1: all four models the same size).

Placements (HybridFlow, Sec. 8.3; veRL's one-step-off and fully asynchronous modes;
AReaL, arXiv 2505.24298):

- **colocated**: every GPU generates, then every GPU trains; the training states leave
  for host memory while the engines hold the GPUs, and come back (the swap), and the
  weights move inside the node;
- **disaggregated**: G GPUs generate and T = N - G train, one after the other: each pool
  waits while the other works;
- **one step off**: the same pools, but generation of batch i + 1 overlaps the training on
  batch i (the data is one policy version old): a step takes the longer of the two;
- **fully asynchronous**: as one step off, and the engines never drain: new prompts take
  the slots finished responses leave, so the tail disappears (responses may span
  several policy versions; AReaL bounds that staleness).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from calculators.formulas.rl.weight_sync import Sync

#: Bytes per parameter the swap moves: the FP32 Adam moments and master weights (12 B,
#: ZeRO's K; Rajbhandari et al. 2020, Sec. 3.1) and the BF16 gradients (2 B); the BF16
#: weights stay, since the engines are rebuilt from them.
SWAPPED_BYTES_PER_PARAM = 14.0
#: Bytes per parameter a trainer holds with its states fully sharded (ZeRO-3): 16.
TRAINING_STATE_BYTES_PER_PARAM = 16.0
PLACEMENTS = ("colocated", "disaggregated", "one_step_off", "fully_async")


@dataclass(frozen=True)
class Algorithm:
    """What the trainer computes per token, in multiples of the active parameters."""

    critic: bool
    reference: bool
    reward_model: bool
    epochs: int

    def flops_per_token(self, active: float) -> float:
        """Training-side FLOPs per token of prompt and response."""
        policy = 6.0 * self.epochs + 2.0  # updates + the old policy's log-probabilities
        critic = 2.0 + 6.0 * self.epochs if self.critic else 0.0
        forward = 2.0 * (self.reference + self.reward_model)
        return (policy + critic + forward) * active


@dataclass(frozen=True)
class Placement:
    """One placement's step, its phases and the GPU time it leaves idle."""

    name: str
    generation_gpus: int
    training_gpus: int
    generation_s: float
    training_s: float
    sync_s: float
    swap_s: float
    step_s: float

    @property
    def gpus(self) -> int:
        """GPUs in the placement (colocated: both phases share them)."""
        if self.name == "colocated":
            return self.generation_gpus
        return self.generation_gpus + self.training_gpus

    @property
    def idle_share(self) -> float:
        """The share of the GPUs' time in the step spent neither generating nor training."""
        if self.step_s <= 0:
            return 0.0
        if self.name == "colocated":
            busy = self.gpus * (self.generation_s + self.training_s)
        else:
            busy = (self.generation_gpus * self.generation_s
                    + self.training_gpus * self.training_s)
        return max(0.0, 1.0 - busy / (self.gpus * self.step_s))


def colocated(gpus: int, generation_s: float, training_s: float, sync: Sync,
              swap_s: float) -> Placement:
    """Every GPU generates, then trains; the swap and the sync lie between."""
    step = generation_s + training_s + sync.total_s + swap_s
    return Placement("colocated", gpus, gpus, generation_s, training_s, sync.total_s,
                     swap_s, step)


def separate(name: str, *, generation_gpus: int, training_gpus: int, generation_s: float,
             training_s: float, sync: Sync) -> Placement:
    """Two pools: one after the other (``disaggregated``), or overlapped (the
    asynchronous placements), where the generators pause only to reload the weights and
    the trainers only to send them."""
    if name == "disaggregated":
        step = generation_s + sync.total_s + training_s
    else:
        step = max(generation_s + sync.reload_s, training_s + sync.transfer_s)
    return Placement(name, generation_gpus, training_gpus, generation_s, training_s,
                     sync.total_s, 0.0, step)


def best_split(gpus: int, engine_gpus: int,
               step_at: Callable[[int], Placement]) -> Placement:
    """The split of ``gpus`` into whole engines and trainers with the shortest step:
    a coarse pass over about 24 engine counts spread evenly on a log scale, then every
    count between the best one's neighbours, narrowing by halves (a step time that
    falls, then rises with the share generating; ``step_at`` takes engines)."""
    most = (gpus - 1) // engine_gpus
    if most < 1:
        raise ValueError("no room for an engine and a trainer")
    seen: dict[int, Placement] = {}

    def at(engines: int) -> Placement:
        if engines not in seen:
            seen[engines] = step_at(engines)
        return seen[engines]

    coarse = sorted({max(1, min(most, round(math.exp(math.log(most) * i / 23))))
                     for i in range(24)})
    best = min(coarse, key=lambda e: at(e).step_s)
    index = coarse.index(best)
    low = coarse[max(0, index - 1)]
    high = coarse[min(len(coarse) - 1, index + 1)]
    while high - low > 2:
        middle_low = low + (high - low) // 3
        middle_high = high - (high - low) // 3
        if at(middle_low).step_s <= at(middle_high).step_s:
            high = middle_high
        else:
            low = middle_low
    return min((at(e) for e in range(low, high + 1)), key=lambda p: p.step_s)
