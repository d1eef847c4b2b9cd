"""DualPipe and DualPipeV against their published table, their placement and memory,
their constraints in the planners, and the SMs a communication-overlapping schedule
gives away.

Sources: deepseek-ai/DualPipe README, "Pipeline Bubbles and Memory Usage Comparison
(based on the same number of PP stages)"; DeepSeek-V3 report (arXiv:2412.19437), Sec.
3.2.1 and Table 2 (DualPipe's row), Sec. 3.2.1 and 3.5.1 (20 of 132 SMs on H800).
"""

from __future__ import annotations

import pytest

import calculators
from calculators.core.spec import ValidationError
from calculators.formulas.kernels.gemm import GemmRate, with_reserved_sms
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.parallel.memory import Strategy, rank_loads
from calculators.formulas.parallel.schedules import (
    PassTimes,
    dualpipe,
    dualpipe_v,
    one_f_one_b,
    schedule_constraint,
    zero_bubble_h1,
)
from calculators.formulas.parallel.stages import chunks_in_flight, split_layers

# F, B (full backward) and W of one chunk, and F&B (the pair run overlapped): any values
# with W < B; the table's expressions are checked symbolically through them.
CHUNK = PassTimes(forward=1.0, backward_input=0.9, backward_weight=0.7)
F_AND_B = 2.2


@pytest.mark.parametrize("pp", [2, 4, 8, 16])
def test_readme_table_dualpipe(pp: int) -> None:
    # DualPipe: bubble (PP/2-1)(F&B + B - 3W), parameters 2x, activations PP + 1, PP devices.
    cost = dualpipe(pp, 4 * pp, CHUNK, overlapped_forward_backward=F_AND_B)
    assert cost.bubble_time == pytest.approx(
        (pp / 2 - 1) * (F_AND_B + CHUNK.backward - 3 * CHUNK.backward_weight), rel=1e-12)
    assert cost.weight_copies == 2
    assert cost.in_flight == pp + 1


@pytest.mark.parametrize("stages", [2, 4, 8, 16])
def test_readme_table_dualpipev(stages: int) -> None:
    # DualPipeV: the same bubble for PP stages, on PP/2 devices, 2x parameters (two
    # chunks of 1/PP each) and PP + 1 chunks' activations per device. Our ranks' passes
    # are two chunks' worth.
    ranks = stages // 2
    rank = PassTimes(2 * CHUNK.forward, 2 * CHUNK.backward_input, 2 * CHUNK.backward_weight)
    cost = dualpipe_v(ranks, 2 * stages, rank, overlapped_forward_backward=2 * F_AND_B)
    assert cost.bubble_time == pytest.approx(
        (stages / 2 - 1) * (F_AND_B + CHUNK.backward - 3 * CHUNK.backward_weight), rel=1e-12)
    assert cost.weight_copies == 1  # two chunks of 1/PP: a rank's 1/(PP/2), no copy
    assert cost.in_flight * 2 == stages + 1  # in chunks: PP + 1


def test_dualpipe_beats_1f1b_and_zb1p_on_the_bubble() -> None:
    # DeepSeek-V3 Table 2: DualPipe's bubble is below 1F1B's and ZB1P's.
    for p in (4, 8, 16):
        assert dualpipe(p, 2 * p).bubble_time < zero_bubble_h1(p, 2 * p).bubble_time
        assert dualpipe(p, 2 * p).bubble_time < one_f_one_b(p, 2 * p).bubble_time


@pytest.mark.parametrize(("name", "p", "m", "words"), [
    ("dualpipe", 3, 12, "even number of pipeline stages"),
    ("dualpipe", 4, 9, "even number of micro-batches"),
    ("dualpipe", 4, 6, "at least twice"),
    ("dualpipev", 4, 7, "at least twice"),
    ("interleaved", 4, 6, "multiple"),
])
def test_constraints_are_named(name: str, p: int, m: int, words: str) -> None:
    assert words in schedule_constraint(name, p, m, 2)
    assert not schedule_constraint(name, 4, 16, 2)


