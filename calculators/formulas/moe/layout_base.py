"""One candidate layout of the expert-parallel planner (formulas.moe.planner): the dense
planner's per-(dims, micro-batch) base with the blocks, parameters, activations and
alltoall of a mixture of experts in place of uniform layers, and what each EP size
changes on it. The search, its pruning and its rules are in formulas.moe.planner."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.catalogues.host_links import host_side
from calculators.formulas.moe import layers as ml
from calculators.formulas.moe.block_times import MoeStack
from calculators.formulas.moe.expert_groups import block_alltoall
from calculators.formulas.moe.muon_step import moe_muon_s
from calculators.formulas.parallel import memory as mem
from calculators.formulas.parallel import offload
from calculators.formulas.parallel.placement import Dims, members_per_domain
from calculators.formulas.parallel.stages import chunks_in_flight
from calculators.formulas.planner import layout_cost as lc
from calculators.formulas.planner.base import LayoutBase
from calculators.formulas.planner.layout import Layout
from calculators.formulas.planner.layout_cost import ALL_RECOMPUTE_MODES
from calculators.formulas.planner.sizes import RECOMPUTE_MODES, shard_groups

if TYPE_CHECKING:
    from calculators.formulas.moe.expert_groups import ExpertComm
    from calculators.formulas.moe.shape import MoeArchitecture
    from calculators.formulas.planner.memo import Memo


#: Weights, gradients and optimizer bytes, one list each over the ranks of interest.
Columns = tuple[list[float], list[float], list[float]]


def _columns(params: list[float], per_param: mem.StateBytes, zero_stage: int,
             shard: int) -> Columns:
    rows = [mem.model_state_bytes(p, per_param, zero_stage, shard) for p in params]
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


class _Experts:
    """What one EP size changes on a (dims, micro-batch): the expert parameters per GPU,
    the expert-data-parallel group, one block's alltoall and what of it stays exposed."""

    def __init__(self, base: _MoeBase, ep: int) -> None:
        cl, dims = base.cluster, base.dims
        self.ep = ep
        self.dims = Dims(tp=dims.tp, cp=dims.cp, dp=dims.dp, pp=dims.pp, ep=ep)
        self.params = [p / ep for p in base.expert_params]
        self.max_params = max(self.params)
        self.ep_max = max(base.kinds[k].ep_params for k in base.present)
        self.edp = dims.tp * dims.cp * dims.dp // ep
        self.edp_pd = members_per_domain(ep, self.edp, cl.gpus_per_node)
        self.a2a = block_alltoall(base.model, base.comm, cl, tokens=base.tokens, ep=ep)
        a2a = self.a2a.time_s
        self.exposed = a2a - cl.overlap * min(a2a, base.hide)
        self.slots: dict[str, tuple[int, float, float]] = {}
        self.states: dict[int, Columns] = {}
        self.peaks: dict[tuple[str, int, int], tuple[int, float, float]] = {}


