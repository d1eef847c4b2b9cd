"""Goodput as the sizing calculators read it: the reader's fraction, or the goodput
model's estimate at the job's size with the catalogue's assumptions.

``training_compute`` and ``cluster_sizing`` share the ``goodput`` input
(inputs.training.GOODPUT_PARAM): 1 (the default) ignores failures; blank asks for the
estimate below, which the ``goodput`` calculator shows step by step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.catalogues import failure_rates as fr
from calculators.core.i18n import N_, _
from calculators.core.spec import ValidationError
from calculators.formulas.failures import checkpoints as ck
from calculators.formulas.failures import goodput as gm
from calculators.formulas.failures import reliability as rel
from calculators.formulas.failures.restart import RestartModel

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

#: The lowest goodput the ``goodput`` input accepts, and the lowest estimate used.
MIN_GOODPUT = 0.01

#: The catalogue's storage assumptions, synchronous saves.
ASSUMED_STORAGE = gm.Storage(
    node_write_bytes_per_s=fr.NODE_WRITE_BYTES_PER_S.value,
    aggregate_bytes_per_s=fr.STORAGE_BYTES_PER_S.value,
    gpu_to_host_bytes_per_s=fr.GPU_TO_HOST_BYTES_PER_S.value,
    asynchronous=False,
)
#: The catalogue's restart, part by part (formulas.failures.restart).
ASSUMED_RESTART = RestartModel(
    startup_s=fr.STARTUP_S.value,
    comm_init_per_gpu_s=fr.COMM_INIT_PER_GPU_S.value,
    warmup_s=fr.WARMUP_S.value,
)
#: The catalogue's recovery assumptions, with hot spares and Llama 3's planned stops;
#: the restart modelled from its parts at the job's size.
ASSUMED_RECOVERY = gm.Recovery(
    detection_s=fr.DETECTION_S.value,
    restart_s=None,
    replacement_s=fr.REPLACEMENT_S.value,
    hardware_fraction=fr.HARDWARE_FRACTION.value,
    hot_spares=True,
    planned_per_day=fr.PLANNED_PER_DAY.value,
    restart_model=ASSUMED_RESTART,
)
#: What the estimate assumes, in one sentence for notes and help (a template: the
#: figures come from the failure catalogue).
_ESTIMATE_BASIS = N_(
    "Llama 3's 419 unexpected interruptions in 54 days on 16,384 GPUs scaled per GPU "
    "(and its host rows per parameter-server host), its 47 planned stops, a synchronous "
    "checkpoint of the weights and optimizer state at 25 GB/s per node (a parameter "
    "server at most its NIC) up to 2 TB/s, Daly's interval, "
    "{detect:g} minutes to notice a failure and a restart of "
    "{startup:g} minutes' start-up, NCCL's initialisation at "
    "{nccl:.3g} ms per GPU, the checkpoint read back and "
    "{warmup:g} minutes' warm-up, hot spares"
)


def estimate_basis() -> str:
    """``_ESTIMATE_BASIS`` in the active language, with the catalogue's figures."""
    return _(_ESTIMATE_BASIS).format(
        detect=fr.DETECTION_S.value / 60, startup=fr.STARTUP_S.value / 60,
        nccl=fr.COMM_INIT_PER_GPU_S.value * 1e3, warmup=fr.WARMUP_S.value / 60)


def llama3_gpu_mtbf_s() -> float:
    """Job-stopping MTBF per GPU implied by Llama 3's 419 interruptions (every cause
    charged to the GPUs): about 50,700 GPU-hours."""
    run = fr.LLAMA3_405B
    return rel.per_gpu_mtbf_s(run.unexpected, run.period_s, run.gpus)


def llama3_host_mtbf_s() -> float:
    """Per-host MTBF of Table 5's host rows and unplanned host maintenance (46 in 54
    days on 2,048 hosts): for CPU-only hosts such as parameter servers."""
    run = fr.LLAMA3_405B
    return gm.pool_mtbf_s(fr.failures_by_pool(run)["host"], run.gpus // fr.LLAMA3_GPUS_PER_HOST,
                          run.period_s)


@dataclass(frozen=True)
class Hosts:
    """CPU hosts in the job besides the GPU nodes (parameter servers): how many, the
    checkpoint bytes they hold between them, and each one's NIC bandwidth."""

    count: int
    checkpoint_bytes: float
    nic_bytes_per_s: float

    def writers(self) -> ck.Writers:
        """They write (and read back) their shares at the smaller of the storage link
        the catalogue assumes per node and their own NIC."""
        return ck.Writers(self.count, self.checkpoint_bytes,
                          min(ASSUMED_STORAGE.node_write_bytes_per_s, self.nic_bytes_per_s))


def estimate_goodput(gpus: int, gpus_per_node: int, checkpoint_bytes: float, *,
                     hosts: Hosts | None = None) -> gm.GoodputPlan:
    """The goodput model at this size with the catalogue's assumptions. ``hosts`` (CPU
    hosts such as parameter servers) fail at Llama 3's per-host rate and write their
    share of the checkpoint alongside the GPU nodes, each at most at its NIC's rate."""
    count = 0 if hosts is None else hosts.count
    rate = math.fsum((gpus / llama3_gpu_mtbf_s(), count / llama3_host_mtbf_s()))
    return gm.plan_goodput(mtbi_s=1.0 / rate, checkpoint_bytes=checkpoint_bytes, gpus=gpus,
                           gpus_per_node=gpus_per_node, storage=ASSUMED_STORAGE,
                           recovery=ASSUMED_RECOVERY,
                           hosts=None if hosts is None else hosts.writers())


@dataclass(frozen=True)
class Goodput:
    """The goodput a sizing uses, and the model's plan at that size."""

    value: float
    plan: gm.GoodputPlan
    estimated: bool


def goodput_for(inputs: Inputs, gpus: int, gpus_per_node: int, checkpoint_bytes: float, *,
                hosts: Hosts | None = None) -> Goodput:
    """The ``goodput`` input if given, else the estimate; the plan is computed either
    way, so that the checkpoint interval and write time can be reported."""
    plan = estimate_goodput(gpus, gpus_per_node, checkpoint_bytes, hosts=hosts)
    if inputs["goodput"] is not None:
        return Goodput(inputs.num("goodput"), plan, estimated=False)
    if plan.goodput < MIN_GOODPUT:
        raise ValidationError("goodput", _(
            "the estimate at {gpus:,} GPUs is {goodput:.2%} (one interruption every "
            "{minutes:.3g} min): too low to finish; give a goodput instead").format(
            gpus=gpus, goodput=plan.goodput, minutes=plan.mtbi_s / 60))
    return Goodput(plan.goodput, plan, estimated=True)
