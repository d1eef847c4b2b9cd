"""The guide in WebKitGTK (the Safari family), a smaller set than Chromium's: a widget
goes live and recomputes in Pyodide, a shared link restores inputs and outputs, the
runtime survives the theme's instant navigation and Back restores what was typed, and
the first click of a Copy button copies (WebKit refuses a clipboard write made after
the click's task has waited for the worker, which the first copy of a page always did:
share.js) and a refused copy says so."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from typing import TYPE_CHECKING

import pytest

import calculators
from calculators.core import review, share
from tests.e2e.webkit.conftest import js, wait_for

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [
    pytest.mark.webkit,
    # selenium 4.51's own WebKitGTK driver class still uses the older RemoteConnection call.
    pytest.mark.filterwarnings("ignore:setting remote_server_addr:DeprecationWarning"),
]
W = "#gpt3-worked-example"


def _css(driver: WebDriver, selector: str):  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def _type(driver: WebDriver, selector: str, text: str) -> None:
    """Replace a field's text as a reader would: select all, type."""
    from selenium.webdriver.common.keys import Keys

    field = _css(driver, selector)
    field.click()
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(text)


def _attr(driver: WebDriver, selector: str, name: str) -> str | None:
    return js(driver, "const e = document.querySelector(arguments[0]);"
                      "return e ? e.getAttribute(arguments[1]) : null;", selector, name)


def _live_value(driver: WebDriver, widget: str, output: str, want: float) -> None:
    """Wait until the widget is live (ready) and shows ``want`` for ``output``."""
    wait_for(driver, f"{widget} ready with {output} = {want!r}", lambda: js(
        driver, """const w = document.querySelector(arguments[0]);
        const cell = w && w.querySelector(`[data-output="${arguments[1]}"]`);
        return w.dataset.state === "ready" && cell && Number(cell.dataset.value) === arguments[2];
        """, widget, output, want))


def _example(driver: WebDriver, widget: str) -> dict[str, str]:
    return dict(json.loads(_attr(driver, widget, "data-example") or "{}"))


def test_a_widget_goes_live_and_recomputes(site_url: str, wk: WebDriver) -> None:
    wk.get(f"{site_url}/compute/")
    assert _attr(wk, W, "data-state") == "static"
    prerendered = float(_attr(wk, f'{W} [data-output="total_flops"]', "data-value") or "nan")
    assert prerendered == calculators.compute(
        "training_compute", params="175B", tokens="300B").value("total_flops")
    started = time.monotonic()
    _type(wk, f"{W} [name=params]", "70B")
    expected = calculators.compute("training_compute", params="70B", tokens="300B")
    _live_value(wk, W, "total_flops", expected.value("total_flops"))
    print(f"WebKit: first live result {time.monotonic() - started:.2f} s after the edit")
    assert _css(wk, f'{W} [data-output="total_flops"]').text == expected.text("total_flops")
    # A bad value is refused next to its field; the last good numbers stay.
    _type(wk, f"{W} [name=tokens]", "0")
    wait_for(wk, "the error state", lambda: _attr(wk, W, "data-state") == "error")
    assert _css(wk, f'{W} [data-error-for="tokens"]').is_displayed()
    assert _attr(wk, f"{W} [name=tokens]", "aria-invalid") == "true"
    assert float(_attr(wk, f'{W} [data-output="total_flops"]', "data-value") or "nan") == (
        expected.value("total_flops"))


def test_a_shared_link_restores_inputs_and_outputs(site_url: str, wk: WebDriver) -> None:
    calc = calculators.REGISTRY["training_compute"]
    texts = {"params": "70B", "tokens": "2T", "num_gpus": "2048"}
    wk.get(f"{site_url}/compute/?gpt3-worked-example={share.encode_state(calc, texts)}")
    expected = calculators.compute(calc.id, **{**_example(wk, W), **texts})
    _live_value(wk, W, "gpu_hours", expected.value("gpu_hours"))
    for name, text in texts.items():
        assert _css(wk, f"{W} [name={name}]").get_attribute("value") == text, name
    assert float(_attr(wk, f'{W} [data-output="wall_clock_days"]', "data-value") or "nan") == (
        expected.value("wall_clock_days"))


