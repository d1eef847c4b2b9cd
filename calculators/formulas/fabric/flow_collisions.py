"""ecmp_collisions: k large flows hashed onto m equal-cost uplinks (balls into bins).

ECMP hashes each flow's header (the 5-tuple) to one of m next hops; a flow stays on its
link for its whole life. With k long-lived flows of equal rate and a uniform hash, the
flow count per link is a balls-into-bins occupancy: the busiest link carries the max of
m multinomial counts (Raab and Steger 1998 give its growth, ~ ln m / ln ln m for k = m).
Hedera (Al-Fares et al., NSDI 2010) measured what such collisions cost large flows in a
fat tree. Every number here is computed deterministically: exactly by a dynamic
program where that is cheap, otherwise by treating links as independent (and we say so).

Left out: flows of unequal size or start time, hash functions that are not uniform
(polarisation across tiers), collisions on the downlinks of the next tier, and the
NIC's own queue pairs (several QPs per connection raise k, which helps).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

#: Inner-loop operations the exact dynamic program may spend before we switch to the
#: independent-links approximation (keeps a recompute in the browser well under a second).
EXACT_BUDGET = 400_000
#: P(max > c) below this is treated as zero when summing E[max].
TAIL = 1e-13


def collision_probability(flows: int, links: int) -> float:
    """P(at least two flows share a link) = 1 - m! / ((m-k)! m^k): the birthday problem."""
    if flows > links:
        return 1.0
    no_collision = 1.0
    for i in range(flows):
        no_collision *= (links - i) / links
    return 1.0 - no_collision


def _ipow(base: float, exponent: int) -> float:
    """base ** exponent by repeated squaring: plain multiplications, so the result is
    the same bit for bit on every platform (libm's pow() is not guaranteed to be)."""
    result = 1.0
    while exponent:
        if exponent & 1:
            result *= base
        base *= base
        exponent >>= 1
    return result


def _binomial_pmfs(balls: int, p: float, top: int) -> list[float]:
    """P(Binomial(balls, p) = i) for i = 0..min(top, balls), 0 < p < 1.

    A recurrence from P(0) = (1-p)^balls using only multiplication and division, so
    native Python and Pyodide agree exactly. P(0) underflows only for ~700 or more
    flows per link, far beyond the exact program's budget.
    """
    top = min(top, balls)
    odds = p / (1.0 - p)
    term = _ipow(1.0 - p, balls)
    out = []
    for i in range(top + 1):
        out.append(term)
        term *= (balls - i) / (i + 1) * odds
    return out


def _binomial_all(balls: int, p: float) -> list[float]:
    """The whole Binomial(balls, p) distribution, stable for any size: unnormalised terms
    grown outwards from the mode (where the largest term is 1), then normalised."""
    mode = min(balls, int((balls + 1) * p))
    odds = p / (1.0 - p)
    terms = [0.0] * (balls + 1)
    terms[mode] = 1.0
    for i in range(mode, balls):
        terms[i + 1] = terms[i] * (balls - i) / (i + 1) * odds
    for i in range(mode, 0, -1):
        terms[i - 1] = terms[i] * i / (balls - i + 1) / odds
    total = math.fsum(terms)
    return [t / total for t in terms]


class _Budget:
    """Counts the dynamic program's inner steps; it gives up past EXACT_BUDGET."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def spend(self, steps: int) -> bool:
        self.left -= steps
        return self.left >= 0


def prob_max_at_most(flows: int, links: int, cap: int,
                     budget: _Budget | None = None) -> float | None:
    """P(no link carries more than ``cap`` flows), exactly (None: over ``budget``).

    Place the links one at a time: given r flows left for j links, the next link takes
    Binomial(r, 1/j) of them. States that can no longer fit (r > j cap) are dropped.
    """
    if cap * links < flows:
        return 0.0
    if cap >= flows:
        return 1.0
    state = {flows: 1.0}
    for left in range(links, 1, -1):
        nxt: dict[int, float] = {}
        limit = (left - 1) * cap
        for remaining, weight in state.items():
            pmfs = _binomial_pmfs(remaining, 1.0 / left, cap)
            if budget is not None and not budget.spend(len(pmfs)):
                return None
            for taken, pmf in enumerate(pmfs):
                rest = remaining - taken
                if rest <= limit:
                    nxt[rest] = nxt.get(rest, 0.0) + weight * pmf
        state = nxt
    return math.fsum(w for r, w in state.items() if r <= cap)


@dataclass(frozen=True)
class MaxLoad:
    """The distribution of the busiest link's flow count: P(max = c) for c in caps."""

    caps: tuple[int, ...]
    probabilities: tuple[float, ...]
    exact: bool

    @property
    def expected(self) -> float:
        return math.fsum(c * p for c, p in zip(self.caps, self.probabilities, strict=True))


def max_load_distribution(flows: int, links: int) -> MaxLoad:
    """P(max load = c): exact while the dynamic program fits EXACT_BUDGET.

    Beyond it, the links are treated as independent: P(max <= c) ~ F(c)^m with F the
    Binomial(k, 1/m) distribution function of one link's count.
    """
    if links == 1:
        return MaxLoad((flows,), (1.0,), True)
    one_link = _binomial_all(flows, 1.0 / links)
    cdf_one: list[float] = []
    running = 0.0
    for pmf in one_link:
        running += pmf
        cdf_one.append(min(1.0, running))
    low = math.ceil(flows / links)
    high = low
    # Union bound: P(max > c) <= m P(one link > c); stop where that is negligible.
    while high < flows and links * (1.0 - cdf_one[high]) >= TAIL:
        high += 1
    budget = _Budget(EXACT_BUDGET)
    cdf: list[float] = []
    exact = True
    for cap in range(low, high + 1):
        value = prob_max_at_most(flows, links, cap, budget) if exact else None
        if value is None:
            exact = False
            cdf = [_ipow(cdf_one[c], links) for c in range(low, high + 1)]
            break
        cdf.append(value)
    cdf[-1] = 1.0
    probs = [cdf[0]] + [max(0.0, b - a) for a, b in itertools.pairwise(cdf)]
    total = math.fsum(probs)
    return MaxLoad(tuple(range(low, high + 1)), tuple(p / total for p in probs), exact)


def flow_rate(demand: float, link_bandwidth: float, flows_on_link: int) -> float:
    """Max-min fair share of a link among equal flows, capped by each flow's own demand."""
    return min(demand, link_bandwidth / flows_on_link)
