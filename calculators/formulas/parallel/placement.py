"""Which GPUs a parallel group puts in the same scale-up (NVLink) domain.

A layout is a small record of named dimensions whose sizes multiply to the GPU count.
Ranks are numbered with the first dimension of ``RANK_ORDER`` fastest, as Megatron-Core
does by default (``--order tp-cp-ep-dp-pp``: tensor, context, expert, data, pipeline);
Llama 3 uses [TP, CP, PP, DP] (Dubey et al. 2024, Sec. 3.3.2). A scale-up domain is a
block of consecutive ranks: 8 GPUs in a DGX/HGX node, 72 in a GB200 NVL72 rack. A group
of dimension X has members ``stride`` apart, stride the product of the sizes before X,
and how many of them share a domain decides whether its collectives run on NVLink or
also cross the network. A new dimension (expert parallelism) is one more field and one
more name in the order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators.core.i18n import _

#: Megatron-Core's default rank order (parallel_state.initialize_model_parallel).
RANK_ORDER = ("tp", "cp", "dp", "pp")


@dataclass(frozen=True)
class Dims:
    """Sizes of the parallel dimensions: tensor, context, data and pipeline; and, for a
    mixture of experts, expert parallelism, which is folded into the GPUs of a pipeline
    stage rather than multiplied in (formulas.moe.planner): ``ep`` does not enter
    ``gpus`` or ``RANK_ORDER``."""

    tp: int = 1
    cp: int = 1
    dp: int = 1
    pp: int = 1
    ep: int = 1

    @property
    def gpus(self) -> int:
        return self.tp * self.cp * self.dp * self.pp

    def summary(self, *, experts: bool = False) -> str:
        """Every dimension, so that the words multiply to the GPU count (issue 37: a
        summary without CP read as a quarter of the GPUs); EP, folded into the stage's
        GPUs rather than multiplied in, after them for a mixture of experts."""
        text = (_("TP {tp:,} x CP {cp:,} x PP {pp:,} x DP {dp:,} = {gpus:,} GPUs, EP {ep:,}")
                if experts else _("TP {tp:,} x CP {cp:,} x PP {pp:,} x DP {dp:,} = {gpus:,} GPUs"))
        return text.format(tp=self.tp, cp=self.cp, pp=self.pp, dp=self.dp, gpus=self.gpus,
                           ep=self.ep)

    def size(self, name: str) -> int:
        return int(getattr(self, name))

    def stride(self, name: str) -> int:
        """Rank distance between neighbours of a ``name`` group."""
        stride = 1
        for other in RANK_ORDER:
            if other == name:
                return stride
            stride *= self.size(other)
        raise ValueError(f"unknown parallel dimension {name!r}")

    def label(self) -> str:
        """TP x CP x PP x DP, the order the guide's tables use (and the EP size when
        experts are split)."""
        dense = f"{self.tp}x{self.cp}x{self.pp}x{self.dp}"
        return dense if self.ep == 1 else f"{dense}, EP {self.ep}"


def members_per_domain(stride: int, size: int, domain: int) -> int:
    """How many members of a group (``size`` ranks, ``stride`` apart) share one domain of
    ``domain`` consecutive ranks, taken equal for every domain the group touches: the
    largest divisor of ``size`` that fits (gcd). A group whose stride does not divide
    the domain is counted with one member per domain (some of its links cross; the
    slowest link sets the pace)."""
    if size <= 1:
        return 1
    if domain % stride:
        return 1
    return math.gcd(size, domain // stride)


def group_per_domain(dims: Dims, names: tuple[str, ...], domain: int) -> tuple[int, int]:
    """(size, members per domain) of the group spanning the dimensions ``names``, which
    must be adjacent in ``RANK_ORDER`` (e.g. ("cp", "dp"): the gradient-reduction group
    of Megatron-Core, data parallel with context parallel)."""
    size = math.prod(dims.size(n) for n in names)
    return size, members_per_domain(dims.stride(names[0]), size, domain)
