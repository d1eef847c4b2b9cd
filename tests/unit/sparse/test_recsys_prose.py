"""docs/sparse.md, "Tables that grow", "Tables larger than HBM" and "Streaming training"
(with "Checkpoints of tables that change"): every figure the prose quotes is what
dynamic_tables, embedding_tiers and streaming_training compute for the sections' blocks,
or for the variants the prose names ("at load factor 0.8", "With LRU instead of LFU",
"At s = 1.2", "At the default exponent of 1").

The blocks are read from the Markdown as the site reads them (bigmodel_guide.fence);
each figure is rounded as the prose rounds it, and the sentence carrying it must be in
the chapter. A figure that moves with a calculator fails here with the number the page
should now say.
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import Any

import pytest

import calculators
from calculators.catalogues import hardware
from calculators.catalogues.host_links import host_side
from calculators.formulas.sparse import checkpoints as ckpt
from calculators.formulas.sparse.zipf import Zipf
from calculators.inputs.embeddings import host_usable_bytes, usable_gpu_bytes
from tests.unit.sparse import chapter_text

#: How the prose spells the small counts it writes out.
WORDS = {14: "Fourteen"}
_text, _says = chapter_text.text, chapter_text.says


@cache
def _run(anchor: str, over: tuple[tuple[str, object], ...] = ()) -> Any:
    calc_id, inputs = chapter_text.blocks()[anchor]
    return calculators.compute(calc_id, **{**inputs, **dict(over)})


def block(anchor: str, **over: object) -> Any:
    """The result of the chapter's block ``anchor``, with ``over`` changed."""
    return _run(anchor, tuple(sorted(over.items())))


def v(result: Any, name: str) -> float:
    return float(result.value(name))


def row(result: Any, question: str) -> list[str]:
    rows: list[list[str]] = result.to_dict()["table"]["rows"]
    return next(r for r in rows if r[0] == question)


def pct(x: float, places: int = 1) -> str:
    return f"{x * 100:.{places}f}%"


def bn(x: float, places: int = 1) -> str:
    """``x`` in billions, as the prose writes "7.4 billion"."""
    return f"{x / 1e9:.{places}f}"


def tb(x: float, places: int = 2) -> str:
    return f"{x / 1e12:.{places}f} TB"


def test_the_blocks_are_the_ones_the_prose_describes() -> None:
    assert set(chapter_text.blocks()) >= {
        "dynamic-trillion", "tiers-trillion", "tiers-flat-popularity", "streaming-keep-up",
        "streaming-huge-tables", "streaming-checkpoints"}


# --- Tables that grow: dynamic embeddings ------------------------------------------------

def test_dynamic_defaults_are_the_ones_described() -> None:
    r = block("dynamic-trillion")
    i = r.inputs
    assert (i.num("new_ids_per_day"), i.num("admit_share")) == (400e6, 0.5)
    assert (i.num("active_days"), i.num("expiry_days")) == (30, 7)
    assert (i.whole("embedding_dim"), i.text("dtype"), i.text("optimizer")) == (
        128, "fp32", "rowwise_adagrad")
    # "a uint64 key, a uint64 score and a one-byte digest per slot, 17 bytes"
    assert (i.whole("key_bytes"), i.whole("metadata_bytes")) == (8, 8 + 1)
    _says("a one-byte digest per slot, 17 bytes",
          f"at its default maximum load factor of {i.num('load_factor'):g}")
    assert i.num("load_factor") == 0.5


def test_dynamic_steady_state() -> None:
    r = block("dynamic-trillion")
    i = r.inputs
    days = i.num("active_days") + i.num("expiry_days")
    assert v(r, "live_rows") == i.num("new_ids_per_day") * i.num("admit_share") * days
    row_bytes = v(r, "row_bytes")
    weights = i.whole("embedding_dim") * 4
    _says(f"400M × 0.5 × {days:.0f} = {bn(v(r, 'live_rows'))} billion live rows, "
          f"{v(r, 'live_params') / 1e9:,.0f} billion parameters",
          f"Each row is {row_bytes:.0f} bytes ({weights} of weights, "
          f"{row_bytes - weights:.0f} of Adagrad state)",
          f"each live ID costs {v(r, 'bytes_per_live_id') / 1e3:.2f} kB")


