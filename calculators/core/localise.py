"""A calculator's declaration in another language: the same calculator, its text translated.

A declaration is written once, in English (the catalogues' keys). ``localised`` gives
the copy a page, the CLI or the worker shows in ``lang``: title, summary, input labels,
help, placeholders, choice labels and reasons, output labels and help, each through the
message catalogue (``i18n``). Names, values, units, bounds and the function are the
English declaration's own, so results and links are identical in both languages; a
choice still parses from its value and from its English label.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from calculators.core.i18n import SOURCE_LANGUAGE, _, check_language, language

if TYPE_CHECKING:
    from calculators.core.calculator import Calculator
    from calculators.core.spec import Choice, Output, Param

_made: dict[tuple[str, str], Calculator] = {}


def _choice(choice: Choice) -> Choice:
    # The English label stays accepted as input text (former), as links and scripts
    # written against the English page carry it.
    return replace(choice, label=_(choice.label), why_not=_(choice.why_not),
                   former=(*choice.former, choice.label))


def _param(param: Param) -> Param:
    return replace(param, label=_(param.label), help=_(param.help),
                   placeholder=_(param.placeholder),
                   choices=tuple(_choice(c) for c in param.choices))


def _output(output: Output) -> Output:
    return replace(output, label=_(output.label), help=_(output.help))


def localised(calc: Calculator, lang: str) -> Calculator:
    """``calc`` with its text in ``lang`` (``calc`` itself for English)."""
    lang = check_language(lang)
    if lang == SOURCE_LANGUAGE:
        return calc
    key = (calc.id, lang)
    if key not in _made:
        with language(lang):
            _made[key] = replace(
                calc, title=_(calc.title), summary=_(calc.summary),
                params=tuple(_param(p) for p in calc.params),
                outputs=tuple(_output(o) for o in calc.outputs),
            )
    return _made[key]
