"""Design-review features in the browser: links that carry inputs (also hostile ones),
copying results, baseline comparison, presets, keyboard-only use, phone and print."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import calculators
from calculators.catalogues import presets
from calculators.core import review, share
from tests.e2e.conftest import stall_worker_on

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.e2e.conftest import Watch

pytestmark = pytest.mark.e2e
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
W = "#gpt3-worked-example"
LIVE_MS = 60_000


def _ready(page: Page, widget: str = W) -> None:
    page.wait_for_selector(f'{widget}[data-state="ready"]', timeout=LIVE_MS)


def _raw(page: Page, output: str, widget: str = W) -> float:
    return float(page.get_attribute(f'{widget} [data-output="{output}"]', "data-value") or "nan")


def _copied(page: Page, action: str, widget: str = W) -> str:
    page.evaluate(f"document.querySelector('{widget}').dataset.copied = ''")
    page.click(f'{widget} [data-action="{action}"]')
    page.wait_for_function(f"document.querySelector('{widget}').dataset.copied !== ''")
    return str(page.get_attribute(widget, "data-copied"))


def test_link_round_trip(site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{site_url}/compute/")
    page.fill(f"{W} [name=params]", "70B")
    page.fill(f"{W} [name=tokens]", "2T")
    _ready(page)
    link = _copied(page, "copy-link")
    assert link == f"{site_url}/compute/?training_compute=params:70B,tokens:2T#gpt3-worked-example"
    fresh = page.context.browser.new_context(bypass_csp=True).new_page()  # type: ignore[union-attr]
    fresh.goto(link)
    _ready(fresh)
    assert fresh.input_value(f"{W} [name=params]") == "70B"
    assert fresh.input_value(f"{W} [name=tokens]") == "2T"
    expected = calculators.compute("training_compute", params="70B", tokens="2T")
    assert _raw(fresh, "gpu_hours") == expected.value("gpu_hours")
    fresh.context.close()
    watch.assert_clean()


def test_a_linked_widget_is_never_live_with_the_example_while_its_link_is_read(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    # Seen in CI: the runtime's start marked a linked widget ready, with the example's
    # numbers, in the moment before the link's values were decoded and written. Reading
    # the link (its decode call) is held back here so that the moment lasts.
    page, watch = watched_page
    stall_worker_on(page, "params:70B,tokens:2T",
                    "const until = Date.now() + 1500; while (Date.now() < until) {}")
    page.goto(f"{site_url}/compute/?training_compute=params:70B,tokens:2T#gpt3-worked-example")
    page.wait_for_function("() => window.__bmBoot !== undefined", timeout=LIVE_MS)
    page.wait_for_timeout(500)  # the runtime is ready; the decode call is still running
    assert page.get_attribute(W, "data-state") == "loading"
    assert "Restoring the inputs from the link" in (
        page.text_content(f"{W} [data-status]") or "")
    _ready(page)
    expected = calculators.compute("training_compute", params="70B", tokens="2T")
    assert _raw(page, "gpu_hours") == expected.value("gpu_hours")
    watch.assert_clean()


def test_hostile_links_are_ignored_with_notices(
    site_url: str, watched_page: tuple[Page, Watch]
) -> None:
    page, watch = watched_page
    hostile = (
        "?training_compute=params:-5,bogus:1,tokens:%3Cimg%20src%3Dx%20onerror%3Dwindow.__pwned%3D1%3E"
        "&training_compute=params:1B&nope=1&%3Cscript%3E=1&gpt3-worked-example.base=" + "x" * 9000
    )
    page.goto(f"{site_url}/compute/{hostile}#gpt3-worked-example")
    _ready(page)
    notice = page.text_content(f"{W} [data-notice]") or ""
    for expected in ("bogus", "params", "tokens", "repeated", "nope", "longer than"):
        assert expected in notice, expected
    assert page.input_value(f"{W} [name=params]") == "175B"  # the example's value stays
    assert page.evaluate("window.__pwned") is None
    assert page.locator(f"{W} img").count() == 0
    assert page.locator("script:not([src]):not([type='application/json'])").count() == 0
    watch.assert_clean()


def test_several_calculators_on_one_page(site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(
        f"{site_url}/compute/?gpt3-worked-example=num_gpus:2048"
        "&attention-correction=seq_len:8192#attention-correction"
    )
    _ready(page)
    _ready(page, "#attention-correction")
    assert page.input_value(f"{W} [name=num_gpus]") == "2048"
    assert page.input_value("#attention-correction [name=seq_len]") == "8192"
    expected = calculators.compute(
        "training_compute",
        params="175B",
        tokens="300B",
        seq_len="8192",
        layers="96",
        hidden="12288",
    )
    assert _raw(page, "attention_flops", "#attention-correction") == expected.value(
        "attention_flops"
    )
    watch.assert_clean()


def test_link_restored_after_instant_navigation(
    site_url: str, watched_page: tuple[Page, Watch]
) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/")
    page.evaluate("window.__same_document = true")
    page.evaluate("""() => { const a = document.createElement('a');
        // Absolute, so that a hover prefetch after the swap cannot re-resolve it.
        const link = 'compute/?training_compute=params:8B#gpt3-worked-example';
        a.href = new URL(link, location.href).href; a.id = 'go';
        a.textContent = 'go'; document.querySelector('article').append(a); }""")
    page.click("#go")
    page.wait_for_url("**/compute/**")
    _ready(page)
    assert page.evaluate("window.__same_document") is True  # instant navigation, no reload
    assert page.input_value(f"{W} [name=params]") == "8B"
    watch.assert_clean()


def test_copy_exports_match_python(site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{site_url}/compute/")
    page.fill(f"{W} [name=num_gpus]", "4096")
    _ready(page)
    texts = json.loads(page.get_attribute(W, "data-example") or "{}") | {"num_gpus": "4096"}
    result = calculators.compute("training_compute", **texts)
    copied = _copied(page, "markdown")
    link = re.search(r"Link \(restores every input below\): <([^>]+)>", copied)
    assert link is not None and link[1].endswith(f"?training_compute=num_gpus:4096{W}")
    assert copied == review.review_markdown(result, link=link[1])
    assert _copied(page, "csv") == review.review_csv(result, link=link[1])
    assert (
        json.loads(_copied(page, "json"))["outputs"]
        == json.loads(json.dumps(result.to_dict()))["outputs"]
    )
    calc = calculators.REGISTRY["training_compute"]
    assert _copied(page, "command") == share.command_line(calc, texts)
    watch.assert_clean()


def test_compare_against_a_pinned_baseline_and_link_it(
    site_url: str, watched_page: tuple[Page, Watch]
) -> None:
    page, watch = watched_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{site_url}/compute/")
    page.hover(W)
    page.click(f'{W} [data-action="pin"]')
    page.wait_for_selector(f"{W} [data-compare] table", timeout=LIVE_MS)
    page.fill(f"{W} [name=num_gpus]", "2048")
    page.wait_for_function(
        f"""document.querySelector('{W} [data-compare] tr[data-compare="wall_clock_days"]')
            ?.cells[4].textContent === '-50%'""",
        timeout=LIVE_MS,
    )
    link = _copied(page, "copy-link")
    assert "gpt3-worked-example.base=" in link or "training_compute.base=" in link
    fresh = page.context.browser.new_context(bypass_csp=True).new_page()  # type: ignore[union-attr]
    fresh.goto(link)
    fresh.wait_for_function(
        f"""document.querySelector('{W} [data-compare] tr[data-compare="wall_clock_days"]')
            ?.cells[4].textContent === '-50%'""",
        timeout=LIVE_MS,
    )
    fresh.context.close()
    watch.assert_clean()


def test_presets_fill_inputs(site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    calc = calculators.REGISTRY["training_compute"]
    available = presets.presets_for(calc)
    assert available, "training_compute should offer model presets"
    preset = available[0]
    page.goto(f"{site_url}/compute/")
    page.select_option(f"{W} select[data-preset]", preset.id)
    _ready(page)
    texts = json.loads(page.get_attribute(W, "data-example") or "{}")
    texts |= presets.preset_texts(calc, preset)
    for name, text in presets.preset_texts(calc, preset).items():
        assert page.input_value(f"{W} [name={name}]") == text
    assert _raw(page, "total_flops") == calculators.compute("training_compute", **texts).value(
        "total_flops"
    )
    watch.assert_clean()


def test_keyboard_only(site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{site_url}/compute/")
    page.focus(f"{W} [name=params]")  # reached by Tab in a real session; focus is the same event
    page.keyboard.press("Control+A")
    page.keyboard.type("13B")
    page.keyboard.press("Enter")
    _ready(page)
    assert _raw(page, "total_flops") == calculators.compute("training_compute", params="13B").value(
        "total_flops"
    )
    page.focus(f'{W} [data-action="copy-link"]')
    page.keyboard.press("Enter")
    page.wait_for_function(f"(document.querySelector('{W}').dataset.copied || '').includes('13B')")
    # Every control in the widget is reachable by Tab and has an accessible name.
    unnamed = page.eval_on_selector_all(
        f"{W} input, {W} select, {W} textarea, {W} button",
        """els => els.filter(e => !e.hidden && !(e.labels && e.labels.length)
               && !e.getAttribute('aria-label') && !e.textContent.trim()).map(e => e.outerHTML)""",
    )
    assert unnamed == []
    watch.assert_clean()


def test_phone_and_print(site_url: str, browser: object) -> None:
    context = browser.new_context(  # type: ignore[attr-defined]
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
        bypass_csp=True,
    )
    page = context.new_page()
    page.goto(f"{site_url}/compute/")
    page.tap(f"{W} [name=params]")
    page.fill(f"{W} [name=params]", "70B")
    _ready(page)
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth + 1")
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(W).screenshot(path=str(ARTIFACTS / "compute-phone.png"))
    page.emulate_media(media="print")
    assert page.locator(f"{W} [data-tools]").is_hidden()
    # Print keeps the summary, not the form or the full list (tests/e2e/test_print.py).
    assert page.locator(f"{W} [data-summary] [data-headline-value]").first.is_visible()
    assert page.locator(f'{W} [data-output="total_flops"]').is_hidden()
    assert page.locator(f"{W} form").is_hidden()
    context.close()
