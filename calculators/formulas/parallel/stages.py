"""Cutting l layers into pipeline stages, and what each stage holds at its peak.

A pipeline of p ranks, each running v model chunks (v = 1 without interleaving), has
c = p v chunks. Chunk j sits on rank j mod p (Narayanan et al. 2021, Sec. 2.2.2: rank 0
runs chunks 0, p, 2p, ...). The split accepted here is even, or even but for one layer
fewer on the first chunk, or on the first and the last: Llama 3 "reduce[s] one
Transformer layer each from the first and the last stages" so that the embedding and
the output layer balance them (Dubey et al. 2024, Sec. 3.3.2; 126 layers on 16 ranks of
8 one-layer chunks leave the first chunk with only the embedding and the last with only
the output projection and loss). Any other split is rejected: 80 layers on 73 ranks
would leave 7 ranks with two layers and 66 with one, so the pipeline would run at the
pace of the busiest rank with most of the others idle half the time.

Where the model's last stage is heavier than its first (an output layer wider than a
layer's work, DeepSeek-V3's MTP module and second output head), the layers short of an
even split may all come off the last chunk instead (``split_variants``): Megatron-Core
sets the first and the last stage's layer counts apart from the rest
(``--decoder-first-pipeline-num-layers``, ``--decoder-last-pipeline-num-layers``), and
the planner takes whichever variant leaves its slowest stage fastest
(``balanced_split``).

Peak activations per rank, counted in micro-batches of one chunk ("chunk units"):
1F1B keeps min(p - r, m) micro-batches in flight on rank r (Narayanan et al. 2021, Sec.
2.2.1); ZB-H1 the same and ZB-H2 min(2(p - r) - 1, m) (Qi et al. 2024, Sec. 2 and Table
2); the interleaved schedule as Megatron-LM runs it (schedules.py, forward_backward_
pipelining_with_interleaving) does 2(p - r - 1) + (v - 1)p warm-up forwards, then one
more before the first backward, each group of p consecutive micro-batches on the next
chunk. Rank 0 then holds p + (p - 1)/v micro-batches' worth of its layers, Korthikanti
et al. 2022's interleaving penalty (Sec. 4.2.3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from calculators.core.i18n import N_, _

if TYPE_CHECKING:
    from collections.abc import Callable

#: The pipeline schedules the planner and the memory model know (schedules.SCHEDULES).
PIPELINE_SCHEDULES = ("1f1b", "interleaved", "zb_h1", "zb_h2", "dualpipe", "dualpipev")
#: Where a rank's chunks sit. "loop": chunk j on rank j mod p (Megatron-LM's
#: interleaving; one chunk per rank otherwise). "v": 2p chunks, rank r runs chunks r and
#: 2p-1-r (DualPipeV, deepseek-ai/DualPipe examples/example_dualpipev.py). "dual": the
#: model in p stages, rank r holding stage r and a copy of stage p-1-r (DualPipe,
#: examples/example_dualpipe.py), each micro-batch running through one of the two.
PLACEMENTS = ("loop", "v", "dual")
#: At most this many layers fewer than the even share, on the first and the last chunk.
MAX_LIGHT_CHUNKS = 2


class SplitError(ValueError):
    """A layer count that does not cut into the requested stages."""


_WORDS = {"layer": (N_("layer"), N_("layers")), "block": (N_("block"), N_("blocks")),
          "chunk": (N_("chunk"), N_("chunks")), "stage": (N_("stage"), N_("stages"))}


@dataclass(frozen=True)
class StageSplit:
    """``layers`` over ``stages`` ranks of ``chunks_per_rank`` chunks: every chunk has
    ``per_chunk`` layers except the model's first chunk, ``first_fewer`` fewer, and its
    last, ``last_fewer`` fewer (Llama 3's split: one each, or one on the first).
    ``placement`` (one of ``PLACEMENTS``) says which chunks each rank holds."""

    layers: int
    stages: int
    chunks_per_rank: int
    per_chunk: int
    first_fewer: int
    last_fewer: int
    placement: str = "loop"

    @property
    def model_chunks(self) -> int:
        """Chunks the model is cut into (DualPipe: one per rank, each held twice)."""
        return self.stages if self.placement == "dual" else self.stages * self.chunks_per_rank

    def rank_chunks(self, rank: int) -> tuple[int, ...]:
        """The model's chunks held by ``rank``, in the order of its chunk index c."""
        p = self.stages
        if self.placement == "v":
            return (rank, 2 * p - 1 - rank)
        if self.placement == "dual":
            return (rank, p - 1 - rank)
        return tuple(c * p + rank for c in range(self.chunks_per_rank))

    @property
    def compute_share(self) -> float:
        """The share of a rank's layers each micro-batch runs through: 1/2 under
        DualPipe (a micro-batch fed from either end runs on one of the two copies)."""
        return 0.5 if self.placement == "dual" else 1.0

    def holds_first(self, rank: int) -> bool:
        """Whether ``rank`` holds the model's first chunk (the embedding)."""
        if self.placement == "loop":  # the search's hot path
            return rank == 0
        return 0 in self.rank_chunks(rank)

    def holds_last(self, rank: int) -> bool:
        """Whether ``rank`` holds the model's last chunk (the output layer)."""
        if self.placement == "loop":  # chunk p v - 1 sits on rank p - 1
            return rank == self.stages - 1
        return self.model_chunks - 1 in self.rank_chunks(rank)

    def compute_layers(self, rank: int) -> float:
        """Layers ``rank`` runs per micro-batch (its layers x ``compute_share``)."""
        return self.rank_layers(rank) * self.compute_share

    def output_share(self, rank: int) -> float:
        """The share of the output layer's work ``rank`` does per micro-batch."""
        return self.compute_share if self.holds_last(rank) else 0.0

    @property
    def light(self) -> int:
        """Layers short of ``per_chunk`` on every chunk."""
        return self.first_fewer + self.last_fewer

    @property
    def even(self) -> bool:
        return self.light == 0

    def global_chunk_layers(self, j: int) -> int:
        """Layers of the model's ``j``-th chunk."""
        last = self.model_chunks - 1
        if last == 0:
            return self.per_chunk - self.light
        return self.per_chunk - (self.first_fewer if j == 0 else 0) - (
            self.last_fewer if j == last else 0)

    def chunk_start(self, j: int) -> int:
        """The index of the first layer of the model's ``j``-th chunk."""
        return 0 if j == 0 else j * self.per_chunk - self.first_fewer

    def chunk_layers(self, rank: int, chunk: int) -> int:
        """Layers of the ``chunk``-th chunk on ``rank`` (global chunk chunk*p + rank when
        interleaved; ``rank_chunks`` for the V and DualPipe placements)."""
        if self.placement == "loop":
            return self.global_chunk_layers(chunk * self.stages + rank)
        return self.global_chunk_layers(self.rank_chunks(rank)[chunk])

    def describe(self, noun: str = "layer") -> str:
        """The split in words when it is uneven ("" when even): "3 layers on the first
        stage, 4 on each of the 14 stages between, 3 on the last"."""
        if self.even:
            return ""
        chunks = self.model_chunks
        unit = "chunk" if chunks > self.stages else "stage"
        first, last = self.global_chunk_layers(0), self.global_chunk_layers(chunks - 1)
        between, nouns, units = chunks - 2, _WORDS[noun], _WORDS[unit]
        head = (_("no {noun} on the first {unit} (the embedding alone)") if first == 0 else
                _("{count} {noun} on the first {unit}")).format(
            count=first, noun=_(nouns[first > 1]), unit=_(units[0]))
        tail = (_("none on the last (the output layer alone)") if last == 0 else
                _("{count} on the last").format(count=last))
        if not between:
            return _("{first}, {last}").format(first=head, last=tail)
        middle = (_("{count} on each of the {between} {units} between") if between > 1 else
                  _("{count} on the {unit} between")).format(
            count=self.per_chunk, between=between, unit=_(units[0]), units=_(units[1]))
        return _("{first}, {middle}, {last}").format(first=head, middle=middle, last=tail)

    def weighed_ranks(self, period: int) -> tuple[int, ...]:
        """Ranks that stand for every rank of a stack whose layer kinds repeat every
        ``period`` layers: the two that hold the model's ends, and the first ``period``
        between. A middle rank's chunks start at a multiple of the chunk length (plus a
        constant), so their kinds repeat with the rank at a period dividing ``period``,
        and a rank past those repeats one before it (9,933 layers on thousands of
        stages weighed each rank: 1.4 s)."""
        last = self.stages - 1
        return tuple(sorted({0, last, *range(1, min(last, period + 1))}))

    def rank_layer_indices(self, rank: int) -> tuple[int, ...]:
        """The model's layers that ``rank`` holds, by index, chunk by chunk."""
        held: list[int] = []
        for j in self.rank_chunks(rank):
            start = self.chunk_start(j)
            held.extend(range(start, start + self.global_chunk_layers(j)))
        return tuple(held)

    def rank_layers(self, rank: int) -> int:
        if rank in self._interesting_layers:
            return self._interesting_layers[rank]
        return sum(self.chunk_layers(rank, c) for c in range(self.chunks_per_rank))

    @cached_property
    def _interesting_layers(self) -> dict[int, int]:
        return {r: sum(self.chunk_layers(r, c) for c in range(self.chunks_per_rank))
                for r in self.ranks_of_interest}

    @property
    def max_rank_layers(self) -> int:
        """Layers on the busiest rank (a middle rank when the ends are light)."""
        return max(self.rank_layers(r) for r in self.ranks_of_interest)

    @property
    def ranks_of_interest(self) -> tuple[int, ...]:
        """Rank 0 (embedding, most micro-batches in flight), rank 1 (the fullest middle
        rank: middle ranks hold equal layers, rank 1 the most in flight) and the last
        rank (output layer). Every other rank holds no more than one of these."""
        p = self.stages
        return tuple(sorted({0, min(1, p - 1), p - 1}))


def schedule_layout(schedule: str, stages: int, virtual_stages: int = 1) -> tuple[int, str]:
    """(chunks per rank, placement) of a schedule on ``stages`` ranks: interleaving's v
    chunks in a loop, DualPipeV's two in a V, DualPipe's stage and its mirror copy; one
    chunk otherwise (and always without a pipeline)."""
    if stages <= 1:
        return 1, "loop"
    if schedule == "interleaved":
        return virtual_stages, "loop"
    if schedule == "dualpipev":
        return 2, "v"
    if schedule == "dualpipe":
        return 2, "dual"
    return 1, "loop"


def split_layers(layers: int, stages: int, chunks_per_rank: int = 1,
                 placement: str = "loop") -> StageSplit:
    """The split of ``layers`` over ``stages`` x ``chunks_per_rank`` chunks, or SplitError.

    Accepted: even, or with the first (and last) chunk one layer short (Llama 3, Sec.
    3.3.2). Every rank must keep at least one layer.
    """
    return split_variants(layers, stages, chunks_per_rank, placement)[0]


def split_variants(layers: int, stages: int, chunks_per_rank: int = 1,
                   placement: str = "loop") -> tuple[StageSplit, ...]:
    """Every accepted split of ``layers``, Llama 3's first (``split_layers``), then, when
    some chunks are short, the one with every short layer taken off the last chunk (for a
    heavy last stage); or SplitError. A variant that empties a chunk is left out.
    DualPipe's placement needs an even number of stages (each rank pairs a stage with
    its mirror), and both its and DualPipeV's two chunks per rank."""
    if layers < 1 or stages < 1 or chunks_per_rank < 1:
        raise SplitError("layers, stages and chunks per rank must be >= 1")
    if placement != "loop" and (chunks_per_rank != 2 or stages < 2):
        raise SplitError(_("the {placement} placement runs two chunks per rank on two or "
                           "more ranks").format(placement=placement))
    if placement == "dual" and stages % 2:
        raise SplitError(_("DualPipe pairs each stage with its mirror: {stages} stages "
                           "are not even").format(stages=stages))
    chunks = stages if placement == "dual" else stages * chunks_per_rank
    per_chunk = math.ceil(layers / chunks)
    light = per_chunk * chunks - layers
    if light > MAX_LIGHT_CHUNKS:
        raise SplitError(_(
            "{layers} layers do not split into {chunks} equal pipeline chunks ({stages} "
            "stages x {per_rank}); at most the first and last chunk may hold one layer "
            "fewer (Llama 3's balance)").format(layers=layers, chunks=chunks, stages=stages,
                                                per_rank=chunks_per_rank))
    first = min(1, light)
    llama = StageSplit(layers, stages, chunks_per_rank, per_chunk, first, light - first,
                       placement)
    if min(llama.rank_layers(r) for r in llama.ranks_of_interest) < 1:
        raise SplitError(_("{layers} layers leave a pipeline stage of {stages} empty").format(
            layers=layers, stages=stages))
    variants = [llama]
    if light and chunks > 1 and per_chunk - light >= 1:
        variants.append(StageSplit(layers, stages, chunks_per_rank, per_chunk, 0, light,
                                   placement))
    return tuple(variants)


def balanced_split(variants: tuple[StageSplit, ...],
                   rank_seconds: Callable[[StageSplit, int], float], *,
                   every_rank: int = 0) -> StageSplit:
    """The variant whose slowest rank of interest takes least (``rank_seconds`` of a
    split and a rank, per micro-batch); ties go to the earlier (Llama 3's split, which
    also keeps the first rank, the one with the most micro-batches in flight, light).
    ``every_rank``: the period of a stack of layer kinds; then every rank is weighed
    (layers of different kinds make any rank the slowest, not only the ranks of
    interest), through ``weighed_ranks``."""
    best, best_s = variants[0], math.inf
    for split in variants:
        ranks = split.weighed_ranks(every_rank) if every_rank else split.ranks_of_interest
        slowest = max(rank_seconds(split, r) for r in ranks)
        if slowest < best_s * (1.0 - 1e-9):
            best, best_s = split, slowest
    return best


def chunks_in_flight(schedule: str, stages: int, micro_batches: int, rank: int,
                     chunks_per_rank: int = 1) -> tuple[int, ...]:
    """Micro-batches whose activations ``rank`` holds at its peak, per chunk it runs.

    DualPipe and DualPipeV, counted from the warm-up of the reference implementation
    (deepseek-ai/DualPipe, ``step``: 2(n - h - 1) forwards of the near chunk, then h + 1
    pairs of both, then B-W-F triples, then the steady F B F B): the near chunk holds
    n - h and the far one h + 1 at the peak, n + 1 in all, the README's "PP + 1". For
    DualPipe on p ranks n = p, h = min(r, p-1-r), stage h near and stage p-1-h far; for
    DualPipeV n = 2p, h = r, chunk r near and chunk 2p-1-r far.
    """
    p, m, r = stages, micro_batches, rank
    if p == 1:  # no pipeline: one micro-batch at a time through every chunk
        return (min(1, m),) * chunks_per_rank
    if schedule == "dualpipe":
        h = min(r, p - 1 - r)
        half = m // 2  # each direction feeds half the micro-batches
        near, far = min(p - h, half), min(h + 1, half)
        return (near, far) if r == h else (far, near)  # (stage r, stage p-1-r)
    if schedule == "dualpipev":
        return (min(2 * p - r, m), min(r + 1, m))
    if schedule in ("1f1b", "zb_h1"):
        return (min(p - r, m),)
    if schedule == "zb_h2":
        return (min(2 * (p - r) - 1, m),)
    if schedule != "interleaved":
        raise ValueError(f"unknown pipeline schedule {schedule!r}")
    v = chunks_per_rank
    forwards = min(2 * (p - r - 1) + (v - 1) * p + 1, m * v)
    rounds, rest = divmod(forwards, p * v)
    return tuple(rounds * p + min(p, max(0, rest - c * p)) for c in range(v))


def layer_units_in_flight(split: StageSplit, schedule: str, micro_batches: int,
                          rank: int) -> int:
    """Layer-micro-batches whose activations ``rank`` holds at its peak: the sum over its
    chunks of (micro-batches in flight) x (layers in the chunk)."""
    counts = chunks_in_flight(schedule, split.stages, micro_batches, rank,
                              split.chunks_per_rank)
    return sum(n * split.chunk_layers(rank, c) for c, n in enumerate(counts))

