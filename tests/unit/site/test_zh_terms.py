"""search/zh_terms.txt, the jieba user dictionary of the search index, holds every
Chinese term of the glossary (scripts/zh_search_terms.py writes it), so that a term such
as 多打一 or 流水线并行 is one word in the index and a search for it finds it."""

from __future__ import annotations

from scripts.zh_search_terms import GLOSSARY, TERMS, dictionary, glossary_terms


def test_the_search_dictionary_holds_every_glossary_term() -> None:
    terms = glossary_terms(GLOSSARY.read_text("utf-8"))
    assert {"多打一", "流水线并行", "显存", "卡时"} <= set(terms)
    assert TERMS.read_text("utf-8") == dictionary(terms), (
        "run scripts/zh_search_terms.py")
