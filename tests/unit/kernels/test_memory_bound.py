"""formulas.kernels.memory_bound: bytes over the achieved HBM bandwidth plus a fixed cost
per kernel, and the optimizer step's traffic counted term by term from its docstring."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculators.formulas.kernels.memory_bound import (
    CROSS_ENTROPY_BACKWARD_BYTES,
    CROSS_ENTROPY_FORWARD_BYTES,
    MASTER_READ_BYTES,
    NORM_BACKWARD_RATE,
    memory_time_s,
    optimizer_step_bytes,
)

#: ZeRO's K = 12 bytes of optimizer state per parameter under mixed-precision Adam: an
#: FP32 master weight and two FP32 moments (Rajbhandari et al. 2020, Sec. 3.1).
ADAM_STATE_BYTES = 4.0 + 4.0 + 4.0


# --- memory_time_s ----------------------------------------------------------------------

def test_time_is_bytes_over_bandwidth_plus_the_kernels_fixed_costs() -> None:
    # Below the roofline's ridge a kernel's time is its traffic over the bandwidth;
    # each kernel launch adds a fixed cost.
    assert memory_time_s(6e9, 3e12, 4, 7e-6) == pytest.approx(6e9 / 3e12 + 4 * 7e-6)


@settings(max_examples=50, deadline=None)
@given(st.floats(1.0, 1e12), st.floats(1.0, 1e12), st.floats(1e11, 1e13),
       st.integers(0, 16), st.floats(0.0, 1e-4))
def test_time_is_linear_in_bytes(a: float, b: float, bandwidth: float, kernels: int,
                                 overhead: float) -> None:
    # Moving a + b bytes in the same kernels costs the bytes of both over the bandwidth
    # and the fixed costs once: t(a + b) = t(a) + t(b) - kernels x overhead.
    joint = memory_time_s(a + b, bandwidth, kernels, overhead)
    apart = (memory_time_s(a, bandwidth, kernels, overhead)
             + memory_time_s(b, bandwidth, kernels, overhead))
    assert joint == pytest.approx(apart - kernels * overhead, rel=1e-9, abs=1e-18)


def test_nothing_to_move_takes_no_time() -> None:
    # No bytes: the kernels are not launched, so no fixed cost either.
    assert memory_time_s(0.0, 3e12, 6, 7e-6) == 0.0


def test_halving_the_bandwidth_doubles_the_transfer_but_not_the_overhead() -> None:
    fast = memory_time_s(1e9, 2e12, 3, 1e-5)
    slow = memory_time_s(1e9, 1e12, 3, 1e-5)
    assert slow - fast == pytest.approx(1e9 / 2e12)


# --- constants --------------------------------------------------------------------------

def test_constants_are_in_their_physical_ranges() -> None:
    # A norm's backward reduces across tokens and reaches a smaller share of the
    # bandwidth than its forward (Liger-Kernel: 26-42% against 84-87%): a ratio below 1.
    assert 0.0 < NORM_BACKWARD_RATE < 1.0
    # The cross-entropy's backward moves more than its forward (it writes the logits'
    # gradient); both read at least the 2-byte logit.
    assert 2.0 <= CROSS_ENTROPY_FORWARD_BYTES < CROSS_ENTROPY_BACKWARD_BYTES
    # The master weight is FP32.
    assert MASTER_READ_BYTES == 4.0


# --- optimizer_step_bytes ---------------------------------------------------------------

def test_bf16_adamw_with_fp32_main_gradients() -> None:
    # Megatron-LM's BF16 run: 2 B weights, FP32 main gradients (4 B), Adam's 12 B of
    # state. The docstring's list, per parameter:
    #   no loss scale under BF16: no unscale pass;
    #   gradient norm for clipping: read the gradient       4
    #   Adam: read the states and the gradient             12 + 4
    #         write the states                             12
    #   copy: read the FP32 master, write the BF16 weight   4 + 2
    #   zero the gradient: write it                         4
    per_param = 4 + (12 + 4) + 12 + (4 + 2) + 4
    assert optimizer_step_bytes(1.0, 2.0, 4.0, ADAM_STATE_BYTES) == per_param
    assert optimizer_step_bytes(7e9, 2.0, 4.0, ADAM_STATE_BYTES) == pytest.approx(
        7e9 * per_param)


def test_fp16_with_loss_scaling() -> None:
    # FP16 with a dynamic loss scale: the same list with 2 B weights and 2 B gradients,
    # and first the unscale and overflow check, which reads and writes every gradient.
    #   unscale: read and write the gradient                2 + 2
    #   norm: read                                          2
    #   Adam: read states + gradient, write states          12 + 2 + 12
    #   copy: read master, write FP16 weight                4 + 2
    #   zero the gradient                                   2
    per_param = (2 + 2) + 2 + (12 + 2 + 12) + (4 + 2) + 2
    assert optimizer_step_bytes(1.0, 2.0, 2.0, ADAM_STATE_BYTES, loss_scaling=True) == (
        per_param)
    # With FP32 main gradients the unscale pass moves 4 + 4.
    fp32_grads = (4 + 4) + 4 + (12 + 4 + 12) + (4 + 2) + 4
    assert optimizer_step_bytes(1.0, 2.0, 4.0, ADAM_STATE_BYTES, loss_scaling=True) == (
        fp32_grads)


def test_loss_scaling_adds_one_read_and_write_of_the_gradients() -> None:
    for gradient in (2.0, 4.0):
        scaled = optimizer_step_bytes(1e6, 2.0, gradient, ADAM_STATE_BYTES, loss_scaling=True)
        plain = optimizer_step_bytes(1e6, 2.0, gradient, ADAM_STATE_BYTES)
        assert scaled - plain == pytest.approx(1e6 * 2 * gradient)


def test_fp32_training_has_no_working_copy_to_write() -> None:
    # With 4-byte weights the master is the weight: no copy to a 16-bit working weight.
    # Adam's states are then the two moments only (8 B); gradients FP32.
    per_param = 4 + (8 + 4) + 8 + 4
    assert optimizer_step_bytes(1.0, 4.0, 4.0, 8.0) == per_param


@pytest.mark.parametrize("weights", [1.0, 2.0])
def test_the_working_copy_is_written_at_the_weights_precision(weights: float) -> None:
    # An FP8 or BF16 working weight: the copy reads the 4 B master and writes the weight.
    with_copy = optimizer_step_bytes(1.0, weights, 4.0, ADAM_STATE_BYTES)
    without = optimizer_step_bytes(1.0, 4.0, 4.0, ADAM_STATE_BYTES)
    assert with_copy - without == MASTER_READ_BYTES + weights


@settings(max_examples=50, deadline=None)
@given(st.floats(1.0, 1e12), st.sampled_from([1.0, 2.0, 4.0]), st.sampled_from([2.0, 4.0]),
       st.sampled_from([8.0, 12.0, 16.0]), st.booleans())
def test_step_traffic_is_linear_in_the_parameters(params: float, weights: float,
                                                  gradients: float, states: float,
                                                  scaled: bool) -> None:
    # Every term is per parameter: a shard of half the parameters moves half the bytes
    # (what ZeRO's sharding of the optimizer buys the step's time).
    full = optimizer_step_bytes(params, weights, gradients, states, loss_scaling=scaled)
    half = optimizer_step_bytes(params / 2, weights, gradients, states, loss_scaling=scaled)
    assert half == pytest.approx(full / 2)
    # At least the states read and written and the gradient read.
    assert full >= params * (2 * states + gradients)
