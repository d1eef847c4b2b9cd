"""The Chinese edition in headless Chromium (issue 39): live results in Chinese with the
same numbers, a share link restored in zh and carried to the English page by the
language switch, Chinese search, and nothing requested from another origin."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import calculators
from calculators.core.localise import localised

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.e2e.conftest import Watch

pytestmark = pytest.mark.e2e
WIDGET = "#gpt3-worked-example"
LIVE_MS = 60_000
RESULT = ".md-search-result__item"


def _raw(page: Page, output: str) -> float:
    raw = page.locator(f'{WIDGET} [data-output="{output}"]').get_attribute("data-value")
    assert raw is not None
    return float(raw)


@pytest.mark.parametrize("width", [1280, 390])
def test_a_zh_widget_recomputes_live_in_chinese_with_the_english_numbers(
        width: int, site_url: str, strict_page: tuple[Page, Watch]) -> None:
    page, watch = strict_page
    page.set_viewport_size({"width": width, "height": 900 if width > 400 else 844})
    page.goto(f"{site_url}/zh/compute/")
    assert page.get_attribute("html", "lang") == "zh"
    page.fill(f"{WIDGET} [name=params]", "700 亿")  # a count as Chinese engineers write it
    page.wait_for_selector(f'{WIDGET}[data-state="ready"]', timeout=LIVE_MS)
    expected = calculators.compute("training_compute", params="70B", tokens="300B")
    assert _raw(page, "total_flops") == expected.value("total_flops")
    hours = page.locator(f'{WIDGET} [data-output="gpu_hours"]').text_content() or ""
    assert "卡时" in hours, hours
    status = page.locator(f"{WIDGET} [data-status]").text_content() or ""
    assert status.startswith("实时"), status
    label = localised(calculators.REGISTRY["training_compute"], "zh").param("params").label
    shown = page.locator(f"{WIDGET} label[for$='-params']").text_content() or ""
    assert shown.startswith(label), (shown, label)
    watch.assert_clean()


def test_a_bad_value_is_refused_in_chinese_beside_its_field(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/zh/compute/")
    page.fill(f"{WIDGET} [name=num_gpus]", "-5")
    page.wait_for_selector(f'{WIDGET}[data-state="error"]', timeout=LIVE_MS)
    said = page.locator(f'{WIDGET} [data-error-for="num_gpus"]').text_content() or ""
    assert "不允许" in said, said
    watch.assert_clean()


def test_a_zh_share_link_restores_and_the_switch_keeps_it_in_english(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    link = f"{site_url}/zh/compute/?training_compute=params:70B,tokens:2T#gpt3-worked-example"
    page.goto(link)
    page.wait_for_selector(f'{WIDGET}[data-state="ready"]', timeout=LIVE_MS)
    assert page.input_value(f"{WIDGET} [name=params]") == "70B"
    expected = calculators.compute("training_compute", params="70B", tokens="2T")
    assert _raw(page, "total_flops") == expected.value("total_flops")
    # The header's language link, as a reader clicks it (its menu opens on hover).
    page.hover(".md-header .md-select")
    page.click(".md-select__link[hreflang='en']")
    page.wait_for_url("**/compute/?training_compute=*", timeout=LIVE_MS)
    assert "/zh/" not in page.url and page.url.endswith("#gpt3-worked-example")
    assert page.get_attribute("html", "lang") == "en"
    page.wait_for_selector(f'{WIDGET}[data-state="ready"]', timeout=LIVE_MS)
    assert page.input_value(f"{WIDGET} [name=params]") == "70B"
    assert _raw(page, "total_flops") == expected.value("total_flops")
    # And back: the same page, section and inputs in Chinese.
    page.hover(".md-header .md-select")
    page.click(".md-select__link[hreflang='zh']")
    page.wait_for_url("**/zh/compute/?training_compute=*", timeout=LIVE_MS)
    assert page.url.endswith("#gpt3-worked-example")
    watch.assert_clean()


def test_the_switch_keeps_the_page_after_instant_navigation(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    """The header stays across instant navigation; the switch reads the address when it
    is clicked, so it takes the reader to the page on screen, not the first one."""
    page, watch = watched_page
    page.goto(f"{site_url}/zh/")
    page.evaluate("window.bmSamePage = true")
    page.click("a[href$='dense/']:visible >> nth=0")
    page.wait_for_url("**/zh/dense/", timeout=LIVE_MS)
    assert page.evaluate("window.bmSamePage === true"), "a full load, not instant navigation"
    page.hover(".md-header .md-select")
    page.click(".md-select__link[hreflang='en']")
    page.wait_for_url(f"{site_url}/dense/", timeout=LIVE_MS)
    watch.assert_clean()


def test_navigation_in_the_zh_edition_is_instant_and_live(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    """Instant navigation loads a zh page in place only if the sitemap it reads (the
    site root's, for both editions) lists it: from a live zh chapter, the nav's link to
    another stays in the same document, in Chinese, and its first widget recomputes."""
    page, watch = watched_page
    page.goto(f"{site_url}/zh/dense/")
    page.fill("#gpt3-parameters [name=layers]", "80")
    page.wait_for_selector('#gpt3-parameters[data-state="ready"]', timeout=LIVE_MS)
    page.evaluate("window.bmSamePage = true")
    page.click("a.md-nav__link[href$='/zh/compute/']:visible >> nth=0")
    page.wait_for_url(f"{site_url}/zh/compute/", timeout=LIVE_MS)
    assert page.evaluate("window.bmSamePage === true"), "a full load, not instant navigation"
    assert page.get_attribute("html", "lang") == "zh"
    page.fill(f"{WIDGET} [name=params]", "700 亿")
    page.wait_for_selector(f'{WIDGET}[data-state="ready"]', timeout=LIVE_MS)
    assert _raw(page, "total_flops") == calculators.compute(
        "training_compute", params="70B", tokens="300B").value("total_flops")
    status = page.locator(f"{WIDGET} [data-status]").text_content() or ""
    assert status.startswith("实时"), status
    watch.assert_clean()


@pytest.mark.parametrize("term", ["显存", "流水线并行", "多打一"])
def test_chinese_search_finds_chinese_pages(
        term: str, site_url: str, strict_page: tuple[Page, Watch]) -> None:
    page, watch = strict_page
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "search_index" in r.url else None)
    page.goto(f"{site_url}/zh/", wait_until="networkidle")
    page.click(".md-search__input")
    page.keyboard.type(term)
    page.wait_for_selector(RESULT, timeout=15_000)
    hrefs = page.eval_on_selector_all(f"{RESULT} a", "els => els.map(e => e.href)")
    assert hrefs and all("/zh/" in h for h in hrefs[:5]), hrefs[:5]
    assert asked and all(u.endswith("/zh/search/search_index.json") for u in asked), asked
    watch.assert_clean()
