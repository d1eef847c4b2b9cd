"""The ``dynamic_tables`` calculator: a hash embedding table sized by its live IDs
(admission and expiry, Little's law) rather than by a row count, collisionless or with
hashed rows (formulas.sparse.hash_tables)."""

from __future__ import annotations

import math

from calculators.core import units
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output
from calculators.formulas.sparse.embeddings import shard_bytes
from calculators.formulas.sparse.hash_tables import (
    HashTable,
    collisionless_table,
    fixed_table,
    live_rows,
    rows_without_eviction,
)
from calculators.inputs.embeddings import (
    gpu_params,
    host_params,
    host_usable_bytes,
    usable_gpu_bytes,
)
from calculators.inputs.hash_tables import id_flow_params, row_params, table_kind_params

#: Above this load factor, open-addressing probe sequences grow quickly: for linear
#: probing an unsuccessful search takes about (1 + 1/(1 - a)^2) / 2 probes (Knuth, TAOCP
#: Vol. 3, Sec. 6.4), 50 at a = 0.9.
HIGH_LOAD_FACTOR = 0.9
#: Share of live IDs sharing a row above which we warn (an assumption: Monolith keeps
#: one row per ID because collisions cost model quality; 5% is our threshold).
HIGH_COLLISION_SHARE = 0.05


def _table(inputs: Inputs, live: float, row: float) -> HashTable:
    if inputs.text("hashing") == "fixed":
        return fixed_table(live, inputs.num("table_rows"), row)
    return collisionless_table(live, inputs.num("load_factor"), inputs.whole("key_bytes"),
                               inputs.whole("metadata_bytes"), row)


def _components(inputs: Inputs, table: HashTable) -> Table:
    """The bytes by what they hold."""
    fmt = units.format_value
    total = table.total_bytes
    if inputs.text("hashing") == "fixed":
        parts = [(_("rows holding live IDs"), table.row_payload_bytes),
                 (_("empty rows"), table.overhead_bytes)]
    else:
        live = table.live
        keys = live * inputs.whole("key_bytes")
        meta = live * inputs.whole("metadata_bytes")
        empty = (table.slots - live) * table.slot_bytes
        parts = [(_("live rows: weights + optimizer state"), table.row_payload_bytes),
                 (_("keys of live rows"), keys), (_("metadata of live rows"), meta),
                 (_("empty slots (key + metadata + row each)"), max(0.0, empty))]
    rows = tuple((name, fmt(value, "B", "si"), f"{value / total:.1%}")
                 for name, value in parts)
    return Table((_("component"), _("bytes"), _("share")),
                 (*rows, (_("total"), fmt(total, "B", "si"), "100.0%")),
                 caption=_("What the table's memory holds"))


def _warnings(inputs: Inputs, table: HashTable) -> list[str]:
    warnings: list[str] = []
    if inputs.text("hashing") == "fixed":
        if table.collision_share > HIGH_COLLISION_SHARE:
            warnings.append(_(
                "{share:.1%} of live IDs share their row with another ID: their embeddings "
                "are averaged together by training. More rows, or a collisionless table, "
                "bring this down.").format(share=table.collision_share))
    elif inputs.num("load_factor") > HIGH_LOAD_FACTOR:
        warnings.append(_(
            "A load factor of {load:.0%} makes probe sequences long (open addressing: about "
            "50 probes per miss at 90% with linear probing) and inserts fail or evict early "
            "(two-choice cuckoo hashing needs under 50%); only bucketed tables such as "
            "HierarchicalKV's 128-slot buckets run this full.").format(
            load=inputs.num("load_factor")))
    return warnings


