"""Layer stacks of mixed kinds: the pattern, the keys each kind is charged for, and the
attention FLOPs that follow, checked against hand counts."""

from __future__ import annotations

import pytest

import calculators
from calculators.catalogues import presets
from calculators.formulas.model.architecture import Architecture, total_params
from calculators.formulas.model.flops import (
    CAUSAL_ATTENTION,
    SIX_N,
    counted_mixing_flops,
    dense_attention_flops,
)
from calculators.formulas.model.layer_mix import (
    LayerMix,
    LinearMixer,
    PatternError,
    compact_pattern,
    document_length,
    parse_pattern,
)
from calculators.inputs.architecture import architecture


def _gemma3(seq_len: int = 8192, documents: float | None = None) -> Architecture:
    calc = calculators.get("model_params")
    texts = presets.preset_texts(calc, presets.get("gemma3_27b"))
    arch = architecture(calc.validate({**texts, "seq_len": str(seq_len)}))
    return Architecture(**{**arch.__dict__, "documents": documents})


def test_patterns_read_and_write_as_released_configs_declare_them() -> None:
    assert parse_pattern("5S1F") == "SSSSSF"
    assert parse_pattern(" s, f ") == "SF"
    assert parse_pattern("") == "F"
    assert compact_pattern("SSSSSF") == "5S1F"
    assert compact_pattern("SFSFSF") == "SF"
    assert compact_pattern("LLLFLLLF") == "3L1F"
    for bad in ("5X", "0S", "S2", "9999S"):
        with pytest.raises(PatternError):
            parse_pattern(bad)
    # Gemma 3's 62 layers: full attention at 5, 11, ..., 59 (sliding_window_pattern 6).
    kinds = LayerMix("SSSSSF", 1024).kinds(62)
    assert [i for i, k in enumerate(kinds) if k == "F"] == list(range(5, 62, 6))


def test_gemma3_attention_follows_its_windows() -> None:
    # Hand count at s = 8,192: 52 sliding layers charged 2w - w^2/s = 2,048 - 128 = 1,920
    # keys, 10 global layers 8,192; 6 x keys x 32 heads x (128 + 128).
    keys = 52 * 1920 + 10 * 8192
    assert dense_attention_flops(_gemma3()) == 6 * keys * 32 * 256 == 8_933_867_520
    # Counted as uniform (every layer global) it would be 2.8x more.
    uniform = 6 * 62 * 8192 * 32 * 256
    assert uniform / dense_attention_flops(_gemma3()) == pytest.approx(2.794, abs=1e-3)
    # A window as long as the sequence is full attention.
    assert LayerMix("S", 8192).key_length("S", 8192) == 8192


def test_document_masking_charges_the_documents_length() -> None:
    # Documents of 2,000 tokens on average, spread CV 1: attention sees 4,000-token ones.
    seen = document_length(2000, 131072, 1.0)
    assert seen == 4000
    assert document_length(100_000, 8192, 1.0) == 8192  # cut at the sequence
    arch = _gemma3(131072, seen)
    keys = 52 * (2 * 1024 - 1024**2 / 4000) + 10 * 4000
    assert dense_attention_flops(arch) == pytest.approx(6 * keys * 32 * 256)


def test_linear_layers_have_their_own_weights_and_a_recurrence() -> None:
    mixer = LinearMixer(16, 32, 128, 128)
    # Qwen3-Next's Gated DeltaNet (LAYOUTS.md): qkvz 2048 x 12,288, ba 2048 x 64, out
    # 4,096 x 2,048, conv 8,192 x 4, dt_bias and A_log 32 each, norm 128.
    assert mixer.params(2048) == 25_165_824 + 131_072 + 8_388_608 + 32_768 + 64 + 128
    # Recurrence: 3 x 32 heads x (6 x 128 x 128 + 64 x 256) per token.
    assert mixer.mixing_flops_per_token() == 3 * 32 * (6 * 128 * 128 + 64 * 256)
    arch = Architecture(layers=8, hidden=2048, heads=16, kv_heads=2, head_dim=256,
                        ffn_hidden=5120, vocab=1000, seq_len=4096, gated_mlp=True,
                        biases=False, learned_positions=False, tied_embeddings=False,
                        mix=LayerMix("LLLF", 0, mixer))
    # Two full-attention layers carry scores; six linear layers carry the recurrence,
    # counted whole by the causal convention and not at all by 6N.
    assert dense_attention_flops(arch) == 6 * 2 * 4096 * 16 * 512
    assert counted_mixing_flops(arch, CAUSAL_ATTENTION) == (
        0.5 * dense_attention_flops(arch) + 6 * mixer.mixing_flops_per_token())
    assert counted_mixing_flops(arch, SIX_N) == 0
    uniform = Architecture(**{**arch.__dict__, "mix": LayerMix()})
    per_layer = mixer.params(2048) - (2 * 2048 * 4096 + 2 * 2048 * 512)
    assert total_params(arch) - total_params(uniform) == 6 * per_layer


def test_a_mixed_stack_is_checked_where_it_is_read() -> None:
    with pytest.raises(calculators.ValidationError, match="attention_window"):
        calculators.compute("model_params", layer_pattern="SF")
    with pytest.raises(calculators.ValidationError, match="linear_key_heads"):
        calculators.compute("model_params", layer_pattern="3L1F")
    with pytest.raises(calculators.ValidationError, match="layer_pattern"):
        calculators.compute("model_params", layer_pattern="3Q")
    with pytest.raises(calculators.ValidationError, match="layer_pattern"):
        calculators.compute("moe_params", layer_pattern="SF", attention_window=128)
