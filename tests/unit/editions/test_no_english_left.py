"""No untranslated calculator text in Chinese (issue 39): every note, warning, table,
chart, output and error that the sweeps reach is looked up in the catalogue and found.

The sweep: each calculator at its defaults, with each published preset it takes, with
each value of each choice input, and with every worked example of the chapters. Each
run is in Chinese; a message that went through ``_()`` without a translation is caught
by a recording catalogue, and a text that never went through it (English left in the
code) by its words: a run of four English words outside a citation."""

from __future__ import annotations

import gettext
import re
from pathlib import Path

import pytest

import calculators
from bigmodel_guide.fence import find_fences, parse_fence
from calculators.catalogues import presets
from calculators.core import i18n
from calculators.core.localise import localised
from calculators.core.spec import ValidationError

ROOT = Path(__file__).resolve().parents[3]
#: Four words of English in a row (a citation's "et al." or a title is allowed below).
ENGLISH = re.compile(r"\b[a-z]{2,}(?:[ -][a-z]{2,}){3,}\b")
CITATION = re.compile(r"et al\.|arXiv|Table|Sec\.|Fig\.|https?://|`[^`]*`|\"[^\"]*\"|'[^']*'")


def _cases() -> dict[str, list[dict[str, object]]]:
    cases: dict[str, list[dict[str, object]]] = {cid: [{}] for cid in calculators.REGISTRY}
    for calc_id in calculators.REGISTRY:
        calc = calculators.REGISTRY[calc_id]
        cases[calc_id] += [dict(presets.preset_texts(calc, p)) for p in presets.presets_for(calc)]
        cases[calc_id] += [{p.name: c.value} for p in calc.params for c in p.choices]
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name.endswith(".zh.md"):
            continue
        for located in find_fences(page.read_text(encoding="utf-8")):
            fence = parse_fence(located.source)
            cases[fence.calc_id].append(dict(fence.overrides))
    return cases


CASES = _cases()


class _Recording(gettext.GNUTranslations):
    """The zh catalogue, noting each message asked for that it does not hold."""

    missed: set[str]

    def gettext(self, message: str) -> str:
        if message not in self._catalog:  # type: ignore[attr-defined]
            self.missed.add(message)
        return super().gettext(message)


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> _Recording:
    shipped = Path(i18n.__file__).parent.parent / "locale" / "zh" / "LC_MESSAGES"
    with (shipped / f"{i18n.DOMAIN}.mo").open("rb") as handle:
        table = _Recording(handle)
    table.missed = set()
    original = i18n.catalogue
    monkeypatch.setattr(i18n, "catalogue",
                        lambda lang: table if lang == "zh" else original(lang))
    return table


def _texts(result: dict[str, object]) -> list[str]:
    texts = [*result["warnings"], *result["notes"]]  # type: ignore[misc]
    texts += [o["text"] for o in result["outputs"].values()]  # type: ignore[attr-defined]
    table = result["table"]
    if isinstance(table, dict):
        texts += [table["caption"], *table["columns"]]
        texts += [cell for row in table["rows"] for cell in row]
    chart = result["chart"]
    if isinstance(chart, str):
        texts += re.findall(r">([^<>]+)<", chart)
    return [str(t) for t in texts]


def english_left(text: str) -> str | None:
    """A run of English words in ``text`` once citations and quoted names are set aside."""
    found = ENGLISH.search(CITATION.sub(" ", text))
    return found.group(0) if found else None


@pytest.mark.parametrize("calc_id", list(calculators.REGISTRY))
def test_every_text_a_sweep_reaches_is_chinese(calc_id: str, recording: _Recording) -> None:
    calc = localised(calculators.REGISTRY[calc_id], "zh")
    left: dict[str, str] = {}
    with i18n.language("zh"):
        for raw in CASES[calc_id]:
            try:
                texts = _texts(calc.compute(raw).to_dict())
            except ValidationError as err:
                texts = [err.message]
            for text in texts:
                if (words := english_left(text)) is not None:
                    left.setdefault(words, text[:120])
    assert not recording.missed, f"{calc_id}: no translation for {sorted(recording.missed)[:10]}"
    assert not left, f"{calc_id}: English left in {list(left.values())[:10]}"


def test_the_detector_finds_english_and_spares_citations() -> None:
    assert english_left("the layout does not fit in memory") is not None
    assert english_left("来源：Dubey et al. 2024, Table 4，Llama 3 405B") is None
    assert english_left("集群需要 1,024 张 GPU（TP 8 x PP 16）") is None
