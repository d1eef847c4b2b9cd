"""Shared fixtures: one strict site build per session, served on 127.0.0.1."""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--prebuilt-site",
        default=None,
        help="serve this already built site to the browser tests instead of "
        "building one (built with SITE_URL=http://127.0.0.1:<port>/)",
    )


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {  # noqa: RUF012 - the stdlib API is a class attribute
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
    }

    def log_message(self, format: str, *args: object) -> None:
        return


def start_server(
    root: Path, handler: type[http.server.SimpleHTTPRequestHandler] = QuietHandler
) -> http.server.ThreadingHTTPServer:
    """Serve ``root`` on 127.0.0.1 at a free port, in a daemon thread; shut it down after."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@dataclass(frozen=True)
class SiteServer:
    root: Path
    url: str


@pytest.fixture(scope="session")
def site_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SiteServer]:
    """An HTTP server on 127.0.0.1 (a free port) for the site built for its origin.

    Material's instant navigation only intercepts links whose origin matches the
    sitemap's, so the site is built with SITE_URL set to this server's address.
    """
    prebuilt = request.config.getoption("--prebuilt-site")
    root = Path(prebuilt).resolve() if prebuilt else tmp_path_factory.mktemp("site")
    server = start_server(root)
    yield SiteServer(root, f"http://127.0.0.1:{server.server_address[1]}")
    server.shutdown()


def build_site(site_dir: Path, site_url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": site_url}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir), *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


@pytest.fixture(scope="session")
def built_site(request: pytest.FixtureRequest, site_server: SiteServer) -> Path:
    """``mkdocs build --strict`` of the whole guide, for the test server's origin."""
    if request.config.getoption("--prebuilt-site"):
        return site_server.root
    done = build_site(site_server.root, site_server.url + "/")
    assert done.returncode == 0, done.stdout + done.stderr
    return site_server.root


@pytest.fixture(scope="session")
def site_url(built_site: Path, site_server: SiteServer) -> str:
    """The built site's base URL on 127.0.0.1."""
    return site_server.url
