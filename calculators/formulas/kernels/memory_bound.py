"""Memory-bound kernels: their time is the bytes they move over the bandwidth HBM really
delivers, plus a fixed cost per kernel (Williams et al. 2009's roofline below the ridge;
catalogues.kernel_speeds gives both per accelerator, from STREAM-like and Liger-Kernel
measurements).

The byte counts here are the minimum traffic of each operation, each tensor read or
written once, in the fused kernels Megatron-LM runs (Narayanan et al. 2021, Sec. 4.2:
fused bias + GeLU, bias + dropout + add, scale + mask + softmax; layer norm and RMSNorm
as one kernel each). A normalisation's backward reduces its weight gradient across
tokens, and reaches a smaller share of the bandwidth: Liger-Kernel's LayerNorm and
RMSNorm backward run at 26-42% of the datasheet bandwidth on H100 where the forward runs
at 84-87% (Liger-Kernel benchmark data), about 0.45 of the forward's rate.
"""

from __future__ import annotations

#: A normalisation backward's share of the forward's bandwidth (Liger-Kernel: LayerNorm
#: backward 41.6% of 3,350 GB/s against 86.7% forward on H100, fp32, 4,096 x 16,384).
NORM_BACKWARD_RATE = 0.45

#: Megatron-LM's vocabulary-parallel cross-entropy, in bytes-equivalent per logit at the
#: achieved bandwidth: Liger-Kernel's benchmark of Megatron's fused kernel on H100 (bf16,
#: 2,048 x 4 tokens, V = 128K, TP 1) takes 11.81 ms forward and 18.23 ms backward for
#: 1.07e9 logits, 11.0 and 17.0 ps each, i.e. 34 and 52 B at 3.05 TB/s.
CROSS_ENTROPY_FORWARD_BYTES = 34.0
CROSS_ENTROPY_BACKWARD_BYTES = 52.0


def memory_time_s(bytes_moved: float, bandwidth: float, kernels: int,
                  kernel_overhead_s: float) -> float:
    """Seconds for ``kernels`` memory-bound kernels moving ``bytes_moved`` in all."""
    if bytes_moved <= 0:
        return 0.0
    return bytes_moved / bandwidth + kernels * kernel_overhead_s


#: The FP32 master weight the copy to the 16-bit working weights reads.
MASTER_READ_BYTES = 4.0


def optimizer_step_bytes(params: float, weight_bytes: float, gradient_bytes: float,
                         optimizer_bytes: float, *, loss_scaling: bool = False) -> float:
    """HBM traffic of one optimizer step over ``params`` parameters (the local shard), as
    Megatron-LM's mixed-precision optimizer runs it with Apex's multi-tensor Adam
    (megatron/core/optimizer/optimizer.py): under FP16, the gradients unscaled and
    checked for overflow (read and written); their norm for clipping (read); Adam reading
    the optimizer states (FP32 master weights and moments; ZeRO's K = 12, Rajbhandari et
    al. 2020, Sec. 3.1) and the gradient and writing the states back; the master weights
    read again and written as the 16-bit working copy; the gradients zeroed. Clipping,
    which rescales the gradients only when their norm exceeds the threshold, is left
    out."""
    unscale = 2.0 * gradient_bytes if loss_scaling else 0.0
    copy = MASTER_READ_BYTES + weight_bytes if weight_bytes < MASTER_READ_BYTES else 0.0
    per_param = unscale + 2.0 * optimizer_bytes + 3.0 * gradient_bytes + copy
    return params * per_param
