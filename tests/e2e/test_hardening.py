"""Robustness in the browser: hostile values, a runaway compute, a strict CSP, and a
runtime that cannot load."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest

import calculators
from bigmodel_guide.plugin import content_security_policy
from calculators.core.bridge import compute_json
from tests.e2e.conftest import stall_worker_on

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

    from tests.e2e.conftest import Watch

pytestmark = pytest.mark.e2e
WIDGET = "#gpt3-worked-example"
LIVE_MS = 60_000

HOSTILE = [
    "<img src=x onerror=window.__pwned=1>", "1e999", "-0", "0x10", "9" * 5000, "１７５", "NaN",
    "175B; DROP TABLE", "\u202e175B", "", "   ", "1_000_000", "2T", "1e-320",
]


def test_hostile_values_never_break_the_widget(
    site_url: str, watched_page: tuple[Page, Watch]
) -> None:
    """Each value either computes what native Python computes or shows the error; the
    widget always recovers, and nothing typed ever becomes markup. One page, one
    runtime, every value in turn (a fresh runtime per value would only add load time)."""
    page, watch = watched_page
    page.goto(f"{site_url}/compute/")
    for value in HOSTILE:
        page.fill(f"{WIDGET} [name=params]", value)
        page.wait_for_selector(f'{WIDGET}:is([data-state="ready"], [data-state="error"])',
                               timeout=LIVE_MS)
        native = json.loads(compute_json("training_compute", json.dumps({"params": value})))
        state = page.get_attribute(WIDGET, "data-state")
        assert state == ("ready" if native["ok"] else "error"), value
        if native["ok"]:
            raw = page.get_attribute(f'{WIDGET} [data-output="total_flops"]', "data-value")
            assert raw == native["result"]["outputs"]["total_flops"]["raw"], value
        else:
            assert page.locator(f'{WIDGET} [data-error-for="params"]').is_visible(), value
        assert page.evaluate("window.__pwned") is None
        assert page.locator(f"{WIDGET} img").count() == 0
        page.fill(f"{WIDGET} [name=params]", "8B")  # recovers
        page.wait_for_selector(f'{WIDGET}[data-state="ready"]', timeout=LIVE_MS)
        raw = page.get_attribute(f'{WIDGET} [data-output="total_flops"]', "data-value")
        assert float(raw or "nan") == calculators.compute(
            "training_compute", params="8B").value("total_flops"), value
    watch.assert_clean()


def test_runaway_compute_is_stopped_and_the_runtime_restarts(
    site_url: str, watched_page: tuple[Page, Watch]
) -> None:
    page, _ = watched_page
    page.add_init_script("window.__bmWatchdogMs = 4000")

    stall_worker_on(page, "666B", "for (;;) {}")  # the real worker: a genuine runaway
    page.goto(f"{site_url}/compute/")
    page.fill(f"{WIDGET} [name=params]", "70B")
    page.wait_for_selector(f'{WIDGET}[data-state="ready"]', timeout=LIVE_MS)
    page.fill(f"{WIDGET} [name=params]", "666B")
    page.wait_for_selector(f'{WIDGET}[data-state="error"]', timeout=LIVE_MS)
    assert "stopped" in (page.text_content(f"{WIDGET} [data-status]") or "")
    assert page.evaluate("1 + 1") == 2  # the main thread never froze
    page.fill(f"{WIDGET} [name=params]", "8B")
    page.wait_for_selector(f'{WIDGET}[data-state="ready"]', timeout=LIVE_MS)
    raw = page.get_attribute(f'{WIDGET} [data-output="total_flops"]', "data-value")
    assert float(raw or "nan") == calculators.compute("training_compute", params="8B").value(
        "total_flops")


def test_site_works_under_its_content_security_policy_header(
    site_url: str, strict_page: tuple[Page, Watch]
) -> None:
    page, watch = strict_page
    policy = content_security_policy(None)

    def with_policy(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response,
                      headers={**response.headers, "content-security-policy": policy})

    page.context.route("**/*", with_policy)
    page.goto(f"{site_url}/compute/")
    assert page.locator('meta[http-equiv="Content-Security-Policy"]').count() == 1
    page.fill(f"{WIDGET} [name=params]", "70B")
    page.wait_for_selector(f'{WIDGET}[data-state="ready"]', timeout=LIVE_MS)
    watch.assert_clean()  # a violation would be a console error


def test_policy_without_wasm_reports_runtime_unavailable(
    site_url: str, strict_page: tuple[Page, Watch]
) -> None:
    page, _ = strict_page
    policy = content_security_policy(None).replace(" 'wasm-unsafe-eval'", "")

    def with_policy(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response,
                      headers={**response.headers, "content-security-policy": policy})

    page.context.route("**/*", with_policy)
    page.goto(f"{site_url}/compute/")
    before = page.get_attribute(f'{WIDGET} [data-output="total_flops"]', "data-value")
    page.fill(f"{WIDGET} [name=params]", "70B")
    page.wait_for_selector(f'{WIDGET}[data-runtime="failed"]', timeout=LIVE_MS)
    assert "unavailable" in (page.text_content(f"{WIDGET} [data-status]") or "")
    assert page.get_attribute(f'{WIDGET} [data-output="total_flops"]', "data-value") == before


def test_unusable_memory_snapshot_falls_back_to_a_normal_start(
    site_url: str, watched_page: tuple[Page, Watch]
) -> None:
    page, watch = watched_page
    page.route("**/pyodide/snapshot-*.bin.gz", lambda r: r.fulfill(status=200, body=b"junk"))
    wheels: list[str] = []
    page.context.on("request", lambda r: wheels.append(r.url) if r.url.endswith(".whl") else None)
    page.goto(f"{site_url}/compute/")
    page.fill(f"{WIDGET} [name=params]", "70B")
    page.wait_for_selector(f'{WIDGET}[data-state="ready"]', timeout=LIVE_MS)
    raw = page.get_attribute(f'{WIDGET} [data-output="total_flops"]', "data-value")
    assert float(raw or "nan") == calculators.compute("training_compute", params="70B").value(
        "total_flops")
    assert page.evaluate("window.__bmBoot.snapshot") is None  # started without it
    assert len(wheels) == 1  # and so installed the calculators from the wheel
    watch.console_errors = [e for e in watch.console_errors if "snapshot" not in e.lower()]
    watch.assert_clean()


def test_live_runtime_starts_from_the_memory_snapshot(
    site_url: str, watched_page: tuple[Page, Watch]
) -> None:
    page, watch = watched_page
    fetched: list[str] = []
    page.context.on("request", lambda r: fetched.append(r.url.rsplit("/", 1)[-1]))
    page.goto(f"{site_url}/compute/")
    page.fill(f"{WIDGET} [name=params]", "70B")
    page.wait_for_selector(f'{WIDGET}[data-state="ready"]', timeout=LIVE_MS)
    assert page.evaluate("window.__bmBoot.snapshot") is True
    # The calculators come imported in the snapshot: the wheel is never fetched, and the
    # snapshot's name is its content hash, so no cache pairs it with another wheel.
    assert not [name for name in fetched if name.endswith(".whl")]
    assert [name for name in fetched if name.startswith("snapshot-")] == [
        name for name in fetched if re.fullmatch(r"snapshot-[0-9a-f]{12}\.bin\.gz", name)]
    assert any(name.startswith("snapshot-") for name in fetched)
    watch.assert_clean()
