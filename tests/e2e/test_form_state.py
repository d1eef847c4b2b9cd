"""The form around the numbers, in headless Chromium: what the reader typed survives
Back and Forward, Enter recomputes, transient status text clears, presets say what
they applied and when it was modified, inputs of another mode are hidden (values
kept), and a choice that does not go with the others is disabled with its reason."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import calculators

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.e2e.conftest import Watch

pytestmark = pytest.mark.e2e
W = "#gpt3-worked-example"
LIVE_MS = 60_000


def _ready(page: Page, widget: str = W) -> None:
    page.wait_for_selector(f'{widget}[data-state="ready"]', timeout=LIVE_MS)


def _raw(page: Page, output: str, widget: str = W) -> float:
    return float(page.get_attribute(f'{widget} [data-output="{output}"]', "data-value") or "nan")


def test_back_and_forward_restore_what_was_typed(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/compute/")
    page.fill(f"{W} [name=params]", "70B")
    _ready(page)
    # The address keeps the inputs (after a short pause), as a share link would.
    page.wait_for_function("location.search.includes('params:70B')", timeout=5_000)
    page.click("a.md-nav__link[href$='dense/']")
    page.wait_for_url("**/dense/")
    page.wait_for_selector("#gpt3-parameters")
    page.go_back()
    page.wait_for_url("**/compute/**")
    page.wait_for_function(
        f"document.querySelector('{W} [name=params]')?.value === '70B'", timeout=LIVE_MS)
    _ready(page)
    assert _raw(page, "total_flops") == calculators.compute(
        "training_compute", params="70B", tokens="300B").value("total_flops")
    page.go_forward()
    page.wait_for_url("**/dense/")
    page.wait_for_selector("#gpt3-parameters")
    watch.assert_clean()


def test_an_edit_just_before_leaving_survives_back(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    """The address is written a moment after an edit; a click on a link within that
    moment writes it first, before the theme moves to the next page's address."""
    page, watch = watched_page
    page.goto(f"{site_url}/compute/")
    page.wait_for_selector(f"{W}[data-bound='1']")
    page.fill(f"{W} [name=params]", "13B")
    assert "params" not in page.evaluate("location.search")  # not written yet
    page.click("a.md-nav__link[href$='dense/']")
    page.wait_for_url("**/dense/")
    page.wait_for_selector("#gpt3-parameters[data-bound='1']")
    assert page.evaluate("location.search") == ""  # the next page's address is its own
    page.go_back()
    page.wait_for_url("**/compute/**")
    page.wait_for_function(
        f"document.querySelector('{W} [name=params]')?.value === '13B'", timeout=LIVE_MS)
    watch.assert_clean()


