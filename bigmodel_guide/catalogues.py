"""The calculators' message catalogues: what is extracted, how it is kept, how it is checked.

Two kinds of English text reach a reader, and both are extracted with Babel into one
template (``calculators/locale/calculators.pot``):

- the declarations (titles, summaries, input labels and help, choice labels and reasons,
  output labels and help), read from the registry itself, since they are data, not
  calls; each entry says where it is declared (``training_compute:param:num_gpus``);
- the messages the code writes at run time (notes, warnings, errors, table headers),
  each marked with ``_()`` in ``calculators/`` and found by Babel's Python extractor.

``update`` merges the template into each language's ``.po`` (translations kept, new
strings added empty, gone ones dropped) and ``compile`` writes the ``.mo`` the
calculators read. ``problems`` is what the tests hold: no string without a translation,
and a translation that keeps its template's ``{placeholders}``.
"""

from __future__ import annotations

import io
import string
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

import calculators
from calculators.catalogues.accelerators import ACCELERATORS
from calculators.core import i18n, units

if TYPE_CHECKING:
    from collections.abc import Iterator

    from calculators.core.calculator import Calculator

PACKAGE_DIR = Path(calculators.__file__).parent
PROJECT_DIR = PACKAGE_DIR.parent
#: The widgets' scripts (their words marked with t()) and the build's templates (_()).
SCRIPTS_DIR = PROJECT_DIR / "docs" / "assets" / "calculators"
TEMPLATES_DIR = PROJECT_DIR / "templates"
TRANSLATED = tuple(lang for lang in i18n.LANGUAGES if lang != i18n.SOURCE_LANGUAGE)
#: Fixed header dates and no line numbers, so that a catalogue changes only when a
#: string does (not on every extraction or code edit).
STAMP = datetime(2026, 12, 6, tzinfo=UTC)
HEADER = "# The {domain} text, {language}: see bigmodel_guide/catalogues.py."


@dataclass(frozen=True)
class Domain:
    """One catalogue: its name and where its template and translations live."""

    name: str
    locale_dir: Path

    @property
    def template_path(self) -> Path:
        return self.locale_dir / f"{self.name}.pot"

    def po_path(self, lang: str) -> Path:
        return self.locale_dir / lang / "LC_MESSAGES" / f"{self.name}.po"

    def mo_path(self, lang: str) -> Path:
        return self.po_path(lang).with_suffix(".mo")


#: What the calculators show, natively and in the browser (shipped in the wheel).
CALCULATORS = Domain(i18n.DOMAIN, PACKAGE_DIR / "locale")
#: What only the build writes (the Validation and Hardware pages): kept out of the wheel,
#: so that the browser never loads it (bigmodel_guide.site_text).
SITE = Domain("site", PROJECT_DIR / "bigmodel_guide" / "locale")
LOCALE_DIR = CALCULATORS.locale_dir
TEMPLATE = CALCULATORS.template_path


def po_path(lang: str, domain: Domain = CALCULATORS) -> Path:
    return domain.po_path(lang)


def mo_path(lang: str, domain: Domain = CALCULATORS) -> Path:
    return domain.mo_path(lang)


def declaration_strings(calc: Calculator) -> Iterator[tuple[str, str]]:
    """(where, text) for every piece of text ``calc`` declares."""
    yield f"{calc.id}:title", calc.title
    yield f"{calc.id}:summary", calc.summary
    for param in calc.params:
        where = f"{calc.id}:param:{param.name}"
        yield where, param.label
        yield f"{where}:help", param.help
        yield f"{where}:placeholder", param.placeholder
        for choice in param.choices:
            yield f"{where}={choice.value}", choice.label
            yield f"{where}={choice.value}:why_not", choice.why_not
    for output in calc.outputs:
        yield f"{calc.id}:output:{output.name}", output.label
        yield f"{calc.id}:output:{output.name}:help", output.help


def unit_words(calc: Calculator) -> Iterator[tuple[str, str]]:
    """(where, unit) for the units of ``calc`` that are words, not symbols ("GPU-h",
    "days", "param"; not "GB" or "FLOP/s"), which a language writes its own way."""
    named: list[tuple[str, str, str]] = [("param", p.name, p.unit) for p in calc.params]
    named += [("output", o.name, o.unit) for o in calc.outputs]
    for kind, name, unit in named:
        if unit and unit not in units.PHYSICAL and not _is_symbol(unit):
            yield f"{calc.id}:{kind}:{name}:unit", unit


def _is_symbol(unit: str) -> bool:
    """SI-style symbols that read the same in every language."""
    return unit in ("FLOP/B", "kWh", "tCO2e", "kgCO2e/kWh", "x", "SM")


