"""The presets: named configurations from published sources, each with its values keyed
by calculator input names and the source it comes from.

A preset is data: values keyed by calculator INPUT NAMES, so one preset serves every
calculator that shares those names (GPT-3's ``layers`` and ``hidden`` fill the memory,
MFU, planner and compute calculators alike). Cluster presets and model presets fill
disjoint inputs, so a model and a cluster compose. A model preset sets every
architecture input (``kv_heads`` even where it equals ``heads``; an empty text clears an
optional input, as ``tables`` in the 12T model), so switching presets leaves nothing of
the previous shape behind. Inputs a source does not publish (Llama 3 8B's batch) are left
out: apply a preset over the defaults, not over another preset, if those must not carry
over. Which calculators offer a preset, and what it fills there, is ``presets``.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from calculators.catalogues import embedding_tables as tables
from calculators.catalogues import hardware, moe_models
from calculators.catalogues.generative_models import GENERATIVE_PRESETS
from calculators.catalogues.preset_base import (
    KINDS,  # noqa: F401 - the catalogue's kinds, read with it (tests)
    PLAIN_DENSE,
    PLAIN_STACK,
    Preset,
    PresetValue,
)
from calculators.catalogues.released_models import RELEASED_DENSE, dense_shape
from calculators.formulas.model.layer_mix import compact_pattern
from calculators.formulas.moe.architecture import active_params, total_params
from calculators.formulas.moe.shape import LatentAttention
from calculators.formulas.sparse import embeddings

if TYPE_CHECKING:
    from collections.abc import Iterable

# --- dense transformer models ------------------------------------------------------

def _llama(*, layers: int, hidden: int, heads: int, kv_heads: int, ffn: int, vocab: int,
           seq_len: int) -> dict[str, PresetValue]:
    """Llama-family shape: head dim hidden / heads (128 in every Llama here)."""
    return dense_shape(layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads,
                       head_dim=hidden // heads, ffn=ffn, vocab=vocab, seq_len=seq_len)


# --- mixture-of-experts models --------------------------------------------------------


def moe_values(entry: moe_models.MoeModel) -> dict[str, PresetValue]:
    """Every MoE architecture input (calculators.inputs.moe) from a released configuration
    in ``catalogues.moe_models``; the other attention kind's inputs are cleared ("") so
    that nothing of the previous model stays behind."""
    m, a = entry.architecture, entry.architecture.attention
    linear = m.mix.linear
    stack: dict[str, PresetValue] = {**PLAIN_STACK} if m.mix.uniform else {
        "layer_pattern": compact_pattern(m.mix.pattern),
        "attention_window": m.mix.window or "",
        "linear_key_heads": linear.key_heads if linear else "",
        "linear_value_heads": linear.value_heads if linear else "",
        "linear_head_dim": linear.key_head_dim if linear else ""}
    values: dict[str, PresetValue] = {
        **stack, "expert_bias": m.expert_bias, "shared_expert_gate": m.shared_expert_gate,
        "layers": m.layers, "hidden": m.hidden, "vocab": m.vocab, "heads": a.heads,
        "routed_experts": m.routed_experts, "experts_per_token": m.experts_per_token,
        "expert_ffn": m.expert_ffn, "shared_experts": m.shared_experts,
        "shared_expert_ffn": "" if m.shared_expert_ffn is None else m.shared_expert_ffn,
        "dense_layers": m.dense_layers, "ffn_hidden": m.dense_ffn, "gated_mlp": m.gated_mlp,
        "tied_embeddings": m.tied_embeddings, "router_bias": m.router_bias,
        "mtp_modules": m.mtp_modules, "expert_groups": m.expert_groups,
        "groups_per_token": m.groups_per_token}
    if isinstance(a, LatentAttention):
        return {**values, "attention": "mla", "kv_heads": "", "head_dim": "", "qk_norm": False,
                "attention_bias": False, "attention_sinks": False, "output_gate": False,
                "q_lora_rank": a.q_lora_rank or "", "kv_lora_rank": a.kv_lora_rank,
                "qk_nope_head_dim": a.qk_nope_head_dim, "qk_rope_head_dim": a.qk_rope_head_dim,
                "v_head_dim": a.v_head_dim}
    return {**values, "attention": "gqa", "kv_heads": a.kv_heads, "head_dim": a.head_dim,
            "qk_norm": a.qk_norm, "attention_bias": a.bias, "attention_sinks": a.sinks,
            "output_gate": a.output_gate, "q_lora_rank": "", "kv_lora_rank": "",
            "qk_nope_head_dim": "", "qk_rope_head_dim": "", "v_head_dim": ""}


def _with_counts(entry: moe_models.MoeModel) -> dict[str, PresetValue]:
    """``moe_values`` and the model's active and total counts (formulas.moe.architecture,
    checked against the published ones in published_checks.moe), as ``params`` and
    ``total_params``: what training_compute's 6N reads of a mixture of experts."""
    return {**moe_values(entry), "params": active_params(entry.architecture),
            "total_params": total_params(entry.architecture)}


