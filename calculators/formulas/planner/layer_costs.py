"""One layer's costs at one width (TP, CP, micro-batch) on one GPU: its compute, priced
operation by operation (formulas.kernels.dense_layer), and its tensor-parallel traffic,
with what of that hides behind which GEMM (Options.tp_overlap). The search meets the
same few widths many times: ``DenseStack`` computes each once."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from calculators.formulas.kernels.dense_layer import layer_times, output_times
from calculators.formulas.planner.layout_cost import ALL_RECOMPUTE_MODES

if TYPE_CHECKING:
    from calculators.formulas.kernels.dense_layer import LayerTimes, Machine
    from calculators.formulas.model.architecture import Architecture
    from calculators.formulas.planner.layout import Options
    from calculators.formulas.planner.layout_cost import CollectiveCache


def exposed(comm_s: float, window_s: float, overlap: float) -> float:
    """What a collective of ``comm_s`` adds to the critical path when it may hide behind
    ``window_s`` of compute: the part that does not fit, plus ``1 - overlap`` of the part
    that does (the compute it shares the GPU with runs that much slower)."""
    hidden = min(comm_s, window_s)
    return comm_s - hidden + (1.0 - overlap) * hidden


class TpLayer(NamedTuple):
    """One layer's tensor-parallel traffic for one micro-batch: seconds on the critical
    path, bytes each GPU sends, and the share of them across the scale-up domain."""

    exposed_s: float
    bytes_sent: float
    inter_share: float


def tp_layer(times: LayerTimes, cache: CollectiveCache, *, tp: int, per_domain: int,
             options: Options, overlap: float) -> dict[str, TpLayer]:
    """Megatron's tensor-parallel traffic of one layer, by recomputation mode.

    Without sequence parallelism, an allreduce of the layer's activation after the
    attention block and after the MLP, forward, and of the input gradient of the QKV
    projection and of the first MLP matrix, backward (Shoeybi et al. 2019, Sec. 3,
    Fig. 4). With it, each forward allreduce becomes an allgather before the column-
    parallel GEMM and a reduce-scatter after the row-parallel one; backward, an
    allgather of the output gradient before each row-parallel GEMM's, a reduce-scatter
    of each input gradient, and an allgather of each layer input again for the weight
    gradient (Korthikanti et al. 2022, Sec. 4.2.2). Full recomputation repeats the
    forward's traffic. What overlaps what is ``options.tp_overlap`` (TP_OVERLAPS)."""
    if tp <= 1:
        return dict.fromkeys(ALL_RECOMPUTE_MODES, TpLayer(0.0, 0.0, 0.0))
    size = times.activation_bytes
    mode = options.tp_overlap
    if mode == "full" and tp > per_domain:
        # Transformer Engine's userbuffers pipeline TP traffic with the GEMMs only over
        # NVLink, one scale-up domain (TransformerEngine issue 1071; multi-node NVLink
        # since PR 1470): across domains only NCCL's backward overlap remains.
        mode = "backward"
    if options.sp(tp):
        ag, rs = cache.run("allgather", size, tp, per_domain), cache.run(
            "reduce_scatter", size, tp, per_domain)
        forward = (2.0 * (ag[0] + rs[0]), 2.0 * (ag[1] + rs[1]), ag[2])
        # Backward: two gathers of the output gradient, then per column-parallel GEMM a
        # gather of its input (behind the input-gradient GEMM) and a reduce-scatter of
        # the input gradient (behind the weight-gradient GEMM).
        sent_b = 4.0 * ag[1] + 2.0 * rs[1]
        pairs = [(ag[0], d) for d in times.dgrad_windows_s] + [
            (rs[0], w) for w in times.wgrad_windows_s]
        upfront = 2.0 * ag[0]
    else:
        ar = cache.run("allreduce", size, tp, per_domain)
        forward = (2.0 * ar[0], 2.0 * ar[1], ar[2])
        sent_b = 2.0 * ar[1]
        pairs = [(ar[0], w) for w in times.wgrad_windows_s]
        upfront = 0.0
    if mode == "none":
        back = upfront + math.fsum(c for c, _ in pairs)
        fwd = forward[0]
    elif mode == "backward":
        back = upfront + math.fsum(exposed(c, w, overlap) for c, w in pairs)
        fwd = forward[0]
    else:
        back = exposed(upfront, math.fsum(times.dgrad_windows_s), overlap) + math.fsum(
            exposed(c, w, overlap) for c, w in pairs)
        fwd = exposed(forward[0], times.forward_gemm_s, overlap)
    share = forward[2]
    base = TpLayer(fwd + back, forward[1] + sent_b, share)
    full = TpLayer(base.exposed_s + fwd, base.bytes_sent + forward[1], share)
    return {"none": base, "selective": base, "light": base, "full": full}


@dataclass(frozen=True)
class StackWidth:
    """What one (TP, CP, micro-batch) costs per layer and micro-batch on one GPU: the
    layer's compute (``times``), its TP traffic by recomputation mode, and the output
    layer's compute on the last pipeline rank."""

    times: LayerTimes
    tp: dict[str, TpLayer]
    output_s: float


class DenseStack:
    """The per-width costs of a stack of identical dense layers, computed once per
    (TP, CP, micro-batch) and kept: a search meets the same few widths many times."""

    def __init__(self, arch: Architecture, machine: Machine, options: Options) -> None:
        self.arch, self.machine, self.options = arch, machine, options
        self._compute: dict[tuple[int, int, int], tuple[LayerTimes, float]] = {}
        self._widths: dict[tuple[int, int, int, int], StackWidth] = {}

    def compute(self, tp: int, cp: int, micro_batch: int) -> tuple[LayerTimes, float]:
        """One layer's compute and the output layer's, for one micro-batch."""
        key = (tp, cp, micro_batch)
        hit = self._compute.get(key)
        if hit is None:
            opts = self.options
            times = layer_times(self.arch, self.machine, tp=tp, cp=cp,
                                micro_batch=micro_batch, sequence_parallel=opts.sp(tp),
                                attention=opts.attention, dropout=opts.dropout,
                                act_bytes=opts.act_bytes)
            out = output_times(self.arch, self.machine, tp=tp, cp=cp, micro_batch=micro_batch)
            hit = self._compute[key] = (times, out.total_s)
        return hit

    def width(self, cache: CollectiveCache, *, tp: int, cp: int, micro_batch: int,
              tp_per_domain: int) -> StackWidth:
        """``compute`` with the layer's TP traffic on the cluster of ``cache``."""
        key = (tp, cp, micro_batch, tp_per_domain)
        hit = self._widths.get(key)
        if hit is None:
            times, output = self.compute(tp, cp, micro_batch)
            hit = self._widths[key] = StackWidth(
                times, tp_layer(times, cache, tp=tp, per_domain=tp_per_domain,
                                options=self.options, overlap=cache.cluster.overlap), output)
        return hit
