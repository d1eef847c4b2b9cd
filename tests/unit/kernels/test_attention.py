"""formulas.kernels.attention: the fused kernel's FLOP count and rate ramp, and the
materialised attention's GEMMs and memory-bound passes over the s x s scores.

The papers' measured rates are checked in published_checks.kernels; here the structure
of the model (FlashAttention's FLOP count, the plateau and its ramp, the head-size and
causal factors) and bounds that hold for every accelerator of the catalogue.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from calculators.catalogues.kernel_speeds import FLASH2, KERNEL_SPEEDS, FusedAttention
from calculators.formulas.kernels.attention import (
    DROPOUT_BYTES,
    SOFTMAX_BACKWARD_BYTES,
    SOFTMAX_FORWARD_BYTES,
    AttentionShape,
    fused_attention_s,
    materialised_attention_s,
)
from calculators.formulas.kernels.gemm import GemmRate, gemm_time_s
from calculators.inputs.machine import machine_for

#: Every fused kernel of the catalogue, with its accelerator (for the peak).
KERNELS = [(gpu, speed.attention) for gpu, speed in sorted(KERNEL_SPEEDS.items())] + [
    (gpu, kernel) for gpu, kernel in sorted(FLASH2.items())]
#: A kernel with round numbers, so that the derivations below are done by hand.
KERNEL = FusedAttention(kernel="test", forward=0.6, backward=0.5, half_seq=100.0,
                        half_seq_causal=400.0, head_64=(0.8, 0.9), causal_plateau=0.9)
PEAK = 1e15
RATE = GemmRate(peak_flops=PEAK, memory_bandwidth=3e12, max_efficiency=0.8, k_half=256.0,
                overhead_s=5e-6, wave_exponent=0.0, sms=132)


def _shape(seq: int, head_dim: int = 128, *, causal: bool = False, batch: int = 2,
           heads: int = 16) -> AttentionShape:
    return AttentionShape(batch, heads, seq, seq, head_dim, head_dim, 0.5 if causal else 1.0)


def _forward_rate(shape: AttentionShape, kernel: FusedAttention, peak: float) -> float:
    return shape.forward_flops / fused_attention_s(shape, kernel, peak)[0]


# --- FLOPs ------------------------------------------------------------------------------

@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_forward_flops_are_4_s2_d_per_head(head_dim: int) -> None:
    # FlashAttention's count: Q K^T and P V, 2 s^2 d each, 4 s^2 d per head and
    # sequence; a causal mask computes half the scores (Dao 2023, Sec. 4.1).
    s, batch, heads = 2048, 3, 5
    full = _shape(s, head_dim, batch=batch, heads=heads)
    causal = _shape(s, head_dim, causal=True, batch=batch, heads=heads)
    assert full.forward_flops == 4 * s * s * head_dim * batch * heads
    assert causal.forward_flops == full.forward_flops / 2


def test_forward_flops_with_different_qk_and_v_dims() -> None:
    # 2 s_q s_kv d_qk for the scores, 2 s_q s_kv d_v for P V (MLA: d_qk 192, d_v 128).
    shape = AttentionShape(1, 1, 1024, 4096, 192, 128, 1.0)
    assert shape.forward_flops == 2 * 1024 * 4096 * 192 + 2 * 1024 * 4096 * 128


def test_backward_does_2_5_times_the_forward_flops() -> None:
    # The backward recomputes Q K^T and runs four more GEMMs of the same size: 5 against
    # the forward's 2, so 2.5 x the forward's FLOPs (Dao 2023, Sec. 4.1). At the
    # kernel's rates: backward time = 2.5 x flops / backward rate.
    shape = _shape(4096)
    forward, backward = fused_attention_s(shape, KERNEL, PEAK)
    ramp = 4096 / (4096 + 100)
    assert forward == pytest.approx(shape.forward_flops / (PEAK * 0.6 * ramp))
    assert backward == pytest.approx(2.5 * shape.forward_flops / (PEAK * 0.5 * ramp))
    assert backward / forward == pytest.approx(2.5 * 0.6 / 0.5)


def test_empty_attention_takes_no_time() -> None:
    assert fused_attention_s(_shape(0), KERNEL, PEAK) == (0.0, 0.0)


# --- the rate: plateau, ramp, mask, head size -------------------------------------------

def test_rate_ramps_as_s_over_s_plus_s_half() -> None:
    # rate = plateau x s / (s + s_half): half the plateau at s = s_half, 2/3 at 2 s_half.
    plateau = PEAK * 0.6
    assert _forward_rate(_shape(100), KERNEL, PEAK) == pytest.approx(plateau / 2)
    assert _forward_rate(_shape(200), KERNEL, PEAK) == pytest.approx(plateau * 2 / 3)
    causal_plateau = plateau * 0.9
    assert _forward_rate(_shape(400, causal=True), KERNEL, PEAK) == pytest.approx(
        causal_plateau / 2)


@pytest.mark.parametrize(("gpu", "kernel"), KERNELS)
@pytest.mark.parametrize("causal", [False, True])
def test_rate_rises_with_s_toward_the_plateau(gpu: str, kernel: FusedAttention,
                                              causal: bool) -> None:
    # Longer sequences amortise each tile's fixed work: the rate rises with s and tends
    # to the plateau (forward x peak, x causal_plateau under the mask), never above it.
    peak = machine_for(gpu).peak_bf16
    plateau = peak * kernel.forward * (kernel.causal_plateau if causal else 1.0)
    rates = [_forward_rate(_shape(s, causal=causal), kernel, peak)
             for s in (128, 512, 2048, 8192, 32768, 2**20)]
    assert rates == sorted(rates)
    assert all(r < plateau for r in rates)
    assert rates[-1] == pytest.approx(plateau, rel=1e-3)


@pytest.mark.parametrize(("gpu", "kernel"), KERNELS)
@pytest.mark.parametrize("seq", [512, 2048, 8192, 16384])
def test_causal_is_slower_per_flop(gpu: str, kernel: FusedAttention, seq: int) -> None:
    # The causal mask halves the FLOPs but not the time: the diagonal blocks are computed
    # in full and masked, and there are fewer blocks to fill the GPU with (FlashAttention-2
    # Fig. 4: causal below non-causal at every length). Per FLOP, forward and backward.
    peak = machine_for(gpu).peak_bf16
    full, causal = _shape(seq), _shape(seq, causal=True)
    full_f, full_b = fused_attention_s(full, kernel, peak)
    causal_f, causal_b = fused_attention_s(causal, kernel, peak)
    assert causal.forward_flops / causal_f < full.forward_flops / full_f
    assert causal.forward_flops / causal_b < full.forward_flops / full_b
    assert causal_f < full_f  # but it still takes less time: half the work


@pytest.mark.parametrize(("gpu", "kernel"), KERNELS)
def test_head_size_64_is_slower_per_flop_than_128(gpu: str, kernel: FusedAttention) -> None:
    # A head of 64 does half the arithmetic per byte of Q, K and V of a head of 128:
    # the papers' sweeps are lower at 64 than at 128; 256 is no faster than 128, and 96
    # lies between 64 and 128.
    peak = machine_for(gpu).peak_bf16

    def rates(head: int) -> tuple[float, float]:
        shape = _shape(8192, head, causal=True)
        forward, backward = fused_attention_s(shape, kernel, peak)
        return shape.forward_flops / forward, 2.5 * shape.forward_flops / backward

    at_64, at_96, at_128, at_256 = rates(64), rates(96), rates(128), rates(256)
    for i in (0, 1):
        assert at_64[i] < at_128[i]
        assert at_64[i] <= at_96[i] <= at_128[i]
        assert at_256[i] == pytest.approx(at_128[i])
    assert at_64[0] / at_128[0] == pytest.approx(kernel.head_64[0])
    assert at_64[1] / at_128[1] == pytest.approx(kernel.head_64[1])


def test_head_factor_is_linear_between_64_and_128() -> None:
    # Between the measured 64 and 128, the factor is interpolated: at 96, halfway
    # between head_64 and 1.
    at_96 = _forward_rate(_shape(8192, 96), KERNEL, PEAK)
    at_128 = _forward_rate(_shape(8192, 128), KERNEL, PEAK)
    assert at_96 / at_128 == pytest.approx((0.8 + 1.0) / 2)


def test_context_parallel_shape_ramps_on_the_shorter_side() -> None:
    # With context parallelism a GPU holds s/cp queries against all s keys; the ramp
    # takes the shorter of the two (fewer query blocks to spread over the GPU).
    shape = AttentionShape(1, 16, 1024, 8192, 128, 128, 0.5)
    forward, _ = fused_attention_s(shape, KERNEL, PEAK)
    rate = PEAK * 0.6 * 0.9 * 1024 / (1024 + 400)
    assert forward == pytest.approx(shape.forward_flops / rate)


@pytest.mark.parametrize(("gpu", "kernel"), KERNELS)
def test_fused_rates_never_exceed_the_peak(gpu: str, kernel: FusedAttention) -> None:
    # Attention runs on the BF16 tensor cores: no sequence, head size or mask reaches
    # the dense BF16 peak, forward or backward (FLOPs counted as the papers count them).
    peak = machine_for(gpu).peak_bf16
    for seq in (1, 64, 1000, 4096, 131072):
        for head in (32, 64, 80, 128, 192, 256):
            for causal in (False, True):
                shape = _shape(seq, head, causal=causal)
                forward, backward = fused_attention_s(shape, kernel, peak)
                assert shape.forward_flops / forward < peak
                assert 2.5 * shape.forward_flops / backward < peak


# --- materialised attention -------------------------------------------------------------

def test_materialised_forward_is_two_batched_gemms_and_the_score_passes() -> None:
    # Megatron-LM without FlashAttention: S = Q K^T and O = P V as batched GEMMs, then
    # softmax (read 2 B, write 2 B per score) and dropout (read 2, write 2, mask 1) over
    # the b h s^2 scores in HBM, each pass a kernel with its fixed cost.
    shape = AttentionShape(4, 8, 2048, 2048, 96, 96, 1.0)
    batch, scores = 4 * 8, 4 * 8 * 2048 * 2048
    bandwidth, overhead = 2e12, 10e-6
    forward, backward = materialised_attention_s(shape, RATE, bandwidth, overhead,
                                                 dropout=True)
    gemms = (gemm_time_s(2048, 2048, 96, RATE, batch=batch)
             + gemm_time_s(2048, 96, 2048, RATE, batch=batch))
    assert forward == pytest.approx(gemms + scores * (4 + 5) / bandwidth + 2 * overhead)
    # Backward: dV = P^T dO, dQ = dS K and dK = dS^T Q have inner dimension s (s x d
    # outputs), dP = dO V^T has inner dimension d (s x s output); then the dropout's
    # backward (read 2 and the mask, write 2) and the softmax's (read P and dP, write dS).
    back_gemms = (3 * gemm_time_s(2048, 96, 2048, RATE, batch=batch)
                  + gemm_time_s(2048, 2048, 96, RATE, batch=batch))
    assert backward == pytest.approx(
        back_gemms + scores * (6 + 5) / bandwidth + 2 * overhead)
    assert (SOFTMAX_FORWARD_BYTES, SOFTMAX_BACKWARD_BYTES, DROPOUT_BYTES) == (4, 6, 5)


def test_materialised_time_grows_as_s_squared() -> None:
    # Every term of the materialised attention is proportional to s^2 (the scores, the
    # GEMMs' s x s x d), so doubling s quadruples the time once the fixed costs are
    # small; the passes over the scores are a share of it that does not shrink.
    def times(seq: int) -> tuple[float, float]:
        shape = AttentionShape(4, 8, seq, seq, 128, 128, 1.0)
        return materialised_attention_s(shape, RATE, 2e12, 0.0, dropout=True)

    for short, long in [(2048, 4096), (4096, 8192), (8192, 16384)]:
        for i in (0, 1):
            assert times(long)[i] / times(short)[i] == pytest.approx(4.0, rel=0.05)


def test_dropout_adds_a_pass_over_the_scores() -> None:
    # Dropout on the attention probabilities: 5 B per score forward and backward, one
    # more kernel each way.
    shape = AttentionShape(2, 16, 4096, 4096, 128, 128, 1.0)
    bandwidth, overhead = 3e12, 7e-6
    with_f, with_b = materialised_attention_s(shape, RATE, bandwidth, overhead, dropout=True)
    none_f, none_b = materialised_attention_s(shape, RATE, bandwidth, overhead, dropout=False)
    added = 2 * 16 * 4096 * 4096 * 5 / bandwidth + overhead
    assert with_f - none_f == pytest.approx(added)
    assert with_b - none_b == pytest.approx(added)


@pytest.mark.parametrize("gpu", sorted(KERNEL_SPEEDS))
def test_fused_beats_materialised_at_long_sequences(gpu: str) -> None:
    # FlashAttention's point: without the s^2 scores' round trips through HBM (and with
    # no s x s x d GEMMs of a short inner dimension) it is faster, at every length
    # (Dao et al. 2022: 2-4x at 2K-4K on A100).
    machine = machine_for(gpu)

    def ratio(seq: int) -> float:
        fused = fused_attention_s(_shape(seq), machine.speed.attention, machine.peak_bf16)
        materialised = materialised_attention_s(
            _shape(seq), machine.gemm, machine.memory_bandwidth, machine.kernel_overhead_s,
            dropout=True)
        return sum(materialised) / sum(fused)

    assert ratio(2048) > 1.0
    assert ratio(16384) > 1.0


def test_materialised_attention_follows_the_gemm_rate() -> None:
    # The GEMMs are priced by formulas.kernels.gemm: a faster GEMM rate (same memory)
    # shortens only the GEMM part.
    shape = AttentionShape(2, 16, 4096, 4096, 128, 128, 1.0)
    slow = materialised_attention_s(shape, RATE, 3e12, 0.0, dropout=False)
    fast_rate = replace(RATE, peak_flops=2 * PEAK)
    fast = materialised_attention_s(shape, fast_rate, 3e12, 0.0, dropout=False)
    assert fast[0] < slow[0]
    assert fast[1] < slow[1]
