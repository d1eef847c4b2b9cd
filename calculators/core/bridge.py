"""The JSON boundary the browser worker calls: text in, text out, never a traceback.

Every answer is ``{"ok": true, ...}`` or ``{"ok": false, "error": {"input", "message"}}``
so that the page can put a message next to the field it concerns.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from calculators import get, import_config
from calculators.core import i18n, review, share
from calculators.core.i18n import _
from calculators.core.localise import localised
from calculators.core.spec import ValidationError

if TYPE_CHECKING:
    from collections.abc import Callable

    from calculators.core.calculator import Calculator

EXPORT_FORMATS = ("markdown", "csv", "json", "command")


def _texts(raw: object) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise ValidationError("calculator", "inputs must be a JSON object")
    return {
        str(k): v if isinstance(v, str) else "" if v is None else json.dumps(v)
        for k, v in raw.items()
    }


class _TogetherError(ValidationError):
    """Every value is valid on its own, but these values do not go together (raised by
    the calculator's function, not by validation): the page may then refuse the choice
    that caused it instead of showing an error (``"together": true`` in the answer)."""


def _compute(calc: Calculator, payload: dict[str, object]) -> dict[str, object]:
    texts = _texts(payload.get("inputs", {}))
    try:
        return {"result": calc.compute(texts).to_dict()}
    except ValidationError as err:
        try:
            calc.validate(texts)  # only on an error: is some value bad on its own?
        except ValidationError:
            raise err from None
        raise _TogetherError(err.input_name, err.message) from None


def _decode(calc: Calculator, payload: dict[str, object]) -> dict[str, object]:
    inputs, notices = share.decode_state(calc, str(payload.get("state", "")))
    return {"inputs": inputs, "notices": notices}


def _encode(calc: Calculator, payload: dict[str, object]) -> dict[str, object]:
    return {"state": share.encode_state(calc, _texts(payload.get("inputs", {})))}


def _export(calc: Calculator, payload: dict[str, object]) -> dict[str, object]:
    """An export of the current inputs: the command line, or the design-review scenario
    (calculators.core.review) with the page's ``link`` and, when a baseline is pinned
    (``base``: its inputs), the comparison with it."""
    texts = _texts(payload.get("inputs", {}))
    fmt = payload.get("format")
    if fmt == "command":
        calc.validate(texts)
        return {"text": share.command_line(calc, texts)}
    if fmt not in review.FORMATS:
        raise ValidationError("format", f"unknown export format; use one of {EXPORT_FORMATS}")
    result = calc.compute(texts)
    link = payload.get("link")
    link = link if isinstance(link, str) and link else None
    base = payload.get("base")
    comparison = (share.compare(calc.compute(_texts(base)), result)
                  if isinstance(base, dict) else None)
    if fmt == "markdown":
        return {"text": review.review_markdown(result, link=link, comparison=comparison)}
    if fmt == "csv":
        return {"text": review.review_csv(result, link=link, comparison=comparison)}
    return {"text": json.dumps(review.review_json(result, link=link, comparison=comparison),
                               indent=2)}


def _compare(calc: Calculator, payload: dict[str, object]) -> dict[str, object]:
    base = calc.compute(_texts(payload.get("base", {})))
    current = calc.compute(_texts(payload.get("inputs", {})))
    return {"rows": share.compare(base, current)}


def _config(calc: Calculator, payload: dict[str, object]) -> dict[str, object]:
    """A pasted config.json read into ``calc``'s model inputs (calculators.inputs.hf_config)."""
    text = payload.get("config", "")
    return dict(import_config(calc.id, text if isinstance(text, str) else ""))


OPERATIONS: dict[str, Callable[[Calculator, dict[str, object]], dict[str, object]]] = {
    "compute": _compute, "decode": _decode, "encode": _encode, "export": _export,
    "compare": _compare, "config": _config,
}


def _language(payload: object) -> str:
    """The payload's ``lang`` (the page's edition), English when absent or unknown."""
    lang = payload.get("lang") if isinstance(payload, dict) else None
    try:
        return i18n.check_language(lang) if isinstance(lang, str) else i18n.SOURCE_LANGUAGE
    except i18n.UnknownLanguageError:
        return i18n.SOURCE_LANGUAGE


def call(op: str, payload_json: str) -> str:
    """Run ``op`` on a JSON payload that names its calculator (``"calc"``) and may name
    the language of its text (``"lang"``: ``en`` or ``zh``; the numbers do not depend on it)."""
    try:
        payload = json.loads(payload_json)
    except ValueError as err:  # malformed JSON from a caller
        return json.dumps({"ok": False, "error": {"input": "calculator", "message": str(err)}})
    with i18n.language(_language(payload)):
        return _answer(op, payload)


def _answer(op: str, payload: object) -> str:
    try:
        if not isinstance(payload, dict):
            raise ValidationError("calculator", _("the request must be a JSON object"))
        if op not in OPERATIONS:
            raise ValidationError("calculator", _("unknown operation {name}").format(
                name=repr(op[:40])))
        calc = localised(get(str(payload.get("calc", ""))), i18n.current_language())
        answer = OPERATIONS[op](calc, payload)
        return json.dumps({"ok": True, **answer})
    except ValidationError as err:
        error: dict[str, object] = {"input": err.input_name, "message": err.message}
        if isinstance(err, _TogetherError):
            error["together"] = True
        return json.dumps({"ok": False, "error": error})
    except ValueError as err:  # malformed JSON from a caller
        return json.dumps({"ok": False, "error": {"input": "calculator", "message": str(err)}})
    except Exception as err:  # noqa: BLE001 - the page must never see a traceback
        return json.dumps({"ok": False, "error": {
            "input": "calculator", "message": _("internal error: {error}").format(error=err)}})


def compute_json(calc_id: str, inputs_json: str) -> str:
    """Compute from a JSON object of field texts (the worker's most frequent call)."""
    try:
        inputs = json.loads(inputs_json)
    except ValueError as err:
        return json.dumps({"ok": False, "error": {"input": "calculator", "message": str(err)}})
    return call("compute", json.dumps({"calc": calc_id, "inputs": inputs}))
