"""The built site works under a sub-path, as GitHub Pages serves it (/<repo>/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import calculators
from tests.conftest import build_site, start_server

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Browser

pytestmark = pytest.mark.e2e
W = "#gpt3-worked-example"


@pytest.fixture(scope="module")
def subpath_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root: Path = tmp_path_factory.mktemp("pages")
    server = start_server(root)
    base = f"http://127.0.0.1:{server.server_address[1]}/bigmodel-guide/"
    done = build_site(root / "bigmodel-guide", base)
    assert done.returncode == 0, done.stdout + done.stderr
    yield base
    server.shutdown()


def test_live_calculator_and_navigation_under_a_subpath(subpath_url: str, browser: Browser) -> None:
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    outside: list[str] = []
    context.on(
        "request", lambda r: outside.append(r.url) if "/bigmodel-guide/" not in r.url else None
    )
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(subpath_url + "compute/")
    page.fill(f"{W} [name=params]", "70B")
    page.wait_for_selector(f'{W}[data-state="ready"]', timeout=60_000)
    raw = page.get_attribute(f'{W} [data-output="total_flops"]', "data-value")
    assert float(raw or "nan") == calculators.compute("training_compute", params="70B").value(
        "total_flops"
    )
    page.evaluate("window.__same = true")
    # The reference's calculators sit in a folded nav section: follow the link as a
    # click would (the theme's instant navigation takes it over).
    page.eval_on_selector("a.md-nav__link[href$='reference/calculators/training-compute/']",
                          "a => a.click()")
    page.wait_for_url("**/bigmodel-guide/reference/calculators/training-compute/")
    page.wait_for_selector('#ref-training-compute[data-state="ready"]', timeout=10_000)
    assert page.evaluate("window.__same") is True
    assert outside == []
    assert errors == []
    context.close()