def _moe_source(entry: moe_models.MoeModel) -> str:
    return "; ".join(entry.sources) + "."


#: The expert-parallel size a preset gives where no training layout is published (it must
#: divide the model's experts, so it cannot be left to the previous model's).
_ONE_NODE_EP = (" Expert parallelism over one 8-GPU node: an assumption, no training "
                "layout is published.")


# --- sparse (recommendation) models --------------------------------------------------

def mlp_params(sizes: Iterable[int]) -> int:
    """Weights and biases of a stack of fully connected layers ``sizes[0] -> ... -> [-1]``."""
    widths = list(sizes)
    return sum(a * b + b for a, b in itertools.pairwise(widths))


def dlrm_dense_params(dense_in: int, bottom: tuple[int, ...], top: tuple[int, ...],
                      features: int) -> int:
    """DLRM's two MLPs: bottom over the dense features; top over the dot interaction
    (pairs of the ``features`` sparse vectors plus the dense one, no self-pairs) joined
    with the bottom output (Naumov et al. 2019, Sec. 2; facebookresearch/dlrm)."""
    vectors = features + 1
    interaction = vectors * (vectors - 1) // 2 + bottom[-1]
    return mlp_params((dense_in, *bottom)) + mlp_params((interaction, *top))


def table_state_bytes(specs: Iterable[tables.TableSpec]) -> float:
    """fp32 weights + row-wise Adagrad state: what embedding_memory reports by default."""
    return sum(embeddings.shard_bytes(t.rows, t.dim, "fp32", "rowwise_adagrad")
               for t in specs)


_KAGGLE = tables.PRESET_BY_ID["criteo_kaggle"]
_TERABYTE = tables.PRESET_BY_ID["criteo_1tb_torchrec"]
#: Criteo Display Advertising Challenge (Kaggle) train.txt: 45,840,617 labelled samples.
CRITEO_KAGGLE_SAMPLES = 45_840_617
_12T_TABLES, _12T_ROWS, _12T_DIM = 1000, 93_750_000, 128

# --- nodes ---------------------------------------------------------------------------


def _node(gpu: str, nvlink: str, nic: str, nics: int) -> dict[str, PresetValue]:
    """An 8-GPU node: NVLink per GPU per direction; ``nics`` NICs shared by 8 GPUs.

    Per-GPU names (inter_node_bandwidth, nic_bandwidth) get the GPU's share of the NICs;
    per-link names (a switch port's sender/receiver link, an ECMP uplink and one flow
    at line rate) get one port's line rate, as a rail-optimised fabric of the same
    switches has (NVIDIA DGX SuperPOD reference architectures)."""
    gpus = 8
    scale_up, port = hardware.LINKS[nvlink].bandwidth, hardware.LINKS[nic].bandwidth
    per_gpu = port * nics / gpus
    return {"gpu": gpu, "gpus_per_node": gpus, "ranks_per_node": gpus,
            "intra_node_bandwidth": scale_up, "scale_up_bandwidth": scale_up,
            "inter_node_bandwidth": per_gpu, "nic_bandwidth": per_gpu,
            "nics_per_node": nics, "nic_port_bandwidth": port,
            "sender_link_bandwidth": port, "receiver_link_bandwidth": port,
            "uplink_bandwidth": port, "flow_demand": port}


