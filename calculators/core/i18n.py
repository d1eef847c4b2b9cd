"""The calculators' text in the reader's language, from gettext message catalogues.

English is the source language: every declaration (labels, help, choices, outputs) and
every message (notes, warnings, errors, table headers) is written in English, and that
English is the catalogue's key (msgid). Each other language has
``calculators/locale/<lang>/LC_MESSAGES/calculators.mo``, compiled from the ``.po`` beside
it, which is what translators edit (``scripts/catalogues.py`` extracts the strings with
Babel, updates the ``.po`` and compiles it). The standard library's ``gettext`` reads the
``.mo`` natively and in Pyodide, so the browser needs nothing more.

The active language is a context variable: ``with language("zh"):`` around a
computation makes every ``_()`` inside it Chinese, while numbers, units and the JSON's
shape stay the same. A message that formats values is translated as a template first and
filled in after (``_("{gpus} GPUs").format(gpus=...)``), so that a catalogue entry does
not depend on the numbers.
"""

from __future__ import annotations

import gettext
import io
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

#: The guide's languages: English (the source) and Simplified Chinese.
LANGUAGES = ("en", "zh")
SOURCE_LANGUAGE = "en"
DOMAIN = "calculators"

_active: ContextVar[str] = ContextVar("calculators_language", default=SOURCE_LANGUAGE)


class UnknownLanguageError(ValueError):
    """A language the guide has no catalogue for."""


def check_language(lang: str) -> str:
    """``lang`` normalised (``zh-CN``, ``zh_Hans``, ``zh`` -> ``zh``), or an error."""
    base = lang.strip().replace("_", "-").split("-")[0].lower()
    if base not in LANGUAGES:
        raise UnknownLanguageError(f"unknown language {lang[:20]!r}; use one of {LANGUAGES}")
    return base


@cache
def catalogue(lang: str) -> gettext.NullTranslations:
    """The compiled catalogue of ``lang`` (English: the identity)."""
    if lang == SOURCE_LANGUAGE:
        return gettext.NullTranslations()
    path = resources.files("calculators") / "locale" / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
    return gettext.GNUTranslations(io.BytesIO(path.read_bytes()))


def current_language() -> str:
    return _active.get()


@contextmanager
def language(lang: str) -> Iterator[str]:
    """Within the block, ``_()`` answers in ``lang``."""
    token = _active.set(check_language(lang))
    try:
        yield _active.get()
    finally:
        _active.reset(token)


def _(message: str) -> str:
    """``message`` (English) in the active language; itself where it has no translation
    (a test makes sure that no string the calculators show lacks one)."""
    if not message:
        return message
    lang = _active.get()
    return message if lang == SOURCE_LANGUAGE else catalogue(lang).gettext(message)


#: The catalogue's context for unit words ("GPU-h", "days", "param"), which the same
#: English word elsewhere (a label "GPU") must not share.
UNIT_CONTEXT = "unit"


def unit_word(unit: str) -> str:
    """A unit's word in the active language (``卡时`` for "GPU-h"); symbols such as GB
    or FLOP/s have no entry and stay as they are."""
    lang = _active.get()
    if not unit or lang == SOURCE_LANGUAGE:
        return unit
    return catalogue(lang).pgettext(UNIT_CONTEXT, unit)


def N_(message: str) -> str:  # noqa: N802 - gettext's name for it
    """Marks ``message`` for the catalogue without translating it now: for a phrase kept
    in a module constant (evaluated at import, in no particular language), translated
    where it is shown with ``_(CONSTANT)``."""
    return message


def translate_in(lang: str, message: str) -> str:
    """``message`` in ``lang``, whatever the active language (build-time rendering)."""
    with language(lang):
        return _(message)
