"""The whole site builds strictly; every fence renders; numbers equal native results;
every internal link and anchor resolves; nothing is requested from another origin."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import calculators
from calculators.core import i18n
from calculators.core.localise import localised
from bigmodel_guide.render import LAZY_CLOSE, LAZY_OPEN
from tests.site.htmlscan import PageScan

pytestmark = pytest.mark.site
ROOT = Path(__file__).resolve().parents[2]


def _pages(site: Path) -> dict[Path, PageScan]:
    scans = {}
    for page in sorted(site.rglob("*.html")):
        scan = PageScan()
        scan.feed(page.read_text(encoding="utf-8"))
        scans[page] = scan
    return scans


@pytest.fixture(scope="module")
def pages(built_site: Path) -> dict[Path, PageScan]:
    return _pages(built_site)


def test_every_fence_rendered(built_site: Path, pages: dict[Path, PageScan]) -> None:
    fences = sum(
        page.read_text(encoding="utf-8").count("```calculator")
        for page in (ROOT / "docs").rglob("*.md")  # both editions' pages (page.zh.md)
    )
    widgets = sum(len(scan.widgets) for scan in pages.values())
    # The generated reference page adds one widget per calculator, in each edition.
    assert widgets == fences + 2 * len(calculators.REGISTRY)
    for page in built_site.rglob("*.html"):
        assert "```calculator" not in page.read_text(encoding="utf-8"), page


def test_no_page_repeats_an_id(pages: dict[Path, PageScan]) -> None:
    # A calculator's anchor that repeats a heading's slug would take the heading's place
    # as a link target, and a script looking the widget up by id would find the heading.
    repeated = {page.name if page.name != "index.html" else str(page.parent.name): scan.repeated_ids
                for page, scan in pages.items() if scan.repeated_ids}
    assert repeated == {}


def test_prerendered_values_equal_native(built_site: Path,
                                        pages: dict[Path, PageScan]) -> None:
    checked = 0
    for page, scan in pages.items():
        lang = "zh" if page.relative_to(built_site).parts[0] == "zh" else "en"
        for widget in scan.widgets:
            with i18n.language(lang):  # a text output is in the page's language
                result = localised(calculators.REGISTRY[widget.calc_id], lang).compute(
                    widget.example)
            for name, raw in widget.outputs.items():
                assert raw == result.raw(name), f"{page} #{widget.widget_id} {name}"
                checked += 1
    assert checked > 0


def test_every_widget_sits_alone_between_the_lazy_markers(pages: dict[Path, PageScan]) -> None:
    """reveal.js turns each <!--bm:lazy--> ... <!--/bm:lazy--> pair into a <template>
    on a page swapped in: each pair must hold exactly one whole widget, unnested, whose
    opening tag names its id and calculator (the placeholder copies them from there)."""
    for page, scan in pages.items():
        html = page.read_text(encoding="utf-8")
        pairs = re.findall(f"{LAZY_OPEN}(.*?){LAZY_CLOSE}", html, flags=re.S)
        assert len(pairs) == len(scan.widgets), page
        for body, widget in zip(pairs, scan.widgets, strict=True):
            assert LAZY_OPEN not in body, page
            assert body.startswith('<section class="bm-calc" ') and body.endswith("</section>")
            assert body.count('<section class="bm-calc" ') == 1, page
            tag = body[: body.index(">") + 1]
            assert f' id="{widget.widget_id}"' in tag and re.search(r'\sdata-calc="\w+"', tag)
        assert html.count(LAZY_OPEN) == html.count(LAZY_CLOSE) == len(pairs), page
    assert sum(len(scan.widgets) for scan in pages.values()) > 50
    # The page script that turns the pairs into templates looks for the same markers.
    reveal = (ROOT / "docs" / "assets" / "calculators" / "reveal.js").read_text()
    assert f'"{LAZY_OPEN}"' in reveal and f'"{LAZY_CLOSE}"' in reveal


def test_widget_ids_unique_per_page(pages: dict[Path, PageScan]) -> None:
    for page, scan in pages.items():
        ids = [w.widget_id for w in scan.widgets]
        assert len(ids) == len(set(ids)), page


def test_internal_links_and_anchors_resolve(built_site: Path, pages: dict[Path, PageScan]) -> None:
    for page, scan in pages.items():
        for href in scan.links:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            if not parts.path:
                target = page
            elif parts.path.startswith("/"):  # 404.html links from the site root
                target = (built_site / unquote(parts.path).lstrip("/")).resolve()
            else:
                target = (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            assert target.exists(), f"{page}: broken link {href}"
            if parts.fragment and target.suffix == ".html":
                assert parts.fragment in pages[target].ids, f"{page}: missing anchor {href}"


def test_no_resource_from_another_origin(pages: dict[Path, PageScan]) -> None:
    for page, scan in pages.items():
        for source in scan.sources:
            parts = urlsplit(source)
            assert not parts.scheme and not parts.netloc, f"{page} loads {source}"


def test_runtime_is_self_hosted(built_site: Path) -> None:
    runtime = built_site / "pyodide"
    for name in ("pyodide.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"):
        assert (runtime / name).exists(), name
    assert list(runtime.glob("bigmodel_calculators-*.whl"))


def test_the_worker_is_pointed_at_one_content_named_snapshot(built_site: Path) -> None:
    """The snapshot holds the calculators' code, so its name carries a hash of the
    runtime, the snapshot script and the wheel: a cached copy never meets a newer wheel."""
    config = (built_site / "assets" / "calculators" / "runtime-config.js").read_text()
    named = re.search(r'"snapshotURL": "[./]*pyodide/(snapshot-[0-9a-f]{12}\.bin\.gz)"', config)
    assert named, config
    shipped = [p.name for p in (built_site / "pyodide").glob("snapshot*")]
    assert shipped == [named.group(1)]


def test_unknown_calculator_fails_the_build_with_page_and_line(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# T\n\nText.\n\n```calculator\nid: no_such_calc\n```\n")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = config.split("\nnav:")[0].replace("docs_dir: docs", f"docs_dir: {docs}")
    config = config.replace("custom_dir: templates", f"custom_dir: {ROOT / 'templates'}")
    config = config.replace(
        "pyodide_dir: node_modules/pyodide", f"pyodide_dir: {ROOT / 'node_modules/pyodide'}"
    )
    (tmp_path / "mkdocs.yml").write_text(config)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(tmp_path / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode != 0
    assert "index.md:5" in done.stderr + done.stdout
    assert "no_such_calc" in done.stderr + done.stdout


def test_the_page_knows_what_the_runtime_downloads(built_site: Path) -> None:
    """Issue 37: the first focus downloaded ~21 MB without a word; the build writes the
    total of the runtime's files, which the page states while it loads (loader.js)."""
    config = (built_site / "assets" / "calculators" / "runtime-config.js").read_text()
    stated = re.search(r'"downloadBytes": (\d+)', config)
    assert stated, config
    files = sum(f.stat().st_size for f in (built_site / "pyodide").iterdir() if f.is_file())
    assert int(stated.group(1)) == files > 5_000_000
