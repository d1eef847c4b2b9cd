"""Two memory terms a peer comparison found wrong (issue 32, items 13 and 14): the
embedding-dropout mask without sequence parallelism, and ZeRO-3's gathered output layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from calculators.formulas.model.architecture import Architecture
from calculators.formulas.model.model_states import state_bytes
from calculators.formulas.parallel.memory import (
    Strategy,
    embedding_input_bytes,
    gathered_weight_bytes,
    memory_per_gpu,
)

GPT3 = Architecture(layers=96, hidden=12288, heads=96, kv_heads=96, head_dim=128,
                    ffn_hidden=4 * 12288, vocab=51200, seq_len=2048)
LLAMA3_8B = Architecture(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128,
                         ffn_hidden=14336, vocab=128256, seq_len=8192, gated_mlp=True,
                         biases=False, learned_positions=False, tied_embeddings=False)
GB = 1e9
DENSE = Path(__file__).resolve().parents[3] / "docs" / "dense.md"


def _chapter() -> str:
    return " ".join(DENSE.read_text("utf-8").split())


def test_embedding_dropout_mask_is_whole_on_every_tp_rank_without_sequence_parallelism(
        ) -> None:
    # Without sequence parallelism every TP rank holds the embedding's whole [s, b, h]
    # output and its 1-byte dropout mask; with it, 1/t (Korthikanti et al. 2022,
    # Sec. 4.3). GPT-3 at TP 8, PP 16, 1F1B: the first stage keeps 16 micro-batches of
    # 2,048 x 12,288 mask bytes, 0.40 GB, where dividing by t gave 0.05.
    sb = 2048
    whole = embedding_input_bytes(GPT3, 1, 8, 1, True, sequence_parallel=False)
    split = embedding_input_bytes(GPT3, 1, 8, 1, True, sequence_parallel=True)
    assert whole == sb * 8 + sb * 12288
    assert split == sb * 8 + sb * 12288 / 8
    adam = state_bytes("bf16_mixed", "adamw")
    off, on = (memory_per_gpu(GPT3, Strategy(tp=8, pp=16, dp=1, micro_batch=1, dropout=True,
                                             recompute="full", micro_batches=64,
                                             sequence_parallel=sp), adam)
               for sp in (False, True))
    assert off.rank == on.rank == 0
    assert off.outer == pytest.approx(16 * whole, rel=1e-12)
    # The dense chapter quotes both, as computed here.
    text = _chapter()
    assert f"p = 16: {off.outer / GB:.2f} GB on the first stage), and with it sbh/t " \
           f"({on.outer / GB:.2f} GB)" in text


def test_zero3_gathers_the_output_layer_where_it_is_larger_than_a_layer() -> None:
    # FSDP gathers one unit and prefetches the next (Zhao et al. 2023, Sec. 3.3). Llama 3
    # 8B: a layer is 218M parameters (0.44 GB in BF16), the output layer 128,256 x 4,096
    # = 525M (1.05 GB): while it runs with the last layer prefetched, 1.49 GB are
    # gathered, not the two layers' 0.87 GB.
    adam = state_bytes("bf16_mixed", "adamw")
    layer = (4096 * 4096 * 2 + 4096 * 1024 * 2 + 3 * 4096 * 14336) + 2 * 4096
    two_layers = gathered_weight_bytes(LLAMA3_8B, 1, adam, 1 << 62)
    with_output = gathered_weight_bytes(LLAMA3_8B, 1, adam, 1 << 62, with_output=True)
    assert two_layers == pytest.approx(2 * 2 * layer, rel=1e-9)
    assert with_output == pytest.approx(2 * (layer + 128256 * 4096), rel=1e-9)
    text = _chapter()
    assert f"are {with_output / GB:.2f} GB gathered in BF16, against {two_layers / GB:.2f} " \
           "GB for two layers" in text
    # The calculator's count: ZeRO-3 without a pipeline holds the output layer's gather.
    st = Strategy(tp=1, pp=1, dp=64, micro_batch=1, zero_stage=3, recompute="full")
    breakdown = memory_per_gpu(LLAMA3_8B, st, adam)
    assert breakdown.working >= with_output * (1 - 1 / 64) - 1.0