@pytest.mark.parametrize("p", [2, 4, 8, 16])
def test_in_flight_from_the_reference_warm_up(p: int) -> None:
    for r in range(p):
        dual = chunks_in_flight("dualpipe", p, 4 * p, r, 2)
        v = chunks_in_flight("dualpipev", p, 4 * p, r, 2)
        assert sum(dual) == p + 1  # README: PP + 1 stage-sized chunks
        assert sum(v) == 2 * p + 1  # README: PP + 1 chunks with PP = 2p stages
        h = min(r, p - 1 - r)
        assert dual == ((p - h, h + 1) if r == h else (h + 1, p - h))
    assert chunks_in_flight("dualpipev", p, 4 * p, 0, 2) == (2 * p, 1)


def test_placements() -> None:
    v = split_layers(32, 4, 2, "v")
    assert v.rank_chunks(0) == (0, 7) and v.rank_chunks(3) == (3, 4)
    assert v.holds_first(0) and v.holds_last(0) and not v.holds_last(3)
    dual = split_layers(32, 4, 2, "dual")
    assert dual.model_chunks == 4 and dual.rank_layers(1) == 16  # stage 1 + copy of 2
    assert dual.compute_layers(1) == 8
    assert dual.holds_first(3) and dual.holds_last(0)


LLAMA_70B = Architecture(layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
                         ffn_hidden=28672,
                         vocab=128256, seq_len=8192, gated_mlp=True)


def test_dualpipe_doubles_the_weights_on_a_middle_rank() -> None:
    base = Strategy(tp=8, pp=8, micro_batch=1, sequence_parallel=True)
    one = {ld.rank: ld for ld in rank_loads(LLAMA_70B, base)}
    dual = {ld.rank: ld for ld in rank_loads(
        LLAMA_70B, Strategy(tp=8, pp=8, micro_batch=1, sequence_parallel=True,
                            schedule="dualpipe"))}
    vee = {ld.rank: ld for ld in rank_loads(
        LLAMA_70B, Strategy(tp=8, pp=8, micro_batch=1, sequence_parallel=True,
                            schedule="dualpipev"))}
    assert dual[1].params == pytest.approx(2 * one[1].params, rel=1e-12)
    assert vee[1].params == pytest.approx(one[1].params, rel=1e-12)
    assert dual[1].layer_units == 10 * 9  # 10 layers a stage, p + 1 in flight
    # Both ends of the model on DualPipeV's first rank: embedding and logits.
    assert vee[0].outer > one[0].outer


def test_planners_offer_both_and_keep_their_rules() -> None:
    for schedule in ("dualpipe", "dualpipev"):
        out = calculators.compute("parallel_plan", schedule=schedule, num_gpus=1024,
                                  global_batch=512).to_dict()
        pp = out["outputs"]["pp"]["value"]
        assert schedule != "dualpipe" or pp in (1, 2, 4, 6, 8, 10, 16, 20, 40, 80)
        assert out["outputs"]["comm_sms_time"]["value"] > 0
    with pytest.raises(ValidationError, match="even"):
        calculators.compute("model_memory", schedule="dualpipe", pp=5)


def test_odd_pipeline_under_dualpipe_is_a_named_error() -> None:
    with pytest.raises(ValidationError) as err:
        calculators.compute("parallel_plan", schedule="dualpipe", pp=5, num_gpus=40,
                            global_batch=400)
    assert err.value.input_name in ("pp", "global_batch")


def test_reserved_sms_slow_the_gemms_by_their_share() -> None:
    rate = GemmRate(peak_flops=989e12, memory_bandwidth=3e12, max_efficiency=0.8,
                    k_half=384.0, overhead_s=0.0, wave_exponent=0.0, sms=132)
    left = with_reserved_sms(rate, 20)
    assert left.peak_flops == pytest.approx(989e12 * 112 / 132, rel=1e-12)
    assert left.sms == 112
    with pytest.raises(ValueError, match="132"):
        with_reserved_sms(rate, 132)


def test_reserved_sms_default_and_bounds() -> None:
    plain = calculators.compute("parallel_plan", num_gpus=1024, global_batch=512).to_dict()
    assert plain["outputs"]["comm_sms_time"]["value"] == 0
    with pytest.raises(ValidationError) as err:
        calculators.compute("parallel_plan", num_gpus=1024, global_batch=512, comm_sms=200)
    assert err.value.input_name == "comm_sms"
