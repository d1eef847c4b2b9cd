"""What moe_step's training choices add to its first-order step: a low-precision
recipe's weight copies (formulas.model.recipes), Muon's Newton-Schulz FLOPs
(formulas.kernels.muon) and offload to host memory (formulas.parallel.offload).

moe_step prices compute at one average speed, so these are counted the same way: Muon's
FLOPs spread evenly over every GPU (each matrix has one owner), the dense part's matrices
taken as hidden x hidden squares and the routed experts' as hidden x expert FFN (our
simplification); the offloaded optimizer's copies and CPU step after the step, the
activations' copies behind its compute."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.formulas.kernels.muon import flops_per_param
from calculators.formulas.moe.architecture import expert_params, total_params
from calculators.formulas.parallel import offload

if TYPE_CHECKING:
    from calculators.catalogues.host_links import HostSide
    from calculators.formulas.model.model_states import StateBytes
    from calculators.formulas.moe.architecture import MoeArchitecture


def muon_flops_per_gpu(model: MoeArchitecture, gpus: int) -> float:
    """Newton-Schulz FLOPs per GPU per step: every matrix's, spread over the GPUs."""
    routed = float(expert_params(model) * model.routed_experts * model.moe_layers)
    dense = float(total_params(model)) - routed
    h, f = model.hidden, model.expert_ffn
    return (dense * flops_per_param(h, h) + routed * flops_per_param(h, f)) / gpus


@dataclass(frozen=True)
class Offloaded:
    """What one GPU keeps on the host, and the step time the copies and the CPU add."""

    optimizer: float  # B moved off the GPU
    activations: float  # B moved off the GPU
    exposed_s: float


def offloaded(mode: str, *, optimizer_bytes: float, per_param: StateBytes,
              activations: float, layers: int, compute_s: float, host: HostSide,
              overlap: float) -> Offloaded:
    """``mode`` of formulas.parallel.offload on a GPU with ``optimizer_bytes`` of optimizer
    states (``per_param`` the bytes per parameter, so the local shard is their ratio) and
    ``activations`` over ``layers`` layer-units (1F1B: the layers of the model, which the
    first stage's micro-batches in flight add up to): the optimizer's copies and CPU step
    exposed after the step; all but two layers' activations copied down and back up, each
    way behind the compute."""
    moved_opt = optimizer_bytes if offload.offloads_optimizer(mode) else 0.0
    kept = offload.resident_layer_units(layers) / layers if layers else 1.0
    moved_act = activations * (1.0 - kept) if offload.offloads_activations(mode) else 0.0
    exposed = 0.0
    if moved_opt and per_param.optimizer:
        local = moved_opt / per_param.optimizer
        exposed += offload.optimizer_offload(local, per_param, host, backward_s=compute_s * 2 / 3,
                                             overlap=overlap).exposed_s
    if moved_act:
        exposed += offload.activation_offload_s(moved_act, compute_s / 3, compute_s * 2 / 3,
                                                host, overlap=overlap)
    return Offloaded(moved_opt, moved_act, exposed)
