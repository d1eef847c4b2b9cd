"""The dense chapter in headless Chromium: the planner and the memory calculator
recompute live in Pyodide, equal native results, and show cross-field errors."""

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


def test_planner_recomputes_live_with_table(site_url: str,
                                            watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    widget = "#gpt3-1024-a100-no-overlap"
    page.goto(f"{site_url}/dense/")
    page.fill(f"{widget} [name=num_gpus]", "512")
    page.wait_for_selector(f'{widget}[data-state="ready"]', timeout=LIVE_TIMEOUT_MS)
    expected = calculators.compute("parallel_plan", overlap=0, num_gpus=512)
    for name in ("tp", "pp", "dp", "step_time", "mfu", "memory_per_gpu_bytes"):
        assert float(_raw(page, widget, name) or "nan") == expected.value(name), name
    table = expected.computed.table
    assert table is not None
    assert page.locator(f"{widget} [data-table] tbody tr").count() == len(table.rows)
    assert page.locator(f"{widget} [data-chart] svg").count() == 1
    watch.assert_clean()


def test_tp_not_dividing_heads_is_shown_next_to_tp(site_url: str,
                                                   watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    widget = "#gpt3-3d-memory"
    page.goto(f"{site_url}/dense/")
    before = _raw(page, widget, "total_bytes")
    page.fill(f"{widget} [name=tp]", "5")
    page.wait_for_selector(f'{widget}[data-state="error"]', timeout=LIVE_TIMEOUT_MS)
    error = page.locator(f'{widget} [data-error-for="tp"]')
    assert error.is_visible()
    assert "heads" in (error.text_content() or "")
    assert _raw(page, widget, "total_bytes") == before  # last good results stay
    page.fill(f"{widget} [name=tp]", "4")
    page.wait_for_selector(f'{widget}[data-state="ready"]', timeout=LIVE_TIMEOUT_MS)
    expected = calculators.compute("model_memory", tp=4, pp=16, dp=8, zero_stage=1,
                                   sequence_parallel=True, recompute="selective")
    assert float(_raw(page, widget, "total_bytes") or "nan") == expected.value("total_bytes")
    watch.assert_clean()
