"""The ring's overlap condition, charged step by step, and the ranking rule that treats
layouts closer than the model's resolution as equally fast (formulas.planner.ranking)."""

from __future__ import annotations

from dataclasses import replace

import pytest

import calculators
from calculators.catalogues.link_speeds import scale_up_curve
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.parallel import context_parallel as cpar
from calculators.formulas.parallel.memory import state_bytes
from calculators.formulas.planner import layout_cost as lc
from calculators.formulas.planner.ranking import (
    RANK_TOLERANCE,
    dimensions_in_use,
    model_parallel_size,
    preferred,
)
from calculators.formulas.planner.search import search
from calculators.inputs.machine import cluster_for

GPT3 = Architecture(layers=96, hidden=12288, heads=96, kv_heads=96, head_dim=128,
                    ffn_hidden=4 * 12288, vocab=51200, seq_len=2048)
LLAMA3_405B = {"layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8,
               "ffn_hidden": 53248, "vocab": 128256, "gated_mlp": True, "biases": False,
               "position_embedding": "rotary", "tied_embeddings": False, "gpu": "h100_sxm",
               "schedule": "interleaved", "virtual_stages": 8, "cp_method": "allgather",
               "gradients": "fp32"}


def ring(arch: Architecture, *, cp: int, rate: float, bandwidth: float,
         overlap: float = 1.0) -> tuple[float, float, float]:
    """One layer's ring traffic (time, exposed, bytes) for one sequence, TP 1, inside
    one domain, no latency; ``rate`` is the attention's achieved FLOP/s, ``bandwidth``
    what the ring reaches (the line rate x the link's measured ring share)."""
    line = bandwidth / scale_up_curve("a100_80gb_sxm").ring_efficiency
    cluster = cluster_for("a100_80gb_sxm", cp, memory_bytes=80e9, domain=cp,
                          intra_bandwidth=line, inter_bandwidth=line, latency=0.0)
    cache = lc.CollectiveCache(cluster)
    # A causal fused kernel runs half of 4 s d per token forward, twice that backward.
    forward_s = 0.5 * 4.0 * arch.seq_len * arch.attention_width * arch.seq_len / cp / rate
    return lc.cp_layer_time(arch, cache, method="ring", tp=1, cp=cp, per_domain=cp,
                            micro_batch=1, act_bytes=2.0,
                            attention_s=(forward_s, 2.0 * forward_s), overlap=overlap)


@pytest.mark.parametrize("kv_heads", [96, 8])
def test_ring_hides_exactly_at_liu_et_als_chunk(kv_heads: int) -> None:
    # Liu et al. 2023, Sec. 3: a send hides behind one block's compute when the block is
    # at least F/B tokens (MHA; GQA lowers it by kv_heads/heads). A causal block does
    # half the work, so the planner's threshold is twice that: just above it nothing is
    # exposed (perfect overlap, no latency), just below it something is.
    rate, bandwidth = 187.2e12, 240e9  # A100 at 60% of peak, NVLink at 80%
    threshold = 2 * cpar.ring_min_tokens_per_gpu(rate, bandwidth) * kv_heads / 96
    cp = 4
    for chunk, hidden in ((1.05 * threshold, True), (0.95 * threshold, False)):
        seq = cp * round(chunk)
        arch = replace(GPT3, kv_heads=kv_heads, seq_len=seq)
        total, exposed, _ = ring(arch, cp=cp, rate=rate, bandwidth=bandwidth)
        assert total > 0
        assert (exposed == 0.0) is hidden


def test_ring_sends_hide_only_behind_their_own_step() -> None:
    # c - 1 sends, each against one of c equal blocks: the last block's compute hides
    # nothing, so a ring of 4 that just fails to hide exposes more than the pooled
    # (c - 1) sends less all of the attention would.
    send, attention, overlap = 3.0, 2.0, 0.8
    per_step = cpar.ring_exposed_time_s(send, 4, attention, overlap)
    assert per_step == pytest.approx(3 * (1.0 - 0.8 * 0.5), rel=1e-12)
    assert per_step > cpar.exposed_time_s(send, attention, overlap)
    assert cpar.ring_exposed_time_s(send, 1, attention, overlap) == 0.0
    # GPT-3 at 2,048 tokens on A100s: the chunk is below the threshold for every CP size
    # (1,560 tokens per GPU with the causal halving), so part of the ring is exposed.
    for cp in (2, 4, 8):
        total, exposed, _ = ring(GPT3, cp=cp, rate=187.2e12, bandwidth=240e9, overlap=0.8)
        assert 0 < exposed < total