def test_dynamic_empty_slots_outweigh_the_keys() -> None:
    r = block("dynamic-trillion")
    i = r.inputs
    live, slots = v(r, "live_rows"), v(r, "table_slots")
    slot = i.whole("key_bytes") + i.whole("metadata_bytes") + v(r, "row_bytes")
    empty = (slots - live) * slot
    keys = live * (i.whole("key_bytes") + i.whole("metadata_bytes"))
    assert slots - live == pytest.approx(slots / 2)  # "half the ... slots are empty"
    _says(f"half the {bn(slots)} billion slots are empty",
          f"those empty slots ({tb(empty)}) weigh more than the keys and metadata of the "
          f"live ones ({keys / 1e9:.0f} GB) by a factor of {round(empty / keys, -1):.0f}")
    # The table's own breakdown carries the same two figures.
    assert row(r, "empty slots (key + metadata + row each)")[1] == tb(empty)
    assert empty + keys + live * v(r, "row_bytes") == pytest.approx(v(r, "total_bytes"))


def test_dynamic_gpus_and_hosts() -> None:
    r = block("dynamic-trillion")
    usable = usable_gpu_bytes(r.inputs)
    assert v(r, "min_gpus") == math.ceil(v(r, "total_bytes") / usable)
    assert v(r, "min_ps_hosts") == math.ceil(v(r, "total_bytes") / host_usable_bytes(r.inputs))
    _says(f"The table takes {tb(v(r, 'total_bytes'))}, {v(r, 'min_gpus'):.0f} H100s at "
          f"{usable / 1e9:.1f} GB usable each, or {v(r, 'min_ps_hosts'):.0f} CPU hosts.")


def test_dynamic_load_factor_and_fp16() -> None:
    base = block("dynamic-trillion")
    fuller = block("dynamic-trillion", load_factor=0.8)
    _says(f"at load factor 0.8, needs {tb(v(fuller, 'total_bytes'))} and "
          f"{v(fuller, 'min_gpus'):.0f} GPUs",
          "the calculator warns above 0.9")
    assert not block("dynamic-trillion", load_factor=0.9).to_dict()["warnings"]
    assert block("dynamic-trillion", load_factor=0.91).to_dict()["warnings"]
    # "Rows in fp16 nearly halve the bytes again", at either load factor.
    _says("Rows in fp16 nearly halve the bytes again")
    for over in ({}, {"load_factor": 0.8}):
        half = block("dynamic-trillion", dtype="fp16", **over)
        ratio = v(half, "total_bytes") / v(block("dynamic-trillion", **over), "total_bytes")
        assert 0.5 < ratio < 0.6
    assert v(base, "total_bytes") > v(fuller, "total_bytes")


def test_dynamic_without_expiry() -> None:
    r = block("dynamic-trillion")
    assert r.inputs.num("horizon_days") == 365  # "after a year"
    _says(f"the same stream leaves {v(r, 'rows_without_eviction') / 1e9:.0f} billion rows "
          f"after a year, {v(r, 'growth_without_eviction'):.1f} times the steady state")


def test_dynamic_fixed_rows_and_their_collisions() -> None:
    live = v(block("dynamic-trillion"), "live_rows")
    collisionless = v(block("dynamic-trillion"), "total_bytes")
    same = block("dynamic-trillion", hashing="fixed", table_rows=live)
    ten = block("dynamic-trillion", hashing="fixed", table_rows=10 * live)
    _says(f"With *R* = {bn(live)} billion rows, as many as there are live IDs, the "
          f"table takes {tb(v(same, 'total_bytes'))} with no keys, but "
          f"{pct(v(same, 'collision_share'), 0)} of the live IDs share their row with "
          "another",
          f"Getting that down to {pct(v(ten, 'collision_share'))} needs ten rows per live "
          f"ID, {v(ten, 'table_slots') / 1e9:.0f} billion rows and "
          f"{tb(v(ten, 'total_bytes'), 1)}")
    # "nearly five times the collisionless table"
    assert 4.5 < v(ten, "total_bytes") / collisionless < 5


# --- Tables larger than HBM: tiers and caches ------------------------------------------

def test_tiers_premise() -> None:
    _says(f"{v(block('dynamic-trillion'), 'min_gpus'):.0f} H100s for the dynamic table above")
    # "a cache of 10^7 of 10^9 rows serves about 7/9 of the lookups" (s = 1, LFU)
    share = Zipf(1e9, 1.0).hit_ratio(1e7, "lfu")
    assert share == pytest.approx(7 / 9, abs=0.01)
    _says("a cache of 10⁷ of 10⁹ rows serves about 7/9 of the lookups")
    # "55.6 GB/s on PCIe 5.0 x16": the link's achieved rate per direction.
    link = host_side(block("tiers-trillion").inputs.text("gpu")).achieved_link
    _says(f"({link / 1e9:.1f} GB/s on PCIe 5.0 x16")


