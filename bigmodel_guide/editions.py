"""The site's two editions, English at ``/`` and Chinese at ``/zh/``, as one build.

mkdocs-static-i18n builds the English site, then runs MkDocs again for each other
language with the pages of that language (``page.zh.md``) written under ``zh/``. It was
chosen over Material's per-language projects because one ``mkdocs.yml`` and one nav
serve both editions, a zh page sits beside the page it translates, and a page without
a translation falls back to English instead of a dead link.

What the plugin shares between the builds, and what it makes per language:

- shared: the Pyodide runtime, the calculators' wheel, the memory snapshot and the
  theme's and the widgets' scripts and styles (the zh pages load them from the root),
  so the site grows by the zh pages only;
- per language: the generated pages (calculators reference, hardware, validation) and
  the widget data files (labels, help and presets in the page's language).
"""

from __future__ import annotations

import gzip
import json
import os
from typing import TYPE_CHECKING

import calculators
from bigmodel_guide import catalogues
from calculators.core import i18n
from calculators.core.localise import localised

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from jinja2 import Environment
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import File, Files

    from calculators.core.calculator import Calculator

I18N_PLUGIN = "i18n"


def building_language(config: MkDocsConfig) -> str:
    """The language MkDocs is building now (English when the i18n plugin is absent)."""
    plugin = config.plugins.get(I18N_PLUGIN)
    lang = getattr(plugin, "current_language", None) if plugin is not None else None
    return i18n.check_language(lang) if isinstance(lang, str) else i18n.SOURCE_LANGUAGE


def url_prefix(lang: str) -> str:
    """Where a language's pages live in the site: ``""`` or ``"zh/"``."""
    return "" if lang == i18n.SOURCE_LANGUAGE else f"{lang}/"


def place_in_edition(file: File, lang: str, config: MkDocsConfig) -> File:
    """Move a generated page into ``lang``'s edition, as the i18n plugin moves a
    ``page.zh.md`` (it does not see generated files: they have no source path)."""
    prefix = url_prefix(lang)
    if prefix:
        url = file.url  # read before dest_uri changes: MkDocs derives it from dest_uri
        file.dest_uri = prefix + file.dest_uri
        file.url = prefix + url
        file.abs_dest_path = os.path.normpath(os.path.join(config.site_dir, file.dest_uri))
    return file


def drop_duplicate_assets(files: Files, lang: str) -> None:
    """In a translated build, drop the copies of docs/ assets the i18n plugin places
    under ``zh/``: every page links the root's copy (through ``base_url``)."""
    prefix = url_prefix(lang)
    if not prefix:
        return
    for file in list(files):
        if not file.is_documentation_page() and file.dest_uri.startswith(prefix) \
                and file.abs_src_path is not None:
            files.remove(file)


def localised_registry(lang: str) -> Mapping[str, Calculator]:
    """Every calculator with its text in ``lang`` (the registry itself for English)."""
    if lang == i18n.SOURCE_LANGUAGE:
        return calculators.REGISTRY
    return {calc_id: localised(calculators.REGISTRY[calc_id], lang)
            for calc_id in calculators.REGISTRY}


def install_in_jinja(env: Environment, lang: str) -> None:
    """Give a Jinja environment ``_()`` in ``lang`` (the build's widget and reference
    templates mark their English with it; Babel extracts them like the code's)."""
    if "jinja2.ext.InternationalizationExtension" not in env.extensions:
        env.add_extension("jinja2.ext.i18n")
    table = i18n.catalogue(i18n.check_language(lang))
    env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext=table.gettext, ngettext=table.ngettext, newstyle=False)


def in_nested_build(config: MkDocsConfig) -> bool:
    """Whether this is one of the i18n plugin's builds of another language (run from
    inside the English build's post-build step)."""
    plugin = config.plugins.get(I18N_PLUGIN)
    return bool(getattr(plugin, "building", False))


SEARCH_INDEX = "search/search_index.json"


