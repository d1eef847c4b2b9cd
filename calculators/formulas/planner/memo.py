"""What one search computes once per model and looks up thereafter: pipeline splits,
the parameters on each pipeline rank, a layer's activation bytes and ZeRO-3's gathered
weights."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.formulas.parallel import memory as mem
from calculators.formulas.parallel.stages import SplitError, split_variants
from calculators.formulas.planner.layout_cost import ALL_RECOMPUTE_MODES

if TYPE_CHECKING:
    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.parallel.memory import StateBytes
    from calculators.formulas.parallel.stages import StageSplit
    from calculators.formulas.planner.layout import Options

class Memo:
    """What a search computes once and looks up thereafter: pipeline splits by (stages,
    chunks), the ranks' parameters by (tp, stages, chunks), a layer's activation
    bytes by (tp, cp, micro-batch) and ZeRO-3's gathered weights by (tp, shard)."""

    def __init__(self, arch: Architecture, options: Options) -> None:
        self.arch, self.options = arch, options
        self._splits: dict[tuple[int, int], tuple[StageSplit, ...]] = {}
        self._per_layer: dict[tuple[int, int, int], dict[str, float]] = {}
        self._params: dict[tuple[int, StageSplit], tuple[float, ...]] = {}
        self._gathered: dict[tuple[int, int, float, bool], float] = {}

    def rank_params(self, tp: int, split: StageSplit) -> tuple[float, ...]:
        """Parameters on one GPU of each pipeline rank of interest."""
        key = (tp, split)
        hit = self._params.get(key)
        if hit is None:
            hit = self._params[key] = tuple(mem.params_on_rank(self.arch, split, rank, tp)
                                            for rank in split.ranks_of_interest)
        return hit

    def least_rank_params(self, tp: int, pp: int, chunks: int) -> tuple[float, ...]:
        """Per rank of interest, the fewest parameters any split variant puts there: a
        floor under every variant's (formulas.planner.floors)."""
        variants = self.splits(pp, chunks)
        if not variants:
            raise SplitError(f"{self.arch.layers} layers do not split into {pp} stages")
        return tuple(min(column) for column in zip(
            *(self.rank_params(tp, split) for split in variants), strict=True))

    def gathered(self, tp: int, per_param: StateBytes, shard: int, pp: int = 1) -> float:
        key = (tp, shard, per_param.weights, pp == 1)
        hit = self._gathered.get(key)
        if hit is None:
            hit = self._gathered[key] = mem.gathered_weight_bytes(
                self.arch, tp, per_param, shard, with_output=pp == 1)
        return hit

    def splits(self, pp: int, chunks: int) -> tuple[StageSplit, ...]:
        """Every accepted split (stages.split_variants), Llama 3's first; () if none.
        The chunks' placement is the search's schedule's (Options.placement)."""
        key = (pp, chunks)
        hit = self._splits.get(key)
        if hit is None:
            try:
                hit = split_variants(self.arch.layers, pp, chunks,
                                     self.options.placement(pp))
            except SplitError:
                hit = ()
            self._splits[key] = hit
        return hit

    def per_layer(self, tp: int, cp: int, micro_batch: int) -> dict[str, float]:
        key = (tp, cp, micro_batch)
        hit = self._per_layer.get(key)
        if hit is None:
            opts = self.options
            hit = {r: opts.act_bytes / 2.0 * mem.activation_bytes_per_layer(
                self.arch, micro_batch, tp, opts.sp(tp), r, attention=opts.attention,
                dropout=opts.dropout, cp=cp, input_bytes=opts.saved_input_bytes,
                lean_norms=opts.lean_norms)
                for r in ALL_RECOMPUTE_MODES}
            self._per_layer[key] = hit
        return hit
