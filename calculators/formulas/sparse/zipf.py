"""IDs drawn from a power law: how many distinct IDs a stream touches, and what share of
lookups a cache of the most popular (LFU) or most recent (LRU) rows serves.

The model: a table of ``ids`` live rows ranked by popularity, the row of rank i looked up
with probability p_i = i^-s / H(N, s), where H(N, s) = sum_{i<=N} i^-s (Zipf's law;
Breslau et al., "Web caching and Zipf-like distributions", INFOCOM 1999, Sec. 3, which
also gives the hit ratio of the ideal frequency cache below). Lookups are independent
draws (the independent reference model). s = 0 is a uniform table; recommendation ID
streams are heavy-tailed, with s near or above 1.

- **Distinct IDs among k draws**: sum_i (1 - exp(-k p_i)), the Poisson form of
  sum_i (1 - (1 - p_i)^k) (exact to O(p_i^2) per row; a row's p_i is at most 1/H).
- **LFU** (a cache that holds the C most popular rows, which a frequency-counting cache
  converges to): hit ratio H(C, s) / H(N, s).
- **LRU**: Che's approximation (Che, Tung and Wang, IEEE JSAC 20(7), 2002, Sec. III): a
  row stays in an LRU cache of C rows for a characteristic time T, the T at which the
  expected number of distinct rows looked up in T draws is C; the hit ratio is
  sum_i p_i (1 - exp(-p_i T)). Fricker, Robert and Roberts (ITC 2012) show why it is
  accurate for large caches and power laws.

Tables reach 10^12 rows, so the sums are taken exactly over the first ``EXACT_RANKS``
ranks and, beyond them, as the integral of the smooth summand over [a - 1/2, N + 1/2]
(the midpoint rule read backwards; its error is below 10^-6 of the sum there), by
Simpson's rule in log-rank.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

#: Ranks summed term by term before the tail is integrated.
EXACT_RANKS = 512
#: Simpson panels over the tail, in log-rank (even).
TAIL_PANELS = 256
#: Bisection steps in log T for Che's characteristic time (2^-60 of the bracket).
BISECTION_STEPS = 60


def rank_sum(term: Callable[[float], float], ids: float) -> float:
    """sum_{i=1}^{N} term(i) for a smooth, slowly varying ``term``: exact over the first
    ranks, Simpson's rule in log-rank over the rest."""
    exact_to = int(min(ids, EXACT_RANKS))
    head = math.fsum(term(float(i)) for i in range(1, exact_to + 1))
    if ids <= EXACT_RANKS:
        return head
    low, high = math.log(exact_to + 0.5), math.log(ids + 0.5)
    width = (high - low) / TAIL_PANELS
    parts = []
    for j in range(TAIL_PANELS + 1):
        x = math.exp(low + j * width)
        weight = 1.0 if j in (0, TAIL_PANELS) else (4.0 if j % 2 else 2.0)
        parts.append(weight * term(x) * x)
    return head + math.fsum(parts) * width / 3.0


@dataclass(frozen=True)
class Zipf:
    """``ids`` rows, the row of rank i drawn with probability i^-exponent / H."""

    ids: float
    exponent: float

    def __post_init__(self) -> None:
        if self.ids < 1 or not math.isfinite(self.ids):
            raise ValueError(f"a table needs at least one row, got {self.ids}")
        if not 0.0 <= self.exponent <= 4.0:
            raise ValueError(f"the Zipf exponent must be in [0, 4], got {self.exponent}")

    def weight_sum(self, ranks: float) -> float:
        """H(ranks, s) = sum_{i<=ranks} i^-s: the unnormalised weight of the top ranks."""
        s = self.exponent
        return rank_sum(lambda i: i ** -s, min(ranks, self.ids))

    @property
    def norm(self) -> float:
        """H(N, s)."""
        return self.weight_sum(self.ids)

    def top_share(self, rows: float) -> float:
        """The share of lookups that fall on the ``rows`` most popular rows: the hit ratio
        of an LFU cache of that many rows (Breslau et al. 1999)."""
        if rows <= 0:
            return 0.0
        if rows >= self.ids:
            return 1.0
        return min(1.0, self.weight_sum(rows) / self.norm)

    def distinct(self, draws: float, norm: float | None = None) -> float:
        """Expected distinct rows among ``draws`` independent lookups."""
        if draws <= 0:
            return 0.0
        h = self.norm if norm is None else norm
        s = self.exponent
        scale = draws / h
        return min(self.ids, draws, rank_sum(lambda i: -math.expm1(-scale * i ** -s), self.ids))

    def characteristic_draws(self, rows: float) -> float:
        """Che's characteristic time T, in lookups, of an LRU cache of ``rows`` rows: the
        number of draws whose distinct rows fill it."""
        h = self.norm
        low, high = rows, 2.0 * rows
        while self.distinct(high, h) < rows:
            low, high = high, high * 4.0
            if high > 1e300:
                return high
        for _ in range(BISECTION_STEPS):
            middle = math.sqrt(low * high)
            if self.distinct(middle, h) < rows:
                low = middle
            else:
                high = middle
        return math.sqrt(low * high)

    def lru_hit_ratio(self, rows: float) -> float:
        """Che's approximation of an LRU cache's hit ratio."""
        if rows <= 0:
            return 0.0
        if rows >= self.ids:
            return 1.0
        h = self.norm
        t = self.characteristic_draws(rows)
        s = self.exponent
        scale = t / h
        hit = rank_sum(lambda i: i ** -s * -math.expm1(-scale * i ** -s), self.ids) / h
        return min(1.0, max(0.0, hit))

    def hit_ratio(self, rows: float, policy: str) -> float:
        """The hit ratio of a cache of ``rows`` rows under ``policy`` ("lfu" or "lru")."""
        if policy == "lfu":
            return self.top_share(rows)
        if policy == "lru":
            return self.lru_hit_ratio(rows)
        raise ValueError(f"unknown cache policy {policy!r}: lfu or lru")
