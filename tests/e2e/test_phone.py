"""Reading on a phone (issue 37), at 390 x 844 with touch: an abbreviation opens on tap
(there is no hover; the theme's tooltips stay off for instant navigation's sake), and a
wide table's caption stays whole above its scroll box instead of scrolling out of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.e2e
CUT_CAPTIONS = """() => [...document.querySelectorAll('.md-content .bm-table-caption')]
  .filter((line) => line.offsetParent !== null)
  .filter((line) => {
    const box = line.closest('.bm-scroll').getBoundingClientRect();
    const own = line.getBoundingClientRect();
    return own.left < box.left - 1 || own.right > box.right + 1
      || line.scrollWidth > line.clientWidth + 1;
  })
  .map((line) => line.textContent.slice(0, 60))"""


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                  has_touch=True, device_scale_factor=2)
    yield context.new_page()
    context.close()


def test_an_abbreviation_opens_on_tap(site_url: str, phone: Page) -> None:
    phone.goto(f"{site_url}/compute/")
    abbr = phone.locator(".md-content abbr[title]").first
    abbr.scroll_into_view_if_needed()
    title = abbr.get_attribute("title") or ""
    assert title

    def shown() -> str:
        return str(phone.evaluate("(el) => getComputedStyle(el, '::after').content",
                                  abbr.element_handle()))

    assert title not in shown()
    abbr.tap()
    assert title in shown()
    abbr.tap()  # a second tap closes it
    assert title not in shown()
    abbr.tap()
    phone.locator(".md-content h1").first.tap()  # so does a tap elsewhere
    assert title not in shown()


@pytest.mark.parametrize("path", ["capstone/", "dense/", "sparse/"])
def test_table_captions_stay_whole_beside_a_sideways_scroll(
        site_url: str, phone: Page, path: str) -> None:
    phone.goto(f"{site_url}/{path}")
    assert phone.locator(".md-content .bm-table-caption").count() >= 5
    assert phone.evaluate(CUT_CAPTIONS) == []
    # Scrolled sideways, the first wide table keeps its caption where it was.
    box = phone.locator(".bm-calc__table.bm-scroll").first
    box.scroll_into_view_if_needed()
    before = phone.evaluate("(b) => b.querySelector('.bm-table-caption')"
                            ".getBoundingClientRect().left", box.element_handle())
    phone.evaluate("(b) => { b.scrollLeft = 200; }", box.element_handle())
    assert phone.evaluate("(b) => b.scrollLeft", box.element_handle()) > 0  # it scrolls
    after = phone.evaluate("(b) => b.querySelector('.bm-table-caption')"
                           ".getBoundingClientRect().left", box.element_handle())
    assert abs(after - before) <= 1
