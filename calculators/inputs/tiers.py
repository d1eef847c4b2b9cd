"""The inputs of ``embedding_tiers``: the cluster's tiers (HBM share, host DRAM, NVMe
drives, the host-GPU link), the popularity of the IDs and the lookup workload.

SSD defaults are one PCIe 5.0 enterprise drive, Samsung's PM1743, as Samsung announced
it (December 2021; reported by AnandTech, "Samsung Announces First PCIe 5.0 Enterprise
SSD: PM1743", and ComputerBase): 13,000 MB/s sequential read, 2.5M random-read IOPS,
6,600 MB/s sequential write, up to 15.36 TB. Eight drives per node is an assumption.
"""

from __future__ import annotations

from calculators.core.spec import Choice, Param
from calculators.inputs.embeddings import gpu_params
from calculators.inputs.hash_tables import DEFAULT_LIVE_ROWS

#: Samsung PM1743 (announcement, December 2021).
PM1743_READ_BANDWIDTH = 13_000e6
PM1743_READ_IOPS = 2.5e6
PM1743_WRITE_BANDWIDTH = 6_600e6
PM1743_CAPACITY = 15.36e12
_PM1743 = "Samsung PM1743 (PCIe 5.0 x4, announced December 2021)"


def cluster_params() -> tuple[Param, ...]:
    """The GPUs, the share of their HBM the cache gets, and each node's DRAM and SSDs."""
    accelerator = next(p for p in gpu_params() if p.name == "gpu")
    return (
        accelerator,
        Param("num_gpus", "GPUs", "int", 16, unit="GPU", minimum=1, maximum=1_000_000,
              help="Trainers; 16 (two 8-GPU nodes) is an assumption."),
        Param("gpus_per_node", "GPUs per node", "int", 8, minimum=1, maximum=1024,
              help="GPUs sharing a node's DRAM and drives: 8 in an HGX/DGX node."),
        Param("hbm_cache_share", "Share of HBM for the embedding cache", "float", 0.3,
              unit="1", minimum=0, maximum=0.95,
              help="Of each GPU's memory (its label read as GiB); the rest holds the dense "
                   "model, activations and buffers. 30% is an assumption."),
        Param("host_memory_per_node", "Host DRAM per node for embeddings", "float", 1e12,
              unit="B", minimum=0, maximum=1e15,
              help="1 TB, half of a DGX H100's 2 TB (an assumption: the rest holds the "
                   "data pipeline, the OS and the hash map's keys)."),
        Param("ssd_drives_per_node", "NVMe drives per node", "int", 8, minimum=1,
              maximum=64, help="8 is an assumption."),
        Param("ssd_capacity", "Capacity per drive", "float", PM1743_CAPACITY, unit="B",
              minimum=0, maximum=1e15,
              help=f"15.36 TB, the largest {_PM1743}. It binds only when the drives "
                   "cannot hold what HBM and host DRAM leave of the table."),
        Param("ssd_read_bandwidth", "Sequential read per drive", "float",
              PM1743_READ_BANDWIDTH, unit="B/s", minimum=1e6, maximum=1e12,
              help=f"13,000 MB/s: {_PM1743}. It binds only when below the random reads "
                   "per second x 4 KiB; with the defaults the reads per second bind.",
              advanced=True),
        Param("ssd_read_iops", "Random reads per second per drive", "float",
              PM1743_READ_IOPS, unit="read/s", minimum=1, maximum=1e9,
              help=f"4 KiB random reads: 2.5M for the {_PM1743}. A row costs "
                   "ceil(row bytes / 4 KiB) of them.", advanced=True),
        Param("ssd_write_bandwidth", "Sequential write per drive", "float",
              PM1743_WRITE_BANDWIDTH, unit="B/s", minimum=1e6, maximum=1e12,
              help=f"6,600 MB/s: {_PM1743}. Updated rows are written back as a log "
                   "(sequentially), so random-write IOPS do not apply.", advanced=True),
        Param("host_link_bandwidth", "Host-GPU link per GPU (override)", "float", None,
              unit="B/s", minimum=1e6, maximum=1e13, optional=True,
              placeholder="from the accelerator's node",
              help="Per direction, achieved: blank takes the catalogue's (PCIe 5.0 x16 on "
                   "an HGX node: 55.6 GB/s measured by nvbandwidth, 88% of 63 GB/s).",
              advanced=True),
    )


def workload_params() -> tuple[Param, ...]:
    """How many rows, how popular, how often looked up, and the cache's policy."""
    return (
        Param("rows", "Live rows", "float", DEFAULT_LIVE_ROWS, unit="row", minimum=1,
              maximum=1e13,
              help="All tables' live rows together; 7.4e9 is dynamic_tables' default "
                   "(an illustration of a trillion-parameter-class table)."),
        Param("zipf_exponent", "Zipf exponent s", "float", 1.0, minimum=0, maximum=2,
              help="Row i is looked up with probability proportional to i^-s. 1.0 is an "
                   "assumption: measure it as minus the slope of log lookups against log "
                   "rank of a day's IDs. 0 is a uniform table."),
        Param("cache_policy", "Cache policy", "choice", "lfu",
              choices=(Choice("lfu", "LFU (keeps the most popular rows)"),
                       Choice("lru", "LRU (keeps the most recent rows)")),
              help="LFU: exact for nested tiers; LRU: Che's approximation, the two upper "
                   "tiers taken as one LRU cache of their joint size."),
        Param("samples_per_s_per_gpu", "Samples per second per GPU", "float", 20_000,
              unit="sample/s", minimum=1e-3, maximum=1e8,
              help="The training throughput to feed; 20,000 is an assumption."),
        Param("lookups_per_sample", "IDs looked up per sample", "float", 1000, minimum=1,
              maximum=1e6,
              help="Features x IDs per feature: 100 x 10 as sparse_training's defaults "
                   "(an assumption)."),
        Param("unique_share", "Unique share after de-duplication", "float", 0.5, unit="1",
              minimum=1e-6, maximum=1,
              help="Share of a batch's IDs left once repeats are removed: only those rows "
                   "are fetched and updated. 0.5 is an assumption, as in sparse_training."),
    )
