"""Memory inputs shared by ``model_memory``, the planner and the sizing: the attention
kernel, dropout, the gradients' precision and the share of the GPU kept free, each
with its source; and how a GPU's usable memory is read from them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues.host_links import host_side
from calculators.core.i18n import _
from calculators.core.spec import Choice, Output, Param
from calculators.formulas.parallel.memory import device_capacity_bytes, usable_bytes

if TYPE_CHECKING:
    from calculators.catalogues.hardware import Accelerator
    from calculators.core.calculator import Inputs

ATTENTION_PARAM = Param(
    "attention", "Attention kernel", "choice", "fused",
    choices=(Choice("fused", "fused (FlashAttention: no s x s scores stored)"),
             Choice("materialised", "materialised s x s scores (2021 Megatron)")),
    help="Fused: the attention kernel keeps only its output and one FP32 softmax "
         "statistic per head and query (Dao et al. 2022, Sec. 3.1; Dao 2023), and a "
         "causal mask skips about half of the work. Materialised: the softmax output "
         "and, with dropout, its mask and output, 5as^2b bytes per layer (Korthikanti et "
         "al. 2022, Sec. 4.1), as Megatron-LM stored them in 2021.")
DROPOUT_PARAM = Param(
    "dropout", "Dropout", "bool", False,
    help="Off: no dropout masks, as Llama trains (its released configurations set "
         "attention_dropout 0.0; PaLM also trained without dropout, Chowdhery et al. "
         "2022, Sec. 5). On: GPT-3-era dropout after attention and the MLP (1-byte masks) "
         "and, with materialised attention, on the attention probabilities.")
GRADIENTS_PARAM = Param(
    "gradients", "Gradient precision", "choice", "16bit",
    choices=(Choice("16bit", "same as the weights (ZeRO's 16 B/param)"),
             Choice("fp32", "FP32 main gradients (Megatron's 18 B/param)")),
    help="16-bit: 2 + 2 + 12 = 16 bytes per parameter with AdamW, the ZeRO paper's count "
         "(Rajbhandari et al. 2020, Sec. 3.1), the default here. FP32: gradients "
         "accumulated and reduced in FP32, 2 + 4 + 12 = 18 (Megatron-Core's "
         "distributed-optimizer docs, its BF16 default; Llama 3 does the same, Dubey et "
         "al. 2024, Sec. 3.3.2). The gradient traffic doubles too.")
_OFFLOAD_CHOICES = (Choice("none", "nothing: everything on the GPU"),
                    Choice("optimizer", "optimizer states and master weights"),
                    Choice("activations", "activations (two layers stay on the GPU)"),
                    Choice("both", "optimizer states and activations"))
_OFFLOAD_HELP = ("Host memory instead of HBM (ZeRO-Offload, Ren et al. 2021; Megatron-Core "
                 "--optimizer-cpu-offload): the optimizer's FP32 states are updated by "
                 "the CPU, the gradients going down behind the backward and the 16-bit "
                 "weights coming back after the step; activations go down after each "
                 "layer's forward and come back before its backward. Priced by the GPU's "
                 "host link (PCIe 5.0 x16 at 55.6 GB/s per direction as nvbandwidth "
                 "measures it; NVLink-C2C on Grace systems) and the host memory "
                 "bandwidth of the GPU's share of the node (catalogues.host_links).")
OFFLOAD_PARAM = Param("offload", "Offload to host memory", "choice", "none",
                      choices=_OFFLOAD_CHOICES, help=_OFFLOAD_HELP, advanced=True)
PLANNER_OFFLOAD_PARAM = Param(
    "offload", "Offload to host memory", "choice", "auto",
    choices=(Choice("auto", "only when nothing fits without it"), *_OFFLOAD_CHOICES),
    help=_OFFLOAD_HELP + " Auto: the search runs without offload; if no layout fits, it "
         "runs again with the optimizer on the host, then with the activations too.",
    advanced=True)
MEMORY_RESERVE_PARAM = Param(
    "memory_reserve", "GPU memory kept free", "float", 0.05, unit="1", minimum=0,
    maximum=0.5,
    help="Assumption: 5% of the device for what the model does not count: the CUDA "
         "context and library workspaces (0.3-1 GB per process), the collective "
         "libraries' buffers (NCCL allocates NCCL_BUFFSIZE, 4 MiB, per channel and peer "
         "of every communicator) and the caching allocator's fragmentation. A layout "
         "fits only below the rest.")


def gpu_capacity(inputs: Inputs, gpu: Accelerator) -> float:
    """The GPU's memory: the ``gpu_memory`` override, else what the device holds (its
    "80GB" label read as 80 GiB, formulas.parallel.memory.device_capacity_bytes)."""
    return inputs.opt("gpu_memory") or device_capacity_bytes(gpu.memory_bytes)


def gpu_usable(inputs: Inputs, gpu: Accelerator) -> float:
    """The capacity less the ``memory_reserve`` share."""
    return usable_bytes(gpu_capacity(inputs, gpu), inputs.num("memory_reserve"))


def host_memory_warning(host_bytes: float, accelerator: str) -> str | None:
    """A warning when what a GPU offloads exceeds its share of the reference node's host
    memory (catalogues.host_links)."""
    side = host_side(accelerator)
    if host_bytes <= side.host_memory:
        return None
    return _("The offloaded states need {need:,.1f} GB of host memory per GPU, more than the "
             "{have:,.0f} GB per GPU of the reference node ({source}).").format(
        need=host_bytes / 1e9, have=side.host_memory / 1e9, source=side.source)


#: The planners' outputs on offload (parallel_plan, moe_plan).
OFFLOAD_OUTPUTS = (
    Output("offload", "Offloaded to host memory", "", "text",
           help="What the plan keeps in host memory: none, the optimizer, the activations "
                "or both (formulas.parallel.offload)."),
    Output("host_memory_bytes", "Host memory per GPU", "B",
           help="The optimizer states and activations this GPU keeps in host memory."),
    Output("host_memory_per_node_bytes", "Host memory per node", "B",
           help="Host memory per GPU times the GPUs of a node: compare with the node's "
                "DRAM (2 TB in a DGX H100)."),
)
