"""The Validation page's links open the calculator with exactly the check's inputs: the
restored widget recomputes live, in the browser, the value the page shows."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin

import pytest

from bigmodel_guide.validation import link_for
from published_checks import all_checks, run

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.e2e.conftest import Watch

pytestmark = pytest.mark.e2e
LIVE_MS = 60_000


def _one_per_calculator() -> list[str]:
    """A check per calculator (each link is a full page load: all of them would take
    minutes; the link format is the same for every check of a calculator), one whose
    link carries inputs where the calculator has one; and one check of defaults (a link
    with nothing to restore)."""
    seen: dict[str, str] = {}
    defaults = ""
    for check in all_checks():
        if check.calculator is None:
            continue
        restores = "?" in link_for(check)
        if check.calculator not in seen or (restores and "?" not in link_for(
                next(c for c in all_checks() if c.id == seen[check.calculator]))):
            seen[check.calculator] = check.id
        if not restores and not defaults:
            defaults = check.id
    return list(dict.fromkeys([*seen.values(), *([defaults] if defaults else [])]))


def test_every_row_links_to_its_calculator(site_url: str,
                                           watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/reference/validation/")
    rows = page.locator("tr[id^=check-]")
    assert rows.count() == len(all_checks())
    for check in all_checks():
        link = page.locator(f"#check-{check.id} a", has_text="Open")
        assert link.count() == (1 if check.calculator else 0), check.id
    watch.assert_clean()


@pytest.mark.parametrize("check_id", _one_per_calculator())
def test_link_restores_the_check_inputs(check_id: str, site_url: str,
                                        watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    check = next(c for c in all_checks() if c.id == check_id)
    page.goto(f"{site_url}/reference/validation/")
    href = page.get_attribute(f"#check-{check.id} a:text('Open')", "href") or ""
    page.goto(urljoin(page.url, href))
    widget = "#ref-" + str(check.calculator).replace("_", "-")
    # Restoring a link recomputes in the page's runtime: wait for the live result. A
    # check of the defaults links to the widget as built (nothing to restore).
    state = "ready" if "?" in href else "static"
    page.wait_for_selector(f'{widget}[data-state="{state}"]', timeout=LIVE_MS)
    shown = page.get_attribute(f'{widget} [data-output="{check.output}"]', "data-value")
    assert shown is not None
    assert float(shown) == pytest.approx(run(check).value, rel=1e-12)
    watch.assert_clean()