def test_tiers_workload_is_the_one_described() -> None:
    r = block("tiers-trillion")
    i = r.inputs
    dynamic = block("dynamic-trillion")
    assert i.num("rows") == v(dynamic, "live_rows")
    assert v(r, "row_bytes") == v(dynamic, "row_bytes")
    assert i.whole("num_gpus") == 2 * i.whole("gpus_per_node") == 16  # two 8-GPU nodes
    assert i.num("hbm_cache_share") == 0.3 and i.num("host_memory_per_node") == 1e12
    assert (i.num("samples_per_s_per_gpu"), i.num("lookups_per_sample"),
            i.num("unique_share")) == (20_000, 1_000, 0.5)
    assert i.whole("ssd_drives_per_node") == 8  # "eight per node"
    _says(f"holds the {bn(i.num('rows'))} billion rows of the dynamic table "
          f"({tb(v(r, 'table_bytes'))} with row-wise Adagrad) on two 8-GPU H100 nodes",
          "Each GPU trains 20,000 samples per second, each looking up 1,000 IDs of which "
          "half are left after de-duplication")


def test_tiers_what_each_tier_holds_and_serves() -> None:
    r = block("tiers-trillion")
    row_bytes = v(r, "row_bytes")
    hbm_rows, dram_rows = v(r, "hbm_bytes") / row_bytes, v(r, "dram_bytes") / row_bytes
    assert v(r, "ssd_bytes") == pytest.approx(
        v(r, "table_bytes") - v(r, "hbm_bytes") - v(r, "dram_bytes"))  # "the last"
    _says(f"The {v(r, 'hbm_bytes') / 1e9:.0f} GB of HBM cache hold "
          f"{hbm_rows / 1e6:.0f} million rows, {hbm_rows / r.inputs.num('rows'):.0%} of the "
          f"table, and serve {pct(v(r, 'hbm_hit_share'))} of the lookups",
          f"DRAM holds another {bn(dram_rows, 2)} billion rows and serves "
          f"{pct(v(r, 'dram_hit_share'))}",
          f"The SSDs hold the last {tb(v(r, 'ssd_bytes'))} and serve "
          f"{pct(v(r, 'ssd_hit_share'))}")


def test_tiers_the_ssd_binds() -> None:
    r = block("tiers-trillion")
    assert r.value("binding_tier") == "SSD"
    sustained = v(r, "sustainable_samples_per_s_per_gpu")
    _says(f"The SSD is the binding tier at {pct(v(r, 'ssd_utilisation'))} utilisation, so "
          f"this storage would sustain about {round(sustained, -3):,.0f} samples per "
          "second per GPU, ten times the workload",
          f"HBM bandwidth is not the issue ({pct(v(r, 'hbm_utilisation'))}), nor is PCIe "
          f"({pct(v(r, 'link_utilisation'))})")
    assert 10 <= sustained / r.inputs.num("samples_per_s_per_gpu") < 11
    # "a 516-byte row costs a whole 4 KiB read, eight times the bytes it needs"
    _says(f"a {v(r, 'row_bytes'):.0f}-byte row costs a whole 4 KiB read, eight times")
    assert round(4096 / v(r, "row_bytes")) == 8


def test_tiers_with_lru() -> None:
    lru = block("tiers-trillion", cache_policy="lru")
    _says(f"With LRU instead of LFU, HBM serves {pct(v(lru, 'hbm_hit_share'))} and the "
          f"SSD's utilisation rises to {pct(v(lru, 'ssd_utilisation'))}")
    assert v(lru, "ssd_utilisation") > v(block("tiers-trillion"), "ssd_utilisation")


def test_tiers_flatter_popularity() -> None:
    flat = block("tiers-trillion", zipf_exponent=0.8)
    _says(f"At s = 0.8 the same cache serves only {pct(v(flat, 'hbm_hit_share'))} of the "
          f"lookups and the SSDs {pct(v(flat, 'ssd_hit_share'))}")
    busy = block("tiers-flat-popularity")
    assert busy.inputs.num("samples_per_s_per_gpu") == 50_000
    assert busy.value("binding_tier") == "SSD" and busy.value("keeps_up") is False
    _says(f"Here the SSDs are {pct(v(busy, 'ssd_utilisation'), 0)} utilised and the storage "
          f"sustains {round(v(busy, 'sustainable_samples_per_s_per_gpu'), -2):,.0f} samples "
          "per second per GPU")


