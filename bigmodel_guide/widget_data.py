"""Files the widgets load on demand: each calculator's presets and its folded inputs.

A page carries what a reader sees at once. What a widget needs only when the reader
reaches for it lives in one file per kind for the whole site, fetched once by form.js:

- ``presets.json``: what each published configuration sets, and its source. In every
  widget, the same texts were about 107 kB of the dense chapter's 1.14 MB.
- ``more-inputs.json``: the inputs folded under "More inputs", as HTML. They hold their
  defaults in every widget (render.check_folded_defaults makes sure), so one copy per
  calculator serves every widget; in the widgets they were 187 kB of that chapter.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from bigmodel_guide.render import UNIT_LABELS, default_result, form_fields
from calculators.catalogues import presets
from calculators.core import i18n

if TYPE_CHECKING:
    from collections.abc import Mapping

    from jinja2 import Environment

    from calculators.core.calculator import Calculator

PRESETS_PATH = "assets/calculators/presets.json"
MORE_INPUTS_PATH = "assets/calculators/more-inputs.json"


def in_language(path: str, lang: str) -> str:
    """A data file's path in ``lang``: ``presets.json``, ``presets.zh.json`` (both at the
    site's root, beside the scripts that fetch them; form.js picks by the page's lang)."""
    return path if lang == i18n.SOURCE_LANGUAGE else path.replace(".json", f".{lang}.json")
#: Stands for the widget's id in the folded inputs' ids; form.js puts the id in.
WIDGET_ID = "__widget__"
FIELD_TEMPLATE = "calculator/field.html"


def presets_document(registry: Mapping[str, Calculator]) -> dict[str, dict[str, object]]:
    """{calculator id: {preset id: {label, kind, source, texts}}} for the calculators
    that offer presets; texts are what the preset writes into each field it sets."""
    return {
        calc.id: {
            preset.id: {
                "label": preset.label,
                "kind": preset.kind,
                "source": preset.source,
                "texts": presets.preset_texts(calc, preset),
            }
            for preset in offered
        }
        for calc in registry.values()
        if (offered := presets.presets_for(calc))
    }


def more_inputs_document(env: Environment, registry: Mapping[str, Calculator]) -> dict[str, str]:
    """{calculator id: the HTML of its folded inputs at their defaults}, ids made with
    WIDGET_ID. Modes (hidden fields, disabled options) are those of the defaults; form.js
    applies the widget's own when it adds them."""
    field = env.get_template(FIELD_TEMPLATE).module.field  # type: ignore[attr-defined]
    document = {}
    for calc in registry.values():
        result = default_result(calc)
        folded = [f for f in form_fields(calc, result, WIDGET_ID, {}) if f.advanced]
        if folded:
            parsed = result.parsed()
            document[calc.id] = "".join(str(field(f, UNIT_LABELS, parsed))
                                        for f in folded).strip()
    return document


def _dumps(document: object) -> str:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def widget_files(env: Environment, registry: Mapping[str, Calculator],
                 lang: str = i18n.SOURCE_LANGUAGE) -> dict[str, str]:
    """{site path: content} of the files above, in ``lang`` (``registry`` localised)."""
    return {
        in_language(PRESETS_PATH, lang): _dumps(presets_document(registry)),
        in_language(MORE_INPUTS_PATH, lang): _dumps(more_inputs_document(env, registry)),
    }