def split_search_index(site_dir: Path) -> dict[str, int]:
    """One search index per edition: the i18n plugin merges every language's entries
    into the root's index; each edition's entries go to its own (``zh/search/...``),
    which assets/search-on-demand.js fetches on that edition's pages. Locations stay
    relative to the site's root, as the theme resolves them. Returns entries per index."""
    root = site_dir / SEARCH_INDEX
    index = json.loads(root.read_text(encoding="utf-8"))
    counts = {}
    for lang in i18n.LANGUAGES:
        prefix = url_prefix(lang)
        others = tuple(url_prefix(o) for o in i18n.LANGUAGES if url_prefix(o))
        if prefix:
            docs = [d for d in index["docs"] if d["location"].startswith(prefix)]
        else:
            docs = [d for d in index["docs"] if not d["location"].startswith(others)]
        path = site_dir / prefix / SEARCH_INDEX
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**index, "docs": docs}, ensure_ascii=False,
                                   separators=(",", ":")), encoding="utf-8")
        counts[lang] = len(docs)
    return counts


def script_words(lang: str) -> str:
    """The widgets' own words (t() in the scripts) in ``lang``, as the JSON a page of that
    edition carries (templates/main.html); empty for English, which the scripts hold."""
    if lang == i18n.SOURCE_LANGUAGE:
        return ""
    table = i18n.catalogue(lang)
    words = {m: table.gettext(m) for m in catalogues.script_messages()}
    text = json.dumps({m: w for m, w in words.items() if w != m}, ensure_ascii=False,
                      separators=(",", ":"), sort_keys=True)
    return text.replace("</", "<\\/")  # never closes the <script> element it sits in


def translated_titles(config: MkDocsConfig, titles: Mapping[str, str]) -> dict[str, str]:
    """Chapter titles as the nav of the language being built names them (the i18n
    plugin's ``nav_translations`` in mkdocs.yml)."""
    plugin = config.plugins.get(I18N_PLUGIN)
    language = getattr(plugin, "current_language_config", None)
    names = getattr(language, "nav_translations", None) or {}
    return {path: names.get(title, title) for path, title in titles.items()}


def keep_root_pages(config: MkDocsConfig) -> None:
    """A translated build writes its pages under ``zh/``, but the theme's 404 page goes to
    the site's root, where it would replace the English one with broken zh links: the
    English build's 404 serves both (its links are absolute)."""
    if building_language(config) != i18n.SOURCE_LANGUAGE:
        config.theme.static_templates.discard("404.html")


def edition_pages(site_dir: Path, lang: str) -> list[str]:
    """Each built page of ``lang``'s edition, as its path from the site's root
    (``""``, ``compute/``, ``zh/compute/``)."""
    prefix = url_prefix(lang)
    others = tuple(url_prefix(o) for o in i18n.LANGUAGES if url_prefix(o))
    pages = []
    for html in sorted(site_dir.rglob("index.html")):
        path = html.parent.relative_to(site_dir).as_posix()
        path = "" if path == "." else f"{path}/"
        if (path.startswith(prefix) if prefix else not path.startswith(others)):
            pages.append(path)
    return pages


def write_sitemaps(site_dir: Path, site_url: str) -> None:
    """The site's sitemap (``sitemap.xml``: every page of both editions) and the Chinese
    edition's own (``zh/sitemap.xml``), each page with its counterpart in the other
    edition; generated pages included (the i18n plugin's single sitemap lists only the
    pages with a source file).

    The theme's instant navigation loads in place only the links its sitemap lists, and
    it reads the one at the site's root from the pages of both editions (their ``base``
    is the root): a zh page missing from it is a full page load. The language switch's
    links fetch each edition's own sitemap."""
    base = site_url.rstrip("/") + "/"
    pages = {lang: edition_pages(site_dir, lang) for lang in i18n.LANGUAGES}
    for lang in i18n.LANGUAGES:
        listed = ([(other, path) for other in i18n.LANGUAGES for path in pages[other]]
                  if lang == i18n.SOURCE_LANGUAGE else [(lang, path) for path in pages[lang]])
        lines = ['<?xml version="1.0" encoding="UTF-8"?>',
                 '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
                 'xmlns:xhtml="http://www.w3.org/1999/xhtml">']
        for page_lang, path in listed:
            english = path[len(url_prefix(page_lang)):]
            lines.append(f"    <url>\n        <loc>{base}{path}</loc>")
            for other in i18n.LANGUAGES:
                lines.append(f'        <xhtml:link rel="alternate" hreflang="{other}" '
                             f'href="{base}{url_prefix(other)}{english}"/>')
            lines.append("    </url>")
        lines.append("</urlset>")
        text = "\n".join(lines) + "\n"
        target = site_dir / url_prefix(lang) / "sitemap.xml"
        target.write_text(text, encoding="utf-8")
        target.with_suffix(".xml.gz").write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
