"""Muon's optimizer step on a mixture of experts (formulas.kernels.muon): the layout
base's dense part and routed experts, each over the ranks that share its matrices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.formulas.kernels import muon
from calculators.formulas.planner.sizes import shard_groups

if TYPE_CHECKING:
    from calculators.formulas.kernels.gemm import GemmRate
    from calculators.formulas.moe.architecture import MoeArchitecture
    from calculators.formulas.planner.layout_cost import CollectiveCache


def moe_muon_s(model: MoeArchitecture, *, tp: int, dense_params: float, expert_params: float,
               edp: tuple[int, int], shard: tuple[int, int, int], zero_stage: int,
               cache: CollectiveCache, rate: GemmRate) -> float:
    """Muon's Newton-Schulz and the alltoalls to each matrix's owner and back
    (formulas.kernels.muon): the dense part's matrices counted as hidden x hidden
    squares of the same parameters (our simplification: MLA's and the shared
    expert's shapes vary), over the TP x shard ranks; the routed experts' hidden x
    ffn matrices over their EDP group. ``dense_params`` and ``expert_params`` are the
    fullest rank's; ``edp`` the expert-data-parallel group and its members per domain;
    ``shard`` the shard group's size, the CP x DP group and its members per domain
    (formulas.planner.sizes.shard_groups)."""
    sharded = zero_stage >= 1
    h, f = model.hidden, model.expert_ffn
    size, group, group_pd = shard
    dense = muon.muon_compute_s(((h, h, dense_params * tp / (h * h)),),
                                tp * (size if sharded else 1), rate)
    experts = muon.muon_compute_s(((h, f, expert_params / (h * f)),),
                                  edp[0] if sharded else 1, rate)
    moved = 0.0
    if sharded and size > 1:
        groups, _ = shard_groups(size, group, group_pd)
        moved += 2.0 * cache.run("alltoall", dense_params * 2.0 / size, *groups)[0]
    if sharded and edp[0] > 1:
        moved += 2.0 * cache.run("alltoall", expert_params * 2.0 / edp[0], *edp)[0]
    return dense + experts + moved
