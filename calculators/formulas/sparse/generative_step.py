"""One training step of a generative recommender on a GPU cluster, priced operation by
operation with the guide's speed model (formulas.kernels, formulas.collectives).

The layout is DLRM's hybrid (Naumov et al. 2019, Sec. 3) with the sequence layers in
the dense part's place: the embedding tables sharded over every GPU (row-wise), looked
up through an alltoall that carries one vector per *token* (not one pooled vector per
feature, as in a DLRM) forward and its gradient backward; the sequence layers data
parallel, optionally split by tensor parallelism inside a node (f1 or Q/K/V and the
first feed-forward matrix by columns, f2 or the output projection and the second by
rows: one allreduce per HSTU layer and direction, two per transformer layer, as in
Megatron-LM, Shoeybi et al. 2019, Sec. 3); the dense gradients allreduced over the
data-parallel ranks.

Priced, per GPU and step: the linear layers' GEMMs at their shape's efficiency
(formulas.kernels.gemm; backward twice the forward), attention by the catalogue's fused
kernel at the jagged batch's effective length (our assumption: HSTU's pointwise-attention
kernel runs at the fused softmax kernel's rate for the same shape; its published speed-up
over FlashAttention-2 comes from skipping the padding, which the jagged lengths model),
the memory-bound passes in HBM bytes, the sampled-softmax loss as a GEMM, the embedding
rows read and updated in HBM (row-wise Adagrad: read forward, read and write with their
state in the update), tensor-parallel allreduces exposed in full, and the embedding
alltoalls and the dense gradients' allreduce hidden behind compute as the guide's
planner hides data-parallel traffic (``formulas.planner.layer_costs.exposed``: TorchRec's
training pipeline overlaps the next batch's lookups with this one's compute; DDP
overlaps gradient buckets with the backward). Activations beyond the GPU's memory split
the batch into micro-batches (gradient accumulation), each priced at its own size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.formulas.collectives.achieved import collective_time_s
from calculators.formulas.kernels.attention import AttentionShape, fused_attention_s
from calculators.formulas.kernels.gemm import gemm_time_s
from calculators.formulas.kernels.memory_bound import memory_time_s
from calculators.formulas.planner.layer_costs import exposed
from calculators.formulas.sparse.generative import sample_counts

if TYPE_CHECKING:
    from calculators.formulas.collectives.achieved import Fabric
    from calculators.formulas.kernels.dense_layer import Machine
    from calculators.formulas.sparse.generative import Lengths, SampleCounts, SequenceModel

#: Mixed-precision training states per dense parameter: 16-bit weights and gradients,
#: FP32 master weights and two Adam moments (Rajbhandari et al. 2020, ZeRO, Sec. 3.1).
DENSE_STATE_BYTES = 16.0
#: Bytes of a 16-bit value: activations and embedding vectors on the wire.
WIRE_BYTES = 2.0
#: Kernels per layer of memory-bound passes (norms, activation, gating, residual),
#: each paying the fixed kernel cost, forward; the backward runs twice as many.
PASSES_PER_LAYER = 5
#: The most micro-batches a step is split into before the layout is refused.
MAX_MICRO_BATCHES = 4096


@dataclass(frozen=True)
class GenerativeJob:
    """Everything one step depends on, validated, in SI units."""

    model: SequenceModel
    lengths: Lengths
    negatives: int
    lookups_per_token: int
    embedding_dim: int
    embedding_row_bytes: float  # weights + optimizer state of one row
    table_bytes: float  # all tables with their optimizer state
    global_batch: int  # samples per step
    machine: Machine
    fabric: Fabric
    gpus_per_node: int
    memory_bytes: float  # usable per GPU
    overlap: float
    #: Bytes of HBM per GPU given to a cache of hot rows when the tables live in host
    #: memory and on SSD (formulas.sparse.tiers sizes those tiers); None: the tables are
    #: sharded over the GPUs' HBM.
    cache_bytes: float | None = None

    def table_bytes_per_gpu(self, gpus: int) -> float:
        """What the tables take of each GPU's memory: its shard, or its cache."""
        return self.cache_bytes if self.cache_bytes is not None else self.table_bytes / gpus

    @property
    def counts(self) -> SampleCounts:
        return sample_counts(self.model, self.lengths, negatives=self.negatives)


