"""Training memory per GPU: model states (ZeRO), activations (Korthikanti et al.), the
embedding and output layers, and what is held only while it is used.

The one implementation of these formulas: the ``model_memory`` calculator and the
planner (formulas.planner) both call ``memory_per_gpu``. Bytes are decimal SI bytes.
Every pipeline rank holds different things (the first the embedding and the most
micro-batches in flight, the last the output layer and its logits); the figure
reported is that of the rank that needs the most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.model import activations as act
from calculators.formulas.model.architecture import embedding_params, layer_params, norm_params
from calculators.formulas.model.model_states import (
    GRADIENT_PRECISIONS,
    MASTER_WEIGHT_BYTES,
    OPTIMIZER_STATE_BYTES,
    PRECISION_BYTES,
    StateBytes,
    device_capacity_bytes,
    model_state_bytes,
    state_bytes,
    usable_bytes,
)
from calculators.formulas.parallel.offload import (
    offloads_activations,
    offloads_optimizer,
    resident_layer_units,
)
from calculators.formulas.parallel.sharded_states import gathered_weight_bytes
from calculators.formulas.parallel.stages import (
    chunks_in_flight,
    layer_units_in_flight,
    schedule_layout,
    split_layers,
)

if TYPE_CHECKING:
    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.parallel.stages import StageSplit

__all__ = ["GRADIENT_PRECISIONS", "MASTER_WEIGHT_BYTES", "OPTIMIZER_STATE_BYTES",
           "PRECISION_BYTES", "Breakdown", "StateBytes", "Strategy", "device_capacity_bytes",
           "gathered_weight_bytes", "memory_per_gpu", "model_state_bytes", "state_bytes",
           "usable_bytes"]

#: Token IDs enter the embedding as 64-bit integers (Megatron-LM's
#: theoretical_memory_usage.py counts 8 s b per micro-batch in flight).
TOKEN_ID_BYTES = 8.0
ATTENTION_MODES = ("fused", "materialised")
#: Micro-batches per step taken when none is given: enough that every schedule reaches
#: its steady state (the peak in flight no longer grows with m).
FULL_PIPELINE = 1 << 30


def params_on_rank(arch: Architecture, split: StageSplit, rank: int, tp: int) -> float:
    """Parameters one GPU of pipeline rank ``rank`` holds, split over ``tp``.

    The first rank holds the token (and position) embedding, the last the output layer
    (a copy of the embedding when tied, as Megatron-LM keeps one on the last stage) and
    the final norm; every rank its layers. Norms and biases are counted as split too.
    """
    body = split.rank_layers(rank) * layer_params(arch)
    output = arch.vocab * arch.hidden
    embed = embedding_params(arch) - (0 if arch.tied_embeddings else output)
    extra = 0.0
    if split.holds_first(rank):  # rank 0; under DualPipe also the last rank's copy
        extra += embed
    if split.holds_last(rank):  # the last rank; rank 0 too under DualPipe(V)
        extra += output + norm_params(arch)
        if split.stages == 1 and arch.tied_embeddings:
            extra -= output  # one matrix serves both ends
    return (body + extra) / tp


def params_on_gpu(arch: Architecture, tp: int, pp: int) -> float:
    """Parameters on one GPU of the fullest pipeline rank (even or Llama-style split)."""
    split = split_layers(arch.layers, pp)
    return max(params_on_rank(arch, split, r, tp) for r in split.ranks_of_interest)


def layer_shape(arch: Architecture, micro_batch: int) -> act.LayerShape:
    return act.LayerShape(seq_len=arch.seq_len, micro_batch=micro_batch, hidden=arch.hidden,
                          heads=arch.heads, kv_heads=arch.kv_heads, ffn_hidden=arch.ffn_hidden,
                          gated_mlp=arch.gated_mlp, head_dim=arch.head_dim)


def activation_bytes_per_layer(arch: Architecture, micro_batch: int, tp: int,
                               sequence_parallel: bool, recompute: str, *,
                               attention: str = "materialised", dropout: bool = True,
                               cp: int = 1, input_bytes: float = 2.0,
                               lean_norms: bool = False) -> float:
    """Activation bytes one layer stores for one micro-batch (16-bit activations).

    Korthikanti et al. 2022, Sec. 4 and Table 2 (the defaults here): sbh(34 + 5as/h)
    without parallelism; sbh(10 + 24/t + 5as/(ht)) with tensor parallelism; sbh(34/t +
    5as/(ht)) with sequence parallelism too; selective recomputation drops the 5as/h
    term; full recomputation keeps only the layer input, 2sbh (split by t under SP).
    formulas.model.activations generalises the terms (GQA, MLP width, gated MLP, no dropout,
    fused attention). Context parallelism splits every tensor along the sequence, so
    divides by ``cp`` (Megatron-Core context-parallel docs).
    """
    per_layer = act.activation_bytes_per_layer(
        layer_shape(arch, micro_batch), tp=tp, sequence_parallel=sequence_parallel,
        recompute=recompute, dropout=dropout, flash=attention == "fused",
        input_bytes=input_bytes, lean_norms=lean_norms)
    return per_layer / cp


def output_layer_bytes(arch: Architecture, micro_batch: int, tp: int, cp: int = 1) -> float:
    """The last rank's output layer for one micro-batch: the final norm's input and the
    output projection's input, 2sbh each, and the logits kept in FP32 for the
    cross-entropy, 4sbV: 4sbh(1 + V/h)/t (Korthikanti et al. 2022, Sec. 4.3, as
    Megatron-LM's theoretical_memory_usage.py counts it; the vocabulary-parallel output
    layer splits the logits over t). Context parallelism divides the sequence."""
    sb = arch.seq_len / cp * micro_batch
    return 4.0 * sb * (arch.hidden + arch.vocab) / tp


def embedding_input_bytes(arch: Architecture, micro_batch: int, tp: int, cp: int,
                          dropout: bool, *, sequence_parallel: bool = True) -> float:
    """The first rank's embedding for one micro-batch: the token IDs (8 B each) and,
    with dropout, the embedding-dropout mask of 1 B per element: sbh/t under sequence
    parallelism (Korthikanti et al. 2022, Sec. 4.3), sbh without it, when every TP rank
    holds the whole embedding output."""
    sb = arch.seq_len / cp * micro_batch
    mask = sb * arch.hidden / (tp if sequence_parallel else 1) if dropout else 0.0
    return sb * TOKEN_ID_BYTES + mask


@dataclass(slots=True)
class Breakdown:
    """Bytes on one GPU, by kind: model states, the layers' stored activations, the
    embedding and output layers' activations (``outer``), and ``working``: what is
    held only while one layer runs (a layer being recomputed, gathered K and V,
    gathered weights). ``rank`` is the pipeline rank these bytes are for. A value, never
    changed once made; not frozen because the planner's search makes one per layout,
    tens of thousands, and a frozen dataclass takes several times longer to build."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    outer: float = 0.0
    working: float = 0.0
    rank: int = 0
    #: Bytes this GPU keeps in host memory (formulas.parallel.offload), not in ``total``.
    host: float = 0.0

    @property
    def states(self) -> float:
        return self.weights + self.gradients + self.optimizer

    @property
    def total(self) -> float:
        # Plain additions in a fixed order: the same bits natively and in Pyodide.
        return (self.weights + self.gradients + self.optimizer + self.activations
                + self.outer + self.working)


