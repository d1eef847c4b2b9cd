"""The calculators' message catalogue: complete, compiled, and faithful to its templates.

A string a reader can see (a declaration, a message the code writes, a template's or a
script's words) that has no Chinese translation fails here, with its English."""

from __future__ import annotations

import gettext
import io

import pytest

from bigmodel_guide import catalogues
from calculators.core import i18n


@pytest.fixture(scope="module")
def fresh() -> object:
    return catalogues.template()


@pytest.mark.parametrize("lang", catalogues.TRANSLATED)
def test_every_string_has_a_translation_that_keeps_its_placeholders(
        lang: str, fresh: object) -> None:
    found = catalogues.problems(lang, fresh)  # type: ignore[arg-type]
    shown = "\n".join(f"{p.what}: {p.message[:90]!r}" for p in found[:40])
    assert not found, f"{len(found)} strings of {lang} need work "\
        f"(scripts/catalogues.py update, then translate):\n{shown}"


@pytest.mark.parametrize("lang", catalogues.TRANSLATED)
def test_the_compiled_catalogue_is_the_po_file(lang: str) -> None:
    """The .mo the calculators read (natively and in Pyodide) is compiled from the .po
    that translators edit, not left behind by it."""
    compiled = catalogues.mo_bytes(catalogues.read(catalogues.po_path(lang)))
    assert catalogues.mo_path(lang).read_bytes() == compiled, \
        "run: python scripts/catalogues.py update"


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
