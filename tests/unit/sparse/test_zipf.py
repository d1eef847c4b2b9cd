"""The Zipf popularity model: its sums against brute force, the closed forms of LFU and
of Che's LRU approximation on a uniform table, Che against a simulated LRU cache, and
monotonicity in the cache size and the exponent."""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculators.formulas.sparse.zipf import EXACT_RANKS, Zipf, rank_sum

EULER_GAMMA = 0.5772156649015329


@pytest.mark.parametrize("ids", [1000, 10**6, 10**10])
def test_uniform_lru_hits_are_cache_over_table(ids: int) -> None:
    # s = 0: distinct(T) = N (1 - e^(-T/N)) = C gives a hit ratio 1 - e^(-T/N) = C / N.
    zipf = Zipf(ids, 0.0)
    for share in (0.01, 0.1, 0.5, 0.9):
        assert zipf.lru_hit_ratio(share * ids) == pytest.approx(share, rel=1e-6)


@pytest.mark.parametrize("ids", [100, 10**6, 10**10])
def test_lfu_closed_forms(ids: int) -> None:
    uniform = Zipf(ids, 0.0)
    # Beyond the exact ranks the sum is an integral (Simpson in log-rank): 1e-6 or better.
    assert uniform.top_share(ids // 4) == pytest.approx((ids // 4) / ids, rel=1e-6)
    harmonic = Zipf(ids, 1.0)
    cache = ids // 10

    def h(n: int) -> float:  # Euler-Maclaurin to 1/n^2; exact sums for small n
        if n <= 10_000:
            return math.fsum(1.0 / i for i in range(1, n + 1))
        return math.log(n) + EULER_GAMMA + 1 / (2 * n) - 1 / (12 * n * n)

    assert harmonic.top_share(cache) == pytest.approx(h(cache) / h(ids), rel=1e-7)
    assert harmonic.top_share(0) == 0.0
    assert harmonic.top_share(ids) == 1.0


@pytest.mark.parametrize("exponent", [0.0, 0.6, 1.0, 1.3])
@pytest.mark.parametrize("ids", [EXACT_RANKS - 1, 5000, 20_000])
def test_rank_sum_against_brute_force(ids: int, exponent: float) -> None:
    def power(i: float) -> float:
        return i ** -exponent

    scale = 3e3 / ids

    def seen(i: float) -> float:
        return -math.expm1(-scale * i ** -exponent)

    for term in (power, seen):
        brute = math.fsum(term(float(i)) for i in range(1, ids + 1))
        assert rank_sum(term, ids) == pytest.approx(brute, rel=1e-6)


def _simulated_lru_hits(ids: int, cache: int, exponent: float, draws: int,
                        rng: random.Random) -> float:
    weights = [i ** -exponent for i in range(1, ids + 1)]
    cumulative = list(itertools.accumulate(weights))
    total = cumulative[-1]
    held: OrderedDict[int, None] = OrderedDict()
    hits = counted = 0
    warm = draws // 10
    for step in range(draws):
        row = bisect.bisect_left(cumulative, rng.random() * total)
        if row in held:
            held.move_to_end(row)
            hits += step >= warm
        else:
            held[row] = None
            if len(held) > cache:
                held.popitem(last=False)
        counted += step >= warm
    return hits / counted


@pytest.mark.parametrize(("ids", "cache", "exponent"),
                         [(2000, 200, 0.9), (2000, 50, 1.2), (5000, 1000, 0.6)])
def test_che_against_a_simulated_lru_cache(ids: int, cache: int, exponent: float) -> None:
    simulated = _simulated_lru_hits(ids, cache, exponent, 200_000, random.Random(0))
    assert Zipf(ids, exponent).lru_hit_ratio(cache) == pytest.approx(simulated, abs=0.015)


def test_distinct_ids_against_brute_force_and_their_bounds() -> None:
    zipf = Zipf(5000, 0.9)
    norm = math.fsum(i ** -0.9 for i in range(1, 5001))
    for draws in (10.0, 1e3, 1e5):
        brute = math.fsum(1 - (1 - i ** -0.9 / norm) ** draws for i in range(1, 5001))
        # The Poisson form 1 - e^(-k p) for 1 - (1 - p)^k: off by O(k p^2) per row, which
        # matters only for the few most popular rows of a short stream.
        assert zipf.distinct(draws) == pytest.approx(brute, rel=5e-3)
    huge = Zipf(1e9, 1.0)
    assert huge.distinct(10) <= 10
    assert huge.distinct(1e15) <= 1e9


@settings(max_examples=40, deadline=None)
@given(ids=st.floats(10, 1e12), exponent=st.floats(0.0, 2.0),
       small=st.floats(0.001, 0.5), factor=st.floats(1.1, 1.9),
       policy=st.sampled_from(["lfu", "lru"]))
def test_hits_grow_with_the_cache(ids: float, exponent: float, small: float, factor: float,
                                  policy: str) -> None:
    zipf = Zipf(ids, exponent)
    low = zipf.hit_ratio(math.floor(small * ids), policy)
    high = zipf.hit_ratio(math.floor(small * factor * ids), policy)
    assert 0.0 <= low <= high + 1e-9 <= 1.0 + 1e-9


@settings(max_examples=40, deadline=None)
@given(ids=st.floats(100, 1e12), exponent=st.floats(0.0, 1.8), step=st.floats(0.05, 0.2),
       share=st.floats(0.001, 0.5), policy=st.sampled_from(["lfu", "lru"]))
def test_hits_grow_with_the_exponent(ids: float, exponent: float, step: float,
                                     share: float, policy: str) -> None:
    flat = Zipf(ids, exponent).hit_ratio(share * ids, policy)
    steep = Zipf(ids, exponent + step).hit_ratio(share * ids, policy)
    assert flat <= steep + 1e-9


@settings(max_examples=30, deadline=None)
@given(ids=st.floats(10, 1e10), exponent=st.floats(0.0, 2.0), share=st.floats(0.0, 1.0))
def test_lfu_beats_lru_under_independent_lookups(ids: float, exponent: float,
                                                 share: float) -> None:
    # Keeping the most popular rows is the best a cache of C rows can do when lookups
    # are independent draws.
    zipf = Zipf(ids, exponent)
    rows = math.floor(share * ids)  # a cache holds whole rows
    assert zipf.hit_ratio(rows, "lru") <= zipf.hit_ratio(rows, "lfu") + 1e-6


def test_bad_tables_and_policies_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one row"):
        Zipf(0.5, 1.0)
    with pytest.raises(ValueError, match="exponent"):
        Zipf(10, 5.0)
    with pytest.raises(ValueError, match="policy"):
        Zipf(10, 1.0).hit_ratio(5, "fifo")
