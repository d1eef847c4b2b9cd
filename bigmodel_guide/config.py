"""Options of the ``bigmodel`` MkDocs plugin."""

from __future__ import annotations

from mkdocs.config import config_options as c
from mkdocs.config.base import Config


class CalculatorsConfig(Config):  # type: ignore[no-untyped-call]
    """Where the runtime comes from and how the browser bundle is made."""

    enabled = c.Type(bool, default=True)
    """Turn the plugin off (fences then fail the build: they need it)."""

    pyodide_dir = c.Type(str, default="node_modules/pyodide")
    """The pinned npm ``pyodide`` package, whose core runtime files the site ships."""

    runtime_url = c.Optional(c.Type(str))
    """Load Pyodide from this URL (e.g. a CDN) instead of the self-hosted copy. Unset,
    the default, keeps the site working with no network beyond its own origin."""

    lockfile_tool = c.Type(str, default=".venv-pyodide/bin/pyodide")
    """The ``pyodide`` CLI (from pyodide-build) whose ``lockfile add-wheels`` adds the
    calculators wheel to a site-local pyodide-lock.json."""

    memory_snapshot = c.Type(bool, default=True)
    """Ship a memory snapshot of the runtime taken after start-up with the calculators
    imported and run once at their defaults (made at build time with Node by the same
    pinned Pyodide, from the site's wheel); the worker starts from it and falls back to
    a normal start with the wheel if it cannot. Saves about half of the runtime's start
    time, and about half of a calculator's first computation, at the price of a larger
    download: about 7.4 MB (gzipped; 31 MB inflated)."""

    cache_dir = c.Type(str, default="build/pyodide-bundle")
    """Where built wheels and locks are kept between builds, keyed by source hash."""
