"""The KV cache: what decoding keeps per token, and how tensor parallelism splits it.

Per token and layer a transformer keeps (DeepSeek-AI 2024, DeepSeek-V2, arXiv 2405.04434,
Sec. 2.1 and Table 1, in elements):

- multi-head attention (MHA): a key and a value per head, 2 n_h d_h;
- grouped-query attention (GQA): a key and a value per KV group, 2 n_g d_h (Ainslie et
  al. 2023); MHA is the case n_g = n_h;
- multi-head latent attention (MLA): one compressed latent d_c and one shared rotary key
  d_h^R, d_c + d_h^R (DeepSeek-V2 Table 1: 9/2 d_h with d_c = 4 d_h, d_h^R = d_h / 2;
  DeepSeek-V3: 512 + 64 = 576).

Under tensor parallelism the heads are split, so a GQA cache is split over at most n_g
ranks (with more ranks than KV heads each head is copied: vLLM replicates KV heads when
TP > n_g). MLA's latent serves every head: each rank keeps all of it (no split), which is
why MLA engines run data-parallel attention (DeepSeek's inference overview: DP attention
with EP experts).
"""

from __future__ import annotations

ATTENTIONS = ("mha", "gqa", "mla")


def elements_per_token_layer(attention: str, *, kv_heads: int, head_dim: int,
                             kv_lora_rank: int, rope_dim: int) -> int:
    """KV-cache elements one token keeps in one layer (DeepSeek-V2, Table 1)."""
    if attention == "mla":
        return kv_lora_rank + rope_dim
    return 2 * kv_heads * head_dim


def ways_split(attention: str, kv_heads: int, tensor_parallel: int) -> int:
    """Over how many tensor-parallel ranks one token's cache is divided (the rest of the
    ranks hold copies)."""
    if attention == "mla":
        return 1
    return max(1, min(tensor_parallel, kv_heads))


def attention_flops_per_cached_token(attention: str, *, heads: int, head_dim: int,
                                     kv_lora_rank: int, rope_dim: int, layers: int) -> float:
    """FLOPs one generated token spends per cached token, over all layers: the scores
    (q . k) and the weighted sum of values, 2 FLOPs per multiply-add. MHA/GQA: 2 x 2 n_h
    d_h per layer. MLA decodes in the absorbed form (DeepSeek-V2, Sec. 2.1.2: the key and
    value up-projections fold into the query and output), scores over d_c + d_h^R and
    values over d_c per head: 2 n_h (d_c + d_h^R) + 2 n_h d_c."""
    if attention == "mla":
        per_layer = 2.0 * heads * (kv_lora_rank + rope_dim) + 2.0 * heads * kv_lora_rank
    else:
        per_layer = 4.0 * heads * head_dim
    return per_layer * layers
