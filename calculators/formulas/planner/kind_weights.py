"""Pipeline stages of a stack of mixed layer kinds (formulas.model.layer_mix): the
planner prices every layer as the stack's mean one, and weighs each stage by the kinds
it holds, so that a stage with more global-attention layers than the mean is the
slower one it is (Gemma 3's 62 layers on four stages put 2, 3, 2 and 3 of its ten
global layers on stages of 16, 16, 15 and 15).

A layer of kind k takes the mean layer's time with its attention scaled by its own
sequence-mixing FLOPs over the mean's: w_k = 1 + a (r_k - 1), where a is the attention's
share of the mean layer's time and r_k = FLOPs_k / FLOPs_mean (a derivation: attention
kernels run at one rate whatever their length, to first order)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

from calculators.formulas.model.layer_mix import KINDS

if TYPE_CHECKING:
    from collections.abc import Callable

    from calculators.formulas.kernels.dense_layer import LayerTimes
    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.parallel.stages import StageSplit


def kind_weights(arch: Architecture, times: LayerTimes, attention: str) -> dict[str, float]:
    """Each kind's time over the mean layer's (w_k above); {} when every layer is alike."""
    mix = arch.mix
    if mix.uniform or len(set(mix.kinds(arch.layers))) == 1:
        return {}
    share = 0.5 if attention == "fused" else 1.0
    per_key = 4.0 * arch.heads * arch.head_dim
    args = (arch.seq_len, arch.documents)
    mean = mix.mean_forward_scores(arch.layers, *args, causal_share=share, flops_per_key=per_key)
    layer = times.forward_s + times.backward_s
    if mean <= 0.0 or layer <= 0.0:
        return {}
    a = (times.attention_forward_s + times.attention_backward_s) / layer
    return {kind: 1.0 + a * (mix.kind_forward_scores(
        kind, *args, causal_share=share, flops_per_key=per_key) / mean - 1.0)
        for kind in KINDS}


def weighted_layers(arch: Architecture, weights: dict[str, float]
                    ) -> Callable[[StageSplit, int], float]:
    """The layers a rank runs per micro-batch, each counted at its kind's weight (plain
    counts, ``compute_layers``, when ``weights`` is empty)."""
    if not weights:
        return lambda split, rank: split.compute_layers(rank)
    kinds = arch.mix.kinds(arch.layers)
    # Layers of each kind before index i, so that a chunk's count of each kind is two
    # lookups: constant work per chunk, whatever the depth (issue 37's search: 9,933
    # layers walked one by one for every rank of every split took 1.4 s).
    ordered = sorted(weights)
    before = {kind: _layers_before(kinds, kind) for kind in ordered}

    def weighted(split: StageSplit, rank: int) -> float:
        held = dict.fromkeys(ordered, 0)
        for j in split.rank_chunks(rank):
            start = split.chunk_start(j)
            end = start + split.global_chunk_layers(j)
            for kind in ordered:
                held[kind] += before[kind][end] - before[kind][start]
        return split.compute_share * math.fsum(held[k] * weights[k] for k in ordered)

    return weighted


@lru_cache(maxsize=64)
def _layers_before(kinds: str, kind: str) -> tuple[int, ...]:
    """For each index i of the stack ``kinds`` (one letter per layer), how many layers
    before it are of ``kind``; computed once per stack, as every layout base asks."""
    counts = [0]
    for own in kinds:
        counts.append(counts[-1] + (own == kind))
    return tuple(counts)