def test_an_edit_just_before_the_back_button_survives_forward(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    """The browser's Back, pressed within that moment: the edit is written to the entry
    being left before the browser moves to the one before it, so Forward brings it."""
    page, watch = watched_page
    dense = "#gpt3-parameters"
    page.goto(f"{site_url}/compute/")
    page.wait_for_selector(f"{W}[data-bound='1']")
    page.click("a.md-nav__link[href$='dense/']")
    page.wait_for_url("**/dense/")
    page.wait_for_selector(f"{dense}[data-bound='1']")
    # Back at once, well within the moment before the address is written (not asserted
    # in between: on a loaded machine the check itself could outlast that moment).
    page.fill(f"{dense} [name=layers]", "80")
    page.go_back()
    page.wait_for_url("**/compute/")
    page.wait_for_selector(f"{W}[data-bound='1']")
    page.go_forward()
    page.wait_for_url("**/dense/**")
    page.wait_for_function(
        f"document.querySelector('{dense} [name=layers]')?.value === '80'", timeout=LIVE_MS)
    assert "layers:80" in page.evaluate("location.search")
    watch.assert_clean()


def test_enter_recomputes_and_copy_status_clears(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{site_url}/compute/")
    page.fill(f"{W} [name=tokens]", "1T")
    _ready(page)
    # A change the input event never saw (set from script): Enter alone recomputes.
    page.eval_on_selector(f"{W} [name=tokens]", "el => { el.value = '2T'; }")
    page.focus(f"{W} [name=tokens]")
    page.keyboard.press("Enter")
    expected = calculators.compute("training_compute", params="175B", tokens="2T")
    page.wait_for_function(
        f"""document.querySelector('{W} [data-output="total_flops"]').dataset.value ===
            '{expected.raw("total_flops")}'""", timeout=LIVE_MS)
    page.click(f'{W} [data-action="command"]')
    status = page.locator(f"{W} [data-copy-status]")
    page.wait_for_function(
        f"document.querySelector('{W} [data-copy-status]').textContent.includes('copied')")
    page.wait_for_function(
        f"document.querySelector('{W} [data-copy-status]').textContent === ''", timeout=8_000)
    assert status.text_content() == ""
    watch.assert_clean()


def test_presets_say_what_they_applied(site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/compute/")
    picker = f"{W} select[data-preset]"
    option = page.locator(f"{picker} option[value]:not([value=''])").first
    preset_id, label = option.get_attribute("value"), (option.text_content() or "").strip()
    page.select_option(picker, preset_id)
    _ready(page)
    assert page.input_value(picker) == preset_id  # the picker shows what is applied
    line = page.locator(f"{W} [data-preset-applied]")
    said = line.text_content() or ""
    assert label in said and "Source:" in said and "other inputs kept" in said
    assert "modified" not in said
    assert "Parameters" in said  # the inputs it set, by label
    page.fill(f"{W} [name=params]", "1B")
    _ready(page)
    assert "(modified)" in (line.text_content() or "")
    assert line.is_visible()
    watch.assert_clean()


def test_inputs_of_another_kind_of_model_hidden_values_kept(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/capstone/")
    widget = "[data-calc=cluster_sizing]"
    first = page.eval_on_selector(widget, "w => '#' + w.id")
    # The folded inputs are added when the reader opens them.
    page.click(f"{first} details.bm-calc__more > summary")
    page.wait_for_selector(f'{first} details[data-more="ready"]')
    kind = page.input_value(f"{first} [name=model_kind]")
    calc = calculators.REGISTRY["cluster_sizing"]
    by_kind = [p for p in calc.params if p.when and p.when.input == "model_kind"]
    hidden_now = [p.name for p in by_kind if kind not in p.when.values]  # type: ignore[union-attr]
    assert hidden_now, "cluster_sizing declares inputs of one kind of model"
    for name in hidden_now:
        assert page.locator(f'{first} [data-field="{name}"]').is_hidden(), name
    kept = {n: page.input_value(f"{first} [name={n}]") for n in hidden_now}
    # Each other kind shows its own inputs (values as they were) and hides the rest.
    for other in (c.value for c in calc.param("model_kind").choices if c.value != kind):
        page.select_option(f"{first} [name=model_kind]", other)
        _ready(page, first)
        for p in by_kind:
            field = page.locator(f'{first} [data-field="{p.name}"]')
            when = p.when
            assert when is not None
            # A second condition (an MoE's GQA-only inputs) reads the form as it is.
            also = when.also
            shown = other in when.values and (also is None or also.holds(
                {also.input: page.input_value(f"{first} [name={also.input}]")}))
            assert (field.get_attribute("hidden") is None) == shown, (other, p.name)
            if shown and p.name in kept:
                assert page.input_value(f"{first} [name={p.name}]") == kept[p.name]
    watch.assert_clean()


def test_an_algorithm_the_collective_lacks_is_disabled_with_the_reason(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    page.goto(f"{site_url}/communication/")
    widget = "#nvlink-allreduce"
    page.select_option(f"{widget} [name=collective]", "alltoall")
    _ready(page, widget)
    ring = page.locator(f'{widget} [name=algorithm] option[value="ring"]')
    assert ring.get_attribute("disabled") is not None
    label = ring.get_attribute("data-label") or ""
    assert (ring.text_content() or "").startswith(f"{label} (")  # and then the reason
    assert page.input_value(f"{widget} [name=algorithm]") != "ring"
    watch.assert_clean()


def test_a_pasted_config_fills_the_model_and_says_what_it_read(
        site_url: str, watched_page: tuple[Page, Watch]) -> None:
    page, watch = watched_page
    widget = "#gemma3-parameters"
    fixtures = Path(__file__).parents[1] / "fixtures" / "hf_configs"
    page.goto(f"{site_url}/dense/")
    box = f"{widget} [data-config-box]"
    page.click(f"{box} summary")
    page.fill(f"{box} textarea[data-config]", (fixtures / "Qwen__Qwen3-8B.json").read_text())
    page.click(f"{box} [data-config-apply]")
    line = page.locator(f"{box} [data-config-applied]")
    line.filter(has_text="read").wait_for(timeout=LIVE_MS)
    _ready(page, widget)
    assert page.input_value(f"{widget} [name=layers]") == "36"
    assert _raw(page, "params", widget) == 8_190_735_360  # the Hub's count for Qwen3-8B
    assert "num_hidden_layers" in (line.text_content() or "")
    # A mixture of experts in a dense calculator is refused, and nothing changes.
    page.fill(f"{box} textarea[data-config]",
              (fixtures / "openai__gpt-oss-120b.json").read_text())
    page.click(f"{box} [data-config-apply]")
    line.filter(has_text="Not applied").wait_for(timeout=LIVE_MS)
    assert "mixture of experts" in (line.text_content() or "")
    assert page.input_value(f"{widget} [name=layers]") == "36"
    watch.assert_clean()
