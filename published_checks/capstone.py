"""Sizing a cluster (docs/capstone.md): cluster_sizing against Megatron-LM's GPT-3
estimate and the GPT-3 compute it starts from."""

from __future__ import annotations

from published_checks import Check, Value

_SC21 = "https://arxiv.org/abs/2104.04473"
_SC21_SOURCE = ("Narayanan et al. 2021, Efficient Large-Scale Language Model Training on "
                "GPU Clusters Using Megatron-LM (SC21), Sec. 5.1 and Eq. 4")
#: Narayanan et al.'s estimate in its own convention: Eq. 4, 8TP/(nX), counts 8 FLOPs per
#: parameter and token and no attention scores or logits, i.e. 6N at 140 x 6/8 TFLOP/s
#: (the default MFU). The calculator's default count adds the whole attention term.
_EQ4: dict[str, Value] = {"flop_count": "6N"}

CHECKS: tuple[Check, ...] = (
    Check(
        id="capstone-gpt3-gpus", chapter="capstone.md",
        claim="GPT-3 175B, 300B tokens in 34 days at 140 TFLOP/s per A100 (105 in model "
              "FLOPs), counted as the paper counts, 6N without attention: GPUs the sizing "
              "asks for",
        source=_SC21_SOURCE + ": 1,024 A100s", url=_SC21,
        calculator="cluster_sizing", inputs=_EQ4, output="num_gpus",
        published=1024, rel_tol=0.0,
        why_tolerance="a count of GPUs in whole nodes: exact",
    ),
    Check(
        id="capstone-gpt3-days", chapter="capstone.md",
        claim="The same run on those GPUs: training days",
        source=_SC21_SOURCE + ": about 34 days", url=_SC21,
        calculator="cluster_sizing", inputs=_EQ4, output="wall_clock_days",
        published=34, rel_tol=0.01, why_tolerance="the paper says \"about 34 days\"",
    ),
    Check(
        id="capstone-gpt3-gpus-for-deadline", chapter="capstone.md",
        claim="The same: GPUs the compute alone needs for 34 days",
        source="Derivation: 6 x 174.6e9 x 300e9 FLOP / (33.65% x 312 TFLOP/s x 34 days) "
               "= 1,019, before rounding up to whole nodes (33.65% = 140 x 6/8 / 312, the "
               "paper's 140 TFLOP/s counted as 6N)",
        url=_SC21, derived=True,
        calculator="cluster_sizing", inputs=_EQ4, output="gpus_for_deadline",
        # The calculator counts N from the architecture (not the rounded 174.6e9).
        published=6 * 174.6e9 * 300e9 / (0.3365 * 312e12 * 34 * 86_400),
        rel_tol=1 / 1019, why_tolerance="within one GPU",
    ),
    Check(
        id="capstone-gpt3-compute", chapter="capstone.md",
        claim="The same: total compute, 6ND with the architecture's 174.6B weights a token "
              "multiplies (Brown et al. count 6ND, attention left out)",
        source="Brown et al. 2020, App. D, Table D.1: 3.14 x 10^23 FLOP",
        url="https://arxiv.org/abs/2005.14165",
        calculator="cluster_sizing", inputs=_EQ4, output="total_flops",
        published=3.14e23, rel_tol=0.005,
        why_tolerance="the table gives three significant figures",
    ),
)