def template() -> Catalog:
    """Every English string the calculators show, with where each one comes from."""
    catalog = new_catalog(None, CALCULATORS)
    for calc_id in calculators.REGISTRY:
        calc = calculators.REGISTRY[calc_id]
        for where, text in declaration_strings(calc):
            if text:
                catalog.add(text, locations=[(where, 0)])
        for where, unit in unit_words(calc):
            catalog.add(unit, locations=[(where, 0)], context=i18n.UNIT_CONTEXT)
    for part in ACCELERATORS.values():  # data a note shows (model_memory)
        if part.memory_note:
            catalog.add(part.memory_note, locations=[(f"accelerator:{part.id}:memory_note", 0)])
    sources = (
        (PACKAGE_DIR, [("**.py", "python")], {"_": None, "N_": None}),
        (PROJECT_DIR / "bigmodel_guide", [("**.py", "python")], {"_": None, "N_": None}),
        (TEMPLATES_DIR, [("**.html", "jinja2.ext:babel_extract"),
                         ("**.md", "jinja2.ext:babel_extract")], {"_": None}),
        (SCRIPTS_DIR, [("**.js", "javascript")], {"t": None}),
    )
    for directory, method_map, keywords in sources:
        add_marked(catalog, directory, method_map, keywords)
    return catalog


def add_marked(catalog: Catalog, directory: Path, method_map: list[tuple[str, str]],
               keywords: dict[str, None]) -> None:
    """Add to ``catalog`` the messages marked with ``keywords`` in ``directory``'s files
    (Babel's extractors by ``method_map``), each with where it is; a brace template is
    flagged, so that the tests compare its placeholders with its translation's."""
    for filename, lineno, message, _comments, _context in extract_from_dir(
        directory, method_map=method_map, keywords=keywords,
    ):
        if isinstance(message, str) and message:
            where = f"{directory.relative_to(PROJECT_DIR).as_posix()}/{filename}"
            catalog.add(message, locations=[(where, lineno)],
                        flags=("python-brace-format",) if "{" in message else ())


def script_messages() -> list[str]:
    """The messages the widgets' scripts show (t() in docs/assets/calculators)."""
    return sorted({str(message) for _f, _l, message, _c, _x in extract_from_dir(
        SCRIPTS_DIR, method_map=[("**.js", "javascript")], keywords={"t": None},
    ) if isinstance(message, str) and message})


def new_catalog(lang: str | None, domain: Domain) -> Catalog:
    return Catalog(locale=lang, domain=domain.name, project=f"bigmodel-guide {domain.name}",
                   version="1", header_comment=HEADER.format(
                       domain=domain.name, language=lang or "template"),
                   creation_date=STAMP, revision_date=STAMP, fuzzy=False,
                   charset="utf-8", msgid_bugs_address="(the repository's issues)",
                   last_translator="bigmodel-guide", language_team="bigmodel-guide")


def read(path: Path, domain: Domain = CALCULATORS) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle, domain=domain.name)


def po_bytes(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=88, sort_output=False, omit_header=False,
             ignore_obsolete=True, include_previous=False, include_lineno=False)
    return buffer.getvalue()


def mo_bytes(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    return buffer.getvalue()


def updated(lang: str, fresh: Catalog, domain: Domain = CALCULATORS) -> Catalog:
    """``lang``'s catalogue with ``fresh``'s strings: translations kept, new ones empty."""
    path = domain.po_path(lang)
    catalog = read(path, domain) if path.exists() else new_catalog(lang, domain)
    catalog.update(fresh, no_fuzzy_matching=True, update_header_comment=False,
                   update_creation_date=False)
    catalog.revision_date = STAMP
    catalog.obsolete.clear()
    return catalog


def placeholders(text: str) -> set[str]:
    """The ``{name}`` fields of a brace template (``{{`` is a literal brace)."""
    try:
        return {field for _lit, field, _spec, _conv in string.Formatter().parse(text)
                if field is not None}
    except ValueError:
        return {"<malformed>"}


@dataclass(frozen=True)
class Problem:
    lang: str
    message: str
    what: str


def problems(lang: str, fresh: Catalog, domain: Domain = CALCULATORS) -> list[Problem]:
    """What keeps ``lang`` from showing every string: a string of the template missing
    from its catalogue or untranslated, or a translation whose placeholders differ."""
    catalog = read(domain.po_path(lang), domain)
    found: list[Problem] = []
    for message in fresh:
        if not message.id:
            continue
        entry = catalog.get(message.id, context=message.context)
        if entry is None or not entry.string:
            found.append(Problem(lang, str(message.id), "no translation"))
        elif "python-brace-format" in message.flags and (
            placeholders(str(entry.string)) != placeholders(str(message.id))
        ):
            found.append(Problem(lang, str(message.id), "placeholders differ"))
    return found
