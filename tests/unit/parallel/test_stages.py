"""Pipeline splits and peak micro-batches per rank (formulas.parallel.stages)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculators.formulas.parallel import stages
from calculators.formulas.parallel.stages import (
    SplitError,
    chunks_in_flight,
    layer_units_in_flight,
    split_layers,
)

if TYPE_CHECKING:
    from collections.abc import Callable


def test_llama3_split_126_layers_on_16_ranks_of_8_chunks() -> None:
    # Dubey et al. 2024, Sec. 3.3.2: one layer fewer on the first and the last stage,
    # so the first chunk holds only the embedding and the last only the output layer.
    split = split_layers(126, 16, 8)
    assert split.chunk_layers(0, 0) == 0
    assert split.chunk_layers(15, 7) == 0
    assert [split.rank_layers(r) for r in (0, 1, 15)] == [7, 8, 7]
    assert sum(split.rank_layers(r) for r in range(16)) == 126


@pytest.mark.parametrize(("layers", "stages"), [(80, 73), (96, 5), (14, 16), (96, 128)])
def test_unbalanced_splits_are_rejected(layers: int, stages: int) -> None:
    with pytest.raises(SplitError):
        split_layers(layers, stages)


@given(p=st.integers(2, 32), v=st.integers(2, 8), per_chunk=st.integers(1, 4))
def test_megatron_interleaving_penalty_on_rank_0(p: int, v: int, per_chunk: int) -> None:
    # Megatron-LM's theoretical_memory_usage.py (Korthikanti et al. 2022, Sec. 4.2.3):
    # rank 0 holds the whole model's layers x (1 + (p-1)/(p v)) when the pipeline is full.
    layers = p * v * per_chunk
    split = split_layers(layers, p, v)
    units = layer_units_in_flight(split, "interleaved", 1 << 20, 0)
    assert units == pytest.approx(layers * (1 + (p - 1) / (p * v)), rel=1e-12)
    # 1F1B: p micro-batches of l/p layers, the whole model's layers (no penalty).
    assert layer_units_in_flight(split_layers(layers, p), "1f1b", 1 << 20, 0) == layers


def test_1f1b_and_zero_bubble_in_flight_per_rank() -> None:
    # Narayanan et al. 2021, Sec. 2.2.1: rank r of 1F1B holds p - r micro-batches (fewer
    # if m is smaller); ZB-H2 2(p - r) - 1 (Qi et al. 2024, Table 2: 2p - 1 on rank 0).
    assert chunks_in_flight("1f1b", 8, 64, 0) == (8,)
    assert chunks_in_flight("1f1b", 8, 64, 5) == (3,)
    assert chunks_in_flight("1f1b", 8, 4, 0) == (4,)
    assert chunks_in_flight("zb_h1", 8, 64, 0) == (8,)
    assert chunks_in_flight("zb_h2", 8, 64, 0) == (15,)


# --- the light-last variant (issue 32, item 8) ----------------------------------------------


def test_variants_move_the_short_layers_to_the_last_chunk() -> None:
    llama, last_light = stages.split_variants(62, 16)
    assert [llama.rank_layers(r) for r in llama.ranks_of_interest] == [3, 4, 3]
    assert [last_light.rank_layers(r) for r in last_light.ranks_of_interest] == [4, 4, 2]
    assert sum(last_light.chunk_layers(r, 0) for r in range(16)) == 62
    assert [last_light.chunk_start(j) for j in (0, 1, 15)] == [0, 4, 60]
    # Even splits and one-layer chunks that would empty the last have no variant.
    assert len(stages.split_variants(96, 8)) == 1
    assert len(stages.split_variants(126, 16, 8)) == 1
    assert stages.split_layers(62, 16) == llama


def test_the_balanced_split_ties_to_llamas() -> None:
    llama, last_light = stages.split_variants(126, 16)

    def cost(output: float) -> Callable[[stages.StageSplit, int], float]:
        return lambda split, rank: split.rank_layers(rank) + (output if rank == 15 else 0.0)

    # An output layer lighter than a layer: the two tie, Meta's split stays.
    assert stages.balanced_split((llama, last_light), cost(0.65)) is llama
    # Heavier than a layer (DeepSeek-V3's two BF16 heads): the last stage sheds both.
    assert stages.balanced_split((llama, last_light), cost(4.3)) is last_light


def test_the_planner_uses_and_says_the_split() -> None:
    import calculators

    # Llama 3 70B on 27 stages: one layer short, taken off the output layer's stage.
    plan = calculators.compute("parallel_plan", layers=80, hidden=8192, heads=64, kv_heads=8,
                               ffn_hidden=28672, vocab=128256, seq_len=8192, gated_mlp=True,
                               biases=False, position_embedding="rotary",
                               tied_embeddings=False, gpu="h100_sxm", num_gpus=6912,
                               global_batch=2048, tp=4, cp=4, pp=27, dp=16)
    assert plan.to_dict()["notes"][0].endswith(
        "; 3 layers on the first stage, 3 on each of the 25 stages between, 2 on the last.")