@dataclass(frozen=True)
class StepTime:
    """One layout's step: seconds by operation, memory per GPU, and its MFU."""

    gpus: int
    tp: int
    micro_batches: int
    gemm_s: float
    attention_s: float
    memory_bound_s: float
    embedding_s: float
    tp_comm_s: float
    alltoall_s: float  # exposed
    allreduce_s: float  # exposed
    optimizer_s: float
    memory_per_gpu: float
    model_flops: float  # per step, all GPUs

    @property
    def compute_s(self) -> float:
        return self.gemm_s + self.attention_s + self.memory_bound_s + self.embedding_s

    @property
    def seconds(self) -> float:
        return (self.compute_s + self.tp_comm_s + self.alltoall_s + self.allreduce_s
                + self.optimizer_s)

    def mfu(self, peak_flops: float) -> float:
        return self.model_flops / (self.seconds * self.gpus * peak_flops)


def _layer_gemms_s(job: GenerativeJob, rows: int, tp: int) -> float:
    """Forward and backward seconds of one layer's linear layers over ``rows`` tokens,
    column-parallel layers split on their outputs, row-parallel on their inputs."""
    rate = job.machine.layer_gemm
    total = 0.0
    for index, (inputs, outputs) in enumerate(job.model.linear_weights()):
        column = index % 2 == 0
        n = math.ceil(outputs / tp) if column else outputs
        k = inputs if column else math.ceil(inputs / tp)
        total += 3.0 * gemm_time_s(rows, n, k, rate)
    return total


