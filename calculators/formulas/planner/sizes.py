"""Which layouts the planner's rules allow: the sizes (TP, CP, PP, DP, micro-batch) whose
product is the GPU count and that split the heads, the sequence, the layers and the
batch; the shardings of the model states searched for each; and every GPU count that
admits at least one layout."""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from typing import TYPE_CHECKING

from calculators.core.i18n import _
from calculators.core.spec import ValidationError
from calculators.formulas.parallel.placement import Dims
from calculators.formulas.planner import layout_cost as lc
from calculators.formulas.planner.layout import Options
from calculators.formulas.planner.memo import Memo

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from calculators.formulas.model.architecture import Architecture

RECOMPUTE_MODES = lc.RECOMPUTE_MODES
MICRO_BATCHES = (1, 2, 4, 8)
#: Smallest context-parallel chunk searched: one tile of a fused attention kernel
#: (FlashAttention-2 works in blocks of 64 or 128 query and key rows, Dao 2023, Sec.
#: 3.3); a chunk shorter than a tile leaves the kernel mostly idle.
MIN_CP_CHUNK_TOKENS = 128
#: A bound on the search so that a page never hangs on an odd GPU count.
MAX_LAYOUTS = 80_000
def divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def tp_allowed(arch: Architecture, tp: int) -> bool:
    """TP splits whole heads: the query and KV heads, and a linear-attention layer's key
    heads (inputs.architecture.check_layout refuses the same for a fixed TP)."""
    linear = arch.mix.linear
    return not (arch.heads % tp or arch.kv_heads % tp
                or (linear is not None and arch.attention_layers < arch.layers
                    and linear.key_heads % tp))


