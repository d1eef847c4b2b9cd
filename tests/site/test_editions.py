"""The Chinese edition under /zh/ (issue 39): every page has one, with the same widgets
(ids, calculators, example inputs, pre-rendered numbers) and the same anchors as its
English page, and the edition shares the English build's runtime instead of a copy."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bigmodel_guide.edition_parity import compare, zh_path
from tests.site.htmlscan import PageScan

pytestmark = pytest.mark.site
ROOT = Path(__file__).resolve().parents[2]
ENGLISH_PAGES = sorted(p for p in (ROOT / "docs").glob("*.md") if not p.name.endswith(".zh.md"))


def _scan(path: Path) -> PageScan:
    scan = PageScan()
    scan.feed(path.read_text(encoding="utf-8"))
    return scan


def _numbers(outputs: dict[str, str]) -> dict[str, str]:
    """The outputs whose raw value is a number, a flag or blank: the same in both editions
    (a text output, such as the fastest placement's name, is in the page's language)."""
    def numeric(raw: str) -> bool:
        try:
            float(raw)
        except ValueError:
            return raw in ("", "true", "false")
        return True
    return {name: raw for name, raw in outputs.items() if numeric(raw)}


def _english_pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("index.html")
                  if p.relative_to(site).parts[0] not in ("zh", "pyodide", "assets", "search"))


@pytest.mark.parametrize("page", ENGLISH_PAGES, ids=[p.stem for p in ENGLISH_PAGES])
def test_every_chapter_has_a_zh_source_that_keeps_its_anchors_fences_and_links(
        page: Path) -> None:
    chinese = zh_path(page)
    assert chinese.exists(), f"{page.name} has no Chinese edition ({chinese.name})"
    parity = compare(page.read_text(encoding="utf-8"), chinese.read_text(encoding="utf-8"))
    assert parity.ok, "\n".join(parity.report())


def test_every_built_page_has_a_zh_page_with_the_same_widgets_and_anchors(
        built_site: Path) -> None:
    compared = 0
    for english in _english_pages(built_site):
        chinese = built_site / "zh" / english.relative_to(built_site)
        assert chinese.exists(), f"no zh page for {english.relative_to(built_site)}"
        en, zh = _scan(english), _scan(chinese)
        assert [(w.calc_id, w.widget_id, w.example, _numbers(w.outputs)) for w in zh.widgets] \
            == [(w.calc_id, w.widget_id, w.example, _numbers(w.outputs)) for w in en.widgets], \
            chinese
        headings = {i for i in en.ids if not i.startswith(("__", "fn"))}
        assert headings <= zh.ids, f"{chinese}: missing {sorted(headings - zh.ids)[:8]}"
        compared += 1
    assert compared >= 15  # chapters, glossary, the reference's pages, hardware, validation


def test_zh_pages_are_chinese_and_switch_back_to_english(built_site: Path) -> None:
    html = (built_site / "zh" / "dense" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="zh"' in html
    assert 'hreflang="en"' in html and 'hreflang="zh"' in html
    assert '<script type="application/json" id="bm-ui-text">' in html
    english = (built_site / "dense" / "index.html").read_text(encoding="utf-8")
    assert 'id="bm-ui-text"' not in english


def test_the_editions_share_one_runtime_and_one_set_of_assets(built_site: Path) -> None:
    """The site grows by the zh pages only: no second Pyodide, wheel or stylesheet."""
    zh = built_site / "zh"
    assert not (zh / "pyodide").exists() and not (zh / "assets").exists()
    extra = {p.relative_to(zh).as_posix() for p in zh.rglob("*") if p.is_file()}
    assert extra, "no zh pages"
    assert all(p.endswith("index.html") or p == "search/search_index.json" or
               p.startswith("sitemap") or p == "404.html" for p in extra), sorted(extra)[:10]
    page = (zh / "compute" / "index.html").read_text(encoding="utf-8")
    assert '"../../assets/calculators/loader.js"' in page


def test_each_edition_has_its_own_search_index(built_site: Path) -> None:
    english = json.loads((built_site / "search" / "search_index.json").read_text("utf-8"))
    chinese = json.loads((built_site / "zh" / "search" / "search_index.json").read_text("utf-8"))
    assert english["docs"] and chinese["docs"]
    assert not any(d["location"].startswith("zh/") for d in english["docs"])
    assert all(d["location"].startswith("zh/") for d in chinese["docs"])
    # Chinese is segmented at build time (jieba, zero-width spaces): the glossary's
    # terms are whole words of the zh index.
    text = " ".join(d["text"] for d in chinese["docs"])
    for term in ("显存", "流水线并行", "多打一"):
        assert term in text


class _ReadableText(HTMLParser):
    """The article's text a reader reads as prose: without code, links and citations
    (sources are cited as published, in English, in both editions)."""

    SKIPPED = frozenset({"code", "a", "cite", "script", "style", "pre"})

    def __init__(self) -> None:
        super().__init__()
        self.inside = 0
        self.skipping = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, _attrs: list[tuple[str, str | None]]) -> None:
        self.inside += tag == "article"
        self.skipping += tag in self.SKIPPED

    def handle_endtag(self, tag: str) -> None:
        self.inside -= tag == "article"
        self.skipping -= tag in self.SKIPPED

    def handle_data(self, data: str) -> None:
        if self.inside and not self.skipping:
            self.parts.append(data)


#: Text quoted from a source, which stays as published.
QUOTED = re.compile(r'"[^"]{0,300}"|“[^”]{0,300}”|‘[^’]{0,300}’|(?<![A-Za-z])\'[^\']{0,300}\'')
#: Four lower-case English words in a row: prose left untranslated.
ENGLISH_RUN = re.compile(r"\b[a-z]{2,}(?:[ -][a-z]{2,}){3,}\b")


@pytest.mark.parametrize("page", ["reference/validation", "reference/hardware"])
def test_the_generated_pages_are_in_chinese_with_the_same_rows(
        built_site: Path, page: str) -> None:
    """The Validation and Hardware pages are written by the build, from data: in the zh
    edition their prose (claims, tolerances, derivations, sources' summaries, headers) is
    Chinese, and they hold the same rows as the English pages."""
    html = (built_site / "zh" / page / "index.html").read_text(encoding="utf-8")
    reader = _ReadableText()
    reader.feed(html)
    text = QUOTED.sub("", " ".join(reader.parts))  # a source quoted in its own words
    english = sorted(set(ENGLISH_RUN.findall(text)))
    assert english == [], f"zh/{page}: English left: {english[:10]}"
    assert len(re.findall(r"[\u4e00-\u9fff]", text)) > 1000
    rows = re.compile(r'<tr id="((?:check|run)-[^"]+)"')
    en_html = (built_site / page / "index.html").read_text(encoding="utf-8")
    assert rows.findall(html) == rows.findall(en_html)