def test_the_recommendation_is_within_the_tolerance_of_the_fastest() -> None:
    # GPT-3 at 2,048 tokens on 1,024 A100s: the recommended layout is the simplest within
    # 5% of the fastest that fits, never slower than that, and says so when it differs.
    for inputs in ({}, {"num_gpus": 512, "global_batch": 1024}, {"gpu": "h100_sxm"}):
        result = calculators.compute("parallel_plan", **inputs)
        strict = calculators.compute("parallel_plan", rank_tolerance=0, **inputs)
        slower = float(result.value("step_time")) / float(  # type: ignore[arg-type]
            strict.value("step_time"))  # type: ignore[arg-type]
        assert 1.0 <= slower <= 1.0 + RANK_TOLERANCE
        differs = slower > 1.0
        assert differs == any(note.startswith("Recommended over the fastest")
                              for note in result.computed.notes)
    assert result.value("cp") == 1  # no context parallelism at 2,048 tokens


def test_llama3_long_context_still_needs_context_parallelism() -> None:
    # 131,072-token sequences of Llama 3 405B on 16,384 H100s (Dubey et al. 2024, Table
    # 4: CP 16): with every size free, the recommended layout splits the sequence at
    # least 16 ways, and each sequence over at least 128 GPUs (TP x CP, Meta's 8 x 16);
    # activations leave no other way to fit.
    result = calculators.compute("parallel_plan", **LLAMA3_405B, seq_len=131072,
                                 num_gpus=16384, global_batch=128)
    cp, tp = float(result.value("cp")), float(result.value("tp"))  # type: ignore[arg-type]
    assert cp >= 16
    assert tp * cp >= 128


def test_preferred_orders_by_simplicity_only_within_the_tolerance() -> None:
    cluster = cluster_for("a100_80gb_sxm", 1024, memory_bytes=0.95 * 80 * 2**30)
    layouts = search(GPT3, cluster, state_bytes("bf16_mixed", "adamw"), 1536)
    fitting = [lay for lay in layouts if lay.fits]
    assert preferred(layouts, 0.0) == fitting
    ranked = preferred(layouts, 0.05)
    assert sorted(map(id, ranked)) == sorted(map(id, fitting))
    fastest = fitting[0].step_s
    near = [lay for lay in ranked if lay.step_s <= 1.05 * fastest]
    assert ranked[:len(near)] == near
    keys = [(model_parallel_size(lay.dims), dimensions_in_use(lay.dims)) for lay in near]
    assert keys == sorted(keys)
    rest = [lay.step_s for lay in ranked[len(near):]]
    assert rest == sorted(rest)
    with pytest.raises(ValueError, match="tolerance"):
        preferred(layouts, -0.1)


def test_rank_tolerance_is_bounded() -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("parallel_plan", rank_tolerance=0.9)
    assert caught.value.input_name == "rank_tolerance"


@pytest.mark.parametrize("deadline", [10, 20, 40])
def test_the_sizing_never_loses_the_deadline_to_the_simplicity_rule(deadline: int) -> None:
    # Llama 3 70B's shape, 15T tokens, failures ignored: the sizing meets the deadline and
    # its layout is never slower than the one the planner recommends at that GPU count
    # (the simplest within 5%): where the simplest would miss, it takes a faster one.
    arch = {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 28672,
            "vocab": 128256, "seq_len": 8192, "gated_mlp": True, "biases": False,
            "position_embedding": "rotary", "tied_embeddings": False}
    result = calculators.compute("cluster_sizing", **arch, gpu="h100_sxm", tokens=15e12,
                                 global_batch=2048, utilization=0.4,
                                 deadline_days=deadline, goodput=1)
    assert float(result.value("wall_clock_days")) <= deadline  # type: ignore[arg-type]
    steps = 15e12 / (2048 * 8192)
    used = float(result.value("planner_days")) * 86400 / steps  # type: ignore[arg-type]
    assert used <= deadline * 86400 / steps * (1 + 1e-9)
    plan = calculators.compute("parallel_plan", **arch, gpu="h100_sxm",
                               num_gpus=result.value("num_gpus"), global_batch=2048)
    assert used <= float(plan.value("step_time")) * (1 + 1e-9)  # type: ignore[arg-type]
