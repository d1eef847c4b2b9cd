"""Expert parallelism: the alltoall traffic of MoE layers, expert capacity and dropped
tokens, and how model states split over expert- and data-parallel groups.

Under expert parallelism (EP) each GPU of an EP group holds a slice of the routed experts;
every MoE layer sends each token's hidden vector to the GPUs of its top-k experts
(dispatch) and brings the weighted outputs back (combine): two alltoalls forward and two
backward (GShard, Lepikhin et al. 2020, Sec. 3; Megatron-Core MoE and DeepSpeed-MoE docs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.moe.architecture import routed_expert_params_total, total_params

if TYPE_CHECKING:
    from collections.abc import Sequence

    from calculators.formulas.moe.shape import MoeArchitecture

#: Bytes per element: FP8 (E4M3) and BF16.
FP8_BYTES = 1.0
BF16_BYTES = 2.0
#: Forward dispatch + combine, and the same two in the backward pass.
ALLTOALLS_PER_MOE_LAYER_PER_STEP = 4


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


# --- alltoall bytes -------------------------------------------------------------------


@dataclass(frozen=True)
class AlltoallPrecision:
    """Bytes per element of the four alltoalls of one MoE layer in one training step.

    Backward, the combine's gradient travels token -> expert (dispatch-shaped) and the
    dispatch's gradient expert -> token (combine-shaped)."""

    forward_dispatch: float = BF16_BYTES
    forward_combine: float = BF16_BYTES
    backward_dispatch: float = BF16_BYTES
    backward_combine: float = BF16_BYTES

    def __post_init__(self) -> None:
        _check(min(self.forward_dispatch, self.forward_combine, self.backward_dispatch,
                   self.backward_combine) > 0, "bytes per element must be > 0")

    @property
    def total_bytes_per_element(self) -> float:
        """Sum over the four alltoalls."""
        return (self.forward_dispatch + self.forward_combine
                + self.backward_dispatch + self.backward_combine)


#: DeepSeek-V3 report, Sec. 3.3.3: activations before the MoE up-projections are sent in
#: FP8, and so are the activation gradients before the down-projections; "both the forward
#: and backward combine components" stay in BF16. (Per-128-element scales, about 3% more
#: bytes, are left out.)
DEEPSEEK_V3_PRECISION = AlltoallPrecision(FP8_BYTES, BF16_BYTES, FP8_BYTES, BF16_BYTES)


def alltoall_bytes_per_token(hidden: int, top_k: int, bytes_per_element: float) -> float:
    """Bytes one token sends in one dispatch (or receives in one combine): one h-vector per
    chosen expert, top_k x h x bytes (GShard Sec. 3; DeepSeek-V3 Sec. 3.2.2)."""
    _check(hidden >= 1 and top_k >= 1 and bytes_per_element > 0, "sizes must be positive")
    return top_k * hidden * bytes_per_element


def step_alltoall_bytes_per_token(hidden: int, top_k: int, precision: AlltoallPrecision) -> float:
    """All four alltoalls of one MoE layer in one training step, per token."""
    return alltoall_bytes_per_token(hidden, top_k, precision.total_bytes_per_element)


def off_node_fraction(ep_size: int, gpus_per_node: int) -> float:
    """Share of uniformly chosen destination GPUs that sit on another node: (E - g)/E for
    an EP group of E GPUs over whole nodes of g, 0 when the group fits in one node.
    Derivation: a token's own node holds g of the E GPUs."""
    _check(ep_size >= 1 and gpus_per_node >= 1, "sizes must be >= 1")
    if ep_size <= gpus_per_node:
        return 0.0
    _check(ep_size % gpus_per_node == 0, "an EP group spanning nodes must fill whole nodes")
    return (ep_size - gpus_per_node) / ep_size


def cross_node_bytes_per_token(
    hidden: int, top_k: int, bytes_per_element: float, ep_size: int, gpus_per_node: int
) -> float:
    """Expected bytes a token's dispatch sends off its node when every copy travels
    separately and routing is uniform: top_k x h x bytes x (E - g)/E."""
    share = off_node_fraction(ep_size, gpus_per_node)
    return alltoall_bytes_per_token(hidden, top_k, bytes_per_element) * share