@dataclass(frozen=True)
class Strategy:
    """How the model is cut up and what is traded for memory. ``shard_group`` is the
    ZeRO/FSDP shard group (None: all dp ranks; fewer for hybrid sharding);
    ``micro_batches`` per step per replica (None: enough to fill the pipeline)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    zero_stage: int = 0
    micro_batch: int = 1
    sequence_parallel: bool = False
    recompute: str = "none"
    cp: int = 1
    attention: str = "fused"
    dropout: bool = False
    schedule: str = "1f1b"
    virtual_stages: int = 1
    micro_batches: int | None = None
    shard_group: int | None = None
    cp_method: str = "ring"
    input_bytes: float = 2.0  # of the GEMMs' saved inputs (formulas.model.recipes)
    lean_norms: bool = False
    offload: str = "none"  # formulas.parallel.offload.OFFLOAD_MODES


def cp_working_bytes(arch: Architecture, micro_batch: int, tp: int, cp: int, *,
                     method: str, scale: float = 1.0) -> float:
    """Context parallelism's buffers for one layer: the all-gather method holds K and V
    for the whole sequence, and again with their gradients in the backward (Llama 3's
    method, Dubey et al. 2024, Sec. 3.3.2): 2 x 2 s b (kv_heads x head_dim)/t x 2 B; the
    ring two blocks of s/c tokens (the one in use and the one arriving). Ulysses'
    all-to-all buffers are the size of tensors already counted (taken as nothing)."""
    if cp <= 1 or method == "ulysses":
        return 0.0
    kv = 2.0 * arch.seq_len * micro_batch * arch.kv_width / tp * 2.0 * scale
    return 2.0 * kv if method == "allgather" else 2.0 * kv / cp


def working_bytes(arch: Architecture, st: Strategy, per_param: StateBytes,
                  scale: float, params: float | None = None) -> float:
    """Held only while one layer runs: under full recomputation the layer's whole
    activation set while it is rebuilt (Korthikanti's Table 2 and the peer tools leave
    it out), ZeRO-3's gathered weights, context parallelism's K and V buffers."""
    held = cp_working_bytes(arch, st.micro_batch, st.tp, st.cp, method=st.cp_method,
                            scale=scale)
    if st.recompute == "full":
        held += scale * activation_bytes_per_layer(
            arch, st.micro_batch, st.tp, st.sequence_parallel, "none",
            attention=st.attention, dropout=st.dropout, cp=st.cp, input_bytes=st.input_bytes,
            lean_norms=st.lean_norms)
    if st.zero_stage >= 3:
        shard = st.dp if st.shard_group is None else st.shard_group
        # The output layer's gather is counted where it is the only stage; with a
        # pipeline it is the last stage's alone, which this per-GPU figure leaves out.
        held += gathered_weight_bytes(arch, st.tp, per_param, shard, with_output=st.pp == 1,
                                      params=params)
    return held


@dataclass(frozen=True)
class RankLoad:
    """What one pipeline rank holds before the sharding and recomputation choices:
    parameters on one of its GPUs, layer-micro-batches in flight, and the embedding and
    output layers' activation bytes."""

    rank: int
    params: float
    layer_units: int
    outer: float


