"""The calculators' message catalogue: complete, compiled, and faithful to its templates.

A string a reader can see (a declaration, a message the code writes, a template's or a
script's words) that has no Chinese translation fails here, with its English."""

from __future__ import annotations

import gettext
import io
from typing import TYPE_CHECKING

import pytest

from bigmodel_guide import catalogues
from bigmodel_guide.site_text import CATALOGUES
from calculators.core import i18n

if TYPE_CHECKING:
    from collections.abc import Callable

    from babel.messages.catalog import Catalog

DOMAINS = [(domain, lang, extract) for domain, extract in CATALOGUES
           for lang in catalogues.TRANSLATED]
NAMES = [f"{domain.name}-{lang}" for domain, lang, _extract in DOMAINS]


@pytest.mark.parametrize(("domain", "lang", "extract"), DOMAINS, ids=NAMES)
def test_every_string_has_a_translation_that_keeps_its_placeholders(
        domain: catalogues.Domain, lang: str, extract: Callable[[], Catalog]) -> None:
    found = catalogues.problems(lang, extract(), domain)
    shown = "\n".join(f"{p.what}: {p.message[:90]!r}" for p in found[:40])
    assert not found, f"{len(found)} strings of {domain.name} {lang} need work "\
        f"(scripts/catalogues.py update, then translate):\n{shown}"


@pytest.mark.parametrize(("domain", "lang", "extract"), DOMAINS, ids=NAMES)
def test_the_compiled_catalogue_is_the_po_file(
        domain: catalogues.Domain, lang: str, extract: Callable[[], Catalog]) -> None:
    """The .mo the calculators (natively and in Pyodide) and the build read is compiled
    from the .po that translators edit, not left behind by it; the .po is up to date with
    what the code marks (``update`` was run after the last change)."""
    compiled = catalogues.mo_bytes(catalogues.read(domain.po_path(lang), domain))
    assert domain.mo_path(lang).read_bytes() == compiled, \
        "run: python scripts/catalogues.py update"
    kept = {str(m.id) for m in catalogues.read(domain.po_path(lang), domain) if m.id}
    assert kept == {str(m.id) for m in extract() if m.id}, \
        "run: python scripts/catalogues.py update"


def test_the_site_text_is_not_shipped_to_the_browser() -> None:
    """The Validation and Hardware pages' text lives in its own catalogue, outside the
    calculators' package (and so outside the wheel Pyodide loads)."""
    assert catalogues.SITE.locale_dir.parent.name == "bigmodel_guide"
    calculators_text = {str(m.id) for m in catalogues.template() if m.id}
    site = {str(m.id) for _domain, extract in CATALOGUES[1:] for m in extract() if m.id}
    assert "Validation: the published figures the guide reproduces" in site
    assert "Validation: the published figures the guide reproduces" not in calculators_text


def test_the_template_lists_what_the_code_marks() -> None:
    """Messages marked with _() in the code, t() in the scripts and _() in the
    templates are all extracted (a few of each, by their English)."""
    ids = {str(m.id) for m in catalogues.template() if m.id}
    for marked in ("a value is required",                      # calculators/core/spec.py
                   "Live: recomputed in your browser.",        # docs/assets/calculators
                   "More inputs",                               # templates/calculator
                   "Training compute, GPU-hours, time, cost and carbon"):  # a declaration
        assert marked in ids


def test_brace_placeholders_are_compared_by_name() -> None:
    assert catalogues.placeholders("{share:.1%} of {n:,} GPUs") == {"share", "n"}
    assert catalogues.placeholders("{{literal}} {x}") == {"x"}
    assert catalogues.placeholders("{broken") == {"<malformed>"}


def test_a_catalogue_reads_with_the_standard_library() -> None:
    """What Pyodide runs: gettext.GNUTranslations over the shipped .mo."""
    table = gettext.GNUTranslations(io.BytesIO(catalogues.mo_path("zh").read_bytes()))
    assert table.gettext("Search") == "搜索"
    assert table.pgettext(i18n.UNIT_CONTEXT, "GPU-h") == "卡时"
