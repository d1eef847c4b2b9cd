"""The ``embedding_tiers`` calculator: a table larger than HBM spread over HBM, host DRAM
and SSD, the share of lookups each tier serves under a power law, and whether each
tier's bandwidth keeps up with training (formulas.sparse.tiers)."""

from __future__ import annotations

import math

from calculators.catalogues import hardware
from calculators.catalogues.host_links import host_side
from calculators.core import units
from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import N_, _
from calculators.core.spec import Output
from calculators.formulas.model.model_states import device_capacity_bytes
from calculators.formulas.sparse.embeddings import shard_bytes
from calculators.formulas.sparse.tiers import Storage, TierLoad, TierPlan, tier_plan
from calculators.formulas.sparse.zipf import Zipf
from calculators.inputs.hash_tables import row_params
from calculators.inputs.tiers import cluster_params, workload_params

#: What to change when a tier cannot keep up, by tier name.
_REMEDY = {
    "HBM": N_("more GPUs, or fewer or narrower rows per sample"),
    "host-GPU link (one direction)": N_("a larger HBM cache share or more GPUs, so fewer "
                                        "rows cross the link, or fp16 rows"),
    "host DRAM": N_("a larger HBM cache share, or hosts with more memory channels"),
    "SSD": N_("more host DRAM (so fewer lookups reach the drives), more drives per node, "
              "or rows that fit fewer 4 KiB pages"),
}
#: Tier names that are the same in every language (the others are marked in tiers.py).
_NAMES_AS_THEY_ARE = ("HBM", "SSD")


def _tier(name: str) -> str:
    """A tier's name as shown to the reader."""
    return name if name in _NAMES_AS_THEY_ARE else _(name)


def _storage(inputs: Inputs, row: float) -> Storage:
    gpus = inputs.whole("num_gpus")
    nodes = math.ceil(gpus / inputs.whole("gpus_per_node"))
    accelerator = hardware.get(inputs.text("gpu"))
    side = host_side(accelerator.id)
    link = inputs.opt("host_link_bandwidth") or side.achieved_link
    drives = nodes * inputs.whole("ssd_drives_per_node")
    hbm_cache = gpus * device_capacity_bytes(accelerator.memory_bytes) * inputs.num(
        "hbm_cache_share")
    return Storage(
        hbm_rows=math.floor(hbm_cache / row),
        dram_rows=math.floor(nodes * inputs.num("host_memory_per_node") / row),
        ssd_rows=math.floor(drives * inputs.num("ssd_capacity") / row),
        hbm_bandwidth=gpus * accelerator.memory_bandwidth,
        link_bandwidth=gpus * link,
        dram_bandwidth=gpus * side.achieved_host_memory,
        ssd_read_bandwidth=drives * inputs.num("ssd_read_bandwidth"),
        ssd_read_iops=drives * inputs.num("ssd_read_iops"),
        ssd_write_bandwidth=drives * inputs.num("ssd_write_bandwidth"),
    )


def _tier_table(plan: TierPlan, row: float) -> Table:
    fmt = units.format_value

    def line(load: TierLoad) -> tuple[str, ...]:
        held = "-" if load.name.startswith("host-GPU") else fmt(load.rows * row, "B", "si")
        rows = "-" if load.name.startswith("host-GPU") else fmt(load.rows, "row", "count")
        return (_tier(load.name), held, rows, f"{load.lookup_share:.2%}",
                fmt(load.bytes_per_s, "B/s", "si"), fmt(load.bandwidth, "B/s", "si"),
                f"{load.utilisation:.1%}")

    return Table((_("tier"), _("holds"), _("rows"), _("share of lookups"), _("bytes/s needed"),
                  _("bandwidth available"), _("utilisation")),
                 tuple(line(load) for load in plan.loads),
                 caption=_("All GPUs and nodes together. HBM and host DRAM count reads and "
                           "write-backs; the link one direction; the SSD's bandwidth is what "
                           "its drives give this mix of random reads and log writes."))


def _warnings(plan: TierPlan, rows: float, held: float, row: float) -> list[str]:
    fmt = units.format_value
    warnings = [
        _("{tier} is {use:.0%} utilised: the storage does not keep up with this workload. "
          "Remedies: {remedy}.").format(tier=_tier(load.name), use=load.utilisation,
                                        remedy=_(_REMEDY[load.name]))
        for load in plan.loads if load.utilisation > 1.0]
    if held < rows:
        warnings.append(_(
            "The table ({rows}, {size}) does not fit in all tiers together ({held}): add "
            "drives or DRAM, or evict sooner (dynamic_tables).").format(
            rows=fmt(rows, "row", "count"), size=fmt(rows * row, "B", "si"),
            held=fmt(held, "row", "count")))
    return warnings


