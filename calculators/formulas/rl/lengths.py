"""Response lengths of a batch of rollouts: a cap and a mean, and the shape between them.

Published RL runs state a maximum length and, sometimes, the mean (NeMo-RL's performance
summary: Qwen3-235B 5,698 of 8,192, 0.70; Qwen3-30B-A3B 3,203 of 4,096, 0.78;
DeepSeek-V3 701 of 1,536, 0.46; a SWE agent 31,599 of 131,072, 0.24), but not the whole
distribution. Our assumption, stated on the page: lengths follow L = cap x u^a with u
uniform on (0, 1) and a = cap / mean - 1, the one-parameter family whose mean is the
given mean and whose top is the cap. A mean near the cap (a -> 0) puts many responses
at or near the cap (truncation); a small mean gives a long tail of a few long responses
behind many short ones, which is what leaves a synchronous batch waiting on its slowest
responses (Magistral, arXiv 2506.10910, Sec. 3: the longest completions take up to 5x
as long as the shortest).
"""

from __future__ import annotations

import math


def shape_exponent(mean: float, cap: float) -> float:
    """``a`` of L = cap u^a for this mean (a >= 0; 0 when every response hits the cap)."""
    if not 0 < mean <= cap:
        raise ValueError(f"the mean length must be in (0, cap], got {mean} of {cap}")
    return cap / mean - 1.0


def quantile_lengths(count: int, mean: float, cap: float) -> list[int]:
    """``count`` response lengths at evenly spaced quantiles (u = (i + 1/2)/count), at
    least one token each, shortest first."""
    a = shape_exponent(mean, cap)
    return [max(1, min(int(cap), round(cap * math.pow((i + 0.5) / count, a))))
            for i in range(count)]


def share_at_cap(mean: float, cap: float, within: float = 0.95) -> float:
    """The share of responses longer than ``within`` x cap: 1 - within^(1/a)."""
    a = shape_exponent(mean, cap)
    return 1.0 if a == 0 else 1.0 - math.pow(within, 1.0 / a)
