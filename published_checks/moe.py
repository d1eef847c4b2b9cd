"""Mixture of experts (docs/moe.md, and the MoE check in docs/compute.md): parameter
counts of released MoE models against their checkpoints and papers, and DeepSeek-V3's
stated facts about its routing and training."""

from __future__ import annotations

from dataclasses import replace

from calculators.catalogues import moe_models
from calculators.catalogues.moe_models import DEEPSEEK_V3, DEEPSEEK_V3_TRAINING
from calculators.catalogues.preset_entries import moe_values
from calculators.formulas.moe import architecture as moe
from calculators.formulas.moe import expert_parallel
from calculators.formulas.moe import layers as moe_layers
from calculators.formulas.moe import step_costs as moe_step_costs
from calculators.formulas.moe.shape import GroupedQueryAttention, LatentAttention, MoeArchitecture
from published_checks import Check, preset_inputs

_V3_URL = "https://arxiv.org/abs/2412.19437"
_V3 = DEEPSEEK_V3.architecture
_BILLION = "printed to the billion: half a billion either way"


#: The H800's dense BF16 peak, taken as the H100 SXM's (docs/compute.md says why).
_H800_BF16_FLOPS = 989.4e12


def _v3_compute_to_communication() -> float:
    """One MoE layer's forward per token (its matrix multiplies and causal attention, at
    the BF16 peak) over its forward dispatch (FP8) and combine (BF16) over InfiniBand,
    one copy per remote node, at most 4 nodes (moe_step_costs.per_node_copies)."""
    setup = DEEPSEEK_V3_TRAINING
    block = moe_layers.blocks(_V3, 4096, 0.5)[moe_layers.MOE]
    compute_s = (block.matmul + block.attention) / _H800_BF16_FLOPS
    copies = moe_step_costs.per_node_copies(_V3.routed_experts, setup.expert_parallel,
                                      setup.gpus_per_node, _V3.experts_per_token,
                                      setup.max_nodes_per_token)
    wire = copies.inter_node * _V3.hidden * (setup.precision.forward_dispatch
                                             + setup.precision.forward_combine)
    return compute_s / (wire / setup.ib_bytes_per_s)


def _model(key: str) -> dict[str, float | int | str | bool]:
    """A catalogued model's calculator inputs: its preset's values."""
    return dict(moe_values(moe_models.get(key)))


_EXACT = "a count of a released checkpoint: it must match exactly"


