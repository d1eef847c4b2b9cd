"""Where the rows of a table larger than HBM live, and whether each storage tier keeps up.

Systems that train tables larger than their GPUs' memory keep the rows in tiers: the
hottest in HBM, the next in host DRAM, the rest on NVMe SSDs (Zhao et al., MLSys 2020,
arXiv:2003.05622: a hierarchical GPU parameter server over HBM, CPU memory and SSD;
FBGEMM/TorchRec's UVM caching kernels; HugeCTR's hierarchical parameter server). Whether
a design works is a cache question (what share of lookups each tier serves, from the
popularity law of the IDs: formulas.sparse.zipf) times a bandwidth question (what each
tier must move per second against what it can).

The model:

- **Nested caches.** The tiers hold the most popular rows: HBM the top C1, host DRAM the
  next C2, SSD the rest. Under LFU, with independent draws (the independent reference
  model), that is exact: the HBM tier serves H(C1)/H(N) of the lookups and DRAM
  H(C1+C2)/H(N) minus that. Under LRU the union of HBM and DRAM is taken as one LRU
  cache of C1 + C2 rows (Che's approximation for each): an approximation, since a real
  two-level LRU is not exactly a single one.
- **Traffic.** Training reads every row it looks up and writes it back updated, with its
  optimizer state. Every lookup's row is read and written in HBM (the kernels run on
  the GPU, a row fetched from below is staged there). Rows from DRAM or SSD cross the
  host-GPU link one way and their updates cross it back: the link is full duplex, so
  each direction carries the rows of (h2 + h3) of the lookups, and host memory moves
  both (SSD rows are staged in host memory: no GPUDirect Storage). SSD rows are read at
  ceil(row bytes / 4 KiB) random reads each, and written back as log-structured,
  sequential writes (priced by write bandwidth, not random-write IOPS).
- **Utilisation** of a tier = bytes (or IOs) per second it must serve / what it can;
  for the SSD, the read and write shares of the device's time add. The tier with the
  highest utilisation binds; the samples per second the storage sustains scale with
  1 / that utilisation (linear in the load, with no queueing delay).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.core.i18n import N_

if TYPE_CHECKING:
    from calculators.formulas.sparse.zipf import Zipf

#: The SSD page a random read fetches: a row costs ceil(row bytes / 4 KiB) reads, as
#: NVMe drives rate random reads in 4 KiB IOs.
SSD_PAGE_BYTES = 4096


def tier_hit_shares(zipf: Zipf, hbm_rows: float, dram_rows: float,
                    policy: str) -> tuple[float, float, float]:
    """Shares of lookups served by HBM, host DRAM and SSD for nested caches of the most
    popular rows (exact for LFU; for LRU the two upper tiers as one LRU cache)."""
    top = zipf.hit_ratio(hbm_rows, policy)
    upper = max(top, zipf.hit_ratio(hbm_rows + dram_rows, policy))
    return top, upper - top, max(0.0, 1.0 - upper)


def ios_per_row(row_bytes: float) -> int:
    """Random reads one row costs on the SSD."""
    return max(1, math.ceil(row_bytes / SSD_PAGE_BYTES))


@dataclass(frozen=True)
class Storage:
    """The cluster's tiers, in rows and in rates (all GPUs and nodes together)."""

    hbm_rows: float
    dram_rows: float
    ssd_rows: float
    hbm_bandwidth: float  # B/s, all GPUs
    link_bandwidth: float  # B/s per direction, all GPUs' host links
    dram_bandwidth: float  # B/s, the host memory channels' achieved rate, all nodes
    ssd_read_bandwidth: float  # B/s, all drives
    ssd_read_iops: float  # 4 KiB random reads per second, all drives
    ssd_write_bandwidth: float  # B/s, all drives


@dataclass(frozen=True)
class TierLoad:
    """One tier's share of the lookups, what it moves per second, and how busy it is."""

    name: str  # a key (embedding_tiers looks it up): translated where it is shown
    rows: float  # rows it holds
    lookup_share: float
    bytes_per_s: float  # what it must move (reads + writes)
    bandwidth: float  # what it can move of that mix (SSD: reads at IOPS or bandwidth,
    # plus writes)
    utilisation: float


@dataclass(frozen=True)
class TierPlan:
    """The tiers' loads at one workload, and the workload the storage can sustain."""

    loads: tuple[TierLoad, ...]
    lookups_per_s: float

    @property
    def binding(self) -> TierLoad:
        return max(self.loads, key=lambda load: load.utilisation)

    @property
    def headroom(self) -> float:
        """How many times the workload the storage could take (1 / highest utilisation)."""
        worst = self.binding.utilisation
        return math.inf if worst <= 0 else 1.0 / worst


def place_rows(total_rows: float, storage: Storage) -> tuple[float, float, float]:
    """Rows held by HBM, DRAM and SSD: the hottest first, each tier up to its capacity."""
    hbm = min(total_rows, storage.hbm_rows)
    dram = min(total_rows - hbm, storage.dram_rows)
    ssd = min(total_rows - hbm - dram, storage.ssd_rows)
    return hbm, dram, ssd


def tier_plan(zipf: Zipf, storage: Storage, policy: str, lookups_per_s: float,
              row_bytes: float) -> TierPlan:
    """Each tier's load for ``lookups_per_s`` unique lookups of rows of ``row_bytes``."""
    hbm_rows, dram_rows, ssd_rows = place_rows(zipf.ids, storage)
    h1, h2, h3 = tier_hit_shares(zipf, hbm_rows, dram_rows, policy)
    # Every row is read and written back in HBM, whichever tier it came from.
    hbm_bytes = 2.0 * lookups_per_s * row_bytes
    # One direction of the host link: rows coming up (their updates go back down).
    link_bytes = (h2 + h3) * lookups_per_s * row_bytes
    # Rows coming up and their updates going down each pass once through host memory
    # (SSD rows land in a host buffer first: no GPUDirect Storage).
    dram_bytes = 2.0 * link_bytes
    ssd_rows_per_s = h3 * lookups_per_s
    # Device time per row: its random reads (bandwidth or IOPS, whichever binds) plus its
    # sequential write-back; the drives' rate for this read/write mix follows from it.
    ssd_time_per_row = (max(row_bytes / storage.ssd_read_bandwidth,
                            ios_per_row(row_bytes) / storage.ssd_read_iops)
                        + row_bytes / storage.ssd_write_bandwidth)
    ssd_mix_bandwidth = 2.0 * row_bytes / ssd_time_per_row
    ssd_bytes = 2.0 * ssd_rows_per_s * row_bytes
    loads = (
        TierLoad("HBM", hbm_rows, h1, hbm_bytes, storage.hbm_bandwidth,
                 hbm_bytes / storage.hbm_bandwidth),
        TierLoad(N_("host-GPU link (one direction)"), 0.0, h2 + h3, link_bytes,
                 storage.link_bandwidth, link_bytes / storage.link_bandwidth),
        TierLoad(N_("host DRAM"), dram_rows, h2, dram_bytes, storage.dram_bandwidth,
                 dram_bytes / storage.dram_bandwidth),
        TierLoad("SSD", ssd_rows, h3, ssd_bytes, ssd_mix_bandwidth,
                 ssd_bytes / ssd_mix_bandwidth),
    )
    return TierPlan(loads, lookups_per_s)
