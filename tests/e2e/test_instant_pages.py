"""Pages that instant navigation swaps in: the widgets and prose in view are rendered
before the first frame, the others as the reader nears them and then when the page is
idle (reveal.js, prose.css), and a page being left reveals nothing more; Back lands on
the offset the reader left; the folded inputs, which the site keeps in one file, are
added when opened and before a link writes to them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

import calculators
from calculators.core import share

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

    from tests.e2e.conftest import Watch

pytestmark = pytest.mark.e2e
LIVE_MS = 60_000

#: Follow a nav link as the reader's click would (the theme's instant navigation takes
#: it over) and report, in the task that binds the new page's widgets, which of them
#: are deferred: before the first frame, as the reader would first see them.
FOLLOW_AND_REPORT = """async (href) => {
  const before = new Set(document.querySelectorAll("[data-calc]"));
  const bound = new Promise((resolve) => {
    const check = () => {
      const fresh = [...document.querySelectorAll("[data-calc]")].filter((w) => !before.has(w));
      if (fresh.length && fresh.every((w) => w.dataset.bound === "1")) {
        observer.disconnect();
        // In page order: the widgets in the document, and those still in lazy blocks
        // (reveal.js), which count as deferred.
        const blocks = document.querySelectorAll("[data-calc], template[data-bm-lazy]");
        resolve([...blocks].filter((b) => !before.has(b)).map((b) => {
          const lazy = b.tagName === "TEMPLATE";
          return { id: lazy ? b.dataset.widget : b.id, lazy,
                   deferred: lazy || b.hasAttribute("data-defer"),
                   // a lazy block's HTML is kept as text until revealed: not parsed
                   parsed: lazy ? b.content.childNodes.length : -1,
                   top: b.getBoundingClientRect().top };
        }));
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(document.body, { subtree: true, childList: true, attributes: true,
                                      attributeFilter: ["data-bound"] });
  });
  [...document.querySelectorAll("a.md-nav__link")]
    .find((a) => a.getAttribute("href").endsWith(href)).click();
  return bound;
}"""
DEFERRED = "document.querySelectorAll('[data-defer], template[data-bm-lazy]').length"
ALL_RENDERED = f"{DEFERRED} === 0"


def _example(page: Page, widget: str) -> dict[str, str]:
    return dict(json.loads(page.get_attribute(widget, "data-example") or "{}"))


def test_a_swapped_in_page_renders_what_is_in_view_first_then_the_rest(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/compute/")
    # The first page is laid out by the browser's own load: nothing is held back.
    page.wait_for_selector("#gpt3-worked-example[data-bound='1']")
    assert page.evaluate(ALL_RENDERED)
    widgets = page.evaluate(FOLLOW_AND_REPORT, "dense/")
    assert len(widgets) > 10
    height = page.evaluate("innerHeight")
    in_view = [w for w in widgets if w["top"] < height]
    assert in_view and not any(w["deferred"] for w in in_view), in_view
    assert any(w["deferred"] for w in widgets), "the dense chapter defers nothing"
    # Widgets not near the screen are not even in the document yet: each is an empty
    # <template> that names it, its HTML kept as text (reveal.js), so the swap neither
    # parsed, inserted nor styled them.
    lazy = [w for w in widgets if w["lazy"]]
    assert len(lazy) > 10 and all(w["top"] >= height for w in lazy), lazy
    assert all(w["parsed"] == 0 and w["id"] for w in lazy), lazy
    # The rest follows when the page is idle: every widget, with its form, on screen.
    page.wait_for_function(ALL_RENDERED, timeout=10_000)
    assert page.locator("[data-calc]").count() == len(widgets)
    assert page.locator("[data-calc][data-bound='1']").count() == len(widgets)
    last = widgets[-1]["id"]
    page.locator(f"#{last} form [name]").first.scroll_into_view_if_needed()
    assert page.locator(f"#{last} form [name]").first.is_visible()
    watch.assert_clean()


PROSE_STATE = """() => {
  const article = document.querySelector("article.md-typeset");
  const blocks = [...article.querySelectorAll(":scope > p, :scope > ul, :scope > ol")];
  const inView = (b) => { const r = b.getBoundingClientRect();
                          return r.bottom > 0 && r.top < innerHeight; };
  const held = (b) => getComputedStyle(b).contentVisibility === "auto";
  const shown = blocks.filter(inView);
  return { lazy: article.classList.contains("bm-prose-lazy"), blocks: blocks.length,
           inView: shown.length, heldInView: shown.filter(held).length,
           held: blocks.filter(held).length,
           firstWidgetTop: document.querySelector("[data-calc]").getBoundingClientRect().top };
}"""


def test_a_swapped_in_page_lays_out_its_prose_in_view_first_then_all_of_it(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    """The prose of a swapped-in page is laid out where the reader sees it before the
    first frame, the rest once the page has settled (prose.css, reveal.js), and what
    is in view does not move when the rest comes in."""
    page, watch = watched_page
    page.goto(f"{site_url}/compute/")
    page.wait_for_selector("#gpt3-worked-example[data-bound='1']")
    # The first page is the browser's own load: all of it laid out.
    loaded = page.evaluate(PROSE_STATE)
    assert not loaded["lazy"] and loaded["held"] == 0, loaded
    page.evaluate(FOLLOW_AND_REPORT, "dense/")
    swapped = page.evaluate(PROSE_STATE)
    assert swapped["lazy"] and swapped["inView"] > 0 and swapped["heldInView"] == 0, swapped
    assert swapped["held"] > 20, swapped  # the dense chapter's prose below the screen
    page.wait_for_function(ALL_RENDERED, timeout=10_000)
    settled = page.evaluate(PROSE_STATE)
    assert not settled["lazy"] and settled["held"] == 0, settled
    assert abs(settled["firstWidgetTop"] - swapped["firstWidgetTop"]) < 1, (swapped, settled)
    watch.assert_clean()


def test_a_page_being_left_reveals_nothing_more(site_url: str,
                                               watched_page: tuple[Page, Watch]) -> None:
    """While the next page is on its way the page being left stays as it is: a block
    revealed then would cost a style, layout and paint of a page about to go. The next
    page's blocks are all revealed, in view first."""
    page, watch = watched_page
    page.goto(f"{site_url}/compute/")
    page.wait_for_selector("#gpt3-worked-example[data-bound='1']")
    page.evaluate(FOLLOW_AND_REPORT, "dense/")
    held: list[Route] = []  # the next page's response, held back while we watch
    # A bound method is refused as a handler (Playwright tags the function it is given).
    page.route("**/communication/", lambda route: held.append(route))  # noqa: PLW0108
    waiting = page.evaluate(DEFERRED)
    assert waiting > 5
    page.evaluate("""[...document.querySelectorAll("a.md-nav__link")]
        .find((a) => a.getAttribute("href").endsWith("communication/")).click()""")
    for _ in range(50):
        if held:
            break
        page.wait_for_timeout(20)
    assert held, "the theme did not ask for the next page"
    # Past the settle time and several idle moments: revealing would have begun.
    page.wait_for_timeout(1_200)
    assert page.locator("#gpt3-parameters").count() == 1  # still the dense chapter
    assert page.evaluate(DEFERRED) == waiting
    held[0].continue_()
    page.unroute("**/communication/")
    page.wait_for_selector("#nvlink-allreduce[data-bound='1']")
    page.wait_for_function(ALL_RENDERED, timeout=10_000)
    watch.assert_clean()


def test_back_lands_where_the_reader_left(site_url: str,
                                          watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/compute/")
    page.wait_for_selector("#gpt3-worked-example[data-bound='1']")
    page.evaluate(FOLLOW_AND_REPORT, "dense/")
    page.wait_for_function(ALL_RENDERED, timeout=10_000)
    target = "#gpt3-1024-a100"
    page.eval_on_selector(target, "w => w.scrollIntoView()")
    page.wait_for_timeout(400)  # the theme keeps the offset after 100 ms without scrolling
    left = page.evaluate("scrollY")
    assert left > 5_000
    page.evaluate(FOLLOW_AND_REPORT, "communication/")
    page.go_back()
    page.wait_for_url("**/dense/**")
    page.wait_for_selector(f"{target}[data-bound='1']")
    page.wait_for_function(f"Math.abs(scrollY - {left}) < 2", timeout=5_000)
    top = page.eval_on_selector(target, "w => w.getBoundingClientRect().top")
    assert abs(top) < 2, top  # the same widget at the top of the screen
    watch.assert_clean()


def test_folded_inputs_are_added_when_opened(site_url: str,
                                             watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/compute/")
    widget = "#gpt3-worked-example"
    calc = calculators.REGISTRY["training_compute"]
    fold = page.locator(f"{widget} details.bm-calc__more")
    assert fold.get_attribute("data-more") == "pending"
    assert page.locator(f"{widget} [name=peak_flops]").count() == 0
    page.click(f"{widget} details.bm-calc__more > summary")
    page.wait_for_selector(f'{widget} details[data-more="ready"]')
    shown = page.locator(f"{widget} details [data-field]:not([hidden])").count()
    assert page.text_content(f"{widget} [data-more-count]") == str(shown)
    # Ids, labels and help are the widget's own, as for its first inputs.
    field = page.locator(f"#{widget[1:]}-peak_flops")
    assert field.get_attribute("name") == "peak_flops"
    assert page.locator(f"label[for='{widget[1:]}-peak_flops']").count() == 1
    assert field.get_attribute("aria-describedby") == f"{widget[1:]}-peak_flops-help"
    # An edit of a folded input recomputes like any other.
    page.fill(f"{widget} [name=peak_flops]", "500T")
    expected = calculators.compute(calc.id, **{**_example(page, widget), "peak_flops": "500T"})
    page.wait_for_function(
        f"""document.querySelector('{widget} [data-output="gpu_hours"]').dataset.value ===
            '{expected.raw("gpu_hours")}'""", timeout=LIVE_MS)
    watch.assert_clean()


def test_a_link_to_a_folded_input_restores_it(site_url: str,
                                              watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    calc = calculators.REGISTRY["training_compute"]
    texts = {"pue": "1.5", "params": "70B"}
    state = share.encode_state(calc, texts)
    assert calc.is_advanced("pue") and not calc.is_advanced("params")
    page.goto(f"{site_url}/compute/?gpt3-worked-example={state}")
    widget = "#gpt3-worked-example"
    page.wait_for_function(
        f"document.querySelector('{widget} [name=pue]')?.value === '1.5'", timeout=LIVE_MS)
    expected = calculators.compute(calc.id, **{**_example(page, widget), **texts})
    page.wait_for_function(
        f"""document.querySelector('{widget} [data-output="energy_kwh"]')?.dataset.value ===
            '{expected.raw("energy_kwh")}'""", timeout=LIVE_MS)
    watch.assert_clean()


FOLLOW_LINK = """(href) => {
  const link = document.createElement("a");
  link.href = href;
  link.textContent = "a link in the text";
  document.querySelector("article").append(link);
  link.click();
}"""
#: Held blocks come in only when near the screen: no idle moments, no scrolling observer.
NOTHING_REVEALED_ON_ITS_OWN = """window.requestIdleCallback = () => 0;
    window.IntersectionObserver = class { observe() {} unobserve() {} disconnect() {} };"""
HELD_WIDGETS = """() => [...document.querySelectorAll('template[data-bm-lazy]')]
    .map((t) => t.dataset.widget)"""


def _follow_from_compute(page: Page, site_url: str, href: str) -> None:
    """From the compute chapter, a link in the text to href (a dense-chapter anchor)."""
    page.add_init_script(NOTHING_REVEALED_ON_ITS_OWN)
    page.goto(f"{site_url}/compute/")
    page.wait_for_selector("#gpt3-worked-example[data-bound='1']")
    page.evaluate(FOLLOW_LINK, f"../dense/{href}")
    page.wait_for_url(f"**/dense/{href}")


def test_a_link_into_a_lazy_widget_lands_on_it_and_keys_it_by_its_id(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    """Instant navigation to an anchor inside a widget that the swap held in a lazy
    block: the widget is brought in and scrolled to, clear of the sticky header. The
    page's first widget of that calculator (gpt3-on-one-gpu, screens above) is still
    held back, and the edited widget's inputs go into the address under its own id, not
    under the calculator's name, which belongs to that first one."""
    page, watch = watched_page
    _follow_from_compute(page, site_url, "#gpt3-3d-memory")
    widget = "#gpt3-3d-memory"
    page.wait_for_selector(f"{widget}[data-bound='1']")
    top = page.eval_on_selector(widget, "w => w.getBoundingClientRect().top")
    header = page.eval_on_selector(".md-header", "h => h.getBoundingClientRect().bottom")
    assert header <= top < page.evaluate("innerHeight") / 2, (header, top)
    assert "gpt3-on-one-gpu" in page.evaluate(HELD_WIDGETS), "gpt3-on-one-gpu was not held back"
    page.fill(f"{widget} [name=tp]", "4")
    page.wait_for_selector(f'{widget}[data-state="ready"]', timeout=LIVE_MS)
    page.wait_for_function("location.search.includes('gpt3-3d-memory=')", timeout=5_000)
    keys = [part.split("=", 1)[0] for part in page.evaluate("location.search")[1:].split("&")]
    assert keys == ["gpt3-3d-memory"], keys
    # still held back when the address was written
    assert "gpt3-on-one-gpu" in page.evaluate(HELD_WIDGETS)
    watch.assert_clean()


def test_a_link_to_an_element_inside_a_lazy_widget_brings_that_widget_in(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    """The anchor is not the widget but a field in it: the lazy block is found by the
    text it holds (it is not parsed until revealed), brought in, and the field shown."""
    page, watch = watched_page
    _follow_from_compute(page, site_url, "#gpt3-3d-memory-tp")
    page.wait_for_selector("#gpt3-3d-memory[data-bound='1']")
    top = page.eval_on_selector("#gpt3-3d-memory-tp", "f => f.getBoundingClientRect().top")
    assert 0 <= top < page.evaluate("innerHeight"), top
    still = page.evaluate(HELD_WIDGETS)
    assert "gpt3-on-one-gpu" in still and "gpt3-3d-memory" not in still, still
    watch.assert_clean()
