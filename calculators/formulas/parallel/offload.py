"""Offload to host memory: what leaves the GPU, what the host must hold, and what the
copies and the CPU's optimizer step cost.

Two things can leave (Ren et al. 2021, ZeRO-Offload, Sec. 4; Megatron-Core's
--optimizer-cpu-offload and activation offloading):

* **the optimizer** (FP32 master weights and moments): the GPU keeps its 16-bit weights
  and gradients; each step the gradients go down to the host as the backward produces
  them, the CPU runs the optimizer over its shard, and the updated 16-bit weights come
  back up. The copy down hides behind the backward (ZeRO-Offload, Sec. 4.2); the CPU step
  and the copy up do not (without ZeRO-Offload's one-step delayed update, which changes
  the training algorithm and is not counted);
* **the activations**: each layer's saved tensors go down after its forward and come
  back before its backward, behind that layer's compute. The GPU keeps two layers' worth
  (the one in use and the one in flight, double-buffered; derivation); the host keeps
  the rest, for every micro-batch in flight.

Every copy crosses the GPU's host link (catalogues.host_links: PCIe or NVLink-C2C), the
CPU step runs at the host memory bandwidth of the GPU's share of the node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from calculators.core.i18n import _
from calculators.formulas.kernels.memory_bound import optimizer_step_bytes

if TYPE_CHECKING:
    from collections.abc import Callable

    from calculators.catalogues.host_links import HostSide
    from calculators.formulas.model.model_states import StateBytes

R = TypeVar("R")

#: What can be offloaded: nothing, the optimizer states, the activations, or both.
OFFLOAD_MODES = ("none", "optimizer", "activations", "both")
#: Layers' activations a GPU keeps while they stream to and from the host.
RESIDENT_LAYERS = 2.0


def offloads_optimizer(mode: str) -> bool:
    return mode in ("optimizer", "both")


def offloads_activations(mode: str) -> bool:
    return mode in ("activations", "both")


@dataclass(frozen=True)
class OptimizerOffload:
    """One step's optimizer on the host: seconds of each part and what stays exposed."""

    down_s: float  # gradients to the host
    cpu_s: float  # the optimizer step on the CPU
    up_s: float  # updated 16-bit weights back to the GPU
    exposed_s: float


def optimizer_offload(params: float, per_param: StateBytes, host: HostSide, *,
                      backward_s: float, overlap: float) -> OptimizerOffload:
    """The optimizer of ``params`` local parameters on the host: gradients down (hidden
    behind ``backward_s`` at ``overlap``), the CPU step (memory-bound: the traffic of
    formulas.kernels.memory_bound.optimizer_step_bytes at the host's bandwidth), the 16-bit
    weights up."""
    down = params * per_param.gradients / host.achieved_link
    up = params * per_param.wide_weights / host.achieved_link
    moved = optimizer_step_bytes(params, per_param.wide_weights, per_param.gradients,
                                 per_param.optimizer)
    cpu = moved / host.achieved_host_memory
    exposed = down - overlap * min(down, backward_s) + cpu + up
    return OptimizerOffload(down, cpu, up, exposed)


def activation_offload_s(layer_bytes: float, forward_s: float, backward_s: float,
                         host: HostSide, *, overlap: float) -> float:
    """Exposed seconds of one layer's activations going down after its forward and up
    before its backward, each behind that pass's compute at ``overlap``: what does not
    fit behind the compute waits."""
    copy = layer_bytes / host.achieved_link
    return (copy - overlap * min(copy, forward_s)) + (copy - overlap * min(copy, backward_s))


def resident_layer_units(layer_units: float) -> float:
    """Of a rank's layer-units of activations (layers x micro-batches in flight), what
    stays on the GPU when they are offloaded."""
    return min(layer_units, RESIDENT_LAYERS)


def offload_note(mode: str, usable: float) -> str:
    """The words a planner says when nothing fitted on the GPUs alone and it offloaded."""
    what = {"optimizer": _("the optimizer states and master weights"),
            "activations": _("the activations"),
            "both": _("the optimizer states and the activations")}[mode]
    return _("No layout fits in the {usable:,.1f} GB per GPU without offload: this plan "
             "keeps {what} in host memory (ZeRO-Offload), and pays for the copies and the "
             "CPU's optimizer step in the step time.").format(usable=usable / 1e9, what=what)


def offload_when_needed(run: Callable[[str | None], R], fits: Callable[[R], bool], *,
                        auto: bool) -> tuple[R, str | None]:
    """A planner's search, ``run(None)`` with the reader's offload choice; when nothing
    fits and the choice is automatic, the lightest offload that fits: the optimizer on
    the host, else the activations too (``run(mode)``). The result that fits first (or
    the first), and the offload mode it took (None: the reader's).

    "both" is tried before "optimizer": it frees a superset of the GPU memory
    "optimizer" frees (fitting is judged on the GPU alone), so when "both" does not fit,
    "optimizer" cannot, and a model that fits nowhere costs two searches, not three."""
    first = run(None)
    if not auto or fits(first):
        return first, None
    both = run("both")
    if not fits(both):
        return first, None
    lighter = run("optimizer")
    return (lighter, "optimizer") if fits(lighter) else (both, "both")