def expected_nodes_per_token(experts: int, nodes: int, top_k: int) -> float:
    """Expected distinct nodes holding a token's top_k experts, experts spread evenly over
    ``nodes`` and chosen uniformly without replacement: n (1 - C(E - E/n, k) / C(E, k)).
    Derivation: a node is missed when all k experts fall among the E - E/n elsewhere;
    the ratio of binomials is taken as the product of (E - E/n - i)/(E - i), i < k, so
    that it stays a float at any size (and is exactly 0 once k > E - E/n)."""
    _check(nodes >= 1 and experts % nodes == 0, "nodes must divide the experts evenly")
    _check(1 <= top_k <= experts, "top_k must be in [1, experts]")
    elsewhere = experts - experts // nodes
    missed = 1.0
    for i in range(top_k):
        if elsewhere - i <= 0:
            missed = 0.0
            break
        missed *= (elsewhere - i) / (experts - i)
    return nodes * (1.0 - missed)


def router_node_limit(experts: int, groups: int, groups_per_token: int, nodes: int) -> int:
    """M, the most nodes one token's experts can span, from the router's group limit and
    where the EP group puts the experts. DeepSeek-V3 (report, Sec. 2.1.2; config.json
    ``n_group`` 8, ``topk_group`` 4) splits the experts into groups and lets a token pick
    experts from ``groups_per_token`` of them; experts sit on the EP group's ``nodes`` in
    order, E/n per node (Megatron-Core's and DeepSeek's placement). When each node holds
    one group, as in DeepSeek's EP 64 over 8 nodes, M = ``groups_per_token`` (4); when a
    group spans two nodes (EP 128 over 16), a token's 4 groups reach 8. Derivation: M =
    min(n, groups_per_token x the most nodes one group touches). One group (no group
    limit) gives M = n, no limit."""
    _check(min(experts, groups, groups_per_token, nodes) >= 1, "sizes must be >= 1")
    _check(experts % groups == 0, "the groups must divide the experts evenly")
    if groups == 1 or experts % nodes:
        return nodes
    size, per_node = experts // groups, experts // nodes
    touched = max((first + size - 1) // per_node - first // per_node + 1
                  for first in range(0, experts, size))
    return min(nodes, groups_per_token * touched)


def deduplicated_cross_node_bytes_per_token(
    hidden: int, experts: int, nodes: int, top_k: int, bytes_per_element: float
) -> float:
    """Expected off-node bytes when a token crosses to each target node once and is fanned
    out there over NVLink (DeepSeek-V3 Sec. 3.2.2): (n - 1)/n of the expected distinct
    nodes, times h x bytes (a token sits on one of the n nodes, each equally likely)."""
    remote = expected_nodes_per_token(experts, nodes, top_k) * (nodes - 1) / nodes
    return remote * hidden * bytes_per_element


def node_limited_bytes_bound(hidden: int, max_nodes: int, bytes_per_element: float) -> float:
    """Upper bound on bytes leaving a node per token under node-limited routing (each
    token to at most M nodes, DeepSeek-V3 Sec. 2.1.2; M = 4, Sec. 4.2): M x h x bytes,
    against top_k x h x bytes without the limit and without per-node deduplication."""
    _check(max_nodes >= 1, "max_nodes must be >= 1")
    return alltoall_bytes_per_token(hidden, max_nodes, bytes_per_element)


def experts_per_node_at_no_extra_cost(nvlink_bytes_per_s: float, ib_bytes_per_s: float) -> float:
    """While one copy crosses InfiniBand, NVLink can forward B_NVLink / B_IB copies inside
    the node: DeepSeek-V3 Sec. 3.2.2, 160 / 50 = 3.2 experts per node."""
    _check(nvlink_bytes_per_s > 0 and ib_bytes_per_s > 0, "bandwidths must be > 0")
    return nvlink_bytes_per_s / ib_bytes_per_s


