"""Dynamic embedding tables: how many IDs are live, and what a hash table that holds them
costs, with or without collisions.

Production ID spaces are unbounded (new users, items, ads and crosses every hour), so a
table is not sized by a row count fixed in advance but by the IDs that are live in it.
Two mechanisms keep that number bounded, both in ByteDance's Monolith (Liu et al. 2022,
arXiv:2209.07663, Sec. 2.1: a collisionless Cuckoo hash table with frequency filtering
and expirable embeddings) and in TorchRec's managed-collision modules and NVIDIA's
HierarchicalKV: **admission** (an ID gets a row only once it has been seen often enough)
and **expiry** (a row not looked up for E days is evicted).

- **Live rows** by Little's law (Little 1961, L = lambda W: the mean number in a stable
  system is the arrival rate times the mean time spent in it): admitted IDs arrive at
  lambda a per day and each stays for the days it keeps being seen plus the expiry
  window, so L = lambda a (active + E), plus a base of long-lived IDs.
- **No eviction**: after D days the table holds lambda a D + base rows, and grows forever.
- **Collisionless** (a key -> row hash map): each slot holds the key, its metadata (a
  frequency count, a last-seen time or score) and the row with its optimizer state;
  capacity = live rows / load factor, and the empty slots cost as much as full ones
  because the table is preallocated (HierarchicalKV's README benchmarks a table of a
  given capacity at the same memory whether it is 50%, 75% or 100% full).
- **Fixed** (the hashing trick: IDs hashed into R rows): L IDs thrown into R bins, the
  expected occupied rows are R (1 - e^(-L/R)) and a given ID shares its row with at least
  one other with probability 1 - (1 - 1/R)^(L-1) ~ 1 - e^(-(L-1)/R) (balls into bins,
  IDs hashed uniformly and independently).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def live_rows(new_ids_per_day: float, admit_share: float, active_days: float,
              expiry_days: float, base_ids: float = 0.0) -> float:
    """Little's law: admitted arrivals per day x days each stays (active + expiry)."""
    return new_ids_per_day * admit_share * (active_days + expiry_days) + base_ids


def rows_without_eviction(new_ids_per_day: float, admit_share: float, days: float,
                          base_ids: float = 0.0) -> float:
    """Every admitted ID kept: the table grows by lambda a rows a day."""
    return new_ids_per_day * admit_share * days + base_ids


def occupied_rows(ids: float, rows: float) -> float:
    """Expected non-empty rows when ``ids`` IDs hash uniformly into ``rows`` rows."""
    return rows * -math.expm1(-ids / rows)


def shared_share(ids: float, rows: float) -> float:
    """The share of IDs whose row also holds at least one other live ID."""
    return -math.expm1(-max(0.0, ids - 1.0) / rows)


@dataclass(frozen=True)
class HashTable:
    """What a table of ``live`` IDs holds and costs: its slots (rows), the bytes of the
    rows that hold live IDs, and the rest (keys, metadata, empty slots)."""

    live: float
    slots: float
    slot_bytes: float
    row_bytes: float
    held_rows: float  # rows holding at least one live ID
    collision_share: float  # share of live IDs sharing their row

    @property
    def total_bytes(self) -> float:
        return self.slots * self.slot_bytes

    @property
    def row_payload_bytes(self) -> float:
        """Rows holding live IDs, weights and optimizer state only."""
        return self.held_rows * self.row_bytes

    @property
    def overhead_bytes(self) -> float:
        """Keys, metadata and empty slots: everything that is not a live row."""
        return max(0.0, self.total_bytes - self.row_payload_bytes)

    @property
    def overhead_ratio(self) -> float:
        return self.overhead_bytes / self.row_payload_bytes


def collisionless_table(live: float, load_factor: float, key_bytes: float,
                        metadata_bytes: float, row: float) -> HashTable:
    """A key -> row map preallocated at ``live / load_factor`` slots, each slot with its
    key, metadata and row (empty slots included: their space is reserved)."""
    if not 0.0 < load_factor <= 1.0:
        raise ValueError(f"a load factor is in (0, 1], got {load_factor}")
    slots = max(1.0, math.ceil(live / load_factor))
    return HashTable(live, slots, key_bytes + metadata_bytes + row, row, live, 0.0)


def fixed_table(live: float, rows: float, row: float) -> HashTable:
    """``rows`` rows, no keys: IDs hashed into them share rows when they collide."""
    return HashTable(live, rows, row, row, occupied_rows(live, rows),
                     shared_share(live, rows))
