"""One decoding step of a generation engine on the roofline (Williams et al. 2009), with
the speed model's kernel parameters (catalogues.kernel_speeds: GEMM efficiency by shape,
the HBM bandwidth memory-bound kernels reach, the fixed cost per kernel, the fused
attention kernel's rate) and its collective model (formulas.collectives.achieved for the
tensor-parallel allreduce, formulas.moe.deepep's low-latency kernels for the experts'
dispatch and combine).

An engine is ``gpus`` GPUs serving one copy of the model. Each step every active
sequence adds one token:

- the GEMMs read every weight the batch needs once (a decoding GEMM has as many rows as
  sequences, so at small batches it is bound by the bytes of its weights, not by FLOPs);
  a mixture of experts reads only the experts some token picked: of E experts with k
  picks per token, a batch of b tokens touches E (1 - (1 - k/E)^b) on average (uniform
  routing, an assumption);
- attention reads each sequence's whole KV cache (formulas.rl.kv_cache), so its time grows
  with the tokens in the cache, not with the weights;
- tensor parallelism adds two allreduces of the batch's activations per layer
  (Megatron-LM, Shoeybi et al. 2019, Sec. 3); expert parallelism a dispatch and a combine
  per MoE layer;
- each kernel pays a fixed cost.

Attention is either tensor-parallel over the engine (heads split) or data-parallel (each
GPU keeps whole weights for attention and its own sequences; the experts are spread over
all of the engine's GPUs), as DeepSeek serves V3 (open-infra-index, day 6: DP attention,
EP experts). Communication either adds to the step or, with two micro-batches in flight
(DeepSeek's two-batch overlap), hides behind it: the step is then the longer of the two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from calculators.catalogues import deepep as deepep_data
from calculators.formulas.collectives.achieved import Fabric, collective_time_s
from calculators.formulas.kernels.gemm import GemmRate, gemm_efficiency
from calculators.formulas.moe import deepep

#: Kernels per layer besides the GEMMs: two norms, the rotary/KV write, attention and the
#: activation (a fused decoding layer as vLLM runs it; our count). GEMMs: QKV, output,
#: up (gate fused) and down.
OTHER_KERNELS_PER_LAYER = 5
GEMMS_PER_LAYER = 4
#: Activations travel in BF16 between GEMMs (the tensor-parallel allreduce's elements).
ACTIVATION_BYTES = 2.0


@dataclass(frozen=True)
class Engine:
    """What a decoding step's time depends on (SI units; per engine unless named)."""

    gpus: int
    data_parallel_attention: bool
    layers: int
    moe_layers: int
    hidden: int
    active_params: float  # multiply-adds per token / 1 (2 FLOPs each)
    dense_weight_bytes: float  # read every step (attention, dense MLPs, shared experts)
    expert_weight_bytes: float  # one routed expert over all MoE layers (0: dense model)
    experts: int
    top_k: int
    kv_bytes_per_token: float  # whole model
    kv_split: int  # over how many of the engine's GPUs one token's cache is divided
    attention_flops_per_cached_token: float
    gemm: GemmRate
    attention_flops_rate: float  # FLOP/s the decoding attention kernel reaches
    kernel_overhead_s: float
    fabric: Fabric
    overlap_communication: bool

    def dense_tokens_per_gpu(self, batch: int) -> int:
        """Rows of a dense GEMM on one GPU: the whole batch under tensor parallelism, a
        GPU's own sequences under data-parallel attention."""
        return math.ceil(batch / self.gpus) if self.data_parallel_attention else batch

    def touched_experts(self, batch: int) -> float:
        """Experts some token of the batch picked, per MoE layer (uniform routing)."""
        if self.experts <= 0:
            return 0.0
        return self.experts * (1.0 - math.pow(1.0 - self.top_k / self.experts, batch))

    def weight_bytes_per_gpu(self, batch: int) -> float:
        """Weight bytes one GPU reads in one step."""
        dense = self.dense_weight_bytes / (1 if self.data_parallel_attention else self.gpus)
        return dense + self.touched_experts(batch) * self.expert_weight_bytes / self.gpus

    def gemm_parts(self, batch: int) -> tuple[float, float, float]:
        """The step's GEMMs on one GPU: (weight bytes at the reached bandwidth, FLOPs at
        the shape's efficiency, the fixed cost of every kernel)."""
        rows = self.dense_tokens_per_gpu(batch)
        flops = 2.0 * self.active_params * batch / self.gpus
        efficiency = gemm_efficiency(rows, self.hidden, self.hidden, self.gemm)
        kernels = self.layers * (GEMMS_PER_LAYER * self.gemm.overhead_s
                                 + OTHER_KERNELS_PER_LAYER * self.kernel_overhead_s)
        return (self.weight_bytes_per_gpu(batch) / self.gemm.memory_bandwidth,
                flops / (self.gemm.peak_flops * efficiency), kernels)

    def gemm_s(self, batch: int) -> float:
        """The GEMMs and the small kernels: the roofline's longer part, plus the fixed
        costs."""
        traffic, arithmetic, kernels = self.gemm_parts(batch)
        return max(traffic, arithmetic) + kernels

    def attention_parts(self) -> tuple[float, float]:
        """Attention on one GPU per token held in the engine's caches: (reading it,
        its FLOPs)."""
        read = self.kv_bytes_per_token / self.kv_split / self.gemm.memory_bandwidth
        flops = self.attention_flops_per_cached_token / self.gpus / self.attention_flops_rate
        return read, flops

    def attention_s_per_cached_token(self) -> float:
        """Attention's seconds per cached token: the longer of its two parts."""
        return max(self.attention_parts())

    def communication_s(self, batch: int) -> float:
        """Tensor-parallel allreduces and expert dispatch/combine of one step."""
        return _communication_s(self, batch)

    def step_s(self, batch: int, cached_tokens: float) -> float:
        """One decoding step of ``batch`` sequences holding ``cached_tokens`` in all."""
        work = self.gemm_s(batch) + self.attention_s_per_cached_token() * cached_tokens
        comm = self.communication_s(batch)
        return max(work, comm) if self.overlap_communication else work + comm

    def steps_s(self, batch: int, cached_tokens: float, steps: int) -> float:
        """``steps`` consecutive steps of ``batch`` sequences, the cache growing by
        ``batch`` tokens a step (the sum in closed form)."""
        if steps <= 0:
            return 0.0
        fixed, slope = self.gemm_s(batch), self.attention_s_per_cached_token()
        comm = self.communication_s(batch)
        total_cached = steps * cached_tokens + batch * steps * (steps - 1) / 2.0
        if not self.overlap_communication:
            return steps * (fixed + comm) + slope * total_cached
        # work(j) = fixed + slope (C + b j) grows with j; before step j0 the
        # communication is longer and the step is the communication.
        if slope * batch <= 0:
            return steps * max(fixed + slope * cached_tokens, comm)
        j0 = min(steps, max(0, math.ceil((comm - fixed - slope * cached_tokens)
                                         / (slope * batch))))
        rest = steps - j0
        rest_cached = rest * (cached_tokens + batch * j0) + batch * rest * (rest - 1) / 2.0
        return j0 * comm + rest * fixed + slope * rest_cached


