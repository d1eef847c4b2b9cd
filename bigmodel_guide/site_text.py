"""The text only the build writes, in the page's language: the Validation page (the
published checks' claims and tolerances, the measured runs' derivations and notes) and
the Hardware page (the catalogue's sources, the announced parts). It has its own
catalogue, ``bigmodel_guide/locale/<lang>/LC_MESSAGES/site.po`` (the ``site`` domain of
``catalogues``), so that none of it is shipped to the browser with the calculators'.

The citations themselves (authors, titles, tables) are not translated: a reader looks
them up as published."""

from __future__ import annotations

import gettext
from functools import cache
from typing import TYPE_CHECKING

from bigmodel_guide import catalogues
from calculators.catalogues import hardware
from calculators.core import i18n
from published_checks import all_checks, speed

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from babel.messages.catalog import Catalog

#: How the build's Python and templates mark site text: ``site_("...")`` translates now,
#: ``site_N_("...")`` only marks a constant, translated where it is shown.
KEYWORDS = {"site_": None, "site_N_": None}


@cache
def _translations(lang: str) -> gettext.NullTranslations:
    with catalogues.SITE.mo_path(lang).open("rb") as handle:
        return gettext.GNUTranslations(handle)


def site_(message: str) -> str:
    """``message`` (English) in the language being built; itself in English (a test
    makes sure no message of the site's catalogue lacks a translation)."""
    lang = i18n.current_language()
    if not message or lang == i18n.SOURCE_LANGUAGE:
        return message
    return _translations(lang).gettext(message)


def site_N_(message: str) -> str:  # noqa: N802 - gettext's N_, for this catalogue
    """Marks ``message`` for the site's catalogue; ``site_(CONSTANT)`` shows it."""
    return message


def data_strings() -> Iterator[tuple[str, str]]:
    """(where, text) for the prose the pages take from data, not from code."""
    for check in all_checks():
        yield f"check:{check.id}:claim", check.claim
        yield f"check:{check.id}:why_tolerance", check.why_tolerance
    for run in speed.RUNS:
        yield f"run:{run.id}:published", run.published
        yield f"run:{run.id}:derivation", run.derivation
        yield f"run:{run.id}:notes", run.notes
        for number, setting in enumerate(run.settings):
            yield f"run:{run.id}:settings:{number}", setting
    for gpu in hardware.ACCELERATORS.values():
        yield f"accelerator:{gpu.id}:source", gpu.source
    for part in hardware.ANNOUNCED.values():
        yield f"announced:{part.id}:status", part.status
        yield f"announced:{part.id}:announced", part.announced
        yield f"announced:{part.id}:source", part.source


def template() -> Catalog:
    """Every English string of the site's catalogue, with where it comes from."""
    catalog = catalogues.new_catalog(None, catalogues.SITE)
    for where, text in data_strings():
        if text:
            catalog.add(text, locations=[(where, 0)])
    sources = (
        (catalogues.PROJECT_DIR / "bigmodel_guide", [("**.py", "python")]),
        (catalogues.TEMPLATES_DIR, [("**.md", "jinja2.ext:babel_extract")]),
    )
    for directory, method_map in sources:
        catalogues.add_marked(catalog, directory, method_map, KEYWORDS)
    return catalog


#: Every catalogue, with what extracts its template: what scripts/catalogues.py keeps in
#: step and the tests hold complete.
CATALOGUES: tuple[tuple[catalogues.Domain, Callable[[], Catalog]], ...] = (
    (catalogues.CALCULATORS, catalogues.template),
    (catalogues.SITE, template),
)