def _embedding_tiers(inputs: Inputs) -> Computed:
    rows = inputs.num("rows")
    row = shard_bytes(1, inputs.whole("embedding_dim"), inputs.text("dtype"),
                    inputs.text("optimizer"))
    gpus = inputs.whole("num_gpus")
    samples = inputs.num("samples_per_s_per_gpu")
    lookups = gpus * samples * inputs.num("lookups_per_sample") * inputs.num("unique_share")
    zipf = Zipf(rows, inputs.num("zipf_exponent"))
    plan = tier_plan(zipf, _storage(inputs, row), inputs.text("cache_policy"), lookups, row)
    hbm, link, dram, ssd = plan.loads
    held = hbm.rows + dram.rows + ssd.rows
    binding = plan.binding
    return Computed(
        values={
            "hbm_hit_share": hbm.lookup_share,
            "dram_hit_share": dram.lookup_share,
            "ssd_hit_share": ssd.lookup_share,
            "row_bytes": row,
            "table_bytes": rows * row,
            "hbm_bytes": hbm.rows * row,
            "dram_bytes": dram.rows * row,
            "ssd_bytes": ssd.rows * row,
            "lookups_per_s": lookups,
            "hbm_utilisation": hbm.utilisation,
            "link_utilisation": link.utilisation,
            "dram_utilisation": dram.utilisation,
            "ssd_utilisation": ssd.utilisation,
            "binding_tier": _tier(binding.name),
            "binding_utilisation": binding.utilisation,
            "sustainable_samples_per_s_per_gpu": samples * plan.headroom,
            "keeps_up": binding.utilisation <= 1.0,
            "fits": held >= rows,
        },
        warnings=_warnings(plan, rows, held, row),
        notes=[
            _("Tiers as nested caches of the most popular rows: exact for LFU under "
              "independent lookups; for LRU the HBM and DRAM tiers are taken as one LRU "
              "cache of their joint size (Che's approximation), an approximation."),
            _("Not modelled: the HBM cache is spread over the GPUs, so most hits are on "
              "another GPU's shard and cross NVLink or the network (see sparse_training); "
              "queueing delays; prefetching of the next batch's rows, which hides latency "
              "but not bandwidth."),
        ],
        table=_tier_table(plan, row),
    )


EMBEDDING_TIERS = Calculator(
    id="embedding_tiers",
    headline=("hbm_hit_share", "binding_utilisation", "sustainable_samples_per_s_per_gpu"),
    title="Where the rows live: HBM, host memory, SSD and the cache in front",
    summary="A table larger than HBM over HBM, host DRAM and SSD: each tier's share of "
            "power-law lookups, its traffic against its bandwidth, and the binding tier.",
    chapter="sparse.md",
    params=(*workload_params(), *row_params(), *cluster_params()),
    outputs=(
        Output("hbm_hit_share", "Lookups served by HBM", "1", "percent"),
        Output("dram_hit_share", "Lookups served by host DRAM", "1", "percent"),
        Output("ssd_hit_share", "Lookups served by SSD", "1", "percent"),
        Output("row_bytes", "Bytes per row (weights + optimizer)", "B", "si"),
        Output("table_bytes", "Table with optimizer state", "B", "si"),
        Output("hbm_bytes", "Held in HBM", "B", "si"),
        Output("dram_bytes", "Held in host DRAM", "B", "si"),
        Output("ssd_bytes", "Held on SSD", "B", "si"),
        Output("lookups_per_s", "Unique lookups per second (all GPUs)", "lookup/s", "count"),
        Output("hbm_utilisation", "HBM utilisation", "1", "percent"),
        Output("link_utilisation", "Host-GPU link utilisation", "1", "percent"),
        Output("dram_utilisation", "Host DRAM utilisation", "1", "percent"),
        Output("ssd_utilisation", "SSD utilisation", "1", "percent"),
        Output("binding_tier", "Binding tier", "", "text"),
        Output("binding_utilisation", "Binding tier's utilisation", "1", "percent"),
        Output("sustainable_samples_per_s_per_gpu", "Samples/s per GPU the storage sustains",
               "sample/s", "count"),
        Output("keeps_up", "Storage keeps up", "", "bool"),
        Output("fits", "Table fits in the tiers", "", "bool"),
    ),
    function=_embedding_tiers,
    sources=(
        "Zhao et al. 2020, Distributed Hierarchical GPU Parameter Server for Massive Scale "
        "Deep Learning Ads Systems (MLSys, arXiv:2003.05622): HBM, CPU memory and SSD",
        "Breslau et al. 1999, Web Caching and Zipf-like Distributions (INFOCOM)",
        "Che, Tung and Wang 2002, Hierarchical Web caching systems (IEEE JSAC 20(7))",
        "Samsung PM1743 announcement (December 2021): 13,000 MB/s read, 2.5M IOPS, "
        "6,600 MB/s write, 15.36 TB",
        "NVIDIA nvbandwidth (host-to-device 55.63 GB/s on PCIe 5.0 x16), via "
        "calculators.catalogues.host_links",
        "FBGEMM/TorchRec UVM caching; NVIDIA HugeCTR hierarchical parameter server",
    ),
)