@lru_cache(maxsize=4096)
def _communication_s(engine: Engine, batch: int) -> float:
    if engine.gpus < 2:
        return 0.0
    seconds = 0.0
    if not engine.data_parallel_attention:
        message = batch * engine.hidden * ACTIVATION_BYTES
        seconds += 2 * engine.layers * collective_time_s(
            "allreduce", message, engine.gpus, engine.fabric.domain, engine.fabric)
    if engine.experts > 0:
        setting = replace(
            deepep_data.LOW_LATENCY_SETTING, tokens=max(1, math.ceil(batch / engine.gpus)),
            hidden=engine.hidden, top_k=engine.top_k, experts=engine.experts,
            gpus_per_node=min(engine.gpus, engine.fabric.domain),
            nvlink_bytes_per_s=engine.fabric.intra_bandwidth,
            nic_bytes_per_s=engine.fabric.inter_bandwidth)
        per_layer = sum(deepep.low_latency_time_s(engine.gpus, kind, setting=setting)
                        for kind in deepep.KINDS)
        seconds += engine.moe_layers * per_layer
    return seconds


def prefill_s(engine: Engine, prompt_tokens: int, prompts: int) -> float:
    """Prefilling ``prompts`` prompts of ``prompt_tokens`` on the engine: compute-bound
    GEMMs (2 x active parameters per token) at the efficiency of their shape, and causal
    attention over the prompt (half of the full square)."""
    tokens = prompt_tokens * prompts
    if tokens <= 0:
        return 0.0
    rows = max(1, prompt_tokens // (engine.gpus if engine.data_parallel_attention else 1))
    efficiency = gemm_efficiency(rows, engine.hidden, engine.hidden, engine.gemm)
    gemm = 2.0 * engine.active_params * tokens / engine.gpus / (
        engine.gemm.peak_flops * efficiency)
    attention = (engine.attention_flops_per_cached_token * prompts * prompt_tokens ** 2 / 2.0
                 / engine.gpus / engine.attention_flops_rate)
    return gemm + attention
