"""embedding_memory against the published DLRM Criteo configs, table-list parsing, bad input."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators
import published_checks
from calculators.catalogues.embedding_tables import PRESET_BY_ID, parse_tables
from calculators.formulas.sparse.embeddings import optimizer_bytes, weight_bytes

if TYPE_CHECKING:
    from calculators.core.calculator import Result

GB, GIB = 1e9, 2.0**30


def memory(**inputs: object) -> Result:
    return calculators.compute("embedding_memory", **inputs)


def test_criteo_kaggle_row_counts_and_bytes() -> None:
    # facebookresearch/dlrm bench/dlrm_s_criteo_kaggle.sh and mlcommons/inference
    # recommendation/dlrm/pytorch/python/main.py (kaggle: m_spa=16): 26 tables, dim 16.
    # TorchRec's criteo dataloader states "33,762,577 in total".
    # The rows and the 2.16 GB are published checks (published_checks.sparse).
    result = memory(tables="criteo_kaggle", optimizer="sgd")
    assert result.value("num_tables") == 26
    # fp32: rows x 16 x 4 B = 2.16 GB (2.01 GiB).
    table_bytes = result.value("table_bytes")
    assert isinstance(table_bytes, float)
    assert table_bytes == float(result.value("total_rows")) * 16 * 4  # type: ignore[arg-type]


def test_criteo_1tb_torchrec_readme_reports_gb_under_a_gib_heading() -> None:
    # facebookresearch/dlrm torchrec_dlrm/README.MD: --num_embeddings_per_feature (26
    # tables, 177,944,275 rows, "177,944,275 in total" in TorchRec's criteo dataloader)
    # with --embedding_dim 128, and a column "Collective Size of Embedding Tables (GiB)"
    # that reads 91.10. fp32 weights are 177,944,275 x 128 x 4 = 91.107e9 B: that is
    # 91.10 GB (decimal, truncated), but only 84.85 GiB. The heading says GiB; the
    # number is GB. We check the bytes, and that the GiB reading would be wrong.
    # The rows and the 91.10 GB are published checks (published_checks.sparse); here,
    # that the heading's unit cannot be right.
    readme = published_checks.get("criteo-1tb-torchrec-table-bytes")
    table_bytes = memory(tables="criteo_1tb_torchrec", optimizer="sgd").value("table_bytes")
    assert isinstance(table_bytes, float)
    assert table_bytes == pytest.approx(readme.published, rel=readme.rel_tol)
    assert table_bytes / GIB != pytest.approx(readme.published / GB, rel=0.05)


def test_presets_have_26_tables_each() -> None:
    for preset in PRESET_BY_ID.values():
        assert len(preset.rows) == 26, preset.id


@pytest.mark.parametrize(
    ("optimizer", "per_row_words"),
    # FBGEMM TBE state in fp32: SGD none, Adagrad one per element, row-wise Adagrad one
    # per row, Adam two per element. TorchRec's planner multipliers (0, 1, 1/dim, 2)
    # times an fp32 table give the same bytes.
    [("sgd", 0), ("adagrad", 128), ("rowwise_adagrad", 1), ("adam", 256)],
)
def test_optimizer_state_fbgemm_and_torchrec_agree_for_fp32(optimizer: str,
                                                            per_row_words: int) -> None:
    rows, dim = 1_000_000, 128
    assert optimizer_bytes(rows, dim, optimizer) == rows * per_row_words * 4
    multiplier = {"sgd": 0, "adagrad": 1, "rowwise_adagrad": 1 / dim, "adam": 2}[optimizer]
    assert optimizer_bytes(rows, dim, optimizer) == pytest.approx(
        multiplier * weight_bytes(rows, dim, "fp32"))


def test_int8_rows_carry_fp32_scale_and_bias() -> None:
    # FBGEMM: row-wise int8 appends two fp32 qparams (8 bytes) to each row.
    assert weight_bytes(1000, 16, "int8") == 1000 * (16 + 8)
    assert weight_bytes(1000, 16, "fp16") == 1000 * 32
    assert weight_bytes(1000, 16, "bf16") == 1000 * 32


def test_min_gpus_and_hosts() -> None:
    # 91.1 GB on A100 40GB with TorchRec's 15% reserve: 34 GB usable -> 3 GPUs.
    result = memory(tables="criteo_1tb_torchrec", optimizer="sgd", gpu="a100_40gb_sxm")
    assert result.value("min_gpus") == 3
    assert result.value("min_ps_hosts") == 1
    big = memory(num_tables=1000, rows_per_table="93.75M", embedding_dim=128,
                 optimizer="sgd", host_memory="1TB", host_reserve=0.3)
    # 12 trillion parameters (ZionEX scale, published_checks.sparse: dlrm-12t-params) in
    # fp32: 48 TB, 700 GB usable per host.
    assert big.value("embedding_params") == published_checks.get("dlrm-12t-params").published
    assert big.value("min_ps_hosts") == 69


def test_largest_table_over_one_gpu_warns() -> None:
    result = memory(tables="1e9 128 huge", gpu="a100_40gb_sxm")
    assert any("embedding_sharding" in w for w in result.computed.warnings)


def test_pasted_list_formats() -> None:
    text = """# name rows dim, any order, commas or spaces
    C1, 1460, 16
    583 16 C2
    10M\t64
    user_id 40000000 128   # trailing comment

    42
    """
    tables = parse_tables(text, default_dim=8)
    assert [(t.name, t.rows, t.dim) for t in tables] == [
        ("C1", 1460, 16), ("C2", 583, 16), ("T4", 10_000_000, 64),
        ("user_id", 40_000_000, 128), ("T7", 42, 8),
    ]


@given(st.lists(st.tuples(st.integers(1, 10**12), st.integers(1, 4096)), min_size=1,
                max_size=40))
def test_list_round_trips(specs: list[tuple[int, int]]) -> None:
    text = "\n".join(f"t{i} {rows} {dim}" for i, (rows, dim) in enumerate(specs))
    tables = parse_tables(text)
    assert [(t.rows, t.dim) for t in tables] == specs
    total = memory(tables=text, optimizer="sgd", dtype="fp32").value("table_bytes")
    assert total == pytest.approx(sum(4 * r * d for r, d in specs))


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("1460 16\n583 sixteen sixteen", 2),
        ("1460 16\n\n# ok\n583 16 9", 4),
        ("1460 16\n0 16", 2),
        ("1460 16\n-5 16", 2),
        ("1460 16\n1.5 16", 2),
        ("1460 16\n100 0", 2),
        ("1460 16\n100 99999999", 2),
        ("10x 16", 1),
        ("a b 16", 1),
    ],
)
def test_malformed_lines_name_the_input_and_line(text: str, line: int) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        memory(tables=text)
    assert caught.value.input_name == "tables"
    assert f"line {line}" in caught.value.message


def test_rows_alone_need_a_dim_when_parsing_without_one() -> None:
    with pytest.raises(calculators.ValidationError, match="line 1"):
        parse_tables("1460")


def test_empty_list_is_refused() -> None:
    with pytest.raises(calculators.ValidationError, match="no tables"):
        memory(tables="# only a comment")


def test_too_long_text_is_refused() -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        memory(tables="1 1\n" * 6000)
    assert caught.value.input_name == "tables"


@pytest.mark.parametrize(
    ("name", "value"),
    [("num_tables", 0), ("rows_per_table", 0), ("embedding_dim", 0), ("dtype", "fp8"),
     ("optimizer", "lion"), ("gpu_reserve", 1), ("host_memory", 0), ("gpu", "x100"),
     ("host_reserve", -0.1), ("gpu_memory", "-1GB")],
)
def test_bad_inputs_raise_one_error_naming_the_input(name: str, value: object) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        memory(**{name: value})
    assert caught.value.input_name == name