def max_experts_at_same_cost(
    max_nodes: int, nvlink_bytes_per_s: float, ib_bytes_per_s: float
) -> float:
    """M x B_NVLink / B_IB routed experts cost no more IB time than M node copies (Sec.
    3.2.2: "a maximum of 13 experts (4 nodes x 3.2 experts/node)")."""
    return max_nodes * experts_per_node_at_no_extra_cost(nvlink_bytes_per_s, ib_bytes_per_s)


# --- expert capacity and dropped tokens -------------------------------------------------


def expert_capacity_tokens(
    tokens: float, experts: int, capacity_factor: float, top_k: int = 1
) -> float:
    """Switch Transformer (Fedus et al. 2021), Sec. 2.2, Eq. 3: capacity = tokens per batch
    / experts x capacity factor, for top-1; top-k routing makes k assignments per token.
    Sensible capacity factors: 1.0 to 2.0 (Switch Table 1 uses 1.0, 1.25 and 2.0)."""
    _check(tokens >= 0 and experts >= 1 and capacity_factor > 0 and top_k >= 1,
           "tokens >= 0, experts >= 1, capacity_factor > 0 and top_k >= 1")
    return tokens * top_k / experts * capacity_factor


def dropped_fraction(loads: Sequence[float], capacity: float) -> float:
    """Share of assignments over capacity: sum max(0, load - C) / sum load (Switch Sec.
    2.2: overflow tokens skip the expert through the residual connection)."""
    _check(capacity >= 0 and all(x >= 0 for x in loads), "loads and capacity must be >= 0")
    total = math.fsum(loads)  # fsum: the same bits natively and in Pyodide
    return math.fsum(max(0.0, x - capacity) for x in loads) / total if total else 0.0


def expected_dropped_fraction(capacity_factor: float, load_cv: float) -> float:
    """Expected dropped share when expert loads are normal with mean m and standard
    deviation cv x m, and capacity = CF x m. Derivation: E[(X - C)+] = s phi(z) +
    (m - C)(1 - Phi(z)), z = (C - m)/s, divided by m.

    An assumption (loads normal), sound for cv up to about 0.5 (uniform routing of T
    tokens: cv ~ sqrt(E / (T k)), see ``uniform_routing_load_cv``); it underestimates the
    far tail of a right-skewed load (by ~20% at CF 1.25 for 64 tokens per expert). The
    normal puts some load below zero, so the result is capped at 1. Sensible inputs: CF
    0.5 to 4, cv 0 to 1."""
    _check(capacity_factor > 0 and load_cv >= 0, "capacity_factor > 0 and load_cv >= 0")
    if load_cv == 0:
        return max(0.0, 1.0 - capacity_factor)
    z = (capacity_factor - 1.0) / load_cv
    pdf = math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    upper_tail = 0.5 * math.erfc(z / math.sqrt(2))
    return min(1.0, load_cv * pdf + (1.0 - capacity_factor) * upper_tail)


def uniform_routing_load_cv(tokens: float, experts: int, top_k: int = 1) -> float:
    """Coefficient of variation of one expert's load when each of tokens x k assignments
    lands on a uniform random expert (binomial): sqrt((1 - 1/E) / (tokens k / E)). The
    floor a perfectly balanced router still sees; learned routers are less even."""
    _check(tokens > 0 and experts >= 1 and top_k >= 1, "tokens > 0, experts >= 1, top_k >= 1")
    mean = tokens * top_k / experts
    return math.sqrt((1.0 - 1.0 / experts) / mean)


# --- model states over EP, TP, PP and (expert-)data parallelism -----------------------


