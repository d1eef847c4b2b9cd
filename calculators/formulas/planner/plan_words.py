"""What the dense and the MoE planner both say of a layout (its micro-batch, recomputation
and sharding; its memory), written once so that both say it the same way and the
catalogue holds it once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.formulas.planner.ranking import RECOMPUTE_WORDS

if TYPE_CHECKING:
    from calculators.formulas.planner.layout import Cluster, Layout

GB = 1e9


def choices(lay: Layout) -> str:
    """Micro-batch, recomputation and sharding, as the planners' tables show them."""
    recompute = _(RECOMPUTE_WORDS[lay.recompute])
    if lay.zero_stage and lay.hybrid:
        return _("b={batch}, {recompute}, ZeRO {stage} in groups of {group}").format(
            batch=lay.micro_batch, recompute=recompute, stage=lay.zero_stage,
            group=lay.shard_group)
    return _("b={batch}, {recompute}, ZeRO {stage}").format(
        batch=lay.micro_batch, recompute=recompute, stage=lay.zero_stage)


def fullest_stage_note(best: Layout, cluster: Cluster) -> str:
    """Where the layout's memory goes on its fullest pipeline stage, in GB (SI), against
    what a layout may use on the cluster's GPU."""
    mem = best.memory
    return _(
        "Memory on {stage}, the fullest: {total:,.1f} GB of the {usable:,.1f} GB a layout "
        "may use: weights {weights:,.2f}, gradients {gradients:,.2f}, optimizer "
        "{optimizer:,.2f}, layers' activations {activations:,.2f}, embedding and output "
        "layer {outer:,.2f}, working {working:,.2f} GB.").format(
        stage=best.fullest_stage, total=mem.total / GB, usable=cluster.memory_bytes / GB,
        weights=mem.weights / GB, gradients=mem.gradients / GB,
        optimizer=mem.optimizer / GB, activations=mem.activations / GB,
        outer=mem.outer / GB, working=mem.working / GB)
