"""The Validation page's links open the calculator with exactly the row's inputs (a
published figure's or a measured run's): the restored widget recomputes live, in the
browser, the value the page shows."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin

import pytest

import calculators
from bigmodel_guide.validation_links import link_for
from calculators.core import units
from published_checks import all_checks, run
from published_checks.speed import RUNS

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.e2e.conftest import Watch

pytestmark = pytest.mark.e2e
LIVE_MS = 60_000
#: A dense run whose link sets many inputs (the model, the GPU, the network, the
#: layout), and the mixture-of-experts run.
SPEED_RUNS = ("llama3-405b-8k-8192",
              next(r.id for r in RUNS if r.calculator == "moe_plan"))


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


def test_the_speed_table_has_a_row_per_run(site_url: str,
                                           watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/reference/validation/#speed")
    rows = page.locator("tr[id^=run-]")
    assert rows.count() == len(RUNS)
    assert [rows.nth(i).get_attribute("id") for i in range(rows.count())] == [
        f"run-{r.id}" for r in RUNS]
    for measured in RUNS:
        assert page.locator(f"#run-{measured.id} a", has_text="Open").count() == 1
    # The section leads the page: before the first chapter's figures.
    assert page.evaluate("""() => {
        const speed = document.getElementById("speed");
        const first = document.querySelector("h2[id^=validation-]");
        return Boolean(speed.compareDocumentPosition(first)
                       & Node.DOCUMENT_POSITION_FOLLOWING); }""")
    watch.assert_clean()


@pytest.mark.parametrize("run_id", SPEED_RUNS)
def test_a_run_link_restores_its_inputs_and_step_time(
        run_id: str, site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    measured = next(r for r in RUNS if r.id == run_id)
    calc = calculators.REGISTRY[measured.calculator]
    page.goto(f"{site_url}/reference/validation/")
    row = f"#run-{run_id}"
    printed = page.text_content(f"{row} .bm-validation__predicted") or ""
    href = urljoin(page.url, page.get_attribute(f"{row} a:text('Open')", "href") or "")
    assert href == urljoin(page.url, link_for(measured))
    page.goto(href)
    widget = "#ref-" + measured.calculator.replace("_", "-")
    page.wait_for_selector(f'{widget}[data-state="ready"]', timeout=LIVE_MS)
    # Every input the run sets holds the run's value (an input folded under "More
    # inputs" that the page has not loaded is checked by the recomputed step below).
    for name in ("tp", "pp", "dp", "micro_batch"):
        assert page.locator(f"{widget} [name={name}]").count() == 1, name
    for name, value in measured.inputs.items():
        field = page.locator(f"{widget} [name={name}]")
        if field.count():
            assert field.input_value() == calc.param(name).as_text(value), name
    shown = page.get_attribute(f'{widget} [data-output="step_time"]', "data-value")
    assert shown is not None
    # The live (Pyodide) step time, to the precision the Validation page prints it.
    assert units.format_value(float(shown), "s", "fixed") == printed
    assert float(shown) == pytest.approx(measured.predict(), rel=1e-12)
    watch.assert_clean()