@dataclass(frozen=True)
class MoeParallelLayout:
    """Non-expert weights split by TP x PP and replicated over DP = G / (TP PP); routed
    experts split by ETP x EP x PP and replicated over EDP = G / (ETP EP PP), the
    expert-data-parallel group ZeRO shards their optimizer over (Megatron-Core MoE docs,
    "MoE parallel folding"). DeepSeek-V3: G = 2,048, PP 16, EP 64, no TP (Sec. 3.2)."""

    gpus: int
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    expert_parallel: int = 1
    expert_tensor_parallel: int = 1

    def __post_init__(self) -> None:
        dense = self.tensor_parallel * self.pipeline_parallel
        expert = self.expert_tensor_parallel * self.expert_parallel * self.pipeline_parallel
        _check(min(self.gpus, dense, expert) >= 1, "sizes must be >= 1")
        _check(self.gpus % dense == 0, f"TP x PP = {dense} must divide {self.gpus} GPUs")
        _check(self.gpus % expert == 0, f"ETP x EP x PP = {expert} must divide {self.gpus} GPUs")

    @property
    def data_parallel(self) -> int:
        """Replicas of the non-expert weights."""
        return self.gpus // (self.tensor_parallel * self.pipeline_parallel)

    @property
    def expert_data_parallel(self) -> int:
        """Replicas of each expert."""
        experts = self.expert_tensor_parallel * self.expert_parallel * self.pipeline_parallel
        return self.gpus // experts


def expert_params_per_gpu(model: MoeArchitecture, layout: MoeParallelLayout) -> float:
    """Routed-expert parameters on one GPU (stages assumed even)."""
    _check(model.routed_experts % layout.expert_parallel == 0, "EP must divide routed experts")
    shards = layout.expert_tensor_parallel * layout.expert_parallel * layout.pipeline_parallel
    return routed_expert_params_total(model) / shards


def non_expert_params_per_gpu(model: MoeArchitecture, layout: MoeParallelLayout) -> float:
    """Everything else (attention, shared experts, routers, dense layers, embeddings) on one
    GPU, split by TP and PP (stages assumed even; embeddings vocabulary-parallel)."""
    rest = total_params(model) - routed_expert_params_total(model)
    return rest / (layout.tensor_parallel * layout.pipeline_parallel)


@dataclass(frozen=True)
class ModelStateBytes:
    """Bytes of weights, gradients and optimizer states on one GPU."""

    weights: float
    gradients: float
    optimizer: float

    @property
    def total(self) -> float:
        """Sum of the three."""
        return self.weights + self.gradients + self.optimizer


def model_state_bytes_per_gpu(
    model: MoeArchitecture,
    layout: MoeParallelLayout,
    *,
    zero_stage: int = 1,
    weight_bytes: float = 2.0,
    gradient_bytes: float = 2.0,
    optimizer_bytes: float = 12.0,
) -> ModelStateBytes:
    """ZeRO (Rajbhandari et al. 2020, Sec. 5: 2 + 2 + K bytes per parameter, K = 12 for
    mixed-precision Adam) applied per group: stage >= 1 shards optimizer states, >= 2
    gradients, 3 weights, each over DP for non-expert and over EDP for expert parameters.
    These scale with TOTAL parameters; activations scale with the active ones."""
    _check(zero_stage in (0, 1, 2, 3), "zero_stage must be 0, 1, 2 or 3")
    expert = expert_params_per_gpu(model, layout)
    rest = non_expert_params_per_gpu(model, layout)

    def per_gpu(bytes_per_param: float, sharded: bool) -> float:
        if not sharded:
            return (expert + rest) * bytes_per_param
        return (expert / layout.expert_data_parallel + rest / layout.data_parallel) * (
            bytes_per_param
        )

    return ModelStateBytes(
        weights=per_gpu(weight_bytes, zero_stage >= 3),
        gradients=per_gpu(gradient_bytes, zero_stage >= 2),
        optimizer=per_gpu(optimizer_bytes, zero_stage >= 1),
    )


def active_ffn_width(model: MoeArchitecture) -> int:
    """FFN width one token passes through in an MoE layer: k f_e + s f_s. Activation memory
    of the FFN scales with it (Korthikanti et al. 2022, Sec. 4: the MLP terms grow with f),
    not with E f_e. DeepSeek-V3: 9 x 2,048 = 18,432, its dense layers' width."""
    return model.experts_per_token * model.expert_ffn + model.shared_experts * model.shared_ffn