def _attention_s(job: GenerativeJob, samples: int, tp: int) -> float:
    """Forward and backward seconds of one layer's attention over ``samples`` sequences:
    the pairs of the jagged batch as a causal square of the same count of pairs."""
    model, pairs = job.model, job.lengths.attention_pairs
    if pairs <= 0:
        return 0.0
    side = max(1, round(math.sqrt(2.0 * pairs)))
    shape = AttentionShape(sequences=samples, heads=max(1, model.heads // tp), q_len=side,
                           kv_len=side, qk_dim=model.qk_dim, v_dim=model.v_dim,
                           causal_share=pairs / (side * side))
    forward, backward = fused_attention_s(shape, job.machine.speed.attention,
                                          job.machine.peak_bf16)
    return forward + backward


def _micro_batches(job: GenerativeJob, samples: int, tp: int, fixed: float) -> int | None:
    """Micro-batches the activations need to fit beside ``fixed`` bytes, or None."""
    room = job.memory_bytes - fixed
    per_sample = job.lengths.tokens * job.model.activation_bytes_per_token() / tp
    if room <= per_sample:
        return None
    micro = math.ceil(samples * per_sample / room)
    return micro if micro <= min(samples, MAX_MICRO_BATCHES) else None


def step_time(job: GenerativeJob, gpus: int, tp: int) -> StepTime | None:
    """The step on ``gpus`` GPUs at tensor parallelism ``tp``, or None when it does not
    fit (fewer samples than data-parallel ranks, or memory)."""
    dp = gpus // tp
    if gpus % tp or job.global_batch < dp or tp > job.gpus_per_node:
        return None
    model, lengths, machine = job.model, job.lengths, job.machine
    samples = math.ceil(job.global_batch / dp)
    dense = model.params / tp * DENSE_STATE_BYTES
    fixed = dense + job.table_bytes_per_gpu(gpus)
    micro = _micro_batches(job, samples, tp, fixed)
    if micro is None:
        return None
    per_micro = math.ceil(samples / micro)
    rows = max(1, round(per_micro * lengths.tokens))
    gemm = micro * model.layers * _layer_gemms_s(job, rows, tp)
    counts = job.counts
    if counts.loss_flops > 0:
        targets = max(1, round(per_micro * lengths.mean_tokens))
        gemm += 3.0 * micro * gemm_time_s(targets, job.negatives + 1, model.d_model,
                                          machine.gemm)
    attention = micro * model.layers * _attention_s(job, per_micro, tp)
    elementwise = 3.0 * samples * lengths.tokens * model.elementwise_bytes_per_token() / tp
    memory_bound = memory_time_s(elementwise, machine.memory_bandwidth,
                                 3 * micro * model.layers * PASSES_PER_LAYER,
                                 machine.kernel_overhead_s)
    lookups = samples * counts.lookups(job.lookups_per_token)
    embedding = memory_time_s(lookups * 3.0 * job.embedding_row_bytes,
                              machine.memory_bandwidth, 3 * micro, machine.kernel_overhead_s)
    compute = gemm + attention + memory_bound + embedding
    activation_bytes = rows * model.d_model * WIRE_BYTES
    per_layer = 2 if model.block == "transformer" else 1
    tp_comm = 2.0 * per_layer * micro * model.layers * collective_time_s(
        "allreduce", activation_bytes, tp, tp, job.fabric)
    vectors = lookups / micro * job.embedding_dim * WIRE_BYTES
    alltoall = 2.0 * micro * collective_time_s("alltoall", vectors, gpus, job.gpus_per_node,
                                                job.fabric)
    grads = collective_time_s("allreduce", model.params / tp * WIRE_BYTES, dp,
                              max(1, job.gpus_per_node // tp), job.fabric)
    backward = 2.0 / 3.0 * (gemm + attention)
    optimizer = memory_time_s(2.0 * model.params / tp * DENSE_STATE_BYTES,
                              machine.memory_bandwidth, 1, machine.kernel_overhead_s)
    return StepTime(
        gpus=gpus, tp=tp, micro_batches=micro, gemm_s=gemm, attention_s=attention,
        memory_bound_s=memory_bound, embedding_s=embedding, tp_comm_s=tp_comm,
        alltoall_s=exposed(alltoall, compute, job.overlap),
        allreduce_s=exposed(grads, backward, job.overlap), optimizer_s=optimizer,
        memory_per_gpu=fixed + per_micro * lengths.tokens
        * model.activation_bytes_per_token() / tp,
        model_flops=job.global_batch * counts.training_flops)


def why_none_fits(job: GenerativeJob, gpus: int) -> str:
    """Why no layout of ``gpus`` GPUs fits, in the reader's terms (at the largest
    tensor parallelism, the most memory-frugal layout)."""
    tp = max(tp_choices(job, gpus), default=1)
    if job.global_batch < gpus // tp:
        return _("a step of {samples:,} samples gives fewer than one sample to each of the "
                 "{ranks:,} data-parallel ranks: raise the batch").format(
            samples=job.global_batch, ranks=gpus // tp)
    fixed = job.model.params / tp * DENSE_STATE_BYTES + job.table_bytes_per_gpu(gpus)
    if fixed >= job.memory_bytes:
        return _("each GPU's share of the tables and the dense states is {fixed:,.1f} GB, "
                 "more than its usable {usable:,.1f} GB: add GPUs, or move the tables to "
                 "host memory (embedding_tiers)").format(fixed=fixed / 1e9,
                                                          usable=job.memory_bytes / 1e9)
    return _("one sample's activations do not fit beside the tables and the dense states: "
             "shorten the histories or use GPUs with more memory")


def tp_choices(job: GenerativeJob, gpus: int) -> tuple[int, ...]:
    """Tensor-parallel sizes to try: powers of two that divide the heads and the GPUs
    and stay inside a node."""
    sizes, tp = [], 1
    while tp <= min(job.gpus_per_node, job.model.heads, gpus):
        if job.model.heads % tp == 0 and gpus % tp == 0:
            sizes.append(tp)
        tp *= 2
    return tuple(sizes)


def best_step(job: GenerativeJob, gpus: int, tp: int | None = None) -> StepTime | None:
    """The fastest step on ``gpus`` GPUs over the tensor-parallel sizes (or at ``tp``)."""
    options = (tp,) if tp is not None else tp_choices(job, gpus)
    steps = [s for s in (step_time(job, gpus, t) for t in options) if s is not None]
    return min(steps, key=lambda s: (s.seconds, s.tp), default=None)


def gpu_counts(node: int, largest: int) -> tuple[int, ...]:
    """The cluster sizes searched for a deadline: 1 to the node's size in powers of two,
    then whole nodes in steps of 1, 1.25, 1.5 and 1.75 times each power of two."""
    counts = {n for n in (1, 2, 4, 8, 16, 32, 64, 72) if n <= node}
    nodes = 1
    while nodes * node <= largest:
        for step in (4, 5, 6, 7):
            counts.add(node * max(1, nodes * step // 4))
        nodes *= 2
    return tuple(sorted(n for n in counts if n <= largest))


def smallest_for(job: GenerativeJob, seconds_needed: float, *, node: int, largest: int,
                 steps: float, tp: int | None = None) -> StepTime | None:
    """The smallest cluster (of ``gpu_counts``) whose ``steps`` steps take at most
    ``seconds_needed``, or None."""
    for gpus in gpu_counts(node, largest):
        step = best_step(job, gpus, tp)
        if step is not None and step.seconds * steps <= seconds_needed:
            return step
    return None