def _dense_as_moe(layers: int, hidden: int, vocab: int, *, heads: int, kv_heads: int,
                  ffn: int) -> MoeArchitecture:
    """A dense model as a mixture of one expert of one."""
    return MoeArchitecture(
        layers=layers, hidden=hidden, vocab=vocab,
        attention=GroupedQueryAttention(heads=heads, kv_heads=kv_heads,
                                        head_dim=hidden // heads),
        routed_experts=1, experts_per_token=1, expert_ffn=ffn, dense_ffn=ffn)


#: Llama 2 7B (Touvron et al. 2023, Table 1; params.json): SwiGLU 11,008, untied.
_LLAMA2_7B_MODEL = moe_models.MoeModel(
    "Llama 2 7B", _dense_as_moe(32, 4096, 32000, heads=32, kv_heads=32, ffn=11008),
    6_738_415_616, 6_738_415_616, ("Touvron et al. 2023, Table 1",))
_LLAMA2_7B_AS_MOE = dict(moe_values(_LLAMA2_7B_MODEL))
#: GPT-3 (Brown et al. 2020, Table 2.1): GELU 4h MLP, biases, learned positions, tied table.
_GPT3_AS_MOE = replace(_dense_as_moe(96, 12288, 50257, heads=96, kv_heads=96, ffn=4 * 12288),
                       gated_mlp=False, biases=True, learned_positions=2048,
                       tied_embeddings=True)
#: Llama 3.1 405B (Dubey et al. 2024, Table 3).
_LLAMA3_405B_AS_MOE = _dense_as_moe(126, 16384, 128256, heads=128, kv_heads=8,
                                    ffn=53248)


#: DeepSeek-AI 2024, DeepSeek-V2 (arXiv:2405.04434), Sec. 3.1.2 and App. B, as in the
#: released config.json files (deepseek-ai/DeepSeek-V2, DeepSeek-V2-Lite).
DEEPSEEK_V2 = MoeArchitecture(
    layers=60, hidden=5120, vocab=102400, attention=LatentAttention(128, 1536, 512, 128, 64, 128),
    routed_experts=160, experts_per_token=6, expert_ffn=1536, shared_experts=2,
    dense_layers=1, dense_ffn=12288)
DEEPSEEK_V2_LITE = MoeArchitecture(
    layers=27, hidden=2048, vocab=102400, attention=LatentAttention(16, 0, 512, 128, 64, 128),
    routed_experts=64, experts_per_token=6, expert_ffn=1408, shared_experts=2,
    dense_layers=1, dense_ffn=10944)
_V2_URL = "https://arxiv.org/abs/2405.04434"


def _v2_checks(key: str, name: str, arch: MoeArchitecture, *, total: float, active: float,
               digit: float) -> tuple[Check, Check]:
    """Total and active counts of a DeepSeek-V2 model, each to the printed digit."""
    inputs = dict(moe_values(moe_models.MoeModel(name, arch, total, active, ())))
    source = f"DeepSeek-AI 2024, DeepSeek-V2, Sec. 1 and App. B: {name}"
    return (
        Check(id=f"{key}-total", chapter="moe.md", claim=f"{name}: total parameters",
              source=f"{source}, {total / 1e9:g}B total", url=_V2_URL,
              calculator="moe_params", inputs=inputs, output="total_params",
              published=total, rel_tol=max(digit, 0.05e9) / total,
              why_tolerance="printed to the last digit shown: within half of it"),
        Check(id=f"{key}-active", chapter="moe.md",
              claim=f"{name}: active parameters per token (input table left out, as for "
                    "DeepSeek-V3's 37B)",
              source=f"{source}, {active / 1e9:g}B activated", url=_V2_URL,
              calculator="moe_params", inputs=inputs, output="active_compute_params",
              published=active, rel_tol=digit / active,
              why_tolerance="printed to the last digit shown: within half of it (V2-Lite: "
                            "plus 0.01B for the rounding of 2.451 to 2.4)"),
    )


def _flops_per_token(model: MoeArchitecture) -> float:
    """Zhao et al. 2025's Table 2 convention as inferred: 6 x active matmul weights plus
    causal attention scores at 4,096 tokens, the MTP module left out (the guide's own
    count, moe_model_flops_per_token, keeps it in)."""
    return moe.training_flops_per_token(model) + moe.attention_score_flops_per_token(
        model, 4096, causal=True)


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
        formula_name="moe.checkpoint_params(DeepSeek-V3)", unit="param",
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
    *_v2_checks("deepseek-v2", "DeepSeek-V2", DEEPSEEK_V2, total=236e9, active=21e9,
                digit=0.5e9),
    *_v2_checks("deepseek-v2-lite", "DeepSeek-V2-Lite", DEEPSEEK_V2_LITE, total=15.7e9,
                active=2.4e9, digit=0.06e9),
    Check(
        id="deepseek-v3-active-whole-table",
        chapter="moe.md",
        claim="DeepSeek-V3: active parameters with the whole input table counted (the "
              "convention that does not give the report's 37B)",
        source="Derivation: the 36.63B counted from config.json without the table "
               "(README_WEIGHTS.md prints 36.7B) plus the input embedding, 129,280 x 7,168 "
               "= 0.93B: 37.55B; the report's 37B fits only without it",
        url=_V3_URL, derived=True,
        calculator="moe_params", inputs=_model("deepseek_v3"), output="active_params",
        published=37.55e9, rel_tol=1e-3, why_tolerance="quoted to 0.01B",
    ),
    Check(
        id="deepseek-v3-embedding",
        chapter="moe.md",
        claim="DeepSeek-V3: the input embedding table",
        source="deepseek-ai/DeepSeek-V3, README_WEIGHTS.md: \"0.9B for Embedding\"",
        calculator="moe_params", inputs=_model("deepseek_v3"), output="embedding_params",
        published=0.9e9, rel_tol=0.05 / 0.9, why_tolerance="printed to 0.1B: within 0.05B",
    ),
    Check(
        id="deepseek-v3-output-head",
        chapter="moe.md",
        claim="DeepSeek-V3: the output head",
        source="deepseek-ai/DeepSeek-V3, README_WEIGHTS.md: \"0.9B for the output Head\"",
        formula=lambda: float(moe.output_head_params(_V3)),
        formula_name="moe.output_head_params(DeepSeek-V3)", unit="param",
        published=0.9e9, rel_tol=0.05 / 0.9, why_tolerance="printed to 0.1B: within 0.05B",
    ),
    Check(
        id="deepseek-v3-mtp-stored",
        chapter="moe.md",
        claim="DeepSeek-V3: the MTP module as stored (with its own table and head)",
        source="deepseek-ai/DeepSeek-V3 README.md: \"14B of the Multi-Token Prediction "
               "(MTP) Module weights\"",
        formula=lambda: float(moe.checkpoint_params(_V3) - moe.total_params(_V3)),
        formula_name="moe.checkpoint_params - moe.total_params (DeepSeek-V3)", unit="param",
        published=14e9, rel_tol=1 / 14,
        why_tolerance="a difference of two figures rounded to the billion (685B - 671B): "
                      "within 1B",
    ),
    Check(
        id="deepseek-v3-mtp-unique",
        chapter="moe.md",
        claim="DeepSeek-V3: unique parameters of the MTP module",
        source="deepseek-ai/DeepSeek-V3, README_WEIGHTS.md: \"11.5B unique parameters\"",
        calculator="moe_params", inputs=_model("deepseek_v3"), output="mtp_params",
        published=11.5e9, rel_tol=0.01,
        why_tolerance="we count 11.61B: the README seems to leave out the 2h x h "
                      "projection M_k (0.10B), see the next row",
    ),
    Check(
        id="deepseek-v3-mtp-without-projection",
        chapter="moe.md",
        claim="DeepSeek-V3: the MTP module without its 2h x h projection",
        source="deepseek-ai/DeepSeek-V3, README_WEIGHTS.md: \"11.5B unique parameters\"",
        formula=lambda: float(moe.mtp_params(_V3) - 2 * _V3.hidden ** 2),
        formula_name="moe.mtp_params(DeepSeek-V3) - 2h²", unit="param",
        published=11.5e9, rel_tol=0.05 / 11.5, why_tolerance="printed to 0.1B: within 0.05B",
    ),
    Check(
        id="llama2-7b-as-one-expert",
        chapter="moe.md",
        claim="Llama 2 7B as a mixture of one expert of one: total parameters",
        source="Touvron et al. 2023, Llama 2, Table 1; released checkpoint: 6,738,415,616",
        url="https://arxiv.org/abs/2307.09288",
        calculator="moe_params", inputs=_LLAMA2_7B_AS_MOE, output="total_params",
        published=6_738_415_616, rel_tol=0.0, why_tolerance=_EXACT,
    ),
    Check(
        id="llama2-7b-as-one-expert-active",
        chapter="moe.md",
        claim="The same: active parameters (every weight is active)",
        source="Touvron et al. 2023, Llama 2, Table 1; released checkpoint: 6,738,415,616",
        url="https://arxiv.org/abs/2307.09288",
        calculator="moe_params", inputs=_LLAMA2_7B_AS_MOE, output="active_params",
        published=6_738_415_616, rel_tol=0.0, why_tolerance=_EXACT,
    ),
    Check(
        id="gpt3-as-one-expert",
        chapter="moe.md",
        claim="GPT-3 175B as one expert of one (biases, learned positions, tied table)",
        source="Brown et al. 2020, Table 2.1 (shape) and App. D, Table D.1: N = 174.6B",
        url="https://arxiv.org/abs/2005.14165",
        formula=lambda: float(moe.total_params(_GPT3_AS_MOE)),
        formula_name="moe.total_params(GPT-3 as one expert)", unit="param",
        published=174.6e9, rel_tol=5e-4, why_tolerance="printed to 0.1B (0.03%)",
    ),
    Check(
        id="zhao-table-2-deepseek-v3",
        chapter="moe.md",
        claim="DeepSeek-V3: training FLOPs per token at 4,096 tokens, 6 x active matmul "
              "weights + causal attention scores",
        source="Zhao et al. 2025, Insights into DeepSeek-V3 (ISCA), Table 2: 250 GFLOP/token "
               "(the convention is inferred: the paper does not state it)",
        url="https://arxiv.org/abs/2505.09343",
        formula=lambda: _flops_per_token(_V3),
        formula_name="moe.training_flops_per_token + attention_score_flops_per_token(4096, "
                     "causal)",
        published=250e9, rel_tol=0.015, unit="FLOP",
        why_tolerance="the paper's convention is not stated; 1.5% covers its rounding",
    ),
    Check(
        id="deepseek-v3-mtp-flops",
        chapter="moe.md",
        claim="DeepSeek-V3: what its MTP module adds to 6 N_active per token (one more MoE "
              "block, its 2h x h projection and a second pass through the output head)",
        source="Derivation from DeepSeek-AI 2024, Sec. 2.2 (one MTP module that trains with "
               "the model) and the released config.json: 6 x 1.61B on 6 x 36.63B, the "
               "module's MoE block (0.59B active) + projection (0.10B) + output head "
               "(0.93B) over the main model's active weights, 1.61 / 36.63 = 4.4%",
        url="https://arxiv.org/abs/2412.19437", derived=True,
        formula=lambda: (moe.training_flops_per_token(_V3, include_mtp=True)
                         / moe.training_flops_per_token(_V3) - 1),
        formula_name="moe.training_flops_per_token(include_mtp) / training_flops_per_token "
                     "- 1", unit="%",
        published=0.044, rel_tol=0.0005 / 0.044, why_tolerance="quoted to 0.1 point",
    ),
    Check(
        id="zhao-table-2-llama3-405b",
        chapter="moe.md",
        claim="Llama 3.1 405B as one expert of one: the same count",
        source="Zhao et al. 2025, Table 2: 2,448 GFLOP/token; shape from Dubey et al. "
               "2024, Table 3",
        url="https://arxiv.org/abs/2505.09343",
        formula=lambda: _flops_per_token(_LLAMA3_405B_AS_MOE),
        formula_name="moe.training_flops_per_token + attention_score_flops_per_token(4096, "
                     "causal)",
        published=2448e9, rel_tol=0.015, unit="FLOP",
        why_tolerance="the paper's convention is not stated; 1.5% covers its rounding",
    ),
    Check(
        id="deepseek-v3-experts-per-node",
        chapter="moe.md",
        claim="DeepSeek-V3: experts per node at no extra IB cost, B_NVLink / B_IB",
        source="DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Sec. 3.2.2: \"3.2 "
               "experts/node\" (NVLink 160 GB/s, IB 50 GB/s)",
        url=_V3_URL,
        formula=lambda: expert_parallel.experts_per_node_at_no_extra_cost(
            DEEPSEEK_V3_TRAINING.nvlink_bytes_per_s, DEEPSEEK_V3_TRAINING.ib_bytes_per_s),
        formula_name="expert_parallel.experts_per_node_at_no_extra_cost(160 GB/s, 50 GB/s)",
        published=3.2, rel_tol=1e-9, why_tolerance="160 / 50 is exactly 3.2",
    ),
    Check(
        id="deepseek-v3-active-ffn-width",
        chapter="moe.md",
        claim="DeepSeek-V3: width of the experts a token uses (8 routed + 1 shared of "
              "2,048), against its dense layers' MLP",
        source="deepseek-ai/DeepSeek-V3 config.json: intermediate_size 18,432",
        formula=lambda: float(expert_parallel.active_ffn_width(_V3)),
        formula_name="expert_parallel.active_ffn_width(DeepSeek-V3)", unit="count",
        published=18432, rel_tol=0.0, why_tolerance="a width: exact",
    ),
    Check(
        id="deepseek-v3-weights-per-gpu",
        chapter="moe.md",
        claim="DeepSeek-V3's layout (2,048 GPUs, PP 16, EP 64): BF16 weights per GPU",
        source="Derivation: (653.9B routed / (64 x 16) + 17.1B other / 16) x 2 B = 3.42 "
               "GB, with the layout of the report, Sec. 3.2 (routed: 256 x 58 layers x 3 x "
               "7,168 x 2,048)",
        url=_V3_URL, derived=True,
        calculator="moe_step",
        inputs={**preset_inputs("moe_step", "deepseek_v3"), "gemm_recipe": "bf16"},
        output="weights_bytes", published=3.42e9, rel_tol=0.01,
        why_tolerance="the hand calculation rounds the parameter split to 0.1B (the "
                      "16-bit weights alone: gemm_recipe BF16; the FP8 copies DeepSeek's "
                      "GEMMs keep add half as much again)",
    ),
    Check(
        id="deepseek-v3-network-copies",
        chapter="moe.md",
        claim="DeepSeek-V3: network copies per token with one copy per remote node "
              "(8 of 256 experts, EP 64 on nodes of 8), routing left free",
        source="Derivation: expected distinct remote nodes of 8 experts chosen uniformly "
               "(report, Sec. 3.2.2: one IB copy per node), 7 remote nodes of 32 experts: "
               "7 x (1 - C(224, 8) / C(256, 8)) = 4.63",
        url=_V3_URL, derived=True,
        formula=lambda: moe_step_costs.per_node_copies(256, 64, 8, 8, None).inter_node,
        formula_name="moe_step_costs.per_node_copies(256 experts, EP 64, 8 per node, top-8)",
        published=4.63, rel_tol=0.01 / 4.63, why_tolerance="quoted to 0.01",
    ),
    Check(
        id="deepseek-v3-network-copies-limited",
        chapter="moe.md",
        claim="The same with node-limited routing to M = 4 nodes",
        source="Derivation: as above over the 4 nodes the router may pick (report, "
               "Sec. 2.1.2, M = 4), 7/8 of them remote: 4 x (1 - C(96, 8) / C(128, 8)) x "
               "7 / 8 = 3.17",
        url=_V3_URL, derived=True,
        formula=lambda: moe_step_costs.per_node_copies(
            256, 64, 8, 8, DEEPSEEK_V3_TRAINING.max_nodes_per_token).inter_node,
        formula_name="moe_step_costs.per_node_copies(..., max_nodes 4)",
        published=3.17, rel_tol=0.01 / 3.17, why_tolerance="quoted to 0.01",
    ),
    Check(
        id="deepseek-v3-compute-to-communication",
        chapter="moe.md",
        claim="DeepSeek-V3: cross-node expert parallelism leaves a computation-to-"
              "communication ratio of about 1:1 (one MoE layer's forward per token against "
              "its dispatch and combine over InfiniBand, per-node copies to at most 4 nodes)",
        source="DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Sec. 3.2.1: \"approximately "
               "1:1\"; IB 50 GB/s (Sec. 3.2.2); FP8 dispatch, BF16 combine (Sec. 3.3.3); "
               "compute at the dense BF16 peak, 989.4 TFLOP/s",
        url=_V3_URL,
        formula=_v3_compute_to_communication,
        formula_name="moe_layers.blocks / moe_step_costs.per_node_copies (DeepSeek-V3, EP 64, M 4)",
        published=1.0, rel_tol=0.25,
        why_tolerance="\"approximately 1:1\", no decimals: a quarter either way. Against "
                      "the FP8 peak the compute halves, and the ratio with it",
    ),
)