def test_instant_navigation_keeps_the_runtime_and_back_restores(
        site_url: str, wk: WebDriver) -> None:
    wk.get(f"{site_url}/compute/")
    js(wk, "window.__same_document = true;")
    _type(wk, f"{W} [name=params]", "70B")
    _live_value(wk, W, "total_flops", calculators.compute(
        "training_compute", params="70B").value("total_flops"))
    # The address keeps what was typed (after a short pause), so Back can bring it back.
    wait_for(wk, "the edit in the address", lambda: "params:70B" in wk.current_url, 10)
    _css(wk, "a.md-nav__link[href$='dense/']").click()
    widget = "#gpt3-parameters"
    wait_for(wk, "the dense chapter", lambda: js(
        wk, "return location.pathname.endsWith('/dense/') && "
            "document.querySelector(arguments[0])?.dataset.bound === '1'", widget), 20)
    assert js(wk, "return window.__same_document") is True  # swapped in, not reloaded
    # The runtime is the one the first page started: the new page's widget is live at
    # once, with no second start of Pyodide.
    wait_for(wk, f"{widget} live", lambda: _attr(wk, widget, "data-state") == "ready", 10)
    started = time.monotonic()
    _type(wk, f"{widget} [name=layers]", "48")
    expected = calculators.compute("model_params", **{**_example(wk, widget), "layers": "48"})
    _live_value(wk, widget, "params", expected.value("params"))
    assert time.monotonic() - started < 5
    wk.back()
    wait_for(wk, "the compute chapter again, with what was typed", lambda: js(
        wk, "return location.pathname.endsWith('/compute/') && "
            "document.querySelector(arguments[0])?.value === '70B'", f"{W} [name=params]"), 20)
    assert js(wk, "return window.__same_document") is True
    _live_value(wk, W, "total_flops", calculators.compute(
        "training_compute", params="70B").value("total_flops"))


def _clipboard(display: str) -> str:
    done = subprocess.run([str(shutil.which("xclip")), "-o", "-selection", "clipboard"],
                          env={"DISPLAY": display}, capture_output=True, text=True, timeout=5,
                          check=False)
    return done.stdout


def test_the_first_copy_copies_and_a_refused_copy_says_so(
        site_url: str, wk: WebDriver, xvfb_display: str) -> None:
    """The first Copy of a page is clicked before the runtime is up: the text comes back
    from the worker seconds after the click, and the clipboard must still get it."""
    if shutil.which("xclip") is None:
        pytest.skip("reading the clipboard needs xclip (Debian package xclip; `make browser`)")
    # Something else in the clipboard first, held by an xclip of ours until the page
    # takes the clipboard over (it then exits) or the test ends.
    holder = subprocess.Popen([str(shutil.which("xclip")), "-quiet", "-selection", "clipboard"],
                              env={"DISPLAY": xvfb_display}, stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert holder.stdin is not None
        holder.stdin.write(b"before the copy")
        holder.stdin.close()
        wait_for(wk, "the clipboard to hold the marker",
                 lambda: _clipboard(xvfb_display) == "before the copy", 5)
        wk.get(f"{site_url}/compute/")
        assert _attr(wk, W, "data-runtime") in (None, "idle")  # nothing started yet
        _css(wk, f'{W} [data-action="copy-link"]').click()
        # The click itself starts the runtime (pointer over the widget): it is loading.
        assert _attr(wk, W, "data-runtime") != "ready"
        status = f"{W} [data-copy-status]"
        wait_for(wk, "the copy's status", lambda: _css(wk, status).text)
        assert _css(wk, status).text == "Link (this calculator's inputs only) copied."
        link = f"{site_url}/compute/#gpt3-worked-example"
        assert _clipboard(xvfb_display) == link
        assert _attr(wk, W, "data-copy-result") == "copied"
        # The runtime is up: another copy, of an export, answers within the click.
        js(wk, "document.querySelector(arguments[0]).dataset.copied = '';", W)
        _css(wk, f'{W} [data-action="command"]').click()
        wait_for(wk, "the command copied", lambda: _attr(wk, W, "data-copied"))
        texts = _example(wk, W)
        command = share.command_line(calculators.REGISTRY["training_compute"], texts)
        assert _clipboard(xvfb_display) == command
    finally:
        holder.kill()
        holder.wait()
    # A browser that refuses every way of copying: the reader is told, and gets the
    # text selected in a box to copy by hand.
    js(wk, """Clipboard.prototype.write = () =>
                Promise.reject(new DOMException("refused", "NotAllowedError"));
              Clipboard.prototype.writeText = Clipboard.prototype.write;
              document.execCommand = () => false;
              document.querySelector(arguments[0]).dataset.copyResult = "";""", W)
    _css(wk, f'{W} [data-action="markdown"]').click()
    wait_for(wk, "the failed copy", lambda: _attr(wk, W, "data-copy-result") == "failed", 10)
    said = _css(wk, f"{W} [data-copy-status]").text
    assert said.startswith("Could not copy the design-review markdown"), said
    assert _attr(wk, f"{W} [data-copy-status]", "role") == "status"  # announced
    box = _css(wk, f"{W} [data-copy-box]")
    assert box.is_displayed()
    copied = str(box.get_attribute("value"))
    link = re.search(r"Link \(restores every input below\): <([^>]+)>", copied)
    assert link is not None
    assert copied == review.review_markdown(
        calculators.compute("training_compute", **_example(wk, W)), link=link[1])
