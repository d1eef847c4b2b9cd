"""A batch of rollouts on one engine under continuous batching (Yu et al. 2022, Orca;
vLLM's scheduler): up to ``slots`` sequences decode together; when one finishes, the next
waiting response takes its slot. When none is left waiting, the batch shrinks and the
last, longest responses decode almost alone: the tail.

The simulation walks from one finish to the next. Between two finishes the batch is
fixed, its cache grows by one token per sequence per step, and the steps' time has a
closed form (formulas.rl.decode.Engine.steps_s), so the cost is one heap operation per
response, not one per token. Responses are served in an order that mixes short and long
ones evenly (a fixed stride through the lengths, like a random order but reproducible).
Above ``MAX_SIMULATED`` responses on an engine, each simulated response stands for
several: lengths, slots and the batch are scaled by that weight, so the time per token
stays that of the real batch.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.rl.decode import prefill_s
from calculators.formulas.rl.lengths import quantile_lengths

if TYPE_CHECKING:
    from calculators.formulas.rl.decode import Engine

#: Responses simulated one by one on an engine; beyond, each stands for several.
MAX_SIMULATED = 4096
#: The stride through the sorted lengths that orders the queue (the golden ratio's
#: fractional part: consecutive responses land far apart in length).
_STRIDE = 0.6180339887498949


@dataclass(frozen=True)
class Rollout:
    """One engine's share of a batch of rollouts, decoded."""

    decode_s: float
    #: Seconds after the last waiting response took a slot: the batch only shrinks.
    tail_s: float
    output_tokens: float
    mean_batch: float  # sequences per step, averaged over time


def _order(count: int) -> list[int]:
    """A reproducible order through ``count`` items sorted by length that mixes them."""
    return sorted(range(count), key=lambda i: math.fmod(i * _STRIDE, 1.0))


def decode_batch(engine: Engine, *, responses: int, slots: int, prompt_tokens: int,
                 mean_length: float, cap: int) -> Rollout:
    """Decode ``responses`` responses (lengths: formulas.rl.lengths) with at most
    ``slots`` at once, each after a prompt of ``prompt_tokens`` already in the cache."""
    simulated = min(responses, MAX_SIMULATED)
    weight = responses / simulated
    lengths = quantile_lengths(simulated, mean_length, cap)
    queue = [lengths[i] for i in _order(simulated)]
    room = max(1, math.floor(slots / weight))  # simulated slots
    clock, tail_start, busy_time = 0.0, None, 0.0
    position = 0  # steps decoded so far
    active: list[tuple[int, int]] = []  # (finish step, start step), a heap
    cached = 0  # simulated tokens in the cache at ``position``
    next_index = 0
    output = 0
    while next_index < simulated or active:
        while next_index < simulated and len(active) < room:
            length = queue[next_index]
            heapq.heappush(active, (position + length, position))
            cached += prompt_tokens
            output += length
            next_index += 1
        if tail_start is None and next_index >= simulated:
            tail_start = clock
        finish, _ = active[0]
        steps = finish - position
        batch = len(active)
        real_batch = max(1, round(batch * weight))
        elapsed = engine.steps_s(real_batch, cached * weight, steps)
        clock += elapsed
        busy_time += batch * weight * elapsed
        cached += batch * steps
        position = finish
        while active and active[0][0] == position:
            _, start = heapq.heappop(active)
            cached -= prompt_tokens + (position - start)
    mean_batch = busy_time / clock if clock > 0 else 0.0
    return Rollout(decode_s=clock, tail_s=clock - (tail_start or 0.0),
                   output_tokens=output * weight, mean_batch=mean_batch)


@dataclass(frozen=True)
class Generation:
    """A whole batch of rollouts over ``engines`` engines (the busiest one sets the time)."""

    engines: int
    prefill_s: float
    rollout: Rollout
    #: The decode time if every slot stayed busy to the end (new prompts fill the slots
    #: the finished responses leave, as a fully asynchronous pipeline does): no tail.
    steady_decode_s: float

    @property
    def total_s(self) -> float:
        return self.prefill_s + self.rollout.decode_s

    @property
    def steady_s(self) -> float:
        return self.prefill_s + self.steady_decode_s


def mean_live_length(mean: float, cap: float) -> float:
    """The average length reached by the responses decoding at a random moment, with
    the slots kept full: longer responses hold a slot longer (length-biased), E[L^2] /
    (2 E[L]); for L = cap u^a, cap (a + 1) / (2 (2a + 1))."""
    a = cap / mean - 1.0
    return cap * (a + 1.0) / (2.0 * (2.0 * a + 1.0))


def generate(engine: Engine, *, slots: int, engines: int, prompts: int, samples: int,
             prompt_tokens: int, mean_length: float, cap: int) -> Generation:
    """Prefill and decode ``prompts`` x ``samples`` responses spread evenly over
    ``engines`` engines: each prompt is prefilled once on one engine (its samples share
    the cached prompt) and the busiest engine's decode sets the time."""
    responses = math.ceil(prompts * samples / engines)
    prefill = prefill_s(engine, prompt_tokens, math.ceil(prompts / engines))
    rollout = decode_batch(engine, responses=responses, slots=slots,
                           prompt_tokens=prompt_tokens, mean_length=mean_length, cap=cap)
    batch = min(slots, responses)
    live = batch * (prompt_tokens + mean_live_length(mean_length, cap))
    steady = rollout.output_tokens / batch * engine.step_s(batch, live)
    return Generation(engines, prefill, rollout, min(steady, rollout.decode_s))
