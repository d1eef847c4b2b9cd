"""Sparse models (docs/sparse.md): the Criteo 1TB tables and their sizes as the DLRM
and MLPerf READMEs print them, TorchRec's epoch time, a 12-trillion-parameter table
list, and the balance of the tables sharded table-row-wise."""

from __future__ import annotations

from published_checks import Check, Value, preset_inputs

GIB = 2.0**30
_TORCHREC_README = ("https://github.com/facebookresearch/dlrm/blob/main/torchrec_dlrm/"
                    "README.MD")
_MLPERF_README = ("https://github.com/mlcommons/inference/tree/master/recommendation/dlrm/"
                  "pytorch")
_EXACT = "a count of rows: it must match exactly"
#: TorchRec's Criteo 1TB run: 4,195,196,928 training samples (days 0-22) and, for the
#: evaluation of day 23, 178,274,637 more (mlcommons/inference README).
_TRAIN_SAMPLES, _EVAL_SAMPLES = 4_195_196_928, 178_274_637
def _tables(tables: str) -> dict[str, Value]:
    return {"tables": tables, "optimizer": "sgd"}


CHECKS: tuple[Check, ...] = (
    Check(
        id="criteo-kaggle-rows", chapter="sparse.md",
        claim="Criteo Kaggle as DLRM trains it: rows of its 26 tables",
        source="facebookresearch/dlrm, bench/dlrm_s_criteo_kaggle.sh (TorchRec's Criteo "
               "loader: \"33,762,577 in total\")",
        url="https://github.com/facebookresearch/dlrm",
        calculator="embedding_memory", inputs=_tables("criteo_kaggle"),
        output="total_rows", published=33_762_577, rel_tol=0.0, why_tolerance=_EXACT,
    ),
    Check(
        id="criteo-kaggle-table-bytes", chapter="sparse.md",
        claim="The same tables at dimension 16 in fp32",
        source="Derivation: 33,762,577 rows x 16 x 4 B = 2.16 GB", derived=True,
        calculator="embedding_memory", inputs=_tables("criteo_kaggle"),
        output="table_bytes", published=2.16e9, rel_tol=1e-3,
        why_tolerance="quoted to 0.01 GB",
    ),
    Check(
        id="criteo-1tb-torchrec-rows", chapter="sparse.md",
        claim="Criteo 1TB as TorchRec trains it: rows of its 26 tables",
        source="facebookresearch/dlrm, torchrec_dlrm/README.MD, --num_embeddings_per_feature "
               "(TorchRec's Criteo loader: \"177,944,275 in total\")",
        url=_TORCHREC_README,
        calculator="embedding_memory", inputs=_tables("criteo_1tb_torchrec"),
        output="total_rows", published=177_944_275, rel_tol=0.0, why_tolerance=_EXACT,
    ),
    Check(
        id="criteo-1tb-torchrec-table-bytes", chapter="sparse.md",
        claim="The same tables at dimension 128 in fp32 (the DLRM preset)",
        source="facebookresearch/dlrm, torchrec_dlrm/README.MD: 91.10 under a heading in "
               "GiB; the number is in GB (84.85 GiB)",
        url=_TORCHREC_README,
        calculator="embedding_memory",
        inputs=preset_inputs("embedding_memory", "criteo_1tb_dlrm"),
        output="table_bytes", published=91.10e9, rel_tol=1e-3,
        why_tolerance="printed to 0.01 GB (truncated)",
    ),
    Check(
        id="criteo-1tb-mlperf-rows", chapter="sparse.md",
        claim="Criteo 1TB with MLPerf's 40M cap per table: rows",
        source="mlcommons/inference, recommendation/dlrm/pytorch: --max-ind-range=40000000",
        url=_MLPERF_README,
        calculator="embedding_memory", inputs=_tables("criteo_1tb_mlperf"),
        output="total_rows", published=187_767_399, rel_tol=0.0, why_tolerance=_EXACT,
    ),
    Check(
        id="criteo-1tb-mlperf-checkpoint", chapter="sparse.md",
        claim="Those tables at dimension 128 in fp32, in GiB (what du counts)",
        source="Derivation: 187,767,399 rows x 128 x 4 B = 89.53 GiB; the mlcommons/"
               "inference README lists tb00_40M.pt as \"90GB\", measured by du, which counts "
               "GiB and rounds up",
        url=_MLPERF_README, derived=True,
        calculator="embedding_memory", inputs=_tables("criteo_1tb_mlperf"),
        output="table_bytes", published=89.53 * GIB, rel_tol=1e-3, unit="GiB",
        why_tolerance="quoted to 0.01 GiB",
    ),
    Check(
        id="criteo-1tb-10m-checkpoint", chapter="sparse.md",
        claim="Criteo 1TB with a 10M cap and dimension 64, in GiB",
        source="Derivation: 49,126,297 rows (each of the 26 tables capped at 10M) x 64 x "
               "4 B = 11.71 GiB; the mlcommons/inference README lists tb0875_10M.pt as "
               "\"12GB\" by du (GiB, rounded up)",
        url=_MLPERF_README, derived=True,
        calculator="embedding_memory", inputs=_tables("criteo_1tb_10m"),
        output="table_bytes", published=11.71 * GIB, rel_tol=1e-3, unit="GiB",
        why_tolerance="quoted to 0.01 GiB",
    ),
    Check(
        id="dlrm-12t-params", chapter="sparse.md",
        claim="A recommendation model of 12 trillion parameters: 1,000 tables of 93.75M "
              "rows at dimension 128 (an illustrative shape)",
        source="Mudigere et al. 2022, Software-Hardware Co-design for Fast and Scalable "
               "Training of Deep Learning Recommendation Models (ISCA), abstract: 12 "
               "trillion parameters",
        url="https://arxiv.org/abs/2104.05158",
        calculator="embedding_memory",
        inputs=preset_inputs("embedding_memory", "dlrm_12t_class"),
        output="embedding_params", published=12e12, rel_tol=0.0,
        why_tolerance="the shape is chosen to give 12.0T exactly",
    ),
    Check(
        id="torchrec-criteo-epoch", chapter="sparse.md",
        claim="TorchRec DLRM on 8 A100s at 1,671,168 records/s: one epoch of Criteo 1TB "
              "(training days 0-22)",
        source="facebookresearch/dlrm, torchrec_dlrm/README.MD: \"Time to Train 1 Epoch\" "
               "43m24s",
        url=_TORCHREC_README,
        calculator="data_pipeline", inputs={}, output="epoch_time_s",
        published=2604, rel_tol=0.04,
        why_tolerance="the README's wall time also covers evaluating day 23: training "
                      "alone must come in under it, within 4%",
    ),
    Check(
        id="torchrec-criteo-epoch-with-eval", chapter="sparse.md",
        claim="The same with day 23's 178,274,637 evaluation samples counted",
        source="facebookresearch/dlrm, torchrec_dlrm/README.MD: 43m24s; day 23's samples "
               "from the mlcommons/inference README",
        url=_TORCHREC_README,
        calculator="data_pipeline", inputs={"dataset_samples": _TRAIN_SAMPLES + _EVAL_SAMPLES},
        output="epoch_time_s", published=2604, rel_tol=0.005,
        why_tolerance="evaluation reads at about the training rate: within 0.5%",
    ),
    Check(
        id="criteo-table-row-wise-imbalance", chapter="sparse.md",
        claim="Criteo 1TB, row-wise Adagrad, table-row-wise on 16 nodes of 8 GPUs: the "
              "busiest GPU over the mean",
        source="Derivation: the node with the largest table (48,937,457 rows) holds "
               "nothing else, so each of its GPUs carries an eighth of it against 1/128 "
               "of all 177,944,275 rows (facebookresearch/dlrm, torchrec_dlrm/README.MD): "
               "(48,937,457 / 8) / (177,944,275 / 128) = 4.40",
        derived=True,
        calculator="embedding_sharding",
        inputs={"tables": "criteo_1tb_torchrec", "num_gpus": 128, "scheme": "table_row_wise"},
        output="imbalance", published=4.40, rel_tol=0.005, why_tolerance="quoted to 0.01",
    ),
    Check(
        id="h100-embedding-lookups", chapter="sparse.md",
        claim="H100 SXM: embedding lookups per second for 128-wide fp32 rows (read and "
              "written, 1,024 B each) at 3.35 TB/s",
        source="Derivation: HBM bandwidth from the H100 SXM datasheet over the bytes per "
               "lookup, 3.35e12 B/s / 1,024 B = 3.27e9",
        derived=True,
        calculator="roofline",
        inputs={"gpu": "h100_sxm", "embedding_dim": 128, "embedding_dtype": "fp32"},
        output="embedding_lookups_per_s", published=3.27e9, rel_tol=0.01,
        why_tolerance="quoted to three digits",
    ),
)
