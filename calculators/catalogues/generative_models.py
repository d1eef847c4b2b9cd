"""Generative recommenders with published configurations, as presets of the
``generative_recommender`` calculator (input names are that calculator's).

The public ones are the configurations of facebookresearch/generative-recommenders
(the HSTU paper's code, Zhai et al. 2024, arXiv:2402.17152), read at commit 2e81fab:
``configs/<dataset>/hstu-sampled-softmax-*-large-final.gin`` (layers, heads, d_qk, d_v,
embedding width, maximum sequence length, sampled negatives) and the item counts of
``research/data/preprocessor.py``; and the DLRM-v3 reference ranker of the same
repository, MLCommons' generative-recommender benchmark (``dlrm_v3/configs.py``:
``get_hstu_configs`` and ``HASH_SIZE``; ``modules/dlrm_hstu.py``: ``max_seq_len``,
``max_num_candidates``). The production-scale entry is an illustration built on the
paper's two published production figures (1.5 trillion parameters; sequences of 8,192
timed against FlashAttention-2): its shapes are ours, and the page says so.
"""

from __future__ import annotations

from calculators.catalogues.preset_base import Preset, PresetValue

_REPO = "facebookresearch/generative-recommenders @ 2e81fab"
_RETRIEVAL: dict[str, PresetValue] = {"gr_block": "hstu", "candidates": 0, "history_spread": 0.0,
              "lookups_per_token": 1, "table_dtype": "fp32", "table_optimizer": "adam",
              }


def _research(layers: int, dim: int, heads: int, head_dim: int, *, length: int,
              negatives: int, items: int) -> dict[str, PresetValue]:
    """A research (retrieval) configuration: every history position a target, sampled
    softmax over ``negatives`` items, histories padded to ``length``."""
    return {**_RETRIEVAL, "gr_layers": layers, "gr_dim": dim, "gr_heads": heads,
            "gr_qk_dim": head_dim, "gr_v_dim": head_dim, "history_max": length,
            "history_mean": length, "negatives": negatives, "table_rows": items,
            "table_dim": dim}


GENERATIVE_PRESETS: tuple[Preset, ...] = (
    Preset("hstu_ml20m_large", "HSTU-large on MovieLens-20M (research)", "generative_model",
           _research(16, 256, 8, 32, length=200, negatives=128, items=131_262),
           f"{_REPO}: configs/ml-20m/hstu-sampled-softmax-n128-large-final.gin (16 blocks, "
           "8 heads, d_qk = d_v = 32, item embedding 256, max_sequence_length 200, 128 "
           "negatives); 131,262 = the largest MovieLens-20M movie id, the table's rows "
           "(research/data/preprocessor.py). Histories are taken at the cap."),
    Preset("hstu_books_large", "HSTU-large on Amazon Books (research)", "generative_model",
           _research(16, 64, 8, 8, length=50, negatives=512, items=695_762),
           f"{_REPO}: configs/amzn-books/hstu-sampled-softmax-n512-large-final.gin (16 "
           "blocks, 8 heads, d_qk = d_v = 8, item embedding 64, max_sequence_length 50, "
           "512 negatives); 695,762 items (research/data/preprocessor.py)."),
    Preset("dlrm_v3_reference", "DLRM-v3 HSTU ranker (MLCommons reference)",
           "generative_model", {
               "gr_block": "stu", "gr_layers": 3, "gr_dim": 512, "gr_heads": 4,
               "gr_qk_dim": 128, "gr_v_dim": 128, "history_max": 2056,
               "history_mean": 2056, "history_spread": 0.0, "candidates": 10,
               "negatives": 0, "lookups_per_token": 2, "table_rows": 30_000_000,
               "table_dim": 256, "table_dtype": "fp16", "table_optimizer": "rowwise_adagrad"},
           f"{_REPO}: dlrm_v3/configs.py (get_hstu_configs: 3 STU layers, 4 heads, "
           "attention and linear widths 128, transducer width 512; HASH_SIZE 10,000,000 "
           "rows of width 256 in FP16 for each of the post, viewer and contextual tables: "
           "30M rows), modules/dlrm_hstu.py (max_seq_len 2,056, max_num_candidates 10); "
           "each history event looks up its post and its owner (uih_post_id, "
           "uih_owner_id); the training config's sparse optimizer is row-wise Adagrad."),
    Preset("hstu_production_scale", "Production-scale HSTU, 1.5T parameters (illustrative)",
           "generative_model", {
               "gr_block": "hstu", "gr_layers": 24, "gr_dim": 1024, "gr_heads": 16,
               "gr_qk_dim": 64, "gr_v_dim": 64, "history_max": 8192,
               "history_mean": 4096, "history_spread": 0.5, "candidates": 0,
               "negatives": 128, "lookups_per_token": 1, "table_rows": 2_900_000_000,
               "table_dim": 512, "table_dtype": "fp32",
               "table_optimizer": "rowwise_adagrad"},
           "Zhai et al. 2024 (arXiv:2402.17152), abstract: a deployed HSTU model of 1.5 "
           "trillion parameters, and attention timed on sequences of 8,192. The shapes are "
           "an illustration, not Meta's (which are unpublished): 2.9 billion rows of width "
           "512 hold 1.48T parameters; 24 layers of width 1,024 with 16 heads of 64; "
           "histories capped at 8,192 with a mean of 4,096; 128 sampled negatives."),
)
