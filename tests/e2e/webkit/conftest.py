"""The WebKit tier: Debian's WebKitGTK (its WebDriver, WebKitWebDriver, which drives the
MiniBrowser) through Selenium, on an X server of its own (Xvfb). The Safari-family
engine behind a smaller set of the Chromium tests; it serves the same session build of
the site (tests/conftest.py: site_url), never a second one.

One browser for the session, started once (about 2 s); each test loads its pages
afresh, and every page load starts its own runtime. Skipped, naming what is missing,
where WebKitWebDriver, Xvfb or selenium are not installed (`make browser` installs the
Debian packages when run as root; selenium is in the test extra).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from selenium.webdriver.remote.webdriver import WebDriver

#: How long a page may take to go live (a cold start of Pyodide is about 1-3 s here).
LIVE_S = 60.0
XVFB_START_S = 10.0


def minibrowser_path() -> str | None:
    """The browser WebKitWebDriver launches (from Debian's libwebkit2gtk-4.1-0)."""
    found = sorted(glob.glob("/usr/lib/*/webkit2gtk-4.*/MiniBrowser"))
    return found[-1] if found else None


def _missing() -> str | None:
    needs = []
    if shutil.which("WebKitWebDriver") is None:
        needs.append("WebKitWebDriver (Debian package webkit2gtk-driver)")
    elif minibrowser_path() is None:
        needs.append("WebKitGTK's MiniBrowser (Debian package libwebkit2gtk-4.1-0)")
    if shutil.which("Xvfb") is None:
        needs.append("Xvfb (Debian package xvfb)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        needs.append("selenium (pip: the project's test extra)")
    if not needs:
        return None
    return ("the WebKit tier needs " + ", ".join(needs)
            + "; `make browser` installs the Debian packages when run as root")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the tier at collection where its tools are missing: before any fixture, so
    that it does not wait for the site to be built only to skip."""
    missing = _missing()
    if missing is None:
        return
    here = Path(__file__).resolve().parent
    for item in items:
        if here in item.path.resolve().parents:
            item.add_marker(pytest.mark.skip(reason=missing))


@pytest.fixture(scope="session")
def xvfb_display() -> Iterator[str]:
    """A private X display: Xvfb picks a free display number itself (-displayfd) and
    reports it once it accepts connections; stopped at the session's end."""
    missing = _missing()
    if missing:
        pytest.skip(missing)
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x1024x24",
         "-nolisten", "tcp", "-noreset"],
        pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    number = b""
    deadline = time.monotonic() + XVFB_START_S
    try:
        while not number.endswith(b"\n") and time.monotonic() < deadline:
            chunk = os.read(read_fd, 16)
            if not chunk:
                break
            number += chunk
    finally:
        os.close(read_fd)
    if not number.strip().isdigit():
        server.kill()
        server.wait()
        pytest.fail(f"Xvfb did not start (it reported {number!r})")
    try:
        yield f":{int(number)}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="session")
def webkit(xvfb_display: str) -> Iterator[WebDriver]:
    """WebKitGTK's MiniBrowser, driven by WebKitWebDriver, on the private display."""
    from selenium import webdriver
    from selenium.webdriver.webkitgtk.options import Options
    from selenium.webdriver.webkitgtk.service import Service

    options = Options()
    options.binary_location = str(minibrowser_path())
    options.add_argument("--automation")
    env = {key: value for key, value in os.environ.items() if key != "WAYLAND_DISPLAY"}
    env |= {"DISPLAY": xvfb_display, "GDK_BACKEND": "x11", "NO_AT_BRIDGE": "1"}
    service = Service(executable_path=shutil.which("WebKitWebDriver"), env=env,
                      log_output=subprocess.DEVNULL)
    driver = webdriver.WebKitGTK(options=options, service=service)
    try:
        driver.set_window_size(1280, 900)
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def wk(webkit: WebDriver) -> Iterator[WebDriver]:
    """The session's browser, on a blank page before and after each test."""
    webkit.get("about:blank")
    yield webkit
    webkit.get("about:blank")


def js(driver: WebDriver, script: str, *args: Any) -> Any:
    """Run ``script`` (a function body: ``return ...``) with ``arguments[i]``."""
    return driver.execute_script(script, *args)


def wait_for(driver: WebDriver, what: str, check: Callable[[], Any],
             timeout: float = LIVE_S) -> Any:
    """Poll ``check`` every 50 ms until it returns something truthy, and return that."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda _: check(), message=f"timed out after {timeout:.0f} s waiting for {what}")
