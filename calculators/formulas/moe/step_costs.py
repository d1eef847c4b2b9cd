"""One MoE training step on a parallel layout: where the expert alltoall's bytes go (inside
a node, between nodes), the gradient synchronisation they are set against, the compute
they can hide behind, the activations a GPU keeps, and how much more than the average the
busiest GPU receives.

Each function takes the model and a layout's sizes (``MoeParallelLayout``: GPUs, TP, PP,
EP) and nothing of a calculator, so that a planner can call it for every candidate layout.
Balance is assumed throughout unless a function says otherwise: equal MoE layers per
pipeline stage, tokens spread evenly over GPUs, experts chosen uniformly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.formulas.collectives.costs import wire_bytes_per_rank
from calculators.formulas.model.flops import CAUSAL_ATTENTION
from calculators.formulas.moe.architecture import moe_model_flops_per_token
from calculators.formulas.moe.expert_parallel import (
    expected_nodes_per_token,
    expert_params_per_gpu,
    non_expert_params_per_gpu,
    router_node_limit,
)
from calculators.formulas.moe.shape import LatentAttention

if TYPE_CHECKING:
    from calculators.formulas.moe.expert_parallel import AlltoallPrecision, MoeParallelLayout
    from calculators.formulas.moe.shape import MoeArchitecture

#: Activations are kept in BF16; softmax statistics and router probabilities in FP32
#: (an assumption, as in ``formulas.model.activations``).
ACTIVATION_BYTES = 2.0
STATISTIC_BYTES = 4.0


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


# --- where a token's copies travel ------------------------------------------------------


def dispatched_pairs_per_gpu(tokens_per_step: float, model: MoeArchitecture, gpus: int) -> float:
    """(token, MoE layer) pairs one GPU dispatches per step: D x L_moe / G. Every token
    meets every MoE layer once per step, and the pairs spread evenly over the G GPUs when
    stages hold equal MoE layers and tensor-parallel ranks split the tokens (sequence
    parallelism, which Megatron-Core requires for MoE with TP)."""
    _check(tokens_per_step >= 0 and gpus >= 1, "tokens >= 0 and gpus >= 1")
    return tokens_per_step * model.moe_layers / gpus


@dataclass(frozen=True)
class Copies:
    """Hidden vectors one token's dispatch puts on each kind of link (expected values)."""

    intra_node: float
    inter_node: float


def direct_copies(top_k: int, ep_size: int, gpus_per_node: int) -> Copies:
    """Each of the k copies goes straight to its expert's GPU (an alltoall over the EP
    group, Megatron-Core's alltoall dispatcher). Experts spread evenly over an EP group of
    whole nodes (or inside one) and chosen uniformly, a copy stays on its GPU with chance
    1/P, crosses NVLink with (g - 1)/P and the network with (P - g)/P, g = min(node, P).
    Node-limited routing does not change these shares: it pays only with per-node copies."""
    _check(top_k >= 1 and ep_size >= 1 and gpus_per_node >= 1, "sizes must be >= 1")
    local = min(gpus_per_node, ep_size)
    _check(ep_size % local == 0, "an EP group spanning nodes must fill whole nodes")
    return Copies(top_k * (local - 1) / ep_size, top_k * (ep_size - local) / ep_size)


