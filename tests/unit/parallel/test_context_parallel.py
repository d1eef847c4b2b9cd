"""Context parallelism: Ulysses (Jacobs et al. 2023), ring and all-gather (Liu et al. 2023,
Megatron-Core CP docs, Llama 3 Sec. 3.3.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculators.formulas.parallel.context_parallel import (
    AttentionDims,
    activation_bytes_with_cp,
    allgather_forward_bytes,
    attention_forward_flops,
    backward_bytes,
    comm_time_s,
    exposed_time_s,
    forward_bytes,
    gathered_kv_bytes,
    kv_chunk_bytes,
    ring_forward_bytes,
    ring_min_tokens_per_gpu,
    ulysses_forward_bytes,
)

if TYPE_CHECKING:
    from collections.abc import Callable

# Llama 3 405B (Dubey et al. 2024, Table 3): 128 heads, 8 KV heads, head size 128;
# long-context stage at 131,072 tokens with CP 16 (Sec. 3.3.2, Table 4).
LLAMA3_405B = AttentionDims(seq_len=131072, micro_batch=1, heads=128, kv_heads=8,
                            head_dim=128)


def test_ulysses_volume_per_link_is_4nh_over_p() -> None:
    # Jacobs et al. 2023 (DeepSpeed Ulysses), Sec. 3.2: with MHA the all-to-alls move
    # 4Nh/P per link (N tokens, h hidden, P GPUs); our count also drops the 1/P kept
    # locally, so at P = 64 it is 63/64 of theirs: tolerance 2%.
    n, h, p = 262144, 8192, 64
    dims = AttentionDims(seq_len=n, micro_batch=1, heads=64, kv_heads=64, head_dim=h // 64)
    assert ulysses_forward_bytes(dims, p) == pytest.approx(4 * n * h / p * 2, rel=0.02)


def test_ulysses_scales_down_ring_does_not() -> None:
    # Jacobs et al. 2023, Sec. 3.2: Ulysses' per-GPU volume falls as 1/P, while passing
    # full-sequence K, V (ring / all-gather) stays about constant per GPU.
    dims = AttentionDims(seq_len=65536, micro_batch=1, heads=64, kv_heads=64, head_dim=128)
    assert ulysses_forward_bytes(dims, 32) < 0.6 * ulysses_forward_bytes(dims, 16)
    assert ring_forward_bytes(dims, 32) == pytest.approx(ring_forward_bytes(dims, 16),
                                                         rel=0.07)


def test_llama3_allgather_kv_is_small_next_to_q() -> None:
    # Llama 3 Sec. 3.3.2: all-gathered K and V are much smaller than Q thanks to GQA.
    # Each GPU receives (c-1)/c of the full K and V: 2 s b kv d bytes x 15/16.
    c = 16
    full_kv = 2 * 131072 * 8 * 128 * 2
    assert allgather_forward_bytes(LLAMA3_405B, c) == pytest.approx(full_kv * 15 / 16)
    q_bytes_per_gpu = 131072 / c * 128 * 128 * 2
    assert kv_chunk_bytes(LLAMA3_405B, c) / q_bytes_per_gpu == pytest.approx(2 * 8 / 128)
    assert gathered_kv_bytes(LLAMA3_405B) == full_kv


def test_ulysses_needs_divisible_heads() -> None:
    # Jacobs et al. 2023: heads must divide by the sequence-parallel degree; Llama 3
    # 405B's 8 KV heads cannot be split 16 ways.
    with pytest.raises(ValueError, match="divisible"):
        ulysses_forward_bytes(LLAMA3_405B, 16)


def test_megatron_backward_twice_forward_and_memory_over_cp() -> None:
    # Megatron-Core CP docs: only the local KV chunk is kept, so backward gathers KV
    # again and reduce-scatters dKV; activations are "CP times smaller".
    dims = AttentionDims(seq_len=8192, micro_batch=1, heads=32, kv_heads=8, head_dim=128)
    assert backward_bytes("ring", dims, 2) == 2 * forward_bytes("ring", dims, 2)
    assert backward_bytes("ulysses", dims, 2) == forward_bytes("ulysses", dims, 2)
    assert activation_bytes_with_cp(1e9, 4) == 2.5e8


@given(st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([1, 2, 4]))
def test_ring_bytes_formula(c: int, b: int) -> None:
    dims = AttentionDims(seq_len=16384, micro_batch=b, heads=32, kv_heads=8, head_dim=128)
    expected = (c - 1) * 2 * 16384 / c * b * 8 * 128 * 2
    assert ring_forward_bytes(dims, c) == pytest.approx(expected, rel=1e-12)
    assert allgather_forward_bytes(dims, c) == ring_forward_bytes(dims, c)


def test_ring_overlap_condition() -> None:
    # Liu et al. 2023, Sec. 3: a block of c tokens hides its K, V send when c >= F/B.
    # At exactly c = F/B, compute of one step (4 c^2 d) equals send time (4 c d / B):
    # checked with our own FLOP and byte counts for one MHA head.
    f, bw = 312e12, 300e9
    c = ring_min_tokens_per_gpu(f, bw)
    assert c == pytest.approx(f / bw)
    step_flops = 4 * c * c * 128
    step_bytes = 2 * c * 128 * 2
    assert step_flops / f == pytest.approx(step_bytes / bw, rel=1e-9)


def test_attention_flops_and_times() -> None:
    dims = AttentionDims(seq_len=4096, micro_batch=1, heads=32, kv_heads=32, head_dim=128)
    assert attention_forward_flops(dims, 1, causal=False) == 4 * 4096 * 4096 * 32 * 128
    assert comm_time_s(1e9, 1e11) == pytest.approx(0.01)
    assert exposed_time_s(0.01, 0.02, 0.5) == 0.0
    assert exposed_time_s(0.01, 0.004, 0.5) == pytest.approx(0.008)


@pytest.mark.parametrize(
    "call",
    [lambda: kv_chunk_bytes(LLAMA3_405B, 3), lambda: kv_chunk_bytes(LLAMA3_405B, 0),
     lambda: forward_bytes("tree", LLAMA3_405B, 2), lambda: exposed_time_s(1.0, 1.0, 2.0),
     lambda: comm_time_s(1.0, 0.0), lambda: ring_min_tokens_per_gpu(0.0, 1.0),
     lambda: AttentionDims(seq_len=8, micro_batch=1, heads=6, kv_heads=4, head_dim=8)])
def test_bad_inputs(call: Callable[[], object]) -> None:
    with pytest.raises(ValueError, match=r"."):
        call()