def _dynamic_tables(inputs: Inputs) -> Computed:
    per_day, admit = inputs.num("new_ids_per_day"), inputs.num("admit_share")
    base = inputs.num("base_ids")
    live = live_rows(per_day, admit, inputs.num("active_days"), inputs.num("expiry_days"),
                     base)
    dim = inputs.whole("embedding_dim")
    row = shard_bytes(1, dim, inputs.text("dtype"), inputs.text("optimizer"))
    table = _table(inputs, live, row)
    total = table.total_bytes
    unevicted = rows_without_eviction(per_day, admit, inputs.num("horizon_days"), base)
    return Computed(
        values={
            "live_rows": live,
            "admitted_per_day": per_day * admit,
            "live_params": live * dim,
            "row_bytes": row,
            "table_slots": table.slots,
            "total_bytes": total,
            "bytes_per_live_id": total / live,
            "overhead_ratio": table.overhead_ratio,
            "collision_share": table.collision_share,
            "rows_without_eviction": unevicted,
            "growth_without_eviction": unevicted / live,
            "min_gpus": math.ceil(total / usable_gpu_bytes(inputs)),
            "min_ps_hosts": math.ceil(total / host_usable_bytes(inputs)),
        },
        warnings=_warnings(inputs, table),
        notes=[
            _("Live rows by Little's law: admitted IDs per day x (days active + expiry "
              "window), plus the long-lived IDs; a steady state, reached after the first "
              "active + expiry days."),
            _("Without eviction the table would hold {rows} after {days:g} days, and keep "
              "growing.").format(rows=units.format_value(unevicted, "row", "count"),
                                 days=inputs.num("horizon_days")),
        ],
        table=_components(inputs, table),
    )


DYNAMIC_TABLES = Calculator(
    id="dynamic_tables",
    headline=("live_rows", "total_bytes", "min_gpus"),
    title="Dynamic embedding tables: live IDs, admission, expiry, hashing",
    summary="A hash embedding table sized by the IDs live in it: admission, expiry, "
            "load factor or collisions, and the GPUs or hosts to hold it.",
    chapter="sparse.md",
    params=(
        *id_flow_params(),
        *table_kind_params(),
        *row_params(),
        *gpu_params(),
        *host_params(),
    ),
    outputs=(
        Output("live_rows", "Live IDs (steady state)", "row", "count"),
        Output("admitted_per_day", "IDs admitted per day", "ID/day", "count"),
        Output("live_params", "Parameters in live rows", "param", "count"),
        Output("row_bytes", "Bytes per row (weights + optimizer)", "B", "si"),
        Output("table_slots", "Table capacity", "slot", "count"),
        Output("total_bytes", "Table memory", "B", "si"),
        Output("bytes_per_live_id", "Bytes per live ID", "B", "si"),
        Output("overhead_ratio", "Overhead over the live rows' bytes", "1", "percent",
               help="Keys, metadata and empty slots (or empty rows) over the bytes of "
                    "the rows that hold live IDs."),
        Output("collision_share", "Live IDs sharing a row", "1", "percent"),
        Output("rows_without_eviction", "Rows at the horizon without eviction", "row",
               "count"),
        Output("growth_without_eviction", "Without eviction / with", "", "fixed"),
        Output("min_gpus", "GPUs needed to hold it", "GPU", "count"),
        Output("min_ps_hosts", "PS hosts needed to hold it", "host", "count"),
    ),
    function=_dynamic_tables,
    sources=(
        "Liu et al. 2022, Monolith (arXiv:2209.07663), Sec. 2.1: collisionless Cuckoo "
        "hash table, frequency filtering, expirable embeddings",
        "Little 1961, A Proof for the Queuing Formula L = lambda W, Operations Research 9(3)",
        "NVIDIA-Merlin/HierarchicalKV README: max_load_factor 0.5, uint64 keys and "
        "scores; include/merlin/types.cuh: a 1-byte digest per slot",
        "TorchRec managed-collision modules (torchrec/modules/mc_modules.py)",
        "Knuth, The Art of Computer Programming Vol. 3, Sec. 6.4 (probe lengths); "
        "Pagh and Rodler 2004, Cuckoo hashing, J. Algorithms 51(2)",
    ),
)
