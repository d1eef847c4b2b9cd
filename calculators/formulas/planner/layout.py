"""A planner layout as records: the cluster it runs on, the choices the search holds
fixed, and one costed layout (its named dimensions, memory, times and bytes).

The dimensions are formulas.parallel.placement's ``Dims``; a new kind of parallelism (expert
parallelism) adds a field there, and its traffic a time and a byte count here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.core.i18n import N_, _
from calculators.formulas.parallel.schedules import DUAL_SCHEDULES, schedule_constraint
from calculators.formulas.parallel.stages import schedule_layout

if TYPE_CHECKING:
    from calculators.formulas.collectives.achieved import Fabric
    from calculators.formulas.kernels.dense_layer import Machine
    from calculators.formulas.parallel.memory import Breakdown
    from calculators.formulas.parallel.placement import Dims

#: Default overlap efficiency: overlapped compute ran 18.9% slower on average than
#: alone in "Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed
#: Deep Learning" (arXiv:2507.03114, 2025, abstract; A100, H100, MI250, MI210): when the
#: traffic is about as long as the compute it hides behind, about a fifth of it comes
#: back. Our reading of that figure, an assumption.
DEFAULT_OVERLAP = 0.8


@dataclass(frozen=True)
class Cluster:
    """The machines: how fast their kernels run (``machine``: formulas.kernels) and their
    links carry collectives (``fabric``: formulas.collectives.achieved), both measured;
    ``gpus_per_node`` is the scale-up (NVLink) domain; ``peak_flops`` the dense peak
    that MFU divides by; ``latency`` the per-step alpha of the alpha-beta models that
    context parallelism and expert alltoalls still use; ``memory_bytes`` what a layout
    may use per GPU (the capacity less the reserve); ``overlap`` the share of hidden
    traffic that really disappears (1 - the compute slowdown it causes)."""

    num_gpus: int
    gpus_per_node: int
    peak_flops: float
    machine: Machine
    fabric: Fabric
    latency: float
    memory_bytes: float
    overlap: float = DEFAULT_OVERLAP

    @property
    def intra_bandwidth(self) -> float:
        """B/s per GPU per direction a ring collective reaches inside the domain."""
        return self.fabric.intra_bandwidth * self.fabric.intra.ring_efficiency

    @property
    def inter_bandwidth(self) -> float:
        """B/s per GPU per direction a ring collective reaches through its NIC."""
        return self.fabric.inter_bandwidth * self.fabric.inter.ring_efficiency


#: How tensor-parallel traffic overlaps compute: not at all; in the backward only, each
#: input gradient reduced (and, with sequence parallelism, each layer input gathered
#: again) behind a weight- (input-) gradient GEMM, as Megatron-LM has done since 2021
#: (Korthikanti et al. 2022, Sec. 6.2: "the baseline backward overlaps its all-reduce
#: with the weight-gradient GEMM"); or everywhere, the forward's gathers and reductions
#: pipelined with its GEMMs too (Transformer Engine's userbuffers, Megatron-Core's
#: --tp-comm-overlap).
TP_OVERLAPS = ("none", "backward", "full")


@dataclass(frozen=True)
class Options:
    """Choices the search holds fixed (the reader's inputs). ``recompute`` None lets the
    search choose the recomputation; a mode fixes it."""

    schedule: str = "1f1b"
    virtual_stages: int = 2
    cp_method: str = "ring"
    attention: str = "fused"
    dropout: bool = False
    act_bytes: float = 2.0
    sequence_parallel: bool = True
    tp_overlap: str = "backward"
    dp_overlap: bool = True
    recompute: str | None = None
    #: Bytes per element of the GEMM inputs kept for the backward: 2 at 16 bits, the
    #: recipe's narrow format otherwise (formulas.model.recipes).
    saved_input_bytes: float = 2.0
    #: Muon: the optimizer step adds Newton-Schulz on whole matrices and the gathers
    #: that assemble them (formulas.kernels.muon).
    muon: bool = False
    #: What is kept in host memory (formulas.parallel.offload.OFFLOAD_MODES).
    offload: str = "none"
    lean_norms: bool = False
    zero_stage: int | None = None  # None: search the shardings

    def chunks(self, pp: int) -> int:
        """Model chunks per pipeline rank: v for the interleaved schedule, 2 for DualPipe
        (a stage and its mirror's copy) and DualPipeV, else 1 (stages.schedule_layout)."""
        return schedule_layout(self.schedule, pp, self.virtual_stages)[0]

    def placement(self, pp: int) -> str:
        """Where a rank's chunks sit (stages.PLACEMENTS)."""
        return schedule_layout(self.schedule, pp, self.virtual_stages)[1]

    def sends(self, pp: int) -> int:
        """Pipeline sends per micro-batch on an interior rank, forward + backward: two
        per chunk a micro-batch runs on it (DualPipe: one of its two copies)."""
        if pp <= 1:
            return 0
        return 2 if self.schedule == "dualpipe" else 2 * self.chunks(pp)

    def runs(self, pp: int, micro_batches: int) -> bool:
        """Whether the schedule runs ``micro_batches`` per step on ``pp`` ranks
        (schedules.schedule_constraint: interleaving's m a multiple of p, DualPipe's
        even p and m >= 2p, DualPipeV's m >= 2p). A layout without a pipeline does not
        run DualPipe or DualPipeV at all: the planner leaves it out rather than charge it
        the SMs those schedules reserve for communication."""
        if pp <= 1 and self.schedule in DUAL_SCHEDULES:
            return False
        return not schedule_constraint(self.schedule, pp, micro_batches, self.chunks(pp))

    def sp(self, tp: int) -> bool:
        """Whether sequence parallelism runs at this TP size."""
        return self.sequence_parallel and tp > 1

    def recompute_modes(self) -> tuple[str, ...]:
        """The recomputation modes the search tries: every one, or the one fixed."""
        if self.recompute is None:
            return ("none", "light", "selective", "full")
        return (self.recompute,)


@dataclass(slots=True)
class Layout:
    """One costed layout; times in seconds per optimizer step, bytes per GPU per step.
    ``shard_group`` is the number of GPUs the ZeRO stage shards over (all of DP x CP,
    or the part of it inside one scale-up domain for hybrid sharding). A result record,
    never changed after the search builds it; not frozen only because a frozen
    dataclass of this many fields takes ten times longer to build, and the search
    builds tens of thousands."""

    dims: Dims
    micro_batch: int
    recompute: str
    zero_stage: int
    shard_group: int
    schedule: str
    chunks: int
    micro_batches: int
    memory: Breakdown
    fits: bool
    bubble_fraction: float
    compute_s: float
    recompute_s: float
    bubble_s: float
    tp_s: float
    cp_s: float
    cp_exposed_s: float
    pp_s: float
    dp_s: float
    dp_exposed_s: float
    optimizer_s: float
    tp_bytes: float
    cp_bytes: float
    pp_bytes: float
    dp_bytes: float
    inter_bytes: float
    tp_inter: bool
    cp_inter: bool
    pp_inter: bool
    dp_inter: bool
    step_s: float
    #: Expert parallelism (formulas.moe.planner): the dispatch and combine alltoalls per
    #: step, the part not hidden, the bytes each GPU sends and those of them that leave
    #: the scale-up domain. Zero for a dense model, whose ``parts`` omit them.
    ep_s: float = 0.0
    ep_exposed_s: float = 0.0
    ep_bytes: float = 0.0
    ep_inter_bytes: float = 0.0
    #: The routed blocks' compute per step that the alltoalls could hide behind.
    ep_cover_s: float = 0.0
    moe: bool = False
    #: The pipeline's split of the layers in words when uneven (StageSplit.describe).
    stages: str = ""

    @property
    def tp(self) -> int:
        return self.dims.tp

    @property
    def cp(self) -> int:
        return self.dims.cp

    @property
    def pp(self) -> int:
        return self.dims.pp

    @property
    def dp(self) -> int:
        return self.dims.dp

    @property
    def memory_bytes(self) -> float:
        return self.memory.total

    @property
    def fullest_stage(self) -> str:
        """The pipeline stage whose memory ``memory`` is (the fullest), in words."""
        rank = self.memory.rank
        if self.pp == 1:
            return _("the only pipeline stage")
        if rank == 0:
            return _("the first pipeline stage")
        if rank == self.pp - 1:
            return _("the last pipeline stage")
        return _("pipeline stage {number}").format(number=rank + 1)

    @property
    def hybrid(self) -> bool:
        return self.shard_group < self.dp * self.cp

    @property
    def intra_bytes(self) -> float:
        return (self.tp_bytes + self.cp_bytes + self.pp_bytes + self.dp_bytes + self.ep_bytes
                - self.inter_bytes)

    def parts(self) -> list[tuple[str, float]]:
        """(part, seconds): the names are keys (compared by callers), marked for the
        catalogue and translated where they are shown."""
        parts = [(N_("compute"), self.compute_s), (N_("recompute"), self.recompute_s),
                 (N_("bubble"), self.bubble_s), (N_("TP comm"), self.tp_s),
                 (N_("CP comm (exposed)"), self.cp_exposed_s), (N_("PP comm"), self.pp_s),
                 (N_("DP comm (exposed) + optimizer"), self.dp_exposed_s + self.optimizer_s)]
        if self.moe:
            parts.append((N_("EP alltoall (exposed)"), self.ep_exposed_s))
        return parts