def test_tiers_steeper_popularity() -> None:
    steep = block("tiers-trillion", zipf_exponent=1.2)
    _says(f"At s = 1.2 the HBM cache alone serves {pct(v(steep, 'hbm_hit_share'))}")
    # "the lower tiers are almost idle"
    for tier in ("link_utilisation", "dram_utilisation", "ssd_utilisation"):
        assert v(steep, tier) < 0.01


# --- Streaming training ------------------------------------------------------------------

def test_streaming_defaults_are_the_ones_described() -> None:
    r = block("streaming-keep-up")
    i = r.inputs
    assert i.num("embedding_bytes") == 2e12
    assert (i.whole("num_sparse_features"), i.num("pooling_factor")) == (100, 10)
    assert i.num("dense_params") == 50e6
    assert (i.whole("num_ps_servers"), i.whole("num_workers")) == (16, 64)
    assert i.num("server_nic_bandwidth") == 100e9 / 8  # one 100 GbE port
    assert i.num("events_per_s") == 1e6 and v(r, "peak_samples_per_s") == 2e6
    assert i.num("dense_mfu") == 0.046
    _says("at a model FLOPs utilisation of 4.6%",
          "fed 1 million samples a second on average and twice that at the peak")
    # The dense part at 6 FLOP per parameter per sample, at that MFU, for a local batch.
    local = i.whole("batch_size") / i.whole("num_workers")
    peak = hardware.get(i.text("gpu")).peak_bf16_flops
    assert v(r, "compute_time_per_step_s") == pytest.approx(
        local * 6 * i.num("dense_params") / (peak * i.num("dense_mfu")))


def test_streaming_who_keeps_up() -> None:
    r = block("streaming-keep-up")
    found = re.search(r"throughput alone: (\d+)\)", row(r, "tables + optimizer state fit in")[2])
    assert found is not None
    alone = int(found[1])
    assert r.value("recommended_mode") == "collective"
    assert v(r, "collective_workers_needed") == v(r, "collective_min_gpus_memory") > alone
    _says(f"{WORDS[alone]} H100s would keep up with the peak on throughput alone; the "
          f"collective needs {v(r, 'collective_workers_needed'):.0f} because that is what "
          "holds 2 TB in HBM",
          f"The PS needs {v(r, 'ps_workers_needed'):.0f} GPUs and "
          f"{v(r, 'ps_servers_needed'):.0f} servers")
    # "its step is bound by the servers, not by compute"
    assert v(r, "ps_step_time_s") > 10 * v(r, "compute_time_per_step_s")


def test_streaming_staleness_and_freshness() -> None:
    r = block("streaming-keep-up")
    stale = v(r, "ps_staleness_updates")
    assert stale == v(r, "ps_workers_needed") - 1  # "about W - 1 updates"
    _says(f"Its staleness at that size is {stale:.0f} updates, which is only "
          f"{v(r, 'ps_staleness_s') * 1e3:.0f} ms")
    # "roughly one step in seconds"
    assert v(r, "ps_staleness_s") == pytest.approx(v(r, "ps_step_time_s"), rel=0.05)
    trained, serving = v(r, "freshness_trained_s"), v(r, "freshness_to_serving_s")
    wait = r.inputs.num("sparse_sync_interval") / 2
    ship = v(r, "sync_transfer_time_s")
    assert serving == pytest.approx(trained + wait + ship)
    # "almost all of it the assumed delay of joining it with its label"
    assert r.inputs.num("ingest_delay") / trained > 0.99
    _says(f"An event reaches a trained model {trained:.0f} s after it happened",
          f"it reaches serving {serving:.1f} s after, on average: {wait:.0f} s more waiting "
          f"for the next minute's sync, {ship:.1f} s shipping it")


def test_streaming_sync_to_serving() -> None:
    r = block("streaming-keep-up")
    i = r.inputs
    assert i.num("zipf_exponent") == 1.0 and i.num("sparse_sync_interval") == 60
    lookups = (i.num("events_per_s") * i.num("passes") * i.whole("num_sparse_features")
               * i.num("pooling_factor") * i.num("sparse_sync_interval"))
    assert i.num("sync_link_bandwidth") == 400e9 / 8  # "a 400 GbE link"
    assert i.text("serving_dtype") == "fp16"
    _says(f"with one ID space of {bn(v(r, 'live_rows'))} billion rows and a Zipf "
          f"exponent of 1, a minute's {lookups / 1e9:.0f} billion lookups touch "
          f"{bn(v(r, 'sync_rows'))} billion distinct rows, "
          f"{v(r, 'sync_bytes') / 1e9:.0f} GB in fp16, a quarter of a 400 GbE link's time")
    assert round(4 * v(r, "sync_link_load")) == 1


