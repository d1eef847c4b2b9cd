"""While calculators/ moves into its layers, every calculator's JSON for its defaults and
for every preset must stay byte-identical to what it was before the move
(tests/unit/data/layout_golden.json, written from the code before the move)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import calculators
from calculators.catalogues import presets

GOLDEN = json.loads((Path(__file__).parent / "data" / "layout_golden.json").read_text())


def _cases() -> list[tuple[str, str | None]]:
    return [(key.split(":")[0], key.split(":")[1]) for key in sorted(GOLDEN)]


@pytest.mark.parametrize(("calc_id", "case"), _cases())
def test_json_unchanged_by_the_move(calc_id: str, case: str) -> None:
    calc = calculators.REGISTRY[calc_id]
    if case == "defaults":
        result = calculators.compute(calc_id)
    else:
        result = calc.compute(presets.preset_texts(calc, presets.get(case)))
    expected = GOLDEN[f"{calc_id}:{case}"]
    assert json.dumps(result.to_dict(), sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_every_preset_case_is_still_offered() -> None:
    now = {f"{cid}:{p.id}" for cid in calculators.REGISTRY
           for p in presets.presets_for(calculators.REGISTRY[cid])}
    now |= {f"{cid}:defaults" for cid in calculators.REGISTRY}
    assert now == set(GOLDEN)
