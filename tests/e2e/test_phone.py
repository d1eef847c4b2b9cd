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


CONTROLS_END = """() => [...document.querySelectorAll('.md-content .bm-calc')].map((w) => {
  const top = w.getBoundingClientRect().top;
  const shown = [...w.querySelectorAll('form > .bm-calc__fields > [data-field]')]
    .filter((f) => f.offsetParent !== null);
  const more = w.querySelector('[data-phone-more]');
  if (more && more.offsetParent !== null) shown.push(more);
  return [w.id, Math.max(0, ...shown.map((el) => el.getBoundingClientRect().bottom - top))];
})"""


@pytest.mark.parametrize("path", ["capstone/", "moe/", "dense/", "sparse/", "post-training/"])
def test_each_widgets_question_fits_one_phone_screen(
        site_url: str, phone: Page, path: str) -> None:
    # Issue 37: widgets were 1,500-5,900 px tall with up to 36 fields shown. On a phone a
    # widget's head, its summary and the controls it shows (two columns; the model's shape
    # and the rest behind "Show N more inputs") end within one 844 px screen.
    phone.goto(f"{site_url}/{path}")
    phone.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    phone.wait_for_function("() => !document.querySelector('template[data-bm-lazy]')",
                            timeout=30_000)
    ends = dict(phone.evaluate(CONTROLS_END))
    assert ends
    too_tall = {widget: round(end) for widget, end in ends.items() if end > 844}
    assert too_tall == {}


def test_the_folded_inputs_open_on_a_tap_and_for_a_link(site_url: str, phone: Page) -> None:
    widget = "#deepseek-v3-layout"
    phone.goto(f"{site_url}/moe/#deepseek-v3-layout")
    more = phone.locator(f"{widget} [data-phone-more]")
    more.wait_for(state="visible", timeout=30_000)
    more.scroll_into_view_if_needed()
    hidden_field = phone.locator(f"{widget} [data-phone-fold][data-field='hidden']")
    assert hidden_field.is_hidden()
    more.tap()
    assert hidden_field.is_visible()
    assert more.get_attribute("aria-expanded") == "true"
    more.tap()
    assert hidden_field.is_hidden()
    # A link that sets a folded input shows it.
    phone.goto(f"{site_url}/moe/?deepseek-v3-layout=hidden:6144#deepseek-v3-layout")
    phone.wait_for_function(
        "(sel) => document.querySelector(sel + ' form').hasAttribute('data-phone-open')",
        arg=widget, timeout=60_000)
    assert hidden_field.is_visible()
