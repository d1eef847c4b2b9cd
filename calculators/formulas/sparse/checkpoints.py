"""What changes between two moments of a streaming job: the rows shipped to serving at
each sync, and the incremental, quantised checkpoints of Check-N-Run.

- **Rows touched** in an interval: the expected distinct IDs among the interval's
  lookups, drawn from a Zipf popularity over the live rows (``zipf.Zipf.distinct``).
  All tables are read as one ID space with one exponent, which merges tables of very
  different sizes and popularity: a first-order model.
- **Sync to serving** (Monolith, Liu et al. 2022, Sec. 2.3): every sparse sync interval,
  the rows touched since the last one, weights only, at the serving precision, each with
  its 8-byte ID; every dense sync interval, the dense weights.
- **Incremental checkpoints** (Check-N-Run, Eisenman et al., NSDI 2022): each writes only
  the rows modified since the last checkpoint (its "consecutive incremental" scheme),
  their weights quantised to b bits an element with a scale and a bias per row, their
  optimizer state in fp32 (not quantised: an assumption, a restore needs it), their
  IDs, and the dense part in fp32 with Adam's two moments (an assumption: the dense
  part is small and changes every step). A full fp32 checkpoint of weights and optimizer
  state every K checkpoints starts a new chain; a restore reads the full one and the
  increments after it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators.formulas.sparse.embeddings import (
    DTYPE_BYTES,
    FP32_BYTES,
    optimizer_bytes,
    weight_bytes,
)
from calculators.formulas.sparse.sharding import INDEX_BYTES
from calculators.formulas.sparse.zipf import Zipf

#: Dense part in a checkpoint: fp32 weights and Adam's two fp32 moments per parameter.
DENSE_CHECKPOINT_BYTES_PER_PARAM = 3 * FP32_BYTES
#: Serving precisions: FBGEMM's element sizes (int8 rows carry 8 B of scale and bias).
SERVING_DTYPES: tuple[str, ...] = tuple(DTYPE_BYTES)


def rows_touched(live_rows: float, exponent: float, lookups: float) -> float:
    """Expected distinct rows among ``lookups`` Zipf draws over ``live_rows`` rows; never
    more than either."""
    if lookups <= 0:
        return 0.0
    return min(live_rows, lookups, Zipf(live_rows, exponent).distinct(lookups))


def serving_row_bytes(dim: int, dtype: str) -> float:
    """One row as a sync ships it: its ID and its weights at the serving precision."""
    return INDEX_BYTES + weight_bytes(1, dim, dtype)


@dataclass(frozen=True)
class Sync:
    """One sparse sync to serving, and the dense one."""

    rows: float
    sparse_bytes: float
    interval_s: float
    transfer_s: float
    dense_bytes: float
    dense_transfer_s: float

    @property
    def average_bandwidth(self) -> float:
        """Bytes per second the sparse syncs need, averaged over the interval."""
        return self.sparse_bytes / self.interval_s

    @property
    def link_load(self) -> float:
        """Transfer time over the interval: above 1, the syncs fall behind."""
        return self.transfer_s / self.interval_s


def sync_to_serving(*, rows: float, dim: int, dtype: str, interval_s: float,
                    dense_params: float, link_bandwidth: float) -> Sync:
    sparse = rows * serving_row_bytes(dim, dtype)
    transfer = sparse / link_bandwidth
    dense = dense_params * DTYPE_BYTES[dtype]
    return Sync(rows, sparse, interval_s, transfer, dense, dense / link_bandwidth)


def quantised_row_bytes(dim: int, bits: int, qparam_bytes: float) -> float:
    """A row quantised row-wise: ``dim`` elements of ``bits`` bits (packed, rounded up to
    whole bytes), plus its scale and bias."""
    return math.ceil(dim * bits / 8) + qparam_bytes


def quantisation_ratio(dim: int, bits: int, qparam_bytes: float) -> float:
    """fp32 row bytes over the quantised row's: what quantisation alone saves."""
    return dim * FP32_BYTES / quantised_row_bytes(dim, bits, qparam_bytes)


@dataclass(frozen=True)
class CheckpointPlan:
    """Full and incremental checkpoint sizes, and the write bandwidth each needs."""

    rows_modified: float
    full_bytes: float
    incremental_bytes: float
    interval_s: float
    full_every: int
    storage_bandwidth: float

    @property
    def reduction(self) -> float:
        """Full over incremental bytes."""
        return self.full_bytes / self.incremental_bytes if self.incremental_bytes else 0.0

    @property
    def incremental_write_s(self) -> float:
        return self.incremental_bytes / self.storage_bandwidth

    @property
    def full_write_s(self) -> float:
        return self.full_bytes / self.storage_bandwidth

    @property
    def cycle_bytes(self) -> float:
        """One full checkpoint and the K - 1 increments after it: a restorable chain."""
        return math.fsum((self.full_bytes, (self.full_every - 1) * self.incremental_bytes))

    @property
    def average_bandwidth(self) -> float:
        """Bytes written per second over a cycle of K intervals."""
        return self.cycle_bytes / (self.full_every * self.interval_s)

    @property
    def bandwidth_reduction(self) -> float:
        """A full checkpoint every interval against the cycle, in average write rate."""
        return self.full_bytes / self.cycle_bytes * self.full_every


def checkpoint_plan(*, live_rows: float, rows_modified: float, dim: int, optimizer: str,
                    bits: int, qparam_bytes: float, dense_params: float, interval_s: float,
                    full_every: int, storage_bandwidth: float) -> CheckpointPlan:
    """Full: every live row's fp32 weights and optimizer state, and the dense part.
    Incremental: the modified rows' IDs, quantised weights and fp32 state, and the
    dense part."""
    state_per_row = optimizer_bytes(1, dim, optimizer)
    dense = dense_params * DENSE_CHECKPOINT_BYTES_PER_PARAM
    full = math.fsum((live_rows * (weight_bytes(1, dim, "fp32") + state_per_row), dense))
    per_row = INDEX_BYTES + quantised_row_bytes(dim, bits, qparam_bytes) + state_per_row
    incremental = math.fsum((rows_modified * per_row, dense))
    return CheckpointPlan(rows_modified, full, incremental, interval_s, full_every,
                          storage_bandwidth)
