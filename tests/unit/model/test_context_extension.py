"""Staged context extension (Llama 3 report, Sec. 3.4.2) priced in training_compute."""

from __future__ import annotations

import pytest

import calculators
from calculators.catalogues import presets
from calculators.formulas.model.context_extension import extension_stages


def test_stages_grow_geometrically_and_share_the_tokens() -> None:
    stages = extension_stages(8192, 131072, 6, 800e9)
    assert [s.seq_len for s in stages] == [13004, 20643, 32768, 52016, 82570, 131072]
    assert sum(s.tokens for s in stages) == pytest.approx(800e9)
    with pytest.raises(ValueError, match="final length above"):
        extension_stages(8192, 8192, 6, 1e9)


def test_llama3_405b_extension_adds_its_attention_at_each_length() -> None:
    calc = calculators.get("training_compute")
    texts = presets.preset_texts(calc, presets.get("llama3_405b"))
    base = calc.compute(texts).computed.values["total_flops"]
    result = calc.compute({**texts, "extension_tokens": "800e9"})
    # Hand count, 6N + full attention: each stage's tokens pay 6 x 126 layers x
    # (L - 8,192) more keys x 128 heads x (128 + 128) per token.
    lengths = (13004, 20643, 32768, 52016, 82570, 131072)
    extra = sum(6 * 126 * (length - 8192) * 128 * 256 * 800e9 / 6 for length in lengths)
    assert result.computed.values["extension_flops"] == pytest.approx(extra)
    assert result.computed.values["total_flops"] == pytest.approx(base + extra)
    assert extra / base == pytest.approx(0.0228, abs=5e-4)


def test_an_extension_needs_an_architecture_and_a_longer_sequence() -> None:
    with pytest.raises(calculators.ValidationError, match="extension_tokens"):
        calculators.compute("training_compute", extension_tokens=1e9)
    calc = calculators.get("training_compute")
    texts = presets.preset_texts(calc, presets.get("llama3_8b"))
    with pytest.raises(calculators.ValidationError, match="extension_length"):
        calc.compute({**texts, "extension_tokens": "1e9", "extension_length": "4096"})
    with pytest.raises(calculators.ValidationError, match="cannot be more than D"):
        calc.compute({**texts, "extension_tokens": "1e15"})
