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


def _table() -> dict[str, tuple[str, str]]:
    with (ROOT / "i18n" / "terminology.csv").open(encoding="utf-8", newline="") as handle:
        return {row["glossary_id"]: (row["english"], row["chinese"])
                for row in csv.DictReader(handle)}


def test_the_english_glossary_names_the_tables_chinese_terms() -> None:
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    found = {gid: (en, zh) for en, zh, gid in ENGLISH_ENTRY.findall(text)}
    assert found == _table()


def test_the_chinese_glossary_leads_with_the_tables_terms() -> None:
    text = (ROOT / "docs" / "glossary.zh.md").read_text(encoding="utf-8")
    found = {gid: (en, zh) for zh, en, gid in CHINESE_ENTRY.findall(text)}
    assert found == _table()
    assert len(found) >= 130
