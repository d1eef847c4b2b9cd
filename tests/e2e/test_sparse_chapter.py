"""The sparse chapter in headless Chromium: a pasted table list recomputes live in
Pyodide, a malformed line is reported next to the field with its line number, and the
PS-vs-collective chart is redrawn."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import calculators

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.e2e.conftest import Watch

pytestmark = pytest.mark.e2e
LIVE_TIMEOUT_MS = 60_000


def _raw(page: Page, widget: str, output: str) -> str | None:
    return page.locator(f'{widget} [data-output="{output}"]').get_attribute("data-value")


def test_pasted_table_list_recomputes_and_bad_line_is_named(
    site_url: str, watched_page: tuple[Page, Watch]
) -> None:
    page, watch = watched_page
    widget = "#criteo-kaggle"
    page.goto(f"{site_url}/sparse/")
    page.fill(f"{widget} [name=tables]", "C1 1460 16\nC2 583 sixteen")
    page.wait_for_selector(f'{widget}[data-state="error"]', timeout=LIVE_TIMEOUT_MS)
    error = page.locator(f'{widget} [data-error-for="tables"]')
    assert error.is_visible()
    assert "line 2" in (error.text_content() or "")
    page.fill(f"{widget} [name=tables]", "C1 1460 16\nC2 583 16\nC3 10M 16")
    page.wait_for_selector(f'{widget}[data-state="ready"]', timeout=LIVE_TIMEOUT_MS)
    expected = calculators.compute("embedding_memory",
                                   tables="C1 1460 16\nC2 583 16\nC3 10M 16")
    for name in ("table_bytes", "optimizer_bytes", "total_bytes", "min_gpus"):
        assert float(_raw(page, widget, name) or "nan") == expected.value(name), name
    watch.assert_clean()


def test_ps_vs_collective_recomputes_with_chart(
    site_url: str, watched_page: tuple[Page, Watch]
) -> None:
    page, watch = watched_page
    widget = "#ps-huge-tables"
    page.goto(f"{site_url}/sparse/")
    # 48.4 TB of tables need 712 GPUs: with 1,024 workers the collective fits again.
    assert _raw(page, widget, "recommended_mode") == "ps"
    page.fill(f"{widget} [name=num_workers]", "1024")
    page.wait_for_function(
        "w => document.querySelector(w + ' [data-output=\"recommended_mode\"]')"
        ".dataset.value === 'collective'", arg=widget, timeout=LIVE_TIMEOUT_MS)
    expected = calculators.compute("sparse_training", embedding_bytes="48.4TB",
                                   num_ps_servers=80, num_workers=1024)
    for name in ("ps_step_comm_time_s", "collective_step_comm_time_s",
                 "collective_min_gpus_memory"):
        assert float(_raw(page, widget, name) or "nan") == expected.value(name), name
    assert page.locator(f"{widget} [data-chart] svg").count() == 1
    watch.assert_clean()
