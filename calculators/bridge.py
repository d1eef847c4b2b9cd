"""The JSON boundary the browser worker calls: text in, text out, never a traceback."""

from __future__ import annotations

import json

from calculators import get
from calculators.spec import ValidationError


def compute_json(calc_id: str, inputs_json: str) -> str:
    """Compute from a JSON object of field texts; return ``{"ok": ..., ...}`` as JSON.

    A bad value yields ``{"ok": false, "error": {"input", "message"}}`` so the page can
    show it next to the field; anything else unexpected is reported the same way under
    the input name ``"calculator"`` rather than escaping as an exception.
    """
    try:
        raw = json.loads(inputs_json)
        if not isinstance(raw, dict):
            raise ValidationError("calculator", "inputs must be a JSON object")
        result = get(calc_id).compute(raw)
        return json.dumps({"ok": True, "result": result.to_dict()})
    except ValidationError as err:
        return json.dumps({"ok": False, "error": {"input": err.input_name, "message": err.message}})
    except Exception as err:  # noqa: BLE001 - the page must never see a traceback
        return json.dumps(
            {"ok": False, "error": {"input": "calculator", "message": f"internal error: {err}"}}
        )
