"""While calculators/formulas/ moves into subpackages by subject, every calculator's JSON
for its defaults, every preset and every worked example (fence) in the guide, and every
published check's value, must stay byte-identical to what it was before the move
(tests/unit/data/formulas_golden.json, written from the code before the move with
``python tests/unit/test_formulas_move.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import calculators
from bigmodel_guide.fence import find_fences, parse_fence
from calculators.catalogues import presets

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_PATH = Path(__file__).parent / "data" / "formulas_golden.json"


def _cases() -> dict[str, tuple[str, dict[str, object]]]:
    cases: dict[str, tuple[str, dict[str, object]]] = {}
    for cid, calc in calculators.REGISTRY.items():
        cases[f"{cid}:defaults"] = (cid, {})
        for preset in presets.presets_for(calc):
            cases[f"{cid}:preset:{preset.id}"] = (cid, dict(presets.preset_texts(calc, preset)))
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for n, located in enumerate(find_fences(page.read_text(encoding="utf-8"))):
            fence = parse_fence(located.source)
            cases[f"{fence.calc_id}:{page.name}:{n}"] = (fence.calc_id, fence.overrides)
    return cases


def _answer(calc_id: str, inputs: dict[str, object]) -> str:
    return json.dumps(calculators.compute(calc_id, **inputs).to_dict(), sort_keys=True)


def _checks() -> dict[str, str]:
    from published_checks import all_checks, run
    return {c.id: repr(run(c).value) for c in all_checks()}


def _write() -> None:
    golden = {key: _answer(*case) for key, case in _cases().items()}
    golden["published_checks"] = json.dumps(_checks(), sort_keys=True)
    GOLDEN_PATH.write_text(json.dumps(golden, sort_keys=True, indent=0), encoding="utf-8")


GOLDEN: dict[str, str] = (json.loads(GOLDEN_PATH.read_text(encoding="utf-8"))
                          if GOLDEN_PATH.exists() else {})


@pytest.mark.parametrize("key", sorted(k for k in GOLDEN if k != "published_checks"))
def test_json_unchanged_by_the_move(key: str) -> None:
    calc_id, inputs = _cases()[key]
    assert _answer(calc_id, inputs) == GOLDEN[key]


def test_published_checks_unchanged_by_the_move() -> None:
    assert json.dumps(_checks(), sort_keys=True) == GOLDEN["published_checks"]


def test_every_case_is_still_there() -> None:
    assert set(_cases()) | {"published_checks"} == set(GOLDEN)


if __name__ == "__main__":
    sys.exit(_write())
