"""Write search/zh_terms.txt, the jieba user dictionary that keeps the guide's Chinese
terms whole in the search index (Material's search segments Chinese text with jieba):
every run of two or more Chinese characters in the glossary's Chinese names.

Run after adding a term to docs/glossary.md; tests/unit/site/test_zh_terms.py fails
until the file holds every term.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs" / "glossary.md"
TERMS = ROOT / "search" / "zh_terms.txt"
#: A frequency above jieba's own dictionary's, so that the term is not cut further.
FREQUENCY = 200_000
_NAME = re.compile(r'<span lang="zh-Hans">([^<]*)</span>')
_CHINESE_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")


def glossary_terms(text: str) -> list[str]:
    """The glossary's Chinese terms, in order of first appearance, without repeats."""
    found: dict[str, None] = {}
    for name in _NAME.findall(text):
        for run in _CHINESE_RUN.findall(name):
            found.setdefault(run)
    return list(found)


def dictionary(terms: list[str]) -> str:
    """jieba's user-dictionary lines, ``word frequency tag`` (it has no comment syntax)."""
    return "".join(f"{term} {FREQUENCY} n\n" for term in terms)


if __name__ == "__main__":
    TERMS.write_text(dictionary(glossary_terms(GLOSSARY.read_text("utf-8"))), "utf-8")
    print(f"{TERMS.relative_to(ROOT)}: {len(glossary_terms(GLOSSARY.read_text('utf-8')))} terms")
