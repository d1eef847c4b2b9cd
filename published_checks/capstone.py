"""Sizing a cluster (docs/capstone.md): cluster_sizing against Megatron-LM's GPT-3
estimate, and the capstone's own recommender figures."""

from __future__ import annotations

from published_checks import Check, Value

_SC21 = "https://arxiv.org/abs/2104.04473"
_SC21_SOURCE = ("Narayanan et al. 2021, Efficient Large-Scale Language Model Training on "
                "GPU Clusters Using Megatron-LM (SC21), Sec. 5.1 and Eq. 4")
#: The capstone's recommender: 100 features of 10 IDs over 1,000 tables of 93.75M rows,
#: 14 days, goodput left to the model.
_RECOMMENDER: dict[str, Value] = {
    "model_kind": "sparse", "num_tables": 1000, "rows_per_table": "93.75M",
    "embedding_dim": 128, "num_sparse_features": 100, "gpu": "h100_sxm",
    "deadline_days": 14, "dense_on_ps": False, "utilization": "40%",
    "flops_per_param_token": 6, "goodput": ""}
_DERIVED = "Derivation: cluster_sizing on the capstone's recommender (goodput estimated)"

CHECKS: tuple[Check, ...] = (
    Check(
        id="capstone-gpt3-gpus", chapter="capstone.md",
        claim="GPT-3 175B, 300B tokens in 34 days at 140 TFLOP/s per A100 (105 in model "
              "FLOPs): GPUs the sizing asks for",
        source=_SC21_SOURCE + ": 1,024 A100s", url=_SC21,
        calculator="cluster_sizing", inputs={}, output="num_gpus",
        published=1024, rel_tol=0.0,
        why_tolerance="a count of GPUs in whole nodes: exact",
    ),
    Check(
        id="capstone-gpt3-days", chapter="capstone.md",
        claim="The same run on those GPUs: training days",
        source=_SC21_SOURCE + ": about 34 days", url=_SC21,
        calculator="cluster_sizing", inputs={}, output="wall_clock_days",
        published=34, rel_tol=0.01, why_tolerance="the paper says \"about 34 days\"",
    ),
    Check(
        id="capstone-gpt3-gpus-for-deadline", chapter="capstone.md",
        claim="The same: GPUs the compute alone needs for 34 days",
        source="Derivation: 6 x 174.6e9 x 300e9 FLOP / (33.65% x 312 TFLOP/s x 34 days), "
               "before rounding up to whole nodes",
        url=_SC21, derived=True,
        calculator="cluster_sizing", inputs={}, output="gpus_for_deadline",
        # The calculator counts N from the architecture (not the rounded 174.6e9).
        published=6 * 174.6e9 * 300e9 / (0.3365 * 312e12 * 34 * 86_400),
        rel_tol=1 / 1019, why_tolerance="within one GPU",
    ),
    Check(
        id="capstone-gpt3-compute", chapter="capstone.md",
        claim="The same: total compute, 6ND with the architecture's 174.6B parameters",
        source="Brown et al. 2020, App. D, Table D.1: 3.14 x 10^23 FLOP",
        url="https://arxiv.org/abs/2005.14165",
        calculator="cluster_sizing", inputs={}, output="total_flops",
        published=3.14e23, rel_tol=0.005,
        why_tolerance="the table gives three significant figures",
    ),
    Check(
        id="capstone-recommender-goodput", chapter="capstone.md",
        claim="The capstone's recommender (8 GPUs, 70 PS hosts, 14 days): goodput",
        source=_DERIVED, derived=True,
        calculator="cluster_sizing", inputs=_RECOMMENDER, output="goodput",
        published=0.990, rel_tol=0.0005 / 0.990, why_tolerance="quoted to 0.1 point",
    ),
    Check(
        id="capstone-recommender-checkpoint-write", chapter="capstone.md",
        claim="The same: time to write a checkpoint of the tables and optimizer state",
        source=_DERIVED, derived=True,
        calculator="cluster_sizing", inputs=_RECOMMENDER, output="checkpoint_write_time",
        published=27.3, rel_tol=0.05 / 27.3, why_tolerance="quoted to 0.1 s",
    ),
    Check(
        id="capstone-recommender-checkpoint-interval", chapter="capstone.md",
        claim="The same: checkpoint interval",
        source=_DERIVED, derived=True,
        calculator="cluster_sizing", inputs=_RECOMMENDER, output="checkpoint_interval",
        published=3.3 * 3600, rel_tol=0.05 / 3.3, why_tolerance="quoted to 0.1 h",
    ),
)