def rank_loads(arch: Architecture, st: Strategy, params: float | None = None,
               split: StageSplit | None = None,
               ranks: tuple[int, ...] | None = None) -> tuple[RankLoad, ...]:
    """The ranks that can hold the most (the first, the fullest middle one, the last),
    or ``ranks``."""
    split = split or split_layers(arch.layers, st.pp,
                                  *schedule_layout(st.schedule, st.pp, st.virtual_stages))
    m = st.micro_batches if st.micro_batches is not None else FULL_PIPELINE
    loads = []
    for rank in ranks or split.ranks_of_interest:
        outer = 0.0
        if split.holds_first(rank):
            first_chunk = chunks_in_flight(st.schedule, st.pp, m, rank, split.chunks_per_rank)[
                split.rank_chunks(rank).index(0)]
            outer += first_chunk * embedding_input_bytes(
                arch, st.micro_batch, st.tp, st.cp, st.dropout,
                sequence_parallel=st.sequence_parallel or st.tp == 1)
        if split.holds_last(rank):
            outer += output_layer_bytes(arch, st.micro_batch, st.tp, st.cp)
        on_gpu = (params_on_rank(arch, split, rank, st.tp) if params is None
                  else params / (st.tp * st.pp))
        loads.append(RankLoad(rank, on_gpu, layer_units_in_flight(split, st.schedule, m, rank),
                              outer))
    return tuple(loads)


def rank_states(loads: tuple[RankLoad, ...], per_param: StateBytes, zero_stage: int,
                shard: int) -> tuple[tuple[float, float, float], ...]:
    """(weights, gradients, optimizer) bytes per rank of ``loads`` (model_state_bytes)."""
    return tuple(model_state_bytes(load.params, per_param, zero_stage, shard) for load in loads)


def peak_rank(loads: tuple[RankLoad, ...], states: tuple[tuple[float, float, float], ...],
              *, per_layer: float, working: float, scale: float = 1.0,
              offload: str = "none") -> tuple[int, float]:
    """(index in ``loads``, total bytes) of the rank that needs the most, from its load
    and model states (``rank_states``); ``per_layer`` is one layer's activation bytes
    for one micro-batch (already scaled). The total adds the parts in
    ``Breakdown.total``'s order, so the two agree to the bit. ``offload``: what is in host
    memory instead (formulas.parallel.offload): the optimizer states, and all but two
    layers' activations."""
    best_total, best = -1.0, 0
    no_optimizer = offloads_optimizer(offload)
    streamed = offloads_activations(offload)
    for i, load in enumerate(loads):
        w, g, o = states[i]
        if no_optimizer:
            o = 0.0
        units = resident_layer_units(load.layer_units) if streamed else load.layer_units
        total = w + g + o + per_layer * units + load.outer * scale + working
        if total > best_total:
            best_total, best = total, i
    return best, best_total


def peak_breakdown(loads: tuple[RankLoad, ...], states: tuple[tuple[float, float, float], ...],
                   *, per_layer: float, working: float, scale: float = 1.0,
                   offload: str = "none") -> Breakdown:
    """The breakdown of the rank that needs the most (``peak_rank``), with what it keeps
    in host memory."""
    best = peak_rank(loads, states, per_layer=per_layer, working=working, scale=scale,
                     offload=offload)[0]
    load, (weights, gradients, optimizer) = loads[best], states[best]
    host = 0.0
    if offloads_optimizer(offload):
        optimizer, host = 0.0, optimizer
    units: float = load.layer_units
    if offloads_activations(offload):
        units = resident_layer_units(load.layer_units)
        host += per_layer * (load.layer_units - units)
    return Breakdown(weights, gradients, optimizer, per_layer * units,
                     load.outer * scale, working, load.rank, host)


def memory_per_gpu(arch: Architecture, strategy: Strategy, per_param: StateBytes,
                   params: float | None = None, activation_scale: float = 1.0) -> Breakdown:
    """Model states and activations on the pipeline rank that needs the most memory.
    ``params`` overrides the count from ``arch`` (then spread evenly over tp x pp)."""
    st = strategy
    shard = st.dp if st.shard_group is None else st.shard_group
    per_layer = activation_scale * activation_bytes_per_layer(
        arch, st.micro_batch, st.tp, st.sequence_parallel, st.recompute,
        attention=st.attention, dropout=st.dropout, cp=st.cp, input_bytes=st.input_bytes,
            lean_norms=st.lean_norms)
    loads = rank_loads(arch, st, params)
    return peak_breakdown(loads, rank_states(loads, per_param, st.zero_stage, shard),
                          per_layer=per_layer,
                          working=working_bytes(arch, st, per_param, activation_scale, params),
                          scale=activation_scale, offload=st.offload)
