"""The browser bundle: the calculators wheel, a site-local pyodide-lock.json, the runtime.

The wheel holds ``calculators/`` alone (standard library only, so Pyodide needs no
micropip and no other package). Its version carries a hash of the sources, so a
changed calculator gets a new file name and no browser cache can serve a stale one.
The lock is made by Pyodide's own lockfile tooling (``pyodide lockfile add-wheels``
from pyodide-build), then trimmed to what the site ships.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

DIST_NAME = "bigmodel-calculators"
BASE_VERSION = "0.1.0"
#: The core runtime files a page needs from the npm ``pyodide`` package.
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
LOCK_NAME = "pyodide-lock.json"

_PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "{name}"
version = "{version}"
description = "The calculators of bigmodel-guide, for the browser (standard library only)."
requires-python = ">=3.11"

[tool.hatch.build.targets.wheel]
packages = ["calculators"]
"""


class BundleError(RuntimeError):
    """A prerequisite of the browser bundle is missing or a tool failed."""


#: The snapshot is gzipped (31 MB -> about 7.4 MB) because hosts rarely compress binary
#: files; the worker inflates it with the browser's DecompressionStream. It is named by
#: its content (``snapshot-<hash>.bin.gz``), in the cache and in the site: it holds the
#: calculators' code, so a browser cache must never pair an old snapshot with a new wheel.
SNAPSHOT_SCRIPT = Path(__file__).with_name("snapshot.mjs")
#: The package the snapshot imports (the wheel's only top-level package).
PACKAGE = "calculators"


@dataclass(frozen=True)
class Bundle:
    """What the bundle step produced, in the cache directory."""

    wheel: Path
    lock: Path
    package: str
    snapshot: Path | None = None


