"""The post-training chapter in headless Chromium: an RL step's placement changed in the
page recomputes in Pyodide to what native Python gives, and its link restores it in a
fresh browser."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import calculators
from bigmodel_guide.fence import find_fences, parse_fence

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.e2e.conftest import Watch

pytestmark = pytest.mark.e2e
LIVE_MS = 60_000
CHAPTER = Path(__file__).resolve().parents[2] / "docs" / "post-training.md"


def _first(calc_id: str) -> tuple[str, dict[str, object]]:
    """The anchor and inputs of the chapter's first widget of ``calc_id``."""
    for located in find_fences(CHAPTER.read_text(encoding="utf-8")):
        fence = parse_fence(located.source)
        if fence.calc_id == calc_id:
            return f"#{fence.anchor}", dict(fence.overrides)
    raise AssertionError(f"no {calc_id} widget in the chapter")


def _raw(page: Page, widget: str, output: str) -> str:
    return str(page.get_attribute(f'{widget} [data-output="{output}"]', "data-value"))


def test_a_placement_changed_in_the_page_recomputes_and_its_link_restores_it(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    widget, inputs = _first("rl_step")
    page.goto(f"{site_url}/post-training/")
    chosen = "fully_async" if inputs.get("placement") != "fully_async" else "colocated"
    before = _raw(page, widget, "step_time")
    page.select_option(f"{widget} [name=placement]", chosen)
    page.wait_for_function(
        "([w, v]) => document.querySelector(w + ' [data-output=\"step_time\"]')"
        ".dataset.value !== v", arg=[widget, before], timeout=LIVE_MS)
    page.wait_for_selector(f'{widget}[data-state="ready"]', timeout=LIVE_MS)
    expected = calculators.compute("rl_step", **{**inputs, "placement": chosen})
    for name in ("step_time", "generation_s", "training_s", "sync_s", "idle_share"):
        assert float(_raw(page, widget, name)) == expected.value(name), name
    page.evaluate(f"document.querySelector('{widget}').dataset.copied = ''")
    page.click(f'{widget} [data-action="copy-link"]')
    page.wait_for_function(f"document.querySelector('{widget}').dataset.copied !== ''")
    link = str(page.get_attribute(widget, "data-copied"))
    assert f"placement:{chosen}" in link
    fresh = page.context.browser.new_context(bypass_csp=True).new_page()  # type: ignore[union-attr]
    fresh.goto(link)
    fresh.wait_for_selector(f'{widget}[data-state="ready"]', timeout=LIVE_MS)
    assert fresh.input_value(f"{widget} [name=placement]") == chosen
    assert float(_raw(fresh, widget, "step_time")) == expected.value("step_time")
    fresh.context.close()
    watch.assert_clean()


def test_a_rollout_recomputes_when_responses_grow_longer(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    widget, inputs = _first("rollout")
    page.goto(f"{site_url}/post-training/")
    before = float(_raw(page, widget, "generation_time"))
    mean = float(calculators.compute("rollout", **inputs).value("generation_time") or 0)
    assert before == mean
    page.fill(f"{widget} [name=prompts]", "1024")
    page.wait_for_function(
        "([w, v]) => document.querySelector(w + ' [data-output=\"generation_time\"]')"
        ".dataset.value !== v", arg=[widget, repr(before)], timeout=LIVE_MS)
    page.wait_for_selector(f'{widget}[data-state="ready"]', timeout=LIVE_MS)
    expected = calculators.compute("rollout", **{**inputs, "prompts": 1024})
    assert float(_raw(page, widget, "generation_time")) == expected.value("generation_time")
    assert float(_raw(page, widget, "generation_time")) > before
    watch.assert_clean()
