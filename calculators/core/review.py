"""The design-review export: a whole scenario as a reviewer pastes it (issue 37).

Every input that applies under the current choices, defaults included, with its unit;
every output the mode gives, headline first, with its error band where it has one; the
warnings, then the assumptions and notes; the explanation table; the comparison with a
pinned baseline; the link that restores it all. In Markdown, and the same as CSV rows
or JSON. An input a mode hides (``When``) and an output the mode does not give (None)
are left out and counted, so that nothing reads "n/a" or ``name =`` with no value.
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

from calculators.core.i18n import _, unit_word

if TYPE_CHECKING:
    from calculators.core.calculator import Result
    from calculators.core.spec import Output, Param

#: Export formats besides the command line (calculators.core.bridge).
FORMATS = ("markdown", "csv", "json")


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def applying_inputs(result: Result) -> list[Param]:
    """The inputs whose mode condition holds for these inputs, in declaration order."""
    calc = result.calculator
    return [p for p in calc.params if p.when is None or p.when.holds(result.inputs)]


def input_text(param: Param, value: object) -> str:
    """An input's value as the form shows it; a blank one says what it stands for."""
    if value is None:
        return (_("blank ({meaning})").format(meaning=param.placeholder) if param.placeholder
                else _("blank"))
    text = param.as_text(value)  # type: ignore[arg-type]
    label = next((c.label for c in param.choices if c.value == text), text)
    return text if label == text else f"{label} ({text})"


def unit_words(unit: str) -> str:
    """The unit column: the declared unit, or nothing for a pure number or a choice."""
    return "" if unit in ("", "1") else unit_word(unit)


def shown_outputs(result: Result) -> tuple[list[Output], int]:
    """The outputs this mode gives, headline first, and how many it does not give."""
    calc = result.calculator
    given = [o for o in calc.outputs if result.value(o.name) is not None]
    first = [o for o in calc.headline_outputs if o in given]
    rest = [o for o in given if o not in first]
    return first + rest, len(calc.outputs) - len(given)


def comparison_rows(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """A baseline comparison's rows that changed (an unchanged row says nothing)."""
    return [r for r in rows if r["delta"] not in ("", "0")]


def review_markdown(result: Result, *, link: str | None = None,
                    comparison: list[dict[str, object]] | None = None) -> str:
    """The scenario as one Markdown block (see the module docstring)."""
    calc = result.calculator
    lines = [f"### {_cell(calc.title)} (`{calc.id}`)", ""]
    if link:
        lines += [_("Link (restores every input below): <{link}>").format(link=link), ""]
    params = applying_inputs(result)
    hidden = len(calc.params) - len(params)
    lines += ["| {} | {} | {} |".format(_("Input"), _("Value"), _("Unit")), "|---|---|---|"]
    lines += [f"| {_cell(p.label)} (`{p.name}`) | {_cell(input_text(p, result.inputs[p.name]))}"
              f" | {_cell(unit_words(p.unit))} |" for p in params]
    if hidden:
        lines += ["", _("({count} inputs of other modes do not apply and are left out.)").format(
            count=hidden)]
    outputs, missing = shown_outputs(result)
    lines += ["", "| {} | {} |".format(_("Output"), _("Value")), "|---|---|"]
    lines += [f"| {_cell(o.label)} | {_cell(result.text(o.name))} |" for o in outputs]
    if missing:
        lines += ["", _("({count} outputs of other modes are not given here.)").format(
            count=missing)]
    if result.computed.warnings:
        lines += ["", "**{}**".format(_("Warnings")), ""]
        lines += [f"- {_cell(w)}" for w in result.computed.warnings]
    if result.computed.notes:
        lines += ["", "**{}**".format(_("Assumptions and notes")), ""]
        lines += [f"- {_cell(n)}" for n in result.computed.notes]
    table = result.computed.table
    if table is not None and table.rows:
        lines += ["", f"**{_cell(table.caption or _('Details'))}**", ""]
        lines += ["| " + " | ".join(_cell(c) for c in table.columns) + " |",
                  "|" + "---|" * len(table.columns)]
        lines += ["| " + " | ".join(_cell(str(c)) for c in row) + " |" for row in table.rows]
    if comparison is not None:
        changed = comparison_rows(comparison)
        lines += ["", "**{}**".format(_("Against the pinned baseline")), ""]
        if changed:
            titles = (_("Output"), _("Baseline"), _("Current"), _("Change"), _("Change %"))
            lines += ["| " + " | ".join(titles) + " |", "|---|---|---|---|---|"]
            lines += ["| " + " | ".join(_cell(str(r[k])) for k in (
                "label", "base", "current", "delta", "percent")) + " |" for r in changed]
        else:
            lines += [_("No output differs from the baseline.")]
    return "\n".join(lines) + "\n"


def review_rows(result: Result, *, link: str | None = None,
                comparison: list[dict[str, object]] | None = None) -> list[list[str]]:
    """The same scenario as rows of (section, name, label, value, unit, detail)."""
    calc = result.calculator
    rows = [["calculator", calc.id, calc.title, "", "", ""]]
    if link:
        rows.append(["link", "", "", link, "", ""])
    rows += [["input", p.name, p.label, input_text(p, result.inputs[p.name]),
              unit_words(p.unit), ""] for p in applying_inputs(result)]
    for out in shown_outputs(result)[0]:
        value = result.value(out.name)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        # The raw number in ``value``; as people read it (with its band) in ``detail``.
        rows.append(["output", out.name, out.label,
                     repr(float(value)) if number else str(value),  # type: ignore[arg-type]
                     unit_words(out.unit), result.text(out.name) if number else ""])
    rows += [["warning", "", "", w, "", ""] for w in result.computed.warnings]
    rows += [["note", "", "", n, "", ""] for n in result.computed.notes]
    table = result.computed.table
    if table is not None:
        rows += [["table", str(i + 1), str(row[0]), str(row[1]) if len(row) > 1 else "", "",
                  " | ".join(str(c) for c in row[2:])] for i, row in enumerate(table.rows)]
    for r in comparison_rows(comparison or []):
        rows.append(["baseline", str(r["name"]), str(r["label"]), str(r["current"]), "",
                     _("baseline {base}; change {delta} {percent}").format(
                         base=r["base"], delta=r["delta"], percent=r["percent"]).strip()])
    return rows


def review_csv(result: Result, *, link: str | None = None,
               comparison: list[dict[str, object]] | None = None) -> str:
    """``review_rows`` as CSV with a header row (raw numbers in SI base units in
    ``value``; the formatted value and its band in ``detail``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["section", "name", "label", "value", "unit", "detail"])
    writer.writerows(review_rows(result, link=link, comparison=comparison))
    return out.getvalue()


def review_json(result: Result, *, link: str | None = None,
                comparison: list[dict[str, object]] | None = None) -> dict[str, object]:
    """The result's JSON with the inputs that apply (value, unit), the link and the
    baseline comparison."""
    return result.to_dict() | {
        "chart": None,
        "link": link,
        "applying_inputs": [{"name": p.name, "label": p.label,
                             "value": input_text(p, result.inputs[p.name]),
                             "unit": unit_words(p.unit)} for p in applying_inputs(result)],
        "baseline_comparison": comparison_rows(comparison) if comparison is not None else None,
    }
