"""Pipeline splits and peak micro-batches per rank (formulas.parallel.stages)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculators.formulas.parallel.stages import (
    SplitError,
    chunks_in_flight,
    layer_units_in_flight,
    split_layers,
)


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
