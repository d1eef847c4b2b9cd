"""Printing a chapter (issue 37): the prose and each calculator's summary and warnings,
not its form, so that the capstone prints in at most 12 A4 pages (it gave 70) with no
table or code block wider than the page; a calculator's explanation table and notes
print when the reader ticks "Print its table"."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.e2e.conftest import Watch

pytestmark = pytest.mark.e2e
MAX_CAPSTONE_PAGES = 12
#: Tables and code blocks that reach past the content column, or scroll, in print.
CUT = """() => {
  const column = document.querySelector('.md-content').getBoundingClientRect();
  return [...document.querySelectorAll('.md-content table, .md-content pre')]
    .filter((el) => el.offsetParent !== null)
    .filter((el) => el.getBoundingClientRect().right > column.right + 1
                    || el.scrollWidth > el.clientWidth + 1)
    .map((el) => (el.querySelector('caption') || el).textContent.slice(0, 60));
}"""


def _pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf))


def test_the_capstone_prints_in_a_handful_of_pages(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.set_viewport_size({"width": 794, "height": 1123})
    page.goto(f"{site_url}/capstone/")
    page.emulate_media(media="print")
    assert page.evaluate(CUT) == []
    widget = "#llama3-70b-30-days"
    # The summary prints with its layout and deadline; the form and table do not.
    assert page.is_visible(f'{widget} [data-headline="layout"]')
    assert page.is_visible(f'{widget} [data-headline="deadline_status"]')
    assert not page.is_visible(f"{widget} form")
    assert not page.is_visible(f"{widget} [data-table]")
    pages = _pages(page.pdf(format="A4"))
    assert 4 <= pages <= MAX_CAPSTONE_PAGES, pages
    # A table the reader chose prints too, within the page.
    page.emulate_media(media="screen")
    page.hover(widget)
    page.wait_for_selector(f"{widget} [data-tools]:not([hidden])", timeout=60_000)
    page.check(f"{widget} [data-print-table]")
    page.emulate_media(media="print")
    assert page.is_visible(f"{widget} [data-table] table")
    assert page.evaluate(CUT) == []
    assert _pages(page.pdf(format="A4")) > pages
    watch.assert_clean()