def source_hash(package_dir: Path) -> str:
    """A short hash of every Python source and compiled message catalogue under
    ``package_dir`` (names and bytes): what the wheel ships."""
    digest = hashlib.sha256()
    shipped = [*package_dir.rglob("*.py"), *package_dir.rglob("*.mo")]
    for path in sorted(shipped):
        digest.update(path.relative_to(package_dir).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def build_wheel(package_dir: Path, out_dir: Path, version: str) -> Path:
    """Build a pure-Python wheel of ``package_dir`` with the standard build front end."""
    from build import ProjectBuilder

    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copytree(
            package_dir,
            project / "calculators",
            # The catalogues' sources (.po, .pot) stay behind: the wheel reads the .mo.
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.po", "*.pot"),
        )
        (project / "pyproject.toml").write_text(
            _PYPROJECT.format(name=DIST_NAME, version=version), encoding="utf-8"
        )
        built = ProjectBuilder(project).build("wheel", str(out_dir))
    return Path(built)


def make_lock(tool: Path, npm_lock: Path, wheel: Path, out: Path) -> None:
    """Add ``wheel`` to the npm lock with ``pyodide lockfile add-wheels``; keep only it."""
    if not tool.exists():
        raise BundleError(
            f"the Pyodide lockfile tool {tool} is missing: run `make setup` (it installs "
            "pyodide-build into .venv-pyodide with the first Python >= 3.12 it finds)"
        )
    command = [
        str(tool),
        "lockfile",
        "add-wheels",
        "--input",
        str(npm_lock),
        "--output",
        str(out),
        "--base-path",
        str(wheel.parent),
        str(wheel),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BundleError(f"pyodide lockfile add-wheels failed: {done.stderr.strip()[-2000:]}")
    lock = json.loads(out.read_text(encoding="utf-8"))
    # The site ships the core runtime only; entries for the 350 optional packages of
    # the full distribution would name files that are not there, so drop them.
    lock["packages"] = {k: v for k, v in lock["packages"].items() if v["name"] == DIST_NAME}
    out.write_text(json.dumps(lock, indent=1, sort_keys=True), encoding="utf-8")


def make_snapshot(pyodide_dir: Path, cache_dir: Path, wheel: Path) -> Path:
    """A memory snapshot of the pinned runtime after start-up with the calculators
    imported from ``wheel`` and run once (snapshot.mjs; Pyodide's unstable
    ``_makeSnapshot`` API), cached by runtime version, script and wheel; needs Node."""
    node = shutil.which("node")
    if node is None:
        raise BundleError("node is needed to make the runtime's memory snapshot "
                          "(or set memory_snapshot: false)")
    digest = hashlib.sha256(SNAPSHOT_SCRIPT.read_bytes())
    digest.update((pyodide_dir / "package.json").read_bytes())
    digest.update((pyodide_dir / "pyodide.asm.wasm").read_bytes()[:1 << 20])
    digest.update(wheel.read_bytes())
    target = cache_dir / f"snapshot-{digest.hexdigest()[:12]}.bin.gz"
    if not target.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        raw = target.with_suffix(".raw")
        command = [node, str(SNAPSHOT_SCRIPT), str(pyodide_dir), str(wheel), PACKAGE, str(raw)]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
        if done.returncode != 0 or not raw.exists():
            raise BundleError(f"making the memory snapshot failed: {done.stderr[-1500:]}")
        partial = target.with_suffix(".part")
        with raw.open("rb") as source, gzip.GzipFile(partial, "wb", mtime=0) as packed:
            shutil.copyfileobj(source, packed)
        raw.unlink()
        partial.replace(target)
        # Each change to the calculators makes a new snapshot of about 7.4 MB: keep one.
        for old in cache_dir.glob("snapshot-*"):
            if old == target:
                continue
            if old.is_dir():  # the earlier layout, one directory per snapshot
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)
    return target


def prepare(package_dir: Path, pyodide_dir: Path, tool: Path, cache_dir: Path,
            snapshot: bool = False) -> Bundle:
    """Build (or reuse from the cache) the wheel and the site-local lock."""
    npm_lock = pyodide_dir / LOCK_NAME
    if not npm_lock.exists():
        raise BundleError(
            f"{npm_lock} is missing: run `make setup` (npm ci installs the pinned pyodide)"
        )
    version = f"{BASE_VERSION}+{source_hash(package_dir)}"
    target = cache_dir / version
    lock = target / LOCK_NAME
    wheels = sorted(target.glob("*.whl")) if target.exists() else []
    if not (wheels and lock.exists()):
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        wheel = build_wheel(package_dir, target, version)
        make_lock(tool, npm_lock, wheel, lock)
        wheels = [wheel]
    made = make_snapshot(pyodide_dir, cache_dir, wheels[0]) if snapshot else None
    return Bundle(wheel=wheels[0], lock=lock, package=DIST_NAME, snapshot=made)


def install(bundle: Bundle, pyodide_dir: Path, site_dir: Path, runtime_url: str | None) -> None:
    """Copy runtime + wheel + lock into the site and write the worker's config."""
    runtime_dir = site_dir / "pyodide"
    runtime_dir.mkdir(parents=True, exist_ok=True)
    if runtime_url is None:
        for name in RUNTIME_FILES:
            shutil.copy2(pyodide_dir / name, runtime_dir / name)
    shutil.copy2(bundle.wheel, runtime_dir / bundle.wheel.name)
    shutil.copy2(bundle.lock, runtime_dir / LOCK_NAME)
    if bundle.snapshot is not None:
        shutil.copy2(bundle.snapshot, runtime_dir / bundle.snapshot.name)
    config = {
        # Relative to the worker script (assets/calculators/worker.js).
        "indexURL": runtime_url or "../../pyodide/",
        "lockFileURL": "../../pyodide/" + LOCK_NAME,
        "package": bundle.package,
        "wheel": bundle.wheel.name,
        # Only with the self-hosted runtime: a snapshot is locked to the exact build.
        "snapshotURL": "../../pyodide/" + bundle.snapshot.name
        if bundle.snapshot is not None and runtime_url is None else None,
        # What a first visit downloads at most (every runtime file here), for the page
        # to say before the reader waits on it (issue 37); None when served elsewhere.
        "downloadBytes": sum(f.stat().st_size for f in runtime_dir.iterdir() if f.is_file())
        if runtime_url is None else None,
    }
    script = site_dir / "assets" / "calculators" / "runtime-config.js"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        "// Written by the bigmodel MkDocs plugin at build time.\n"
        f"export const RUNTIME = {json.dumps(config, indent=2)};\n",
        encoding="utf-8",
    )
