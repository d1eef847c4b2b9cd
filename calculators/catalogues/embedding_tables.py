"""Embedding tables as data: published row-count presets and the list a reader pastes.

A list has one table per line, ``rows dim`` and an optional name, separated by spaces,
tabs, commas or semicolons (``#`` starts a comment). A preset id stands for the whole
published list. A malformed line raises ``ValidationError`` on the ``tables`` input,
naming the line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from calculators.core.i18n import _
from calculators.core.spec import ValidationError
from calculators.core.unit_parsing import UnitError, parse_quantity

MAX_TABLES = 5000
MAX_DIM = 65_536
MAX_ROWS = 1e13

@dataclass(frozen=True)
class TableSpec:
    """One embedding table: rows (distinct IDs) x dim (width of each vector)."""

    name: str
    rows: int
    dim: int


@dataclass(frozen=True)
class TablePreset:
    """A published list of table sizes, with where it comes from."""

    id: str
    label: str
    dim: int
    rows: tuple[int, ...]
    source: str

    def tables(self) -> tuple[TableSpec, ...]:
        return tuple(TableSpec(f"C{i + 1}", r, self.dim) for i, r in enumerate(self.rows))


PRESETS: tuple[TablePreset, ...] = (
    TablePreset(
        "criteo_kaggle", "Criteo Kaggle (DLRM, dim 16)", 16,
        (1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
         27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572),
        "facebookresearch/dlrm bench/dlrm_s_criteo_kaggle.sh (--arch-sparse-feature-size=16) "
        "and mlcommons/inference recommendation/dlrm/pytorch/python/main.py, get_backend "
        "(kaggle: m_spa=16, ln_emb); 33,762,577 rows in all (TorchRec criteo dataloader).",
    ),
    TablePreset(
        "criteo_1tb_torchrec", "Criteo 1TB (TorchRec DLRM, dim 128)", 128,
        (45833188, 36746, 17245, 7413, 20243, 3, 7114, 1441, 62, 29275261, 1572176, 345138,
         10, 2209, 11267, 128, 4, 974, 14, 48937457, 11316796, 40094537, 452104, 12606, 104,
         35),
        "facebookresearch/dlrm torchrec_dlrm/README.MD, --num_embeddings_per_feature with "
        "--embedding_dim 128; the README reports 91.10 for the tables' collective size in a "
        "column headed GiB (the figure is GB: 91.1e9 B is 84.85 GiB).",
    ),
    TablePreset(
        "criteo_1tb_mlperf", "Criteo 1TB (MLPerf DLRM, 40M cap, dim 128)", 128,
        (39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346,
         10, 2208, 11938, 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108,
         36),
        "mlcommons/inference recommendation/dlrm/pytorch/python/main.py, get_backend "
        "(terabyte, --max-ind-range=40000000: m_spa=128, ln_emb); the README lists the "
        "checkpoint tb00_40M.pt at 90GB as measured with du (which counts GiB).",
    ),
    TablePreset(
        "criteo_1tb_10m", "Criteo 1TB (DLRM, 10M cap, dim 64)", 64,
        (9980333, 36084, 17217, 7378, 20134, 3, 7112, 1442, 61, 9758201, 1333352, 313829, 10,
         2208, 11156, 122, 4, 970, 14, 9994222, 7267859, 9946608, 415421, 12420, 101, 36),
        "mlcommons/inference recommendation/dlrm/pytorch/python/main.py, get_backend "
        "(terabyte, --max-ind-range=10000000: m_spa=64, ln_emb); README: tb0875_10M.pt "
        "is 12GB by du.",
    ),
)
PRESET_BY_ID: dict[str, TablePreset] = {p.id: p for p in PRESETS}

_NAME = re.compile(r"^[A-Za-z_][\w.\-]*$")
_SPLIT = re.compile(r"[\s,;]+")


def _whole(token: str, what: str, low: float, high: float, line: int) -> int:
    try:
        value = parse_quantity(token, "row")
    except UnitError:
        raise ValidationError("tables", _("line {line}: {token} is not a number").format(
            line=line, token=repr(token[:30]))) from None
    if not math.isfinite(value) or value != int(value) or not low <= value <= high:
        raise ValidationError("tables", _(
            "line {line}: {what} {token} must be a whole number from {low:g} to "
            "{high:g}").format(line=line, what=what, token=repr(token[:30]), low=low,
                               high=high))
    return int(value)


def parse_line(line: str, number: int, default_dim: int | None) -> TableSpec | None:
    """One line: ``rows dim [name]`` (commas, tabs or spaces; the name may come first).

    A line with rows alone takes ``default_dim``. Blank lines and ``#`` comments are None.
    """
    text = line.split("#", 1)[0].strip()
    if not text:
        return None
    numbers: list[str] = []
    names: list[str] = []
    for token in _SPLIT.split(text):
        if not token:
            continue
        (names if _NAME.match(token) and not token[0].isdigit() else numbers).append(token)
    if len(names) > 1:
        raise ValidationError("tables", _("line {line}: more than one name ({names})").format(
            line=number, names=", ".join(names[:3])))
    if not numbers or len(numbers) > 2 or (len(numbers) == 1 and default_dim is None):
        raise ValidationError("tables", _(
            "line {line}: expected 'rows dim' with an optional name, got {text}").format(
            line=number, text=repr(text[:40])))
    rows = _whole(numbers[0], "rows", 1, MAX_ROWS, number)
    dim = (_whole(numbers[1], "dim", 1, MAX_DIM, number) if len(numbers) == 2
           else int(default_dim or 0))
    return TableSpec(names[0] if names else f"T{number}", rows, dim)


def parse_tables(text: str, default_dim: int | None = None) -> tuple[TableSpec, ...]:
    """A preset id (e.g. ``criteo_kaggle``) or one table per line; errors name the line."""
    key = text.strip()
    if key.lower() in PRESET_BY_ID:
        return PRESET_BY_ID[key.lower()].tables()
    tables: list[TableSpec] = []
    for number, line in enumerate(text.splitlines(), start=1):
        table = parse_line(line, number, default_dim)
        if table is not None:
            tables.append(table)
        if len(tables) > MAX_TABLES:
            raise ValidationError("tables", _("line {line}: more than {most} tables").format(
                line=number, most=MAX_TABLES))
    if not tables:
        known = ", ".join(PRESET_BY_ID)
        raise ValidationError("tables", _("no tables given: paste 'rows dim' lines or one "
                                          "of {known}").format(known=known))
    return tuple(tables)
