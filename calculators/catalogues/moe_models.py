"""Released mixture-of-experts configurations, each field from the model's Hugging Face
config.json, with the totals their authors publish, and DeepSeek-V3's training setup.

Field names map as: num_hidden_layers -> layers, hidden_size -> hidden, vocab_size ->
vocab, num_attention_heads / num_key_value_heads / head_dim -> attention,
num_local_experts | num_experts | n_routed_experts -> routed_experts, num_experts_per_tok
-> experts_per_token, moe_intermediate_size (Mixtral: intermediate_size) -> expert_ffn,
n_shared_experts -> shared_experts, first_k_dense_replace -> dense_layers,
intermediate_size -> dense_ffn (used by dense layers only), n_group / topk_group -> expert_groups /
groups_per_token, tie_word_embeddings -> tied_embeddings, num_nextn_predict_layers ->
mtp_modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.formulas.model.layer_mix import LayerMix, LinearMixer
from calculators.formulas.moe.expert_parallel import DEEPSEEK_V3_PRECISION, AlltoallPrecision
from calculators.formulas.moe.shape import GroupedQueryAttention, LatentAttention, MoeArchitecture


@dataclass(frozen=True)
class MoeModel:
    """A released MoE: its architecture and the parameter counts its authors state."""

    name: str
    architecture: MoeArchitecture
    published_total_params: float
    published_active_params: float
    sources: tuple[str, ...]


MIXTRAL_8X7B = MoeModel(
    name="Mixtral 8x7B",
    architecture=MoeArchitecture(
        layers=32,
        hidden=4096,
        vocab=32000,
        attention=GroupedQueryAttention(heads=32, kv_heads=8, head_dim=128),
        routed_experts=8,
        experts_per_token=2,
        expert_ffn=14336,
        dense_ffn=14336,  # intermediate_size; no dense layers use it
    ),
    # Mistral AI, "Mixtral of experts" release post (Dec. 2023): 46.7B total, 12.9B per
    # token; Jiang et al. 2024, Sec. 2, rounds them to 47B and 13B.
    published_total_params=46.7e9,
    published_active_params=12.9e9,
    sources=(
        "mistralai/Mixtral-8x7B-v0.1 config.json (hidden_size 4096, num_hidden_layers 32, "
        "num_attention_heads 32, num_key_value_heads 8, intermediate_size 14336, "
        "vocab_size 32000, num_local_experts 8, num_experts_per_tok 2, "
        "tie_word_embeddings false)",
        "Jiang et al. 2024, Mixtral of Experts, arXiv 2401.04088, Sec. 2",
        "Mistral AI, Mixtral of experts (release post, Dec. 2023): 46.7B total, 12.9B active",
    ),
)

DEEPSEEK_V3 = MoeModel(
    name="DeepSeek-V3",
    architecture=MoeArchitecture(
        layers=61,
        hidden=7168,
        vocab=129280,
        attention=LatentAttention(
            heads=128,
            q_lora_rank=1536,
            kv_lora_rank=512,
            qk_nope_head_dim=128,
            qk_rope_head_dim=64,
            v_head_dim=128,
        ),
        routed_experts=256,
        experts_per_token=8,
        expert_ffn=2048,
        shared_experts=1,
        dense_layers=3,
        dense_ffn=18432,
        expert_groups=8,
        groups_per_token=4,
        router_bias=True,
        mtp_modules=1,
    ),
    # DeepSeek-AI 2024, DeepSeek-V3 Technical Report, abstract and Sec. 4.2.
    published_total_params=671e9,
    published_active_params=37e9,
    sources=(
        "deepseek-ai/DeepSeek-V3 config.json (hidden_size 7168, num_hidden_layers 61, "
        "first_k_dense_replace 3, intermediate_size 18432, moe_intermediate_size 2048, "
        "n_routed_experts 256, n_shared_experts 1, num_experts_per_tok 8, n_group 8, "
        "topk_group 4, q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128, "
        "qk_rope_head_dim 64, v_head_dim 128, num_attention_heads 128, vocab_size 129280, "
        "num_nextn_predict_layers 1, tie_word_embeddings false)",
        "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv 2412.19437, Sec. 4.2: "
        "671B total, 37B activated",
        "deepseek-ai/DeepSeek-V3 README.md: 685B on Hugging Face = 671B main + 14B MTP; "
        "README_WEIGHTS.md: MTP 11.5B unique parameters",
    ),
)

QWEN3_235B_A22B = MoeModel(
    name="Qwen3-235B-A22B",
    architecture=MoeArchitecture(
        layers=94,
        hidden=4096,
        vocab=151936,
        attention=GroupedQueryAttention(heads=64, kv_heads=4, head_dim=128, qk_norm=True),
        routed_experts=128,
        experts_per_token=8,
        expert_ffn=1536,
        dense_ffn=12288,  # intermediate_size; no dense layers use it (mlp_only_layers [])
    ),
    # Yang et al. 2025, Qwen3 Technical Report (arXiv 2505.09388), Sec. 1 and Table 2.
    published_total_params=235e9,
    published_active_params=22e9,
    sources=(
        "Qwen/Qwen3-235B-A22B config.json (hidden_size 4096, num_hidden_layers 94, "
        "num_attention_heads 64, num_key_value_heads 4, head_dim 128, num_experts 128, "
        "num_experts_per_tok 8, moe_intermediate_size 1536, vocab_size 151936, "
        "mlp_only_layers [], decoder_sparse_step 1, tie_word_embeddings false)",
        "Yang et al. 2025, Qwen3 Technical Report, Table 2 (94 layers, 64/4 heads, 128/8 "
        "experts, no shared experts, QK-Norm)",
    ),
)

_HUB = ("Hugging Face Hub safetensors total for the release, as recorded in debaditc/kvfit "
        "(src/kvfit/data/models.json)")

DEEPSEEK_V2_LITE = MoeModel(
    name="DeepSeek-V2-Lite",
    architecture=MoeArchitecture(
        layers=27, hidden=2048, vocab=102400,
        attention=LatentAttention(heads=16, q_lora_rank=0, kv_lora_rank=512,
                                  qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128),
        routed_experts=64, experts_per_token=6, expert_ffn=1408, shared_experts=2,
        dense_layers=1, dense_ffn=10944),
    published_total_params=15_706_484_224,
    published_active_params=2.4e9,
    sources=(
        "deepseek-ai/DeepSeek-V2-Lite config.json (hidden_size 2048, num_hidden_layers 27, "
        "q_lora_rank null, kv_lora_rank 512, n_routed_experts 64, num_experts_per_tok 6, "
        "n_shared_experts 2, moe_intermediate_size 1408, first_k_dense_replace 1, "
        "intermediate_size 10944, vocab_size 102400, topk_method greedy)",
        "DeepSeek-AI 2024, DeepSeek-V2 report, App. B: 15.7B total, 2.4B activated; " + _HUB,
    ),
)

GPT_OSS_120B = MoeModel(
    name="gpt-oss-120b",
    architecture=MoeArchitecture(
        layers=36, hidden=2880, vocab=201088,
        attention=GroupedQueryAttention(heads=64, kv_heads=8, head_dim=64, bias=True,
                                        sinks=True),
        routed_experts=128, experts_per_token=4, expert_ffn=2880, dense_ffn=2880,
        router_bias=True, expert_bias=True, mix=LayerMix("SF", 128)),
    # OpenAI 2025, gpt-oss-120b & gpt-oss-20b model card (arXiv 2508.10925), Table 1.
    published_total_params=116_829_156_672,
    published_active_params=5.13e9,
    sources=(
        "openai/gpt-oss-120b config.json (hidden_size 2880, num_hidden_layers 36, "
        "num_attention_heads 64, num_key_value_heads 8, head_dim 64, attention_bias true, "
        "num_local_experts 128, num_experts_per_tok 4, intermediate_size 2880, "
        "sliding_window 128, layer_types alternating sliding/full from the first, "
        "vocab_size 201088, tie_word_embeddings false)",
        "OpenAI 2025, gpt-oss model card, Table 1: 116.83B total, 5.13B active (MLP "
        "114.71B, attention 0.96B, embedding + unembedding 1.16B); " + _HUB,
    ),
)

QWEN3_NEXT_80B_A3B = MoeModel(
    name="Qwen3-Next-80B-A3B",
    architecture=MoeArchitecture(
        layers=48, hidden=2048, vocab=151936,
        attention=GroupedQueryAttention(heads=16, kv_heads=2, head_dim=256, qk_norm=True,
                                        output_gate=True),
        routed_experts=512, experts_per_token=10, expert_ffn=512, shared_experts=1,
        shared_expert_ffn=512, shared_expert_gate=True, dense_ffn=5120, mtp_modules=1,
        mix=LayerMix("LLLF", 0, LinearMixer(16, 32, 128, 128))),
    # The model card states 80B total and 3B activated; the main model counts 79.67B and
    # the release (with its multi-token-prediction block) 81.32B on the Hub.
    published_total_params=80e9,
    published_active_params=3e9,
    sources=(
        "Qwen/Qwen3-Next-80B-A3B-Instruct config.json (hidden_size 2048, num_hidden_layers "
        "48, full_attention_interval 4, num_attention_heads 16, num_key_value_heads 2, "
        "head_dim 256, linear_num_key_heads 16, linear_num_value_heads 32, "
        "linear_key_head_dim = linear_value_head_dim = 128, linear_conv_kernel_dim 4, "
        "num_experts 512, num_experts_per_tok 10, moe_intermediate_size 512, "
        "shared_expert_intermediate_size 512, vocab_size 151936); the mtp.* block of the "
        "release (vLLM qwen3_next_mtp: one module)",
        "Qwen team 2025, Qwen3-Next model card: 80B total, 3B activated; Hub total "
        "81,324,862,720 with the MTP block; " + _HUB,
    ),
)

MOE_MODELS: dict[str, MoeModel] = {
    "mixtral_8x7b": MIXTRAL_8X7B,
    "deepseek_v3": DEEPSEEK_V3,
    "qwen3_235b_a22b": QWEN3_235B_A22B,
    "deepseek_v2_lite": DEEPSEEK_V2_LITE,
    "gpt_oss_120b": GPT_OSS_120B,
    "qwen3_next_80b_a3b": QWEN3_NEXT_80B_A3B,
}


def get(key: str) -> MoeModel:
    """The catalogue entry for ``key``; a ValueError lists the known keys."""
    if key not in MOE_MODELS:
        raise ValueError(f"unknown MoE model {key!r}; choose from {', '.join(MOE_MODELS)}")
    return MOE_MODELS[key]


@dataclass(frozen=True)
class MoeTrainingSetup:
    """How a released MoE was trained, as its report states it."""

    gpus: int
    gpus_per_node: int
    pipeline_parallel: int
    expert_parallel: int
    max_nodes_per_token: int
    nvlink_bytes_per_s: float
    ib_bytes_per_s: float
    precision: AlltoallPrecision
    gpu_hours_per_trillion_tokens: float


#: DeepSeek-V3 report: 2,048 H800, 8 per node (Sec. 3.1); PP 16, EP 64 over 8 nodes,
#: ZeRO-1 DP, no TP (Sec. 3.2); at most M = 4 nodes per token (Sec. 4.2); NVLink 160 GB/s,
#: IB 50 GB/s (Sec. 3.2.2); FP8 dispatch, BF16 combine (Sec. 3.3.3); 180K H800 GPU-hours
#: per trillion tokens (Sec. 1).
DEEPSEEK_V3_TRAINING = MoeTrainingSetup(
    gpus=2048,
    gpus_per_node=8,
    pipeline_parallel=16,
    expert_parallel=64,
    max_nodes_per_token=4,
    nvlink_bytes_per_s=160e9,
    ib_bytes_per_s=50e9,
    precision=DEEPSEEK_V3_PRECISION,
    gpu_hours_per_trillion_tokens=180e3,
)
