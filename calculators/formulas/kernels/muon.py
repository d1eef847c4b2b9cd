"""Muon's optimizer step: the Newton-Schulz orthogonalisation of each weight matrix's
momentum, which needs the whole matrix, and what gathering it costs.

Muon (Jordan et al. 2024, "Muon: An optimizer for hidden layers in neural networks";
Liu et al. 2025, "Muon is Scalable for LLM Training", Sec. 2) keeps one momentum buffer
per matrix and replaces it, every step, by an approximately orthogonal matrix from five
iterations of a quintic Newton-Schulz map: for X (m x n, m <= n, transposed if need be),
A = X X^T, B = bA + cA^2, X <- aX + BX. One iteration multiplies m x n by n x m, m x m by
m x m and m x m by m x n: 2m^2 n + 2m^3 + 2m^2 n = 4m^2 n + 2m^3 FLOPs (derivation).

The iteration needs the whole matrix, but ZeRO/FSDP shards it over the data-parallel
ranks and tensor parallelism splits it too. Liu et al.'s Distributed Muon (Sec. 2.3)
gathers each matrix's momentum over the data-parallel group and runs the iteration on
every rank, so every rank repeats every matrix's FLOPs. Counted here instead (our
assumption of how a large sharded run arranges it): each matrix has one owner among the
ranks that share it, is gathered there, orthogonalised and scattered back, so the FLOPs
divide over the ranks (never below one whole matrix per rank) and each rank sends its
piece of every matrix to the owner and receives it back: two alltoalls of its shard,
far less traffic than gathering every matrix everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.formulas.kernels.gemm import GemmRate, gemm_time_s

if TYPE_CHECKING:
    from collections.abc import Iterable

#: Newton-Schulz iterations per step (Jordan et al. 2024; Liu et al. 2025 keep five).
NEWTON_SCHULZ_STEPS = 5

#: A weight matrix: (rows, columns, how many of that shape a rank holds).
Matrix = tuple[int, int, float]


def newton_schulz_flops(rows: int, cols: int, steps: int = NEWTON_SCHULZ_STEPS) -> float:
    """FLOPs of Muon's orthogonalisation of one rows x cols matrix: steps x (4m^2 n +
    2m^3), m the smaller side."""
    m, n = min(rows, cols), max(rows, cols)
    return steps * (4.0 * m * m * n + 2.0 * m ** 3)


def newton_schulz_time_s(rows: int, cols: int, rate: GemmRate,
                         steps: int = NEWTON_SCHULZ_STEPS) -> float:
    """Seconds of one matrix's iterations at the 16-bit GEMM rate of its shapes (BF16,
    as Jordan et al. run it)."""
    m, n = min(rows, cols), max(rows, cols)
    one = gemm_time_s(m, m, n, rate) + gemm_time_s(m, m, m, rate) + gemm_time_s(m, n, m, rate)
    return steps * one


def dense_layer_matrices(hidden: int, q_width: int, kv_width: int, ffn_hidden: int,
                         gated: bool) -> tuple[tuple[int, int], ...]:
    """The weight matrices of one dense transformer layer, each orthogonalised on its
    own (Q, K, V, the attention output, the MLP's up, gate if gated, and down)."""
    mlp = ((hidden, ffn_hidden),) * (2 if gated else 1) + ((ffn_hidden, hidden),)
    return ((hidden, q_width), (hidden, kv_width), (hidden, kv_width),
            (q_width, hidden), *mlp)


def muon_compute_s(matrices: Iterable[Matrix], ranks: int, rate: GemmRate) -> float:
    """Seconds of Newton-Schulz on the busiest of ``ranks`` ranks that share the given
    matrices (counts as held by the whole group): the work spread evenly by whole
    matrices, never less than the largest one."""
    total, largest = 0.0, 0.0
    for rows, cols, count in matrices:
        if count <= 0:
            continue
        one = newton_schulz_time_s(rows, cols, rate)
        total += one * count
        largest = max(largest, one)
    return max(total / max(1, ranks), largest)


def flops_per_param(rows: int, cols: int, steps: int = NEWTON_SCHULZ_STEPS) -> float:
    """Newton-Schulz FLOPs per parameter of a rows x cols matrix: 5(4m + 2m^2/n), m the
    smaller side; 30h for a square h x h matrix."""
    return newton_schulz_flops(rows, cols, steps) / (rows * cols)
