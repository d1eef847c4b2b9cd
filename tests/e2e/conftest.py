"""Headless Debian chromium driven by Playwright; every page watched for stray traffic."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, Page, Route

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    path = chromium_path()
    if path is None:
        pytest.skip("Debian's chromium is not installed (make test installs it when run as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Watch:
    """What a page did that a test must check: off-host requests, console errors."""

    foreign_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert self.foreign_requests == []
        assert self.console_errors == []


def watch_page(browser: Browser, *, bypass_csp: bool) -> tuple[Page, Watch]:
    """A page in a fresh context (empty cache and storage), with its traffic watched.

    The site ships a Content-Security-Policy without 'unsafe-eval', which also stops
    Playwright's string predicates (wait_for_function); tests bypass it, except those
    that test the policy itself.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=bypass_csp)
    page = context.new_page()
    watch = Watch()

    def on_request(request: object) -> None:
        url = request.url  # type: ignore[attr-defined]
        if urlsplit(url).hostname not in ("127.0.0.1", None) and not url.startswith(
            ("data:", "blob:")
        ):
            watch.foreign_requests.append(url)

    page.on("request", on_request)
    context.on("request", on_request)  # worker requests too
    page.on("console", lambda m: watch.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda err: watch.console_errors.append(str(err)))
    return page, watch


@pytest.fixture
def watched_page(browser: Browser) -> Iterator[tuple[Page, Watch]]:
    page, watch = watch_page(browser, bypass_csp=True)
    yield page, watch
    page.context.close()


@pytest.fixture
def strict_page(browser: Browser) -> Iterator[tuple[Page, Watch]]:
    """Like watched_page, but the site's Content-Security-Policy is enforced."""
    page, watch = watch_page(browser, bypass_csp=False)
    yield page, watch
    page.context.close()



def stall_worker_on(page: Page, text: str, stall_js: str) -> None:
    """Serve the real worker, made to run ``stall_js`` before it computes any request
    with an input equal to ``text``: a slow or a runaway compute, on demand."""

    def stalling(route: Route) -> None:
        response = route.fetch()
        quoted = json.dumps(json.dumps(text))  # the input as it appears in the payload
        body = response.text().replace(
            "const started = performance.now();",
            f"if (String(message.payload).includes({quoted})) {{ {stall_js} }}\n"
            "    const started = performance.now();")
        route.fulfill(response=response, body=body)

    page.route("**/assets/calculators/worker.js", stalling)
