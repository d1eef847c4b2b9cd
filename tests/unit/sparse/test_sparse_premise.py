"""docs/sparse.md: the chapter's premise is stated for the models it sizes.

Issue 32, item 11: "arithmetic per sample is small" is not true of every recommender.
Generative recommenders run attention over each user's history; HSTU's quality scales
with training compute up to GPT-3 / Llama 2 scale (Zhai et al., ICML 2024,
arXiv:2402.17152, abstract). The chapter must scope the claim to DLRM-style models,
cite the counter-example, and say what its calculators leave out.
"""

from __future__ import annotations

from pathlib import Path

CHAPTER = Path(__file__).resolve().parents[3] / "docs" / "sparse.md"


def _intro() -> str:
    """The chapter's opening, before its first section, with line breaks folded."""
    text = CHAPTER.read_text("utf-8")
    return " ".join(text.split("\n## ", 1)[0].split())


def test_small_arithmetic_is_scoped_to_dlrm_style_models() -> None:
    intro = _intro()
    assert "Their arithmetic per sample is small" not in intro
    assert "The DLRM-style models this chapter sizes do little arithmetic per sample" in intro
    assert "moved on from that base case" in intro


def test_generative_recommenders_are_cited() -> None:
    intro = _intro()
    for phrase in ("HSTU", "Zhai et al.", "arXiv:2402.17152",
                   "(#generative-recommenders-attention-over-the-history)"):
        assert phrase in intro, phrase
    sources = " ".join(CHAPTER.read_text("utf-8").split("## Sources", 1)[1].split())
    assert "Zhai et al. 2024" in sources and "arXiv:2402.17152" in sources