def cp_allowed(arch: Architecture, tp: int, cp: int, method: str) -> bool:
    """The sequence splits into 2 x cp chunks (load balancing for the causal mask, as
    Llama 3 and Megatron-Core do) of at least one attention tile each; Ulysses also
    splits the heads left after TP."""
    if cp == 1:
        return True
    if arch.seq_len % (2 * cp) or arch.seq_len // (2 * cp) < MIN_CP_CHUNK_TOKENS:
        return False
    return method != "ulysses" or ((arch.heads // tp) % cp == 0 and (arch.kv_heads // tp) % cp == 0)


def state_shardings(group: int, per_domain: int,
                    zero: int | None = None) -> list[tuple[int, int]]:
    """(ZeRO stage, shard group) pairs searched: ZeRO-1 to 3 over the whole group
    (stage 0 moves the same bytes as stage 1 and holds more, so it is left out), and
    hybrid ZeRO-2/3 inside the scale-up domain when that is a proper part of it. A
    ``zero`` stage the reader fixed keeps only its pairs (stage 0: plain data
    parallelism, every state replicated)."""
    if group == 1:
        return [(0, 1)]
    if zero == 0:
        return [(0, group)]
    pairs = [(1, group), (2, group), (3, group)]
    if 1 < per_domain < group:
        pairs += [(2, per_domain), (3, per_domain)]
    return pairs if zero is None else [pair for pair in pairs if pair[0] == zero]


def shard_groups(shard: int, group: int, per_domain: int) -> tuple[tuple[int, int], int]:
    """``dp_cost``'s (ranks, ranks per domain) of the sharding group and its replica
    count, for states sharded over ``shard`` of the CP x DP group's ``group`` ranks
    (``per_domain`` of them per scale-up domain): a shard smaller than the group is
    hybrid sharding inside one domain, replicated across the rest."""
    if shard < group:
        return (shard, shard), group // shard
    return (shard, per_domain), 1


#: One (TP, CP, PP, DP, micro-batch) the rules allow.
Sizes = tuple[int, int, int, int, int]


def allowed_sizes(arch: Architecture, n: int, global_batch: int, memo: Memo,
                  fixed: dict[str, int | None]) -> list[Sizes]:
    """Every (TP, CP, PP, DP, micro-batch) the rules allow: TP divides the heads and the
    KV heads (Megatron splits whole heads, and each rank needs whole KV heads under GQA);
    the sequence splits into 2 x CP chunks; the layers split into the pipeline's chunks
    (formulas.parallel.stages); DP divides the global batch and the micro-batch a replica's
    share; the schedule runs m micro-batches on PP ranks (Options.runs: interleaving's
    m a multiple of PP, DualPipe's even PP and m >= 2 PP, DualPipeV's m >= 2 PP)."""
    out: list[Sizes] = []
    opts = memo.options
    sizes = MICRO_BATCHES if fixed["micro_batch"] is None else (fixed["micro_batch"],)
    for t in divisors(n):
        if not tp_allowed(arch, t) or fixed["tp"] not in (None, t):
            continue
        for c in divisors(n // t):
            if fixed["cp"] not in (None, c) or not cp_allowed(arch, t, c, opts.cp_method):
                continue
            for p in divisors(n // (t * c)):
                d = n // (t * c * p)
                if fixed["pp"] not in (None, p) or fixed["dp"] not in (None, d):
                    continue
                if global_batch % d:
                    continue
                if not memo.splits(p, opts.chunks(p)):
                    continue
                per_replica = global_batch // d
                for b in sizes:
                    m = per_replica // b
                    if per_replica % b or not opts.runs(p, m):
                        continue
                    out.append((t, c, p, d, b))
    return out


def candidate_dims(arch: Architecture, n: int, global_batch: int, memo: Memo,
                   fixed: dict[str, int | None]) -> list[tuple[Dims, int]]:
    """``allowed_sizes`` as (dims, micro-batch)."""
    return [(Dims(tp=t, cp=c, dp=d, pp=p), b)
            for t, c, p, d, b in allowed_sizes(arch, n, global_batch, memo, fixed)]


def gpu_counts(arch: Architecture, global_batch: int, options: Options | None = None,
               *, start: int = 1, limit: int = 1 << 62) -> Iterator[int]:
    """Every GPU count from ``start`` to ``limit`` that admits at least one layout under
    the search's rules (``allowed_sizes``), smallest first: t x c x p x d over the sizes each
    rule allows. Lazily, as a merge of the multiples of each t x c x p by the divisors
    d of the global batch: a caller that stops early does not pay for the rest."""
    opts = options or Options()
    memo = Memo(arch, opts)
    tps = [t for t in divisors(math.gcd(arch.heads, arch.kv_heads)) if tp_allowed(arch, t)]
    cps = [c for c in divisors(arch.seq_len) if any(cp_allowed(arch, t, c, opts.cp_method)
                                                    for t in tps)]
    pps = [p for p in range(1, arch.layers + 1) if memo.splits(p, opts.chunks(p))]
    tcps = {t * c * p for t in tps for c in cps for p in pps}
    ds = divisors(global_batch)
    line: list[tuple[int, int, int]] = []  # (count, t x c x p, index of its d)
    for tcp in tcps:
        j = bisect_left(ds, -(-start // tcp))  # the smallest d with tcp x d >= start
        if j < len(ds) and tcp * ds[j] <= limit:
            line.append((tcp * ds[j], tcp, j))
    heapq.heapify(line)
    last = 0
    while line:
        count, tcp, j = line[0]
        if count != last:
            yield count
            last = count
        if j + 1 < len(ds) and tcp * ds[j + 1] <= limit:
            heapq.heapreplace(line, (tcp * ds[j + 1], tcp, j + 1))
        else:
            heapq.heappop(line)


def refuse_too_many(n: int, sizes: Sequence[Sizes]) -> None:
    """A ValidationError when ``sizes`` give too many layouts to search here."""
    count = sum(len(RECOMPUTE_MODES) * (5 if d * c > 1 else 1) for _, c, _, d, _ in sizes)
    if count > MAX_LAYOUTS:
        raise ValidationError("num_gpus", _(
            "{gpus} GPUs give too many layouts to search here ({sizes} sizes and "
            "micro-batches); fix tp, cp or pp, or pick a GPU count with fewer "
            "divisors").format(gpus=n, sizes=len(sizes)))


def searchable(arch: Architecture, n: int, global_batch: int, memo: Memo,
               fixed: dict[str, int | None]) -> list[tuple[Dims, int]]:
    """The candidates, or a ValidationError when they are too many to search here."""
    sizes = allowed_sizes(arch, n, global_batch, memo, fixed)
    refuse_too_many(n, sizes)
    return [(Dims(tp=t, cp=c, dp=d, pp=p), b) for t, c, p, d, b in sizes]
