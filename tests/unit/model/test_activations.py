"""Per-layer activation bytes against Korthikanti et al. 2022, and the flash-attention,
no-dropout and GQA variants derived from its Sec. 4.1 breakdown."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculators.formulas.model.activations import (
    LOGSUMEXP_BYTES,
    LayerShape,
    activation_bytes_per_layer,
    layer_activations,
)

# Korthikanti et al. 2022, Table 3 shapes: GPT-3 175B and MT-NLG 530B at s = 2048.
GPT3 = LayerShape(seq_len=2048, micro_batch=1, hidden=12288, heads=96)
MT_NLG = LayerShape(seq_len=2048, micro_batch=1, hidden=20480, heads=128)


@pytest.mark.parametrize("t", [1, 2, 4, 8])
def test_korthikanti_table_2(t: int) -> None:
    # Korthikanti et al. 2022, Table 2 (16-bit activations, bytes per layer). Exact
    # formulas, so the tolerance only absorbs float rounding.
    s, b, h, a = 2048, 1, 12288, 96
    sbh = s * b * h
    rows = {
        ("none", False): sbh * (10 + 24 / t + 5 * a * s / (h * t)),
        ("none", True): sbh * (34 / t + 5 * a * s / (h * t)),
        ("selective", False): sbh * (10 + 24 / t),
        ("selective", True): sbh * 34 / t,
        ("full", False): 2 * sbh,
    }
    for (recompute, sp), expected in rows.items():
        got = activation_bytes_per_layer(GPT3, tp=t, sequence_parallel=sp, recompute=recompute)
        assert got == pytest.approx(expected, rel=1e-12), (recompute, sp)


def test_korthikanti_eq_1_unsplit() -> None:
    # Korthikanti et al. 2022, Eq. 1: sbh(34 + 5as/h) with no parallelism.
    sbh = 2048 * 12288
    assert activation_bytes_per_layer(GPT3) == pytest.approx(
        sbh * (34 + 5 * 96 * 2048 / 12288), rel=1e-12)


def test_dropout_masks_are_two_of_the_34() -> None:
    # Korthikanti Sec. 4.1: the sbh dropout masks are one after attention and one after
    # the MLP (1 byte each); without dropout the attention-dropout mask (as^2b) and its
    # output (2as^2b) go too, leaving the softmax output 2as^2b. So 32 sbh + 2 as^2b.
    s, b, h, a = 2048, 1, 12288, 96
    with_d = layer_activations(GPT3, dropout=True)
    without = layer_activations(GPT3, dropout=False)
    assert (with_d.replicated - without.replicated) == pytest.approx(2 * s * b * h)
    assert activation_bytes_per_layer(GPT3, dropout=False) == pytest.approx(
        32 * s * b * h + 2 * a * s * s * b, rel=1e-12)
    # With TP + selective: sbh(8 + 24/t).
    assert activation_bytes_per_layer(GPT3, tp=8, recompute="selective", dropout=False) == (
        pytest.approx(s * b * h * (8 + 24 / 8), rel=1e-12))


def test_flash_attention_keeps_logsumexp_only() -> None:
    # Dao et al. 2022 Sec. 3.1 / Dao 2023 Sec. 3.1.1: no s x s tensor is stored; the
    # output (already our projection input) and the logsumexp, a x s values per
    # sequence, are. 4 bytes each (assumption).
    s, b, a, t = 2048, 2, 96, 8
    shape = LayerShape(seq_len=s, micro_batch=b, hidden=12288, heads=a)
    flash = activation_bytes_per_layer(shape, tp=t, sequence_parallel=True, flash=True)
    selective = activation_bytes_per_layer(shape, tp=t, sequence_parallel=True,
                                           recompute="selective")
    assert flash - selective == pytest.approx(LOGSUMEXP_BYTES * a * s * b / t, rel=1e-12)
    assert activation_bytes_per_layer(shape, tp=t, sequence_parallel=True, flash=True,
                                      recompute="selective") == pytest.approx(selective)


def test_gqa_shrinks_k_and_v() -> None:
    # Derivation: K and V are each 2 sbh x kv_heads/heads. Llama-2-70B-like shape
    # (64 heads, 8 KV heads): split part 2 + 2/8 + 2/8 + 2 + 16 = 20.5 sbh.
    mha = LayerShape(seq_len=4096, micro_batch=1, hidden=8192, heads=64)
    gqa = LayerShape(seq_len=4096, micro_batch=1, hidden=8192, heads=64, kv_heads=8)
    assert layer_activations(mha).split == pytest.approx(24 * mha.sbh)
    assert layer_activations(gqa).split == pytest.approx(20.5 * gqa.sbh)


def test_gated_mlp_width() -> None:
    # Derivation: SwiGLU stores up and gate (4sbf) and their product (2sbf).
    shape = LayerShape(seq_len=4096, micro_batch=1, hidden=4096, heads=32, ffn_hidden=11008,
                       gated_mlp=True)
    f = 11008 / 4096
    assert layer_activations(shape).split == pytest.approx((8 + 6 * f) * shape.sbh)


@given(st.sampled_from([1, 2, 4, 8]), st.sampled_from(["none", "selective", "full"]),
       st.booleans(), st.booleans(), st.integers(128, 32768))
def test_invariants(t: int, recompute: str, dropout: bool, flash: bool, s: int) -> None:
    shape = LayerShape(seq_len=s, micro_batch=1, hidden=4096, heads=32, kv_heads=8)
    kwargs = {"recompute": recompute, "dropout": dropout, "flash": flash}
    plain = activation_bytes_per_layer(shape, tp=t, **kwargs)  # type: ignore[arg-type]
    sp = activation_bytes_per_layer(shape, tp=t, sequence_parallel=True,
                                    **kwargs)  # type: ignore[arg-type]
    assert sp <= plain
    if recompute == "none" and flash:
        materialised = activation_bytes_per_layer(shape, tp=t, dropout=dropout)
        assert plain <= materialised


@pytest.mark.parametrize(
    "kwargs", [{"tp": 5}, {"tp": 0}, {"recompute": "some"}])
def test_bad_inputs(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"."):
        activation_bytes_per_layer(GPT3, **kwargs)  # type: ignore[arg-type]


def test_bad_shape() -> None:
    with pytest.raises(ValueError, match="kv_heads"):
        LayerShape(seq_len=1, micro_batch=1, hidden=64, heads=8, kv_heads=3)
    with pytest.raises(ValueError, match="seq_len"):
        LayerShape(seq_len=0, micro_batch=1, hidden=64, heads=8)