def per_node_copies(
    experts: int, ep_size: int, gpus_per_node: int, top_k: int, max_nodes: int | None
) -> Copies:
    """DeepSeek-V3's dispatch (report, Sec. 3.2.2): a token crosses the network once per
    distinct remote node that holds its experts, to the GPU with the same index there,
    which forwards it over NVLink; node-limited routing (Sec. 2.1.2) keeps those nodes to
    at most M. Expected distinct nodes: ``expected_nodes_per_token`` over the M nodes the
    router picks (their E M / n experts, chosen uniformly); a share (n - 1)/n of them is
    remote, routing being independent of where the token sits (an assumption: a router
    that favours the local node sends less). NVLink: one copy per distinct GPU holding
    the token's experts (the kernels send a token to a GPU once, whatever number of its
    experts are there: DeepEP's ``is_token_in_rank``), the same expectation over the M g
    GPUs of those nodes, of which a share (g - 1)/g crosses NVLink (the copy for the GPU
    that took the token off the network stays put). Inside one node: the distinct GPUs
    of the EP group, (P - 1)/P of them another GPU."""
    _check(min(experts, ep_size, gpus_per_node, top_k) >= 1, "sizes must be >= 1")
    if ep_size <= gpus_per_node:
        _check(experts % ep_size == 0, "the EP group must divide the experts")
        gpus = expected_nodes_per_token(experts, ep_size, top_k)
        return Copies(gpus * (ep_size - 1) / ep_size, 0.0)
    _check(ep_size % gpus_per_node == 0, "an EP group spanning nodes must fill whole nodes")
    nodes = ep_size // gpus_per_node
    _check(experts % nodes == 0, "the EP group's nodes must divide the experts")
    limit = nodes if max_nodes is None else min(max_nodes, nodes)
    _check(limit >= 1, "max_nodes must be >= 1")
    reachable = limit * (experts // nodes)
    _check(top_k <= reachable, _("{k} experts per token do not fit in {nodes} nodes").format(
        k=top_k, nodes=limit))
    distinct = expected_nodes_per_token(reachable, limit, top_k)
    gpus = expected_nodes_per_token(reachable, limit * gpus_per_node, top_k)
    return Copies(gpus * (gpus_per_node - 1) / gpus_per_node, distinct * (nodes - 1) / nodes)


def node_limit(model: MoeArchitecture, ep_size: int, gpus_per_node: int,
               max_nodes: int | None) -> int | None:
    """The node limit M for an EP group of ``ep_size`` GPUs: ``max_nodes`` when given
    (a router other than the model's), else the model's own, from its expert groups and
    the EP group's nodes (``router_node_limit``); None inside one node."""
    if ep_size <= gpus_per_node:
        return None
    if max_nodes is not None:
        return max_nodes
    return router_node_limit(model.routed_experts, model.expert_groups,
                             model.groups_per_token, ep_size // gpus_per_node)


@dataclass(frozen=True)
class AlltoallTraffic:
    """Bytes one GPU sends per step in all expert alltoalls (forward and backward dispatch
    and combine, every MoE layer of its stage), by link; it receives as much."""

    intra_node_bytes: float
    inter_node_bytes: float

    def time_s(self, intra_bandwidth: float, inter_bandwidth: float) -> float:
        """Bandwidth terms only: both links carry their shares at once, so the slower one
        sets the time (as ``collectives.hierarchical_cost`` has it for an alltoall).
        Per-message latency is left out: at these sizes each alltoall moves megabytes."""
        _check(intra_bandwidth > 0 and inter_bandwidth > 0, "bandwidths must be > 0")
        return max(self.intra_node_bytes / intra_bandwidth,
                   self.inter_node_bytes / inter_bandwidth)


def step_alltoall_traffic(
    model: MoeArchitecture,
    layout: MoeParallelLayout,
    *,
    tokens_per_step: float,
    gpus_per_node: int,
    precision: AlltoallPrecision,
    per_node: bool,
    max_nodes: int | None = None,
) -> AlltoallTraffic:
    """Pairs per GPU x copies per link x h x (the four alltoalls' bytes per element).
    ``per_node``: DeepSeek's per-node dispatch (``per_node_copies``); else direct."""
    pairs = dispatched_pairs_per_gpu(tokens_per_step, model, layout.gpus)
    k, ep = model.experts_per_token, layout.expert_parallel
    limit = node_limit(model, ep, gpus_per_node, max_nodes)
    copies = (per_node_copies(model.routed_experts, ep, gpus_per_node, k, limit)
              if per_node else direct_copies(k, ep, gpus_per_node))
    per_copy = model.hidden * precision.total_bytes_per_element
    return AlltoallTraffic(pairs * copies.intra_node * per_copy,
                           pairs * copies.inter_node * per_copy)


# --- what the alltoall is compared with -----------------------------------------------


def gradient_sync_bytes_per_gpu(
    model: MoeArchitecture, layout: MoeParallelLayout, gradient_bytes: float
) -> float:
    """Bytes one GPU sends per step to synchronise gradients: a ring allreduce (or ZeRO's
    reduce-scatter + allgather, the same bytes) sends 2(p - 1)/p of the buffer (Thakur et
    al. 2005; ZeRO Sec. 7): non-expert gradients over the DP group, expert gradients over
    the expert-DP group. It scales with parameters, the alltoall with tokens."""
    _check(gradient_bytes > 0, "gradient_bytes must be > 0")
    rest = non_expert_params_per_gpu(model, layout) * gradient_bytes
    experts = expert_params_per_gpu(model, layout) * gradient_bytes
    return (wire_bytes_per_rank("allreduce", rest, layout.data_parallel)
            + wire_bytes_per_rank("allreduce", experts, layout.expert_data_parallel))


def step_flops_per_gpu(
    model: MoeArchitecture, tokens_per_step: float, gpus: int, seq_len: int,
    *, recompute: bool = False,
) -> float:
    """Model FLOPs per GPU per step as a causal kernel runs them: the one count
    (``moe_model_flops_per_token``) with the causal half of the attention scores, the
    MTP modules included, which train with the model; full recomputation repeats the
    forward pass, a third of it (Narayanan et al. 2021, Sec. 5.1: 8 instead of 6)."""
    _check(gpus >= 1 and tokens_per_step >= 0, "gpus >= 1 and tokens >= 0")
    per_token = moe_model_flops_per_token(model, seq_len, CAUSAL_ATTENTION)
    if recompute:
        per_token *= 4.0 / 3.0
    return per_token * tokens_per_step / gpus


# --- activations --------------------------------------------------------------------


def attention_activation_bytes(model: MoeArchitecture) -> float:
    """Bytes one token's attention block keeps for the backward pass, with a fused
    (FlashAttention) kernel and no dropout: Korthikanti et al. 2022's accounting (Sec.
    4.1) term by term, for these projections (a derivation): the norm's input and the
    projections' input (2h each); Q, K and V as the kernel reads them; its output (the
    output projection's input); one FP32 logsumexp per head (Dao 2023, Sec. 3.1.1).
    MLA adds its two latents, each kept as the input of its norm and of its
    up-projection; QK-norm keeps Q and K before their norms."""
    h, b, a = model.hidden, ACTIVATION_BYTES, model.attention
    if isinstance(a, LatentAttention):
        qk = a.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)
        latents = 2 * (a.q_lora_rank + a.kv_lora_rank)
        kept = 2 * h + latents + 2 * qk + 2 * a.heads * a.v_head_dim
        return b * kept + STATISTIC_BYTES * a.heads
    q, kv = a.heads * a.head_dim, a.kv_heads * a.head_dim
    norms = (q + kv) if a.qk_norm else 0
    return b * (2 * h + q + 2 * kv + q + norms) + STATISTIC_BYTES * a.heads


def _mlp_activation_elements(ffn: int, gated: bool) -> float:
    # Korthikanti Sec. 4.1 at f = 4h: GeLU input + second linear input, 2 f; gated:
    # up and gate outputs and their product, 3 f (formulas.model.activations, derivation).
    return (3.0 if gated else 2.0) * ffn


def dense_ffn_activation_bytes(model: MoeArchitecture) -> float:
    """A dense block's MLP: norm input and MLP input (2h) plus the MLP's own terms."""
    b = ACTIVATION_BYTES
    return b * (2 * model.hidden + _mlp_activation_elements(model.dense_ffn, model.gated_mlp))


def moe_ffn_activation_bytes(model: MoeArchitecture) -> float:
    """An MoE block per token (a derivation in the same accounting): norm input and its
    output (router and shared-expert input), 2h; the k dispatched copies each expert
    keeps as input, k h; each routed and shared expert's MLP terms; the k expert outputs
    the combine weights need for their gradient, k h; FP32 router probabilities, E. One
    expert of one routes nothing: no copies, no outputs, no router (the dense block)."""
    b, h, k = ACTIVATION_BYTES, model.hidden, model.experts_per_token
    experts = k * _mlp_activation_elements(model.expert_ffn, model.gated_mlp)
    shared = model.shared_experts * _mlp_activation_elements(model.shared_ffn, model.gated_mlp)
    if model.routed_experts == 1:
        return b * (2 * h + experts + shared)
    router = STATISTIC_BYTES * model.routed_experts
    return b * (2 * h + 2 * k * h + experts + shared) + router


def activation_bytes_per_token(model: MoeArchitecture, *, recompute: bool = False) -> float:
    """All layers' activations for one token; with full recomputation only each layer's
    input, 2h (Korthikanti et al. 2022, Table 2; the one layer being recomputed at a
    time is left out)."""
    if recompute:
        return ACTIVATION_BYTES * model.hidden * model.layers
    attention = model.layers * attention_activation_bytes(model)
    dense = model.dense_layers * dense_ffn_activation_bytes(model) if model.dense_layers else 0.0
    return attention + dense + model.moe_layers * moe_ffn_activation_bytes(model)


def activation_bytes_per_gpu(
    model: MoeArchitecture, layout: MoeParallelLayout, micro_batch_tokens: float,
    *, recompute: bool = False,
) -> float:
    """Activations on the busiest GPU under 1F1B: the first stage holds p micro-batches of
    L/p layers, i.e. all L layers for one micro-batch (Korthikanti et al. 2022, Sec.
    4.2.3), divided by TP with sequence parallelism (their Table 2). With expert
    parallelism a GPU keeps the expert activations of the copies it receives, as many
    as it sends when loads balance."""
    _check(micro_batch_tokens >= 0, "micro_batch_tokens must be >= 0")
    per_token = activation_bytes_per_token(model, recompute=recompute)
    return micro_batch_tokens * per_token / layout.tensor_parallel


# --- the busiest receiver ------------------------------------------------------------


def expected_max_standard_normal(count: int) -> float:
    """Expected largest of ``count`` independent standard normals, by Blom's (1958)
    approximation Phi^-1((n - 0.375)/(n + 0.25)), within about 1% for n >= 8; 0 for one."""
    return expected_normal_order_statistic(count, 1)


def expected_normal_order_statistic(count: int, rank: int) -> float:
    """Expected ``rank``-th largest of ``count`` independent standard normals, Blom's
    (1958) approximation Phi^-1((n - j + 1 - 0.375)/(n + 0.25)); 0 for the one of one."""
    _check(count >= 1 and 1 <= rank <= count, "count >= 1 and 1 <= rank <= count")
    if count == 1:
        return 0.0
    return NormalDist().inv_cdf((count - rank + 1 - 0.375) / (count + 0.25))


def gpu_load_cv(expert_load_cv: float, experts_per_gpu: int) -> float:
    """A GPU's load is the sum of its experts' loads: cv / sqrt(experts per GPU) when they
    vary independently (an assumption; correlated experts on one GPU would vary more)."""
    _check(expert_load_cv >= 0 and experts_per_gpu >= 1, "cv >= 0 and experts per GPU >= 1")
    return expert_load_cv / math.sqrt(experts_per_gpu)


def busiest_load_factor(load_cv: float, receivers: int) -> float:
    """Expected load of the busiest of ``receivers`` GPUs over the mean, loads normal with
    coefficient of variation ``load_cv``: 1 + cv E[max of n standard normals]."""
    _check(load_cv >= 0, "load_cv must be >= 0")
    return 1.0 + load_cv * expected_max_standard_normal(receivers)
