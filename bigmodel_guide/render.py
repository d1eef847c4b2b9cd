"""Render a calculator widget: the form, the pre-computed results, through Jinja.

The numbers in the HTML are computed natively at build time, so the page is correct
before (and without) any script; the browser runtime takes over on interaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from markupsafe import Markup

from calculators.catalogues import presets
from calculators.core import units

if TYPE_CHECKING:
    from jinja2 import Environment

    from calculators.core.spec import Calculator, Param, Result, Value

WIDGET_TEMPLATE = "calculator/widget.html"


def field_text(param: Param, value: Value, given: object = None) -> str:
    """The text a field shows: the author's own spelling if the fence gave text."""
    return given if isinstance(given, str) else param.as_text(value)


@dataclass(frozen=True)
class FieldView:
    param: Param
    text: str
    default_text: str
    field_id: str
    changed: bool  # the worked example sets this input (opens "More inputs")
    advanced: bool  # folded under "More inputs"


def render_widget(
    env: Environment,
    calc: Calculator,
    result: Result,
    widget_id: str,
    overrides: dict[str, object],
) -> str:
    """The widget's HTML for ``result`` (the fence's worked example)."""
    fields = [
        FieldView(
            param=param,
            text=field_text(param, result.inputs[param.name], overrides.get(param.name)),
            default_text=field_text(param, param.default),
            field_id=f"{widget_id}-{param.name}",
            changed=param.name in overrides,
            advanced=calc.is_advanced(param.name),
        )
        for param in calc.params
    ]
    outputs = [
        {"output": out, "raw": result.raw(out.name), "text": result.text(out.name)}
        for out in calc.outputs
    ]
    example = {f.param.name: f.text for f in fields}
    choices = [
        {"id": preset.id, "label": preset.label, "source": preset.source,
         "texts_json": json.dumps(presets.preset_texts(calc, preset), separators=(",", ":"))}
        for preset in presets.presets_for(calc)
    ]
    template = env.get_template(WIDGET_TEMPLATE)
    return template.render(
        calc=calc,
        widget_id=widget_id,
        fields=fields,
        outputs=outputs,
        result=result.to_dict(),
        # The chart is SVG from calculators.core.charts, which XML-escapes every label.
        chart=Markup(result.computed.chart) if result.computed.chart else None,
        example_json=json.dumps(example, separators=(",", ":")),
        unit_labels=units.PHYSICAL - {"1"},
        parsed=result.parsed(),
        presets=choices,
    )