_DGX_A100 = ("NVIDIA DGX A100 datasheet: 8 x A100 80GB SXM, NVLink 3 at 600 GB/s per GPU "
             "(300 GB/s each way), 8 single-port ConnectX-6 HDR 200 Gb/s InfiniBand for "
             "compute (two more dual-port cards for storage, not counted)")
_DGX_H100 = ("NVIDIA DGX H100 datasheet: 8 x H100 SXM5 80GB, NVLink 4 at 900 GB/s per GPU "
             "(450 GB/s each way), 8 single-port ConnectX-7 400 Gb/s (NDR) for compute "
             "(storage NICs not counted)")
_HALF = ("; 4-NIC variant: the same node with one compute NIC per two GPUs (a common, "
         "cheaper HGX build), so each GPU's share of scale-out bandwidth halves")

PRESETS: tuple[Preset, ...] = (
    Preset("gpt3_175b", "GPT-3 175B", "model", {
        "model_kind": "dense", "layers": 96, "hidden": 12288, "heads": 96, "kv_heads": 96,
        "head_dim": 128, "ffn_hidden": 4 * 12288, "vocab": 50257, "seq_len": 2048,
        "gated_mlp": False, "biases": True, "position_embedding": "learned",
        "tied_embeddings": True, **PLAIN_DENSE,
        "params": 174.6e9, "tokens": 300e9, "global_batch": 1536},
        "Brown et al. 2020, Table 2.1 (96 layers, d_model 12,288, 96 heads of 128, "
        "context 2,048; FFN 4 x d_model, Sec. 2.1; GPT-2's 50,257-token BPE) and App. D, "
        "Table D.1 (174.6B parameters, 300B tokens); global batch 1,536 x 2,048 tokens as "
        "in Narayanan et al. 2021, Sec. 5.1 (Brown: 3.2M tokens)."),
    Preset("llama2_7b", "Llama 2 7B", "model", {
        **_llama(layers=32, hidden=4096, heads=32, kv_heads=32,
                 ffn=11008, vocab=32000, seq_len=4096),
        "params": 6_738_415_616, "tokens": 2e12, "global_batch": 1024},
        "Touvron et al. 2023 (Llama 2), Table 1 (4k context, 2.0T tokens; caption: global "
        "batch 4M tokens, i.e. 1,024 x 4,096); shape and the 6,738,415,616 parameters from "
        "the released checkpoint (params.json: FFN 11,008, vocabulary 32,000)."),
    Preset("llama2_70b", "Llama 2 70B", "model", {
        **_llama(layers=80, hidden=8192, heads=64, kv_heads=8,
                 ffn=28672, vocab=32000, seq_len=4096),
        "params": 68_976_648_192, "tokens": 2e12, "global_batch": 1024},
        "Touvron et al. 2023 (Llama 2), Table 1 (GQA, 4k context, 2.0T tokens, 4M-token "
        "batches); shape and the 68,976,648,192 parameters from the "
        "released checkpoint (80 layers, width 8,192, 64 heads, 8 KV heads, FFN 28,672)."),
    Preset("llama3_8b", "Llama 3 8B", "model", {
        **_llama(layers=32, hidden=4096, heads=32, kv_heads=8,
                 ffn=14336, vocab=128256, seq_len=8192),
        "params": 8_030_261_248, "tokens": 15e12},
        "Dubey et al. 2024 (Llama 3), Table 3 (32 layers, width 4,096, FFN 14,336, "
        "32 heads, 8 KV heads, 128K vocabulary: 128,256 in the released tokenizer) and "
        "Sec. 3.4 (8K-token sequences); 15T+ tokens (Llama 3 model card); "
        "8,030,261,248 parameters in the released checkpoint."),
    Preset("llama3_70b", "Llama 3 70B", "model", {
        **_llama(layers=80, hidden=8192, heads=64, kv_heads=8,
                 ffn=28672, vocab=128256, seq_len=8192),
        "params": 70_553_706_496, "tokens": 15e12},
        "Dubey et al. 2024 (Llama 3), Table 3 (80 layers, width 8,192, FFN 28,672, "
        "64 heads, 8 KV heads, vocabulary 128,256) and Sec. 3.4 (8K sequences); 15T+ "
        "tokens (model card); 70,553,706,496 parameters in the released checkpoint."),
    Preset("llama3_405b", "Llama 3 405B", "model", {
        **_llama(layers=126, hidden=16384, heads=128, kv_heads=8,
                 ffn=53248, vocab=128256, seq_len=8192),
        "params": 405e9, "tokens": 15.6e12, "global_batch": 2048},
        "Dubey et al. 2024 (Llama 3), Table 3 (126 layers, width 16,384, FFN 53,248, "
        "128 heads, 8 KV heads, vocabulary 128,256); Secs. 1 and 3.2.1 (405B parameters, "
        "15.6T tokens, 3.8e25 FLOP); Sec. 3.4.1 and Table 4 (final batch 16M tokens = "
        "2,048 x 8,192)."),
    Preset("mixtral_8x7b", "Mixtral 8x7B (MoE)", "moe_model",
           {**_with_counts(moe_models.MIXTRAL_8X7B), "ep": 8, "model_kind": "moe"},
           _moe_source(moe_models.MIXTRAL_8X7B) + _ONE_NODE_EP),
    Preset("deepseek_v3", "DeepSeek-V3 (MoE)", "moe_model", {
        **_with_counts(moe_models.DEEPSEEK_V3), "ep": 64, "seq_len": 4096, "global_batch": 15360,
        "tokens": 14.8e12, "model_kind": "moe"},
        _moe_source(moe_models.DEEPSEEK_V3) + " Expert parallelism over 64 GPUs (report, "
        "Sec. 3.2); pre-training sequences of 4K tokens and a batch of 15,360 sequences "
        "after the ramp-up, over 14.8T tokens (Sec. 4.2)."),
    Preset("qwen3_235b_a22b", "Qwen3-235B-A22B (MoE)", "moe_model",
           {**_with_counts(moe_models.QWEN3_235B_A22B), "ep": 8, "tokens": 36e12,
            "model_kind": "moe"},
           _moe_source(moe_models.QWEN3_235B_A22B) + " Pre-trained on 36T tokens (Qwen Team "
           "2025, Qwen3 Technical Report, arXiv 2505.09388, Sec. 3)." + _ONE_NODE_EP),
    Preset("deepseek_v2_lite", "DeepSeek-V2-Lite (MoE)", "moe_model",
           {**_with_counts(moe_models.DEEPSEEK_V2_LITE), "ep": 8, "seq_len": 4096,
            "global_batch": 4608, "tokens": 5.7e12, "model_kind": "moe"},
           _moe_source(moe_models.DEEPSEEK_V2_LITE) + " Sequences of 4K tokens, a constant "
           "batch of 4,608 sequences, 5.7T tokens (DeepSeek-AI 2024, DeepSeek-V2, arXiv "
           "2405.04434, App. B.1; the model's README, Sec. 6)." + _ONE_NODE_EP),
    Preset("gpt_oss_120b", "gpt-oss-120b (MoE, alternating windows)", "moe_model",
           {**_with_counts(moe_models.GPT_OSS_120B), "ep": 8, "model_kind": "moe"},
           _moe_source(moe_models.GPT_OSS_120B) + _ONE_NODE_EP),
    Preset("qwen3_next_80b_a3b", "Qwen3-Next-80B-A3B (MoE, 3 linear : 1 full)", "moe_model",
           {**_with_counts(moe_models.QWEN3_NEXT_80B_A3B), "ep": 8, "model_kind": "moe"},
           _moe_source(moe_models.QWEN3_NEXT_80B_A3B) + _ONE_NODE_EP),
    *RELEASED_DENSE,
    Preset("criteo_kaggle_dlrm", "DLRM on Criteo Kaggle", "sparse_model", {
        "model_kind": "sparse", "tables": _KAGGLE.id, "num_tables": len(_KAGGLE.rows),
        "rows": sum(_KAGGLE.rows),
        "embedding_dim": _KAGGLE.dim,
        "num_sparse_features": len(_KAGGLE.rows), "pooling_factor": 1.0, "dtype": "fp32",
        "batch_size": 128,
        "dense_params": dlrm_dense_params(13, (512, 256, 64, 16), (512, 256, 1), 26),
        "embedding_bytes": table_state_bytes(_KAGGLE.tables()),
        "dataset_samples": CRITEO_KAGGLE_SAMPLES, "bytes_per_sample":
            embeddings.FP32_BYTES * (1 + 13 + 26)},
        "facebookresearch/dlrm bench/dlrm_s_criteo_kaggle.sh (dim 16, bottom MLP "
        "13-512-256-64-16, top 512-256-1, mini-batch 128, one ID per feature); table rows: "
        "the embedding calculators' criteo_kaggle list; 45,840,617 samples in the "
        "challenge's train.txt; 160 B per sample in DLRM's binary format (data_utils.py). "
        "Table bytes with fp32 weights and row-wise Adagrad."),
    Preset("criteo_1tb_dlrm", "DLRM on Criteo 1TB (TorchRec)", "sparse_model", {
        "model_kind": "sparse", "tables": _TERABYTE.id, "num_tables": len(_TERABYTE.rows),
        "rows": sum(_TERABYTE.rows),
        "embedding_dim": _TERABYTE.dim, "num_sparse_features": len(_TERABYTE.rows),
        "pooling_factor": 1.0, "dtype": "fp32", "batch_size": 16384,
        "dense_params": dlrm_dense_params(13, (512, 256, 128), (1024, 1024, 512, 256, 1),
                                          26),
        "embedding_bytes": table_state_bytes(_TERABYTE.tables()),
        "dataset_samples": 4_195_196_928, "samples_per_second": 1_671_168.0,
        "bytes_per_sample": embeddings.FP32_BYTES * (1 + 13 + 26)},
        "facebookresearch/dlrm torchrec_dlrm/README.MD (dim 128, dense arch 512,256,128, "
        "over arch 1024,1024,512,256,1; 8 x A100 at global batch 16,384: ~1,671,168 "
        "records/s); table rows: the embedding calculators' criteo_1tb_torchrec list; "
        "4,195,196,928 training samples (days 0-22, HugeCTR MLPerf config). Table bytes "
        "with fp32 weights and row-wise Adagrad."),
    Preset("dlrm_12t_class", "Recommendation model, 12T parameters (illustrative)",
           "sparse_model", {
        "model_kind": "sparse", "tables": "", "num_tables": _12T_TABLES,
        "rows": _12T_TABLES * _12T_ROWS,
        "rows_per_table": _12T_ROWS,
        "embedding_dim": _12T_DIM, "num_sparse_features": _12T_TABLES,
        "embedding_bytes": _12T_TABLES * table_state_bytes(
            [tables.TableSpec("T", _12T_ROWS, _12T_DIM)])},
        "Scale of Mudigere et al. 2022 (Neo/ZionEX, ISCA), abstract: production DLRMs of "
        "12 trillion parameters trained on 128 GPUs in 16 ZionEX nodes. The table shape "
        "is an illustration, not Meta's configuration (the guide's sparse-models chapter): "
        "1,000 tables x 93.75M rows x dim 128 = 12.0T parameters."),
    *GENERATIVE_PRESETS,
    Preset("dgx_a100_8nic", "DGX A100 node: 8 x A100 80GB, 8 x HDR 200 Gb/s", "cluster",
           _node("a100_80gb_sxm", "nvlink3", "ib_hdr", 8), _DGX_A100 + "."),
    Preset("dgx_a100_4nic", "A100 node: 8 x A100 80GB, 4 x HDR 200 Gb/s", "cluster",
           _node("a100_80gb_sxm", "nvlink3", "ib_hdr", 4), _DGX_A100 + _HALF + "."),
    Preset("dgx_h100_8nic", "DGX H100 node: 8 x H100, 8 x NDR 400 Gb/s", "cluster",
           _node("h100_sxm", "nvlink4", "ib_ndr", 8), _DGX_H100 + "."),
    Preset("dgx_h100_4nic", "H100 node: 8 x H100, 4 x NDR 400 Gb/s", "cluster",
           _node("h100_sxm", "nvlink4", "ib_ndr", 4), _DGX_H100 + _HALF + "."),
)
PRESET_BY_ID: dict[str, Preset] = {p.id: p for p in PRESETS}
