"""Mixture of experts (docs/moe.md, and the MoE check in docs/compute.md): parameter
counts of released MoE models against their checkpoints and papers, and DeepSeek-V3's
stated facts about its routing and training."""

from __future__ import annotations

from calculators.catalogues import moe_models
from calculators.catalogues.moe_models import DEEPSEEK_V3, DEEPSEEK_V3_TRAINING
from calculators.catalogues.presets import moe_values
from calculators.formulas import expert_parallel, moe
from published_checks import Check

_V3_URL = "https://arxiv.org/abs/2412.19437"
_V3 = DEEPSEEK_V3.architecture
_BILLION = "printed to the billion: half a billion either way"


def _model(key: str) -> dict[str, float | int | str | bool]:
    """A catalogued model's calculator inputs: its preset's values."""
    return dict(moe_values(moe_models.get(key)))


CHECKS: tuple[Check, ...] = (
    Check(
        id="mixtral-8x7b-checkpoint",
        chapter="moe.md",
        claim="Mixtral 8x7B: parameters in the released checkpoint",
        source="mistralai/Mixtral-8x7B-v0.1 safetensors: 46,702,792,704 parameters "
               "(config.json shape; Jiang et al. 2024, Sec. 2)",
        url="https://arxiv.org/abs/2401.04088",
        calculator="moe_params", inputs=_model("mixtral_8x7b"), output="total_params",
        published=46_702_792_704, rel_tol=0.0, why_tolerance="a count: it must match exactly",
    ),
    Check(
        id="mixtral-8x7b-active",
        chapter="moe.md",
        claim="Mixtral 8x7B: parameters used per token (whole embedding table counted)",
        source="Mistral AI, Mixtral of experts (release post, Dec. 2023): 12.9B per token",
        calculator="moe_params", inputs=_model("mixtral_8x7b"), output="active_params",
        published=12.9e9, rel_tol=0.005, why_tolerance="printed to three digits",
    ),
    Check(
        id="deepseek-v3-total",
        chapter="moe.md",
        claim="DeepSeek-V3: total parameters of the main model (MTP module excluded)",
        source="DeepSeek-AI 2024, DeepSeek-V3 Technical Report, abstract and Sec. 4.2: 671B",
        url=_V3_URL,
        calculator="moe_params", inputs=_model("deepseek_v3"), output="total_params",
        published=671e9, rel_tol=0.5e9 / 671e9, why_tolerance=_BILLION,
    ),
    Check(
        id="deepseek-v3-active",
        chapter="moe.md",
        claim="DeepSeek-V3: active parameters per token (input embedding table left out)",
        source="DeepSeek-AI 2024, DeepSeek-V3 Technical Report, abstract and Sec. 4.2: 37B "
               "activated. With the whole table counted: 37.55B, which would print as 38B",
        url=_V3_URL,
        calculator="moe_params", inputs=_model("deepseek_v3"), output="active_compute_params",
        published=37e9, rel_tol=0.5e9 / 37e9, why_tolerance=_BILLION,
    ),
    Check(
        id="deepseek-v3-active-readme",
        chapter="moe.md",
        claim="DeepSeek-V3: activated parameters of the main model in its weights "
              "documentation (the README says the embedding is included; the number fits "
              "only without it)",
        source="deepseek-ai/DeepSeek-V3, README_WEIGHTS.md: 36.7B activated",
        calculator="moe_params", inputs=_model("deepseek_v3"), output="active_compute_params",
        published=36.7e9, rel_tol=0.003,
        why_tolerance="printed to 0.1B (0.14%); 36.63B is 0.07B under, within twice that",
    ),
    Check(
        id="deepseek-v3-checkpoint",
        chapter="moe.md",
        claim="DeepSeek-V3: parameters on Hugging Face, main model + MTP module with its "
              "own copies of the embedding and output head",
        source="deepseek-ai/DeepSeek-V3 README.md: 685B = 671B main model + 14B MTP module",
        formula=lambda: float(moe.checkpoint_params(_V3)),
        formula_name="moe.checkpoint_params(DeepSeek-V3)",
        published=685e9, rel_tol=0.6e9 / 685e9,
        why_tolerance="printed to the billion, plus about 0.04B of FP8 scales we do not count",
    ),
    Check(
        id="qwen3-235b-total",
        chapter="moe.md",
        claim="Qwen3-235B-A22B: total parameters",
        source="Yang et al. 2025, Qwen3 Technical Report, Sec. 1 and Table 2: 235B",
        url="https://arxiv.org/abs/2505.09388",
        calculator="moe_params", inputs=_model("qwen3_235b_a22b"), output="total_params",
        published=235e9, rel_tol=0.5e9 / 235e9, why_tolerance=_BILLION,
    ),
    Check(
        id="qwen3-235b-active",
        chapter="moe.md",
        claim="Qwen3-235B-A22B: active parameters per token",
        source="Yang et al. 2025, Qwen3 Technical Report, Sec. 1 and Table 2: 22B",
        url="https://arxiv.org/abs/2505.09388",
        calculator="moe_params", inputs=_model("qwen3_235b_a22b"), output="active_params",
        published=22e9, rel_tol=0.5e9 / 22e9, why_tolerance=_BILLION,
    ),
    Check(
        id="deepseek-v3-thirteen-experts",
        chapter="moe.md",
        claim="DeepSeek-V3: experts per token at the IB cost of 4 nodes, M x B_NVLink / B_IB",
        source="DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Sec. 3.2.2: NVLink 160 GB/s, "
               "IB 50 GB/s, \"a maximum of 13 experts (4 nodes x 3.2 experts/node)\"",
        url=_V3_URL,
        formula=lambda: expert_parallel.max_experts_at_same_cost(
            DEEPSEEK_V3_TRAINING.max_nodes_per_token, DEEPSEEK_V3_TRAINING.nvlink_bytes_per_s,
            DEEPSEEK_V3_TRAINING.ib_bytes_per_s),
        formula_name="expert_parallel.max_experts_at_same_cost(4, 160 GB/s, 50 GB/s)",
        published=13.0, rel_tol=0.02, why_tolerance="the report rounds 12.8 to 13 experts",
    ),
)