def test_streaming_huge_tables_turn_the_verdict() -> None:
    small, huge = block("streaming-keep-up"), block("streaming-huge-tables")
    assert huge.inputs.num("embedding_bytes") == 48.4e12
    assert (small.value("recommended_mode"), huge.value("recommended_mode")) == (
        "collective", "ps")
    found = re.search(r"throughput alone: (\d+)\)",
                      row(huge, "tables + optimizer state fit in")[2])
    assert found is not None
    only_memory = v(huge, "collective_workers_needed") - int(found[1])
    _says(f"The collective now needs {v(huge, 'collective_workers_needed'):.0f} GPUs, "
          f"{only_memory:.0f} of them only for their memory, where the PS keeps up with the "
          f"same {v(huge, 'ps_workers_needed'):.0f} GPUs and "
          f"{v(huge, 'ps_servers_needed'):.0f} servers, "
          f"{v(huge, 'ps_min_hosts_memory'):.0f} of whose DRAM holds the tables",
          f"The sync also grows to {tb(v(huge, 'sync_bytes'), 1)} a minute, "
          f"{pct(v(huge, 'sync_link_load'), 0)} of the 400 GbE link's time")
    assert (v(huge, "ps_workers_needed"), v(huge, "ps_servers_needed")) == (
        v(small, "ps_workers_needed"), v(small, "ps_servers_needed"))


# --- Checkpoints of tables that change -------------------------------------------------

def test_full_checkpoints_take_minutes() -> None:
    small, huge = block("streaming-keep-up"), block("streaming-huge-tables")
    bandwidth = small.inputs.num("storage_bandwidth")
    assert bandwidth == 10e9
    full_s = v(small, "checkpoint_full_bytes") / bandwidth
    _says(f"A full checkpoint of the 2 TB default, fp32 weights with their optimizer "
          f"state, takes {full_s:.0f} s at 10 GB/s, and a 48 TB table about "
          f"{round(v(huge, 'checkpoint_full_bytes') / bandwidth / 60, -1):.0f} minutes")


def test_quantisation_alone() -> None:
    i = block("streaming-checkpoints").inputs
    dim, bits, qparams = i.whole("embedding_dim"), i.whole("checkpoint_bits"), i.num(
        "qparam_bytes")
    assert (bits, qparams) == (4, 2 * 2)  # 4 bits, two fp16 parameters
    ratio = v(block("streaming-checkpoints"), "checkpoint_row_quantisation_ratio")
    _says(f"a {dim}-wide fp32 row of {dim * 4} B becomes "
          f"{ckpt.quantised_row_bytes(dim, bits, qparams):.0f} B at 4 bits with two fp16 "
          f"parameters, {ratio:.1f}× smaller")
    # "no row beats 8x at 4 bits"
    for width in (1, 8, 64, 128, 1024, 65536):
        assert ckpt.quantisation_ratio(width, 4, qparams) < 8


def test_incremental_checkpoints_at_a_steeper_popularity() -> None:
    r = block("streaming-checkpoints")
    i = r.inputs
    assert (i.num("events_per_s"), i.num("zipf_exponent")) == (1e5, 1.2)
    assert i.num("checkpoint_interval") == 30 * 60 and i.whole("full_every") == 8
    _says("writes a full checkpoint every eighth time",
          "over a cycle of one full checkpoint and seven increments",
          f"30 minutes touch {bn(v(r, 'checkpoint_rows'), 2)} billion of the "
          f"{bn(v(r, 'live_rows'))} billion rows, and an increment is "
          f"{v(r, 'checkpoint_incremental_bytes') / 1e9:.0f} GB against the full "
          f"{v(r, 'checkpoint_full_bytes') / 1e12:.0f} TB, "
          f"{v(r, 'checkpoint_reduction'):.1f}× smaller",
          f"the average write rate falls {v(r, 'checkpoint_bandwidth_reduction'):.1f}× to "
          f"{v(r, 'checkpoint_average_bandwidth') / 1e6:.0f} MB/s")


def test_incremental_checkpoints_at_the_default_exponent() -> None:
    r = block("streaming-checkpoints", zipf_exponent=1.0)
    # "30 minutes touch almost every row"
    assert v(r, "checkpoint_rows") / v(r, "live_rows") > 0.95
    _says(f"the increment is {v(r, 'checkpoint_reduction'):.1f}× smaller only because it is "
          "quantised")
    # Nearly all of that saving is quantisation's.
    quantised = v(r, "checkpoint_row_quantisation_ratio")
    assert 0.85 < v(r, "checkpoint_reduction") / quantised < 1
