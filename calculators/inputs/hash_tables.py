"""The inputs of a dynamic (hash) embedding table: the flow of IDs in and out, the kind
of table, and the row (dimension, precision, optimizer) that ``embedding_tiers`` shares.

The defaults are an illustration of a trillion-parameter-class table (an assumption, not
a published model: Monolith and PERSIA publish no table sizes we could find): 400M new
IDs a day, half admitted, each active 30 days and evicted 7 days after its last lookup,
gives 400M x 0.5 x 37 = 7.4e9 live rows, 0.95e12 parameters at dimension 128.

The ID flow is counted in days (IDs per day, days active, days to expiry), as operators
state expiry windows; Little's law needs only the rate and the time in the same unit.
"""

from __future__ import annotations

from calculators.core.spec import Choice, Param, When
from calculators.formulas.sparse.hash_tables import live_rows
from calculators.inputs.embeddings import table_params

NEW_IDS_PER_DAY = 400e6
ADMIT_SHARE = 0.5
ACTIVE_DAYS = 30.0
EXPIRY_DAYS = 7.0
#: The live rows of the defaults above (Little's law): 7.4e9.
DEFAULT_LIVE_ROWS = live_rows(NEW_IDS_PER_DAY, ADMIT_SHARE, ACTIVE_DAYS, EXPIRY_DAYS)
#: HierarchicalKV (NVIDIA-Merlin/HierarchicalKV README): uint64 keys (8 B); per slot an
#: 8 B uint64 score and a 1 B digest (include/merlin/types.cuh, ``using D = byte``).
KEY_BYTES = 8
METADATA_BYTES = 9
#: HierarchicalKV's ``max_load_factor`` default (README, options table).
LOAD_FACTOR = 0.5
_FIXED = When("hashing", ("fixed",))
_COLLISIONLESS = When("hashing", ("collisionless",))


def row_params() -> tuple[Param, ...]:
    """Embedding dimension, weight precision and optimizer, as embedding_memory has them."""
    shared = {p.name: p for p in table_params()}
    return (shared["embedding_dim"], shared["dtype"], shared["optimizer"])


def id_flow_params() -> tuple[Param, ...]:
    """The IDs that arrive, are admitted, stay active and expire."""
    return (
        Param("new_ids_per_day", "New IDs first seen per day", "float", NEW_IDS_PER_DAY,
              unit="ID/day", minimum=1, maximum=1e12,
              help="Distinct IDs never seen before, per day (lambda). 400M is an "
                   "assumption chosen so that the defaults make a trillion-parameter-class "
                   "table; no published model gives this figure."),
        Param("admit_share", "Share admitted", "float", ADMIT_SHARE, unit="1",
              minimum=1e-6, maximum=1,
              help="Of the new IDs, the share that pass the frequency filter and get a "
                   "row (Monolith admits an ID after it has been seen a set number of "
                   "times). 0.5 is an assumption."),
        Param("active_days", "Days an admitted ID stays active", "float", ACTIVE_DAYS,
              unit="day", minimum=0, maximum=3650,
              help="Mean days from admission to the last lookup. 30 is an assumption."),
        Param("expiry_days", "Expiry window", "float", EXPIRY_DAYS, unit="day",
              minimum=0.01, maximum=3650,
              help="Days without a lookup before a row is evicted (Monolith's expirable "
                   "embeddings). 7 is an assumption."),
        Param("base_ids", "Long-lived IDs", "float", 0.0, unit="row", minimum=0,
              maximum=1e13,
              help="IDs that never expire (a catalogue of items, say), added to the "
                   "steady state."),
        Param("horizon_days", "Horizon without eviction", "float", 365.0, unit="day",
              minimum=1, maximum=3650,
              help="Days after which to show the size of a table that never evicts."),
    )


def table_kind_params() -> tuple[Param, ...]:
    """Collisionless hash map or fixed hashed rows, and what each needs."""
    return (
        Param("hashing", "Table kind", "choice", "collisionless",
              choices=(Choice("collisionless", "collisionless (key -> row hash map)"),
                       Choice("fixed", "fixed rows (IDs hashed, collisions shared)")),
              help="Monolith, TorchRec's managed collisions and HierarchicalKV keep one "
                   "row per ID in a hash map; the hashing trick maps IDs into a fixed "
                   "number of rows and lets colliding IDs share one."),
        Param("load_factor", "Load factor", "float", LOAD_FACTOR, unit="1", minimum=0.05,
              maximum=1, when=_COLLISIONLESS,
              help="Live rows / slots. 0.5 is HierarchicalKV's max_load_factor default; "
                   "it can run close to 1.0 with 128-slot buckets."),
        Param("key_bytes", "Key bytes per slot", "int", KEY_BYTES, unit="B", minimum=0,
              maximum=64, when=_COLLISIONLESS, advanced=True,
              help="A uint64 ID: 8 B (HierarchicalKV)."),
        Param("metadata_bytes", "Metadata bytes per slot", "int", METADATA_BYTES, unit="B",
              minimum=0, maximum=256, when=_COLLISIONLESS, advanced=True,
              help="Frequency count, last-seen time or eviction score, and the bucket's "
                   "digest: HierarchicalKV keeps an 8 B uint64 score and a 1 B digest."),
        Param("table_rows", "Rows of the fixed table", "float", 8e9, unit="row",
              minimum=1, maximum=1e13, when=_FIXED,
              help="R: the rows IDs are hashed into. 8e9 (an assumption) is a little "
                   "more than the default live IDs."),
    )
