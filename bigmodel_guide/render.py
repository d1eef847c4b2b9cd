"""Render a calculator widget: the form, the pre-computed results, through Jinja.

The numbers in the HTML are computed natively at build time, so the page is correct
before (and without) any script; the browser runtime takes over on interaction.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from markupsafe import Markup

from calculators.catalogues import presets
from calculators.core import charts, units
from calculators.core.i18n import _
from calculators.core.spec import Choice
from calculators.inputs.architecture import ARCHITECTURE_PARAMS
from calculators.inputs.layer_mix import LAYER_MIX_PARAMS
from calculators.inputs.moe import MOE_ARCHITECTURE_DETAIL, MOE_ARCHITECTURE_PARAMS

if TYPE_CHECKING:
    from jinja2 import Environment

    from calculators.core.calculator import Calculator, Inputs, Result
    from calculators.core.spec import Param, Value, When

WIDGET_TEMPLATE = "calculator/widget.html"
#: Around every widget. A page loaded by the browser ignores them; on a page that the
#: theme's instant navigation swaps in, reveal.js turns each pair into an empty
#: <template> before the theme parses the page and keeps the widget's HTML as text, so
#: that a widget not yet near the screen is neither parsed nor inserted, styled or
#: removed until the reader nears it. The placeholder copies the widget's id and
#: data-calc from its opening tag (tests/site/test_site.py holds the format).
LAZY_OPEN = "<!--bm:lazy-->"
LAZY_CLOSE = "<!--/bm:lazy-->"
#: Units a field's label names (a count or a ratio goes without).
UNIT_LABELS = units.PHYSICAL - {"1"}
#: The template's indentation before a tag: 67 kB of the dense chapter's 22 widgets, and
#: meaningless in the page (the line break before the tag is kept, so is any space that
#: separates inline text). Escaped text never holds "<", so field values are untouched.
_INDENT_BEFORE_TAG = re.compile(r"\n[ \t]+<")


def field_text(param: Param, value: Value, given: object = None) -> str:
    """The text a field shows: the author's own spelling if the fence gave text."""
    return given if isinstance(given, str) else param.as_text(value)


@dataclass(frozen=True)
class TakenInput:
    """An input a fence takes from an output of a widget above it (fence ``takes:``)."""

    name: str
    anchor: str  # the widget above
    output: str  # its output's name
    source_title: str
    output_label: str


@dataclass(frozen=True)
class OptionView:
    """One option of a select: disabled, with the reason in its text, when it does not
    go with the other choices of the example."""

    value: str
    label: str
    selected: bool
    when: When | None
    reason: str  # why it can be unavailable ("" when it always is available)
    disabled: bool


@dataclass(frozen=True)
class FieldView:
    param: Param
    text: str
    default_text: str
    field_id: str
    changed: bool  # the worked example sets this input (shown first, never folded)
    advanced: bool  # folded under "More inputs"
    hidden: bool  # does not apply in the example's mode (param.when does not hold)
    options: tuple[OptionView, ...]
    phone_folded: bool = False  # shown on a phone only after "Show N more inputs"


def condition_text(calc: Calculator, when: When) -> str:
    """``when`` in words, for a reader: "Model kind is sparse (recommendation ...)"."""
    target = calc.param(when.input)
    labels = {c.value: c.label for c in target.choices} | {"true": "yes", "false": "no"}
    words = _("{label} is {values}").format(
        label=target.label, values=_(" or ").join(labels.get(v, v) for v in when.values))
    return words if when.also is None else _("{condition}, and {also}").format(
        condition=words, also=condition_text(calc, when.also))


def _options(calc: Calculator, param: Param, values: Inputs
             ) -> tuple[OptionView, ...]:
    choices = param.choices if param.kind == "choice" else (
        Choice("true", "yes"), Choice("false", "no"))
    value = values[param.name]
    selected = ("true" if value else "false") if param.kind == "bool" else str(value)
    views = []
    for choice in choices:
        reason = ""
        if choice.when is not None:
            reason = choice.why_not or _("only when {condition}").format(
                condition=condition_text(calc, choice.when))
        views.append(OptionView(
            value=choice.value, label=choice.label, selected=choice.value == selected,
            when=choice.when, reason=reason,
            disabled=choice.when is not None and not choice.when.holds(values)))
    return tuple(views)


def form_fields(calc: Calculator, result: Result, widget_id: str,
                overrides: dict[str, object]) -> list[FieldView]:
    """The form's fields in the order shown: the inputs the worked example sets first,
    then the calculator's main inputs, then (folded) the rest."""
    texts = {p.name: field_text(p, result.inputs[p.name], overrides.get(p.name))
             for p in calc.params}
    fields = [
        FieldView(
            param=param,
            text=texts[param.name],
            default_text=field_text(param, param.default),
            field_id=f"{widget_id}-{param.name}",
            changed=param.name in overrides,
            advanced=calc.is_advanced(param.name) and param.name not in overrides,
            hidden=param.when is not None and not param.when.holds(result.inputs),
            options=_options(calc, param, result.inputs)
            if param.kind in ("choice", "bool") else (),
        )
        for param in calc.params
    ]
    return fold_for_phones(sorted(fields, key=lambda f: not f.changed))  # stable sorts


