"""The terminology table (i18n/terminology.csv) is the glossary's, in both editions: each
English entry's Chinese term and each Chinese entry's term are the table's."""

from __future__ import annotations

import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
ENGLISH_ENTRY = re.compile(
    r'^\*\*(.+?)\*\* · <span lang="zh-Hans">(.+?)</span> \{ #([a-z0-9-]+) \}', re.M)
CHINESE_ENTRY = re.compile(r"^\*\*(.+?)\*\* · (.+?) \{ #([a-z0-9-]+) \}", re.M)


def _rows() -> list[dict[str, str]]:
    with (ROOT / "i18n" / "terminology.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _table() -> dict[str, tuple[str, str]]:
    return {row["glossary_id"]: (row["english"], row["chinese"]) for row in _rows()}


def test_the_english_glossary_names_the_tables_chinese_terms() -> None:
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    found = {gid: (en, zh) for en, zh, gid in ENGLISH_ENTRY.findall(text)}
    assert found == _table()


def test_the_chinese_glossary_leads_with_the_tables_terms() -> None:
    text = (ROOT / "docs" / "glossary.zh.md").read_text(encoding="utf-8")
    found = {gid: (en, zh) for zh, en, gid in CHINESE_ENTRY.findall(text)}
    assert found == _table()
    assert len(found) >= 130


#: The table's note on a term engineers say in English in Chinese prose too.
KEPT = "English kept in prose"
#: Link targets and italic titles (*Collective Communication for 100k+ GPUs*): a term
#: there is a name, not the chapter's use of it.
CITED = re.compile(r"\]\([^)]*\)|\*[A-Z][^*\n]*\*")


def _core(term: str) -> str:
    """A term without its parenthesised gloss (full-width or ASCII brackets)."""
    return re.sub(r"[（(].*?[）)]", "", term).strip()


def _glosses(term: str) -> list[str]:
    return re.findall(r"[（(](.*?)[）)]", term)


def _named_in_chinese(chinese: str, english: str, text: str, *, kept: bool) -> bool:
    """The zh chapter names the term: by the table's Chinese (or its gloss), by a
    leading or trailing part of at least half of it ("点对点" for "点对点通信"), or, for
    a term the table says engineers keep in English (ZeRO, NCCL, MFU), in English."""
    words = [w.strip() for w in re.split(r"[、，/]", _core(chinese)) if w.strip()]
    words += _glosses(chinese)
    for word in words:
        if word in text:
            return True
        half = max(3, (len(word) + 1) // 2)
        if len(word) > half and (word[:half] in text or word[-half:] in text):
            return True
    if not kept:
        return False
    forms = [w.strip() for w in re.split(r"[,/]", _core(english)) if w.strip()]
    forms += _glosses(english)
    return any(re.search(rf"(?<![A-Za-z]){re.escape(w)}(?![A-Za-z])", text, re.I) for w in forms)


def test_each_zh_chapter_names_the_tables_terms_its_english_chapter_uses() -> None:
    """Where an English chapter uses a term of the table, its Chinese edition names it
    the table's way, so that a term does not drift between chapters (colocated was once
    训推一体 in one chapter, 共卡部署 in another and 共置 in the calculators)."""
    drifted = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name.endswith(".zh.md") or page.stem == "glossary":
            continue
        english = CITED.sub("", page.read_text(encoding="utf-8"))
        chinese = page.with_suffix(".zh.md").read_text(encoding="utf-8")
        for row in _rows():
            term, en, zh = row["glossary_id"], row["english"], row["chinese"]
            first = re.split(r"[,/]", _core(en))[0].strip()
            used = re.search(rf"(?<![A-Za-z-]){re.escape(first)}(?![A-Za-z-])", english,
                             0 if first.isupper() or first != first.capitalize() else re.I)
            if used and not _named_in_chinese(zh, en, chinese, kept=row["note"] == KEPT):
                drifted.append(f"{page.stem}: {term} ({en} -> {zh})")
    assert drifted == []
