"""Shareable state: a link's inputs, a command line, a baseline's deltas (the review
export is calculators.core.review).

A link carries only the inputs that differ from the calculator's defaults, readable by a
person: ``?training_compute=params:70B,tokens:2T#gpt3-worked-example``. Links are
untrusted: decoding never raises; it keeps what validates and says what it ignored.
"""

from __future__ import annotations

import math
import shlex
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from calculators.core import units
from calculators.core.i18n import _
from calculators.core.spec import ValidationError

if TYPE_CHECKING:
    from calculators.core.calculator import Calculator, Result

#: A link's state for one calculator longer than this is ignored whole.
MAX_STATE_LENGTH = 8_000
_SAFE = "/.-_~"


def _differs(calc: Calculator, name: str, text: str) -> bool:
    param = calc.param(name)
    try:
        return param.parse(text) != param.default
    except ValidationError:
        return True


def encode_state(calc: Calculator, texts: dict[str, str]) -> str:
    """``name:value,...`` for the inputs whose value differs from the default."""
    pairs = []
    for param in calc.params:
        text = texts.get(param.name)
        if text is None or not _differs(calc, param.name, text):
            continue
        pairs.append(f"{param.name}:{quote(text.strip(), safe=_SAFE)}")
    return ",".join(pairs)


def decode_state(calc: Calculator, state: str) -> tuple[dict[str, str], list[str]]:
    """Inputs (as field texts) from a link's state, and notices for what was ignored."""
    notices: list[str] = []
    if len(state) > MAX_STATE_LENGTH:
        return {}, [_("The link's inputs for {calc} are longer than {count} characters and "
                      "were ignored.").format(calc=calc.id, count=MAX_STATE_LENGTH)]
    known = {p.name for p in calc.params}
    former = {f.name: f for f in calc.former_inputs}
    inputs: dict[str, str] = {}
    for pair in filter(None, state.split(",")):
        name, sep, raw = pair.partition(":")
        shown = unquote(name)[:40]
        if sep and name in former and former[name].becomes not in inputs:
            old, name = former[name], former[name].becomes
            new = old.translate(unquote(raw))
            if new is None:
                notices.append(_("Ignored {old} from the link: an input this calculator no "
                                 "longer has (now {new}).").format(old=old.name, new=name))
                continue
            notices.append(_("The link's {old}:{value} (an input this calculator no longer "
                             "has) is read as {new}:{new_value}.").format(
                old=old.name, value=unquote(raw)[:20], new=name, new_value=new))
            raw = quote(new, safe=_SAFE)
        if not sep or name not in known:
            notices.append(_("Ignored {name} from the link: {calc} has no such input.").format(
                name=repr(shown), calc=calc.id))
            continue
        if name in inputs:
            notices.append(_("Ignored a repeated {name} in the link (the first one is "
                             "used).").format(name=repr(name)))
            continue
        text = unquote(raw)
        param = calc.param(name)
        try:
            value = param.parse(text)
        except ValidationError as err:
            notices.append(_("Ignored {name} from the link: {reason}").format(
                name=name, reason=err.message))
            continue
        # A choice as the form holds it: its value, also when the link carries a label
        # or a former value (a renamed choice: Choice.former).
        inputs[name] = param.as_text(value) if param.kind == "choice" else text
    return inputs, notices


def command_line(calc: Calculator, texts: dict[str, str]) -> str:
    """The ``bigmodel`` command that reproduces these inputs (non-defaults only)."""
    words = ["bigmodel", calc.id]
    for param in calc.params:
        text = texts.get(param.name)
        if text is not None and _differs(calc, param.name, text):
            words += [f"--{param.name.replace('_', '-')}", text.strip()]
    return shlex.join(words)


def compare(base: Result, current: Result) -> list[dict[str, object]]:
    """Each output side by side: baseline, current, absolute and relative change."""
    rows: list[dict[str, object]] = []
    for out in current.calculator.outputs:
        before, after = base.value(out.name), current.value(out.name)
        delta_text, percent_text = "", ""
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool)
                      for v in (before, after))
        if numeric:
            delta = float(after) - float(before)  # type: ignore[arg-type]
            sign = "+" if delta > 0 else ""
            delta_text = "0" if delta == 0 else sign + units.format_value(delta, out.unit, out.fmt)
            if delta != 0 and before not in (0, 0.0) and math.isfinite(delta):
                percent_text = f"{100 * delta / abs(float(before)):+.3g}%"  # type: ignore[arg-type]
        elif before != after:
            delta_text = _("changed")
        rows.append({
            "name": out.name, "label": out.label,
            "base": base.text(out.name), "current": current.text(out.name),
            "delta": delta_text, "percent": percent_text,
        })
    return rows
