"""A decoding step on the roofline and a batch under continuous batching."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from calculators import REGISTRY
from calculators.formulas.rl import generation
from calculators.formulas.rl.decode import Engine
from calculators.inputs.rl import Generator, generator
from published_checks import preset_inputs


def _gen(preset: str = "llama3_70b", **extra: object) -> Generator:
    inputs = REGISTRY["rollout"].validate(preset_inputs("rollout", preset, **extra))
    return generator(inputs, int(inputs.whole("generation_gpus")))


@pytest.fixture(name="dense")
def _dense() -> Engine:
    return _gen(engine_gpus=8).engine


@pytest.fixture(name="moe")
def _moe() -> Engine:
    return _gen("deepseek_v3", gpu="h800", engine_gpus=64, generation_gpus=64,
                attention_parallel="dp", weight_precision="fp8").engine


def test_one_sequence_is_bound_by_its_weights(dense: Engine) -> None:
    traffic, arithmetic, _ = dense.gemm_parts(1)
    assert traffic > 50 * arithmetic
    # Every step reads a GPU's share of the weights: 141 GB / 8 at the reached bandwidth.
    assert traffic == pytest.approx(70_553_706_496 * 2 / 8 / dense.gemm.memory_bandwidth)


def test_a_step_grows_with_the_batch_and_the_cache(dense: Engine) -> None:
    assert dense.step_s(1, 1000) < dense.step_s(64, 1000) < dense.step_s(256, 1000)
    assert dense.step_s(64, 1000) < dense.step_s(64, 1_000_000)


def test_a_moe_batch_touches_more_experts_up_to_all(moe: Engine) -> None:
    touched = [moe.touched_experts(b) for b in (1, 8, 64, 4096)]
    assert touched[0] == pytest.approx(8.0)
    assert touched == sorted(touched)
    assert touched[-1] == pytest.approx(256.0, rel=1e-6)


@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize(("batch", "cached", "steps"), [(1, 10, 5), (64, 64_000, 300),
                                                        (256, 300_000, 2000)])
def test_the_closed_form_is_the_sum_of_the_steps(  # noqa: PLR0917 - fixtures and cases
        dense: Engine, moe: Engine, overlap: bool, batch: int, cached: int,
        steps: int) -> None:
    for base in (dense, moe):
        engine = replace(base, overlap_communication=overlap)
        one_by_one = math.fsum(engine.step_s(batch, cached + batch * j) for j in range(steps))
        assert engine.steps_s(batch, cached, steps) == pytest.approx(one_by_one, rel=1e-9)


def test_overlap_never_makes_a_step_longer(moe: Engine) -> None:
    hidden = replace(moe, overlap_communication=True)
    for batch in (1, 128, 4096):
        assert hidden.step_s(batch, batch * 3000) <= moe.step_s(batch, batch * 3000)


def test_equal_lengths_in_one_wave_decode_in_one_closed_form(dense: Engine) -> None:
    done = generation.decode_batch(dense, responses=100, slots=128, prompt_tokens=500,
                                   mean_length=300, cap=300)
    assert done.decode_s == pytest.approx(dense.steps_s(100, 100 * 500, 300))
    assert done.tail_s == pytest.approx(done.decode_s)
    assert done.output_tokens == 30_000


def test_a_long_tail_leaves_the_batch_draining(dense: Engine) -> None:
    short_tail = generation.decode_batch(dense, responses=4096, slots=256, prompt_tokens=500,
                                         mean_length=3000, cap=4096)
    long_tail = generation.decode_batch(dense, responses=4096, slots=256, prompt_tokens=500,
                                        mean_length=1000, cap=4096)
    assert 0 < short_tail.tail_s < short_tail.decode_s
    assert long_tail.tail_s / long_tail.decode_s > short_tail.tail_s / short_tail.decode_s
    assert 0 < long_tail.mean_batch <= 256


def test_standing_in_for_many_responses_keeps_the_time(
        dense: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    exact = generation.decode_batch(dense, responses=4000, slots=400, prompt_tokens=256,
                                    mean_length=800, cap=2048)
    monkeypatch.setattr(generation, "MAX_SIMULATED", 1000)
    scaled = generation.decode_batch(dense, responses=4000, slots=400, prompt_tokens=256,
                                     mean_length=800, cap=2048)
    assert scaled.output_tokens == pytest.approx(exact.output_tokens, rel=0.01)
    assert scaled.decode_s == pytest.approx(exact.decode_s, rel=0.05)


def test_keeping_the_slots_full_removes_the_tail_only(dense: Engine) -> None:
    batch = generation.generate(dense, slots=256, engines=8, prompts=512, samples=16,
                                prompt_tokens=1024, mean_length=4096, cap=16384)
    assert batch.steady_s < batch.total_s
    assert batch.total_s - batch.steady_s <= batch.rollout.tail_s
    assert batch.prefill_s > 0


def test_the_engine_size_left_blank_is_the_fastest_that_fits() -> None:
    chosen = _gen(generation_gpus=64)
    rates = {}
    for size in (4, 8, 16, 32, 64):
        gen = _gen(generation_gpus=64, engine_gpus=size)
        rates[size] = gen.slots / gen.engine.step_s(
            gen.slots, gen.slots * (1024 + generation.mean_live_length(4096, 16384))) / size
    assert chosen.engine.gpus == max(rates, key=lambda s: rates[s])
