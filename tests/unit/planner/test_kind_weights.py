"""Pipeline stages weighed by the kinds of layer they hold (formulas.planner.kind_weights)."""

from __future__ import annotations

import pytest

import calculators
from calculators.formulas.model.layer_mix import LayerMix, parse_pattern
from calculators.formulas.parallel.stages import split_layers

_MODEL = {"layers": 8, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
          "vocab": 32000, "seq_len": 32768, "gated_mlp": True, "biases": False,
          "position_embedding": "rotary", "tied_embeddings": False, "attention_window": 1024,
          "pp": 2, "tp": 1, "global_batch": 64, "num_gpus": 16}


def _step(pattern: str) -> float:
    result = calculators.compute("parallel_plan", layer_pattern=pattern, **_MODEL)
    return float(result.value("step_time"))


def test_a_stage_of_global_layers_paces_the_pipeline() -> None:
    # Four windowed layers then four global ones: on two stages, the second holds every
    # global layer and runs as slowly as a stack of global layers would. Alternated,
    # each stage holds two of each, and the step is shorter.
    assert _step("4S4F") == pytest.approx(_step("F"))
    assert _step("SF") < 0.9 * _step("4S4F")


@pytest.mark.parametrize(("layers", "stages", "chunks", "placement"), [
    (62, 4, 1, "loop"), (64, 4, 2, "loop"), (32, 4, 2, "v"), (32, 4, 2, "dual")])
def test_each_rank_holds_its_own_layers(layers: int, stages: int, chunks: int,
                                        placement: str) -> None:
    split = split_layers(layers, stages, chunks, placement)
    held = [i for r in range(stages) for i in split.rank_layer_indices(r)]
    copies = 2 if placement == "dual" else 1
    assert sorted(held) == sorted(list(range(layers)) * copies)
    assert all(len(split.rank_layer_indices(r)) == split.rank_layers(r) for r in range(stages))


def test_kinds_are_charged_their_own_scores() -> None:
    mix = LayerMix("SSSSSF", 1024)
    full = mix.kind_forward_scores("F", 32768, None, causal_share=0.5, flops_per_key=1.0)
    window = mix.kind_forward_scores("S", 32768, None, causal_share=0.5, flops_per_key=1.0)
    assert full == 0.5 * 32768
    assert window == 0.5 * (2 * 1024 - 1024**2 / 32768)
    mean = mix.mean_forward_scores(6, 32768, None, causal_share=0.5, flops_per_key=1.0)
    assert mean == pytest.approx((5 * window + full) / 6)
    # A materialised kernel computes the whole matrix, window or not.
    assert mix.kind_forward_scores("S", 32768, None, causal_share=1.0, flops_per_key=1.0) == 32768


@pytest.mark.parametrize("pattern", ["SF", "5S1F", "3L1F", "2S3F"])
@pytest.mark.parametrize(("layers", "stages", "chunks", "placement"), [
    (9933, 3311, 1, "loop"), (600, 100, 2, "loop"), (598, 50, 2, "v"),
    (600, 100, 2, "dual"), (61, 61, 1, "loop"), (95, 19, 1, "loop")])
def test_the_weighed_ranks_stand_for_every_rank(
        pattern: str, layers: int, stages: int, chunks: int, placement: str) -> None:
    # Issue 36's slowest input weighed all of 3,311 ranks for every split: 1.4 s. The
    # kinds repeat with the pattern, so the ranks that hold the ends and one period of
    # the others find the same slowest rank (the first of them, as max() does).
    from calculators.formulas.planner.kind_weights import _layers_before

    unit = parse_pattern(pattern)
    kinds = (unit * layers)[:layers]
    split = split_layers(layers, stages, chunks, placement)
    weights = {"S": 0.8, "F": 1.3, "L": 0.6}

    def load(rank: int) -> float:
        total = 0.0
        for j in split.rank_chunks(rank):
            start = split.chunk_start(j)
            end = start + split.global_chunk_layers(j)
            total += sum(weights[k] * (_layers_before(kinds, k)[end]
                                       - _layers_before(kinds, k)[start]) for k in "SFL")
        return total + (0.5 if split.holds_last(rank) else 0.0)

    every = [load(r) for r in range(split.stages)]
    chosen = split.weighed_ranks(len(unit))
    assert max(load(r) for r in chosen) == max(every)
    assert min(chosen, key=lambda r: (-load(r), r)) == every.index(max(every))
    assert len(chosen) <= len(unit) + 2