class _MoeBase(LayoutBase):
    """One (TP, CP, PP, DP, micro-batch): the dense planner's base, with the blocks,
    parameters and activations of the MoE in place of uniform layers; each EP size is
    an ``_Experts`` on top of it."""

    def __init__(self, model: MoeArchitecture, comm: ExpertComm, kinds: tuple[ml.Block, ...],
                 dense_memo: Memo, *, arch_memo: Memo, **kw: object) -> None:
        super().__init__(memo=arch_memo, **kw)  # type: ignore[arg-type]
        dims, b, m = self.dims, self.b, self.m
        tp, cp, pp = dims.tp, dims.cp, dims.pp
        self.model, self.comm, self.kinds = model, comm, kinds
        split = self.split  # the dense base's, or the one the MoE planner chose
        seq = arch_memo.arch.seq_len
        self.tokens = b * seq / cp / tp
        self.blocks = [ml.rank_blocks(model, split, ld.rank, chunks_in_flight(
            self.schedule, pp, m, ld.rank, self.chunks)) for ld in self.loads]
        stack = kw["stack"]
        assert isinstance(stack, MoeStack)
        self.kind_times = stack.kinds(tp, cp, b)
        self.host = host_side(self.cluster.machine.speed.accelerator)
        output = stack.compute(tp, cp, b)[1]
        #: Per rank of interest: forward and backward seconds of its blocks for one
        #: micro-batch (the last rank's backward includes the output layer). Under
        #: DualPipe a micro-batch runs on one of the rank's two copies: ``share`` 1/2.
        self.share = share = split.compute_share
        self.forward = [share * math.fsum(n * t.forward_s for n, t in zip(
            rb.counts, self.kind_times, strict=True)) for rb in self.blocks]
        self.backward = [share * math.fsum(n * t.backward_s for n, t in zip(
            rb.counts, self.kind_times, strict=True)) + split.output_share(rb.rank) * output
            for rb in self.blocks]
        self.compute = [f + bw for f, bw in zip(self.forward, self.backward, strict=True)]
        routed = self.kind_times[ml.MOE]
        self.cover = routed.forward_s + routed.backward_s  # one routed block, one micro-batch
        self.hide = self.cover if comm.overlap == "batch" and m >= 2 else 0.0
        self.tp_params = [(math.fsum(n * k.tp_params for n, k in zip(rb.counts, kinds,
                                                                     strict=True))
                           + ml.embedding_params_on(model, rb.rank, pp, split)) / tp
                          for rb in self.blocks]
        self.expert_params = [math.fsum(n * k.ep_params for n, k in zip(rb.counts, kinds,
                                                                       strict=True))
                              for rb in self.blocks]
        extra = self.tokens * self.scale
        self.act: list[dict[str, float]] = []  # per kind: one block, one micro-batch
        for kind, blk in zip(ml.KINDS, kinds, strict=True):
            base = (dense_memo if kind == ml.DENSE else arch_memo).per_layer(tp, cp, b)
            kept = {r: base[r] + (0.0 if r == "full" else blk.extra_bytes * extra)
                    - (blk.up_projection_bytes * extra if r == "light" else 0.0)
                    for r in ALL_RECOMPUTE_MODES}  # light keeps at least what full does
            self.act.append({r: max(v, kept["full"]) for r, v in kept.items()})
        mtp_logits = model.mtp_modules * mem.output_layer_bytes(arch_memo.arch, b, tp, cp)
        self.outer = [(ld.outer + (mtp_logits if split.holds_last(ld.rank) else 0.0))
                      * self.scale
                      for ld in self.loads]
        self.acts = {r: [math.fsum(u * a[r] for u, a in zip(rb.units, self.act, strict=True))
                         for rb in self.blocks] for r in ALL_RECOMPUTE_MODES}
        self.dense_states: dict[tuple[int, int], Columns] = {}
        self.dense_max = max(self.tp_params)
        #: The kinds of block the model has, the largest one's TP part, and one block's
        #: whole activations (what full recomputation rebuilds at a time).
        self.present = [k for k, n in zip(ml.KINDS, (model.dense_layers, model.moe_layers,
                                                     model.mtp_modules), strict=True) if n]
        self.largest_tp = max(kinds[k].tp_params for k in self.present)
        self.output_params = float(arch_memo.arch.vocab * arch_memo.arch.hidden)
        self.full_working = max(self.act[k]["none"] for k in self.present)
        self.dense_dp: dict[tuple[str, int, int, int], lc.DpCost] = {}

    def ranks_of_interest(self) -> tuple[int, ...]:
        return ml.ranks_of_interest(self.model, self.split)

    def experts(self, ep: int) -> _Experts:
        return _Experts(self, ep)

    def _slot(self, ex: _Experts, recompute: str) -> tuple[int, float, float]:
        """(index of the slowest rank, its slot less the pipeline sends, its recompute)."""
        hit = ex.slots.get(recompute)
        if hit is None:
            per_block = self.tp_layer[recompute].exposed_s + self.cp_layer[1]
            rec = [t.recompute_s(recompute) for t in self.kind_times]
            best = (0, -1.0, 0.0)
            for i, (c, rb) in enumerate(zip(self.compute, self.blocks, strict=True)):
                again = self.share * math.fsum(n * r for n, r in zip(rb.counts, rec,
                                                                      strict=True))
                slot = (c + again + self.share * (rb.blocks * per_block
                                                  + rb.routed_blocks * ex.exposed))
                if offload.offloads_activations(self.options.offload):
                    # This rank's activations of one micro-batch, down and back up.
                    per_mb = math.fsum(n * a[recompute] for n, a in zip(
                        rb.counts, self.act, strict=True))
                    slot += offload.activation_offload_s(
                        per_mb, self.forward[i], self.backward[i] + again, self.host,
                        overlap=self.cluster.overlap)
                if slot > best[1]:
                    best = (i, slot, again)
            hit = ex.slots[recompute] = best
        return hit

    def smallest_memory(self, ex: _Experts, modes: tuple[str, ...] = RECOMPUTE_MODES,
                        shardings: tuple[tuple[int, int], ...] = ()) -> float:
        """The least memory any allowed choice leaves (by default ZeRO-2 or 3 over the
        whole group, each recomputation: full recomputation's working buffer can outweigh
        what it saves): an EP size above capacity here is not costed, and a search that
        finds nothing reports it."""
        choices = shardings or tuple((z, self.group) for z in (2, 3))
        return min(self._peak(ex, r, z, s)[1] for z, s in choices for r in modes)

    def fits(self, ex: _Experts, recompute: str, zero_stage: int, shard: int) -> bool:
        return self._peak(ex, recompute, zero_stage, shard)[1] <= self.cluster.memory_bytes

    def moe_step_floor(self, ex: _Experts, recompute: str) -> float:
        """The step time of every choice with this recomputation, less its exposed
        data-parallel time (never negative): a floor under all of them."""
        return self.m * (self._slot(ex, recompute)[1] + self.pp_mb) * (1.0 + self.bubble)

    def moe_step_s(self, ex: _Experts, recompute: str, zero_stage: int, shard: int) -> float:
        """One choice's step time, as its Layout has it, without building the Layout."""
        return (self.moe_step_floor(ex, recompute)
                + self._dp(ex, recompute, zero_stage, shard)[1]
                + self._optimizer(ex, zero_stage, shard))

    def _optimizer(self, ex: _Experts, zero_stage: int, shard: int) -> float:
        """The optimizer step over the fullest rank's shards: the TP part over its
        sharding group, the experts over their EDP group."""
        sharded = zero_stage >= 1
        local = (self.dense_max / (shard if sharded else 1)
                 + ex.max_params / (ex.edp if sharded else 1))
        if offload.offloads_optimizer(self.options.offload):
            i = self._slot(ex, "none")[0]
            step = offload.optimizer_offload(local, self.per_param, self.host,
                                             backward_s=self.backward[i],
                                             overlap=self.cluster.overlap).exposed_s
        else:
            step = lc.optimizer_time_s(local, self.per_param, self.cluster.machine)
        if not self.options.muon:
            return step
        return step + moe_muon_s(
            self.model, tp=self.dims.tp, dense_params=self.dense_max,
            expert_params=ex.max_params, edp=(ex.edp, ex.edp_pd),
            shard=(shard, self.group, self.group_pd), zero_stage=zero_stage,
            cache=self.cache, rate=self.cluster.machine.gemm)

    def _dp(self, ex: _Experts, recompute: str, zero_stage: int,
            shard: int) -> tuple[float, float, float, float]:
        """(time, exposed time, bytes sent, bytes across nodes) of the data-parallel
        traffic of one choice: the dense part's, and the experts' over their EDP group."""
        m, cl = self.m, self.cluster
        i, _, recompute_mb = self._slot(ex, recompute)
        hides = self.options.dp_overlap
        forward = self.forward[i] if hides else 0.0
        backward = self.backward[i] + recompute_mb if hides else 0.0
        g, w = self.per_param.gradients, self.per_param.wide_weights
        key = (recompute, zero_stage, shard, i)
        dense_dp = self.dense_dp.get(key)
        if dense_dp is None:
            dense_p = self.dense_max
            groups, replicas = shard_groups(shard, self.group, self.group_pd)
            dense_dp = self.dense_dp[key] = lc.dp_cost(
                self.cache, zero_stage, groups, replicas, grads=dense_p * g, weights=dense_p * w,
                micro_batches=m, forward_s=forward, backward_s=backward,
                overlap=cl.overlap)
        dp_time, dp_exposed, dp_sent, dp_inter = dense_dp
        expert_p = ex.max_params
        if expert_p > 0 and ex.edp > 1:
            more = lc.dp_cost(self.cache, zero_stage, (ex.edp, ex.edp_pd), 1,
                              grads=expert_p * g, weights=expert_p * w, micro_batches=m,
                              forward_s=forward, backward_s=backward, overlap=cl.overlap)
            dp_time, dp_sent = dp_time + more.time_s, dp_sent + more.bytes_sent
            dp_inter += more.inter_bytes
            # Both hide behind the same compute: no more than the overlap share of it.
            cover = backward if zero_stage <= 1 else m * (backward + (
                forward if zero_stage >= 3 else 0.0))
            dp_exposed = max(dp_exposed + more.exposed_s, dp_time - cl.overlap * cover)
        return dp_time, dp_exposed, dp_sent, dp_inter

    def layout(self, ex: _Experts, recompute: str,  # type: ignore[override]
               zero_stage: int, shard: int) -> Layout:
        m, cl, tp = self.m, self.cluster, self.tp_layer[recompute]
        cp_total, cp_exposed, cp_bytes = self.cp_layer
        i, slot, recompute_mb = self._slot(ex, recompute)
        rb, compute = self.blocks[i], self.compute[i]
        slot += self.pp_mb
        dp_time, dp_exposed, dp_sent, dp_inter = self._dp(ex, recompute, zero_stage, shard)
        memory = self._memory(ex, recompute, zero_stage, shard)
        blocks, routed, a2a = self.share * rb.blocks, self.share * rb.routed_blocks, ex.a2a
        tp_bytes = m * blocks * tp.bytes_sent
        optimizer = self._optimizer(ex, zero_stage, shard)
        cp_sent, pp_bytes = m * blocks * cp_bytes, m * self.pp_mb_bytes
        inter = (tp_bytes * tp.inter_share + cp_sent * self.cp_inter + pp_bytes * self.pp_inter
                 + dp_inter + m * routed * a2a.inter_bytes)
        return Layout(
            dims=ex.dims, micro_batch=self.b, recompute=recompute, zero_stage=zero_stage,
            shard_group=shard, schedule=self.schedule, chunks=self.chunks, micro_batches=m,
            memory=memory, fits=memory.total <= cl.memory_bytes, bubble_fraction=self.bubble,
            compute_s=m * compute, recompute_s=m * recompute_mb,
            bubble_s=self.bubble * m * slot, tp_s=m * blocks * tp.exposed_s,
            cp_s=m * blocks * cp_total, cp_exposed_s=m * blocks * cp_exposed,
            pp_s=m * self.pp_mb, dp_s=dp_time, dp_exposed_s=dp_exposed,
            tp_bytes=tp_bytes, cp_bytes=cp_sent, pp_bytes=pp_bytes, dp_bytes=dp_sent,
            inter_bytes=inter, tp_inter=self.tp_inter, cp_inter=self.cp_inter,
            pp_inter=self.pp_inter, dp_inter=self.dp_inter or ex.edp_pd < ex.edp,
            optimizer_s=optimizer,
            step_s=self.moe_step_floor(ex, recompute) + dp_exposed + optimizer,
            ep_s=m * routed * a2a.time_s, ep_exposed_s=m * routed * ex.exposed,
            ep_bytes=m * routed * (a2a.intra_bytes + a2a.inter_bytes),
            ep_inter_bytes=m * routed * a2a.inter_bytes, ep_cover_s=m * routed * self.cover,
            moe=True, stages=self.split.describe("block"))

    def _memory(self, ex: _Experts, recompute: str, zero_stage: int,
                shard: int) -> mem.Breakdown:
        """The breakdown of the pipeline rank that needs the most."""
        j, _, working = self._peak(ex, recompute, zero_stage, shard)
        (a, b, c), (d, e, f) = self._states(ex, zero_stage, shard)
        optimizer, gpu_acts = c[j] + f[j], self._gpu_acts(recompute)[j]
        host = self.acts[recompute][j] - gpu_acts
        if offload.offloads_optimizer(self.options.offload):
            optimizer, host = 0.0, host + optimizer
        return mem.Breakdown(a[j] + d[j], b[j] + e[j], optimizer, gpu_acts,
                             self.outer[j], working, self.blocks[j].rank, host)

    def _gpu_acts(self, recompute: str) -> list[float]:
        """Each rank's activations on the GPU: all of them, or with activation offload the
        two largest blocks' of one micro-batch (formulas.parallel.offload)."""
        acts = self.acts[recompute]
        if not offload.offloads_activations(self.options.offload):
            return acts
        block = max(a[recompute] for a in self.act)
        return [min(total, offload.RESIDENT_LAYERS * block) for total in acts]

    def _states(self, ex: _Experts, zero_stage: int, shard: int) -> tuple[Columns, Columns]:
        """(weights, gradients, optimizer) per rank of interest: the TP part, the experts."""
        dense = self.dense_states.get((zero_stage, shard))
        if dense is None:
            dense = self.dense_states[(zero_stage, shard)] = _columns(
                self.tp_params, self.per_param, zero_stage, shard)
        expert = ex.states.get(zero_stage)
        if expert is None:
            expert = ex.states[zero_stage] = _columns(ex.params, self.per_param, zero_stage,
                                                      ex.edp)
        return dense, expert

    def _peak(self, ex: _Experts, recompute: str, zero_stage: int,
              shard: int) -> tuple[int, float, float]:
        """(rank index, total bytes, working bytes) of the fullest rank, memoised."""
        key = (recompute, zero_stage, shard)
        hit = ex.peaks.get(key)
        if hit is not None:
            return hit
        working = self.cp_working + (self.full_working if recompute == "full" else 0.0)
        if zero_stage >= 3:  # the largest block's gathered weights and the next ones
            # (mem.gathered_weight_bytes: without a pipeline, the output layer with the
            # last block prefetched, when that is more).
            units = 2.0 * self.largest_tp
            if self.dims.pp == 1:
                units = max(units, self.largest_tp + self.output_params)
            gathered = units / self.dims.tp * (1.0 - 1.0 / shard)
            if ex.ep_max:
                gathered += 2.0 * ex.ep_max / ex.ep * (1.0 - 1.0 / ex.edp)
            working += gathered * self.per_param.weights
        (a, b, c), (d, e, f) = self._states(ex, zero_stage, shard)
        acts = self._gpu_acts(recompute)
        no_optimizer = offload.offloads_optimizer(self.options.offload)
        best, best_total = 0, -1.0
        for j in range(len(acts)):
            opt = 0.0 if no_optimizer else c[j] + f[j]
            total = a[j] + d[j] + b[j] + e[j] + opt + acts[j] + self.outer[j] + working
            if total > best_total:
                best, best_total = j, total
        hit = ex.peaks[key] = (best, best_total, working)
        return hit