#: On a phone (390 x 844), a widget's head, summary and this many fields in two columns
#: fit the first screen (tests/e2e/test_phone.py measures it); the rest of its shown
#: inputs wait behind "Show N more inputs".
PHONE_FIELDS = 6
#: A transformer's shape: what a preset or a config.json fills in one step, and what a
#: reader changes least; on a phone it is folded first, so that the question (GPUs,
#: batch, deadline, MFU ...) stays in view.
SHAPE_INPUTS = (frozenset(p.name for p in (*ARCHITECTURE_PARAMS, *MOE_ARCHITECTURE_PARAMS,
                                            *LAYER_MIX_PARAMS))
                | set(MOE_ARCHITECTURE_DETAIL)) - {"seq_len"}  # a training choice


def fold_for_phones(fields: list[FieldView]) -> list[FieldView]:
    """The shown (not "More inputs") fields, those outside the model's shape first
    unless they are too few to make a form of their own; after ``PHONE_FIELDS`` that
    apply, the rest marked ``phone_folded``."""
    main = [f for f in fields if not f.advanced]
    question = [f for f in main if f.param.name not in SHAPE_INPUTS and not f.hidden]
    if len(question) >= PHONE_FIELDS // 2:
        main.sort(key=lambda f: f.param.name in SHAPE_INPUTS)
    shown, out = 0, []
    for f in main:
        fold = shown >= PHONE_FIELDS or (f.param.name in SHAPE_INPUTS
                                         and len(question) >= PHONE_FIELDS // 2)
        shown += not fold and not f.hidden
        out.append(replace(f, phone_folded=True) if fold else f)
    return out + [f for f in fields if f.advanced]


class FoldedInputError(ValueError):
    """A worked example whose folded inputs do not hold their defaults."""


@cache
def default_result(calc: Calculator) -> Result:
    """The calculator at its defaults (computed once per build)."""
    return calc.compute({})


@cache
def _default_texts(calc: Calculator) -> dict[str, str]:
    result = default_result(calc)
    return {p.name: field_text(p, result.inputs[p.name]) for p in calc.params}


def check_folded_defaults(calc: Calculator, widget_id: str, fields: list[FieldView]) -> None:
    """A widget's folded inputs come from one copy per calculator at its defaults
    (widget_data.MORE_INPUTS_PATH): they must hold the defaults, or the page would show
    other values than the example's. (An input the example sets is never folded.)"""
    defaults = _default_texts(calc)
    for f in fields:
        if f.advanced and f.text != defaults[f.param.name]:
            raise FoldedInputError(
                f"#{widget_id}: folded input {f.param.name} holds {f.text!r}, not its "
                f"default {defaults[f.param.name]!r}")


def render_widget(
    env: Environment,
    calc: Calculator,
    result: Result,
    widget_id: str,
    overrides: dict[str, object],
    *,
    takes: dict[str, TakenInput] | None = None,
) -> str:
    """The widget's HTML for ``result`` (the fence's worked example); ``takes``: the
    inputs it takes from a widget above (the build has checked their values)."""
    fields = form_fields(calc, result, widget_id, overrides)
    check_folded_defaults(calc, widget_id, fields)
    outputs = [
        {"output": out, "raw": result.raw(out.name), "text": result.text(out.name)}
        for out in calc.outputs
    ]
    headline = [
        {"output": out, "raw": result.raw(out.name), "text": result.text(out.name)}
        for out in calc.headline_outputs
    ]
    example = {f.param.name: f.text for f in fields}
    # Names only: what each preset sets, and its source, are in the presets file.
    choices = [{"id": preset.id, "label": preset.label} for preset in presets.presets_for(calc)]
    chart = charts.layouts(result.computed.chart) if result.computed.chart else {}
    template = env.get_template(WIDGET_TEMPLATE)
    html = template.render(
        calc=calc,
        widget_id=widget_id,
        fields=fields,
        outputs=outputs,
        headline=headline,
        result=result.to_dict(),
        # The chart is SVG from calculators.core.charts, which XML-escapes every label.
        chart=Markup(chart.get("wide", "")),
        chart_narrow=Markup(chart.get("narrow", "")),
        example_json=json.dumps(example, separators=(",", ":")),
        unit_labels=UNIT_LABELS,
        parsed=result.parsed(),
        presets=choices,
        takes_config=presets.describes_models(calc),
        takes=[{"taken": taken, "label": calc.param(taken.name).label}
               for taken in (takes or {}).values()],
    )
    return LAZY_OPEN + _INDENT_BEFORE_TAG.sub("\n<", html) + LAZY_CLOSE
