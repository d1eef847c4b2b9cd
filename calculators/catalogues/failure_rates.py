"""Published interruption data from long training runs, used to calibrate the failure
formulas in ``calculators.formulas.failures.reliability``.

Only figures printed in the source are stored; anything derived from them is computed
by a function here or in the formulas, never typed in.
"""

from __future__ import annotations

from dataclasses import dataclass

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class InterruptionCause:
    """One row of a root-cause table: the component blamed, the source's category for it,
    the number of interruptions and the percentage exactly as printed."""

    component: str
    category: str
    count: int
    published_percent: float


@dataclass(frozen=True)
class RunInterruptions:
    """Interruptions of one training job over an observed period."""

    name: str
    source: str
    gpus: int
    period_s: float
    unexpected: int
    planned: int
    total: int
    effective_training_time_min: float
    causes: tuple[InterruptionCause, ...]
    notes: tuple[str, ...]

    def count_by_category(self) -> dict[str, int]:
        """Sum of interruption counts per category, in table order."""
        totals: dict[str, int] = {}
        for cause in self.causes:
            totals[cause.category] = totals.get(cause.category, 0) + cause.count
        return totals

    def published_percent_by_category(self) -> dict[str, float]:
        """Sum of the printed percentages per category (what the source's prose quotes)."""
        totals: dict[str, float] = {}
        for cause in self.causes:
            totals[cause.category] = totals.get(cause.category, 0.0) + cause.published_percent
        return totals


def _cause(component: str, category: str, count: int, percent: float) -> InterruptionCause:
    return InterruptionCause(component, category, count, percent)


#: Dubey et al. 2024, "The Llama 3 Herd of Models" (arXiv 2407.21783), Sec. 3.3.4 and
#: Table 5: a 54-day snapshot of Llama 3 405B pre-training.
LLAMA3_405B = RunInterruptions(
    name="Llama 3 405B pre-training, 54-day snapshot",
    source=(
        "Dubey et al. 2024, The Llama 3 Herd of Models, Sec. 3.3.4 (text) and Table 5 "
        "(root-cause categorization of unexpected interruptions)"
    ),
    # Sec. 3.3.1 and Table 4: "up to 16K H100 GPUs"; 16,384 is the largest configuration.
    # The paper does not say how many GPUs the job used during the snapshot: ASSUMPTION.
    gpus=16_384,
    period_s=54 * SECONDS_PER_DAY,
    unexpected=419,
    planned=47,
    total=466,
    # Sec. 3.3.4: "higher than 90% effective training time", defined as "the time spent on
    # useful training over the elapsed time". A lower bound, not a measurement.
    effective_training_time_min=0.90,
    causes=(
        # Table 5 as printed (component, category, count, % of interruptions).
        _cause("Faulty GPU", "GPU", 148, 30.1),
        _cause("GPU HBM3 Memory", "GPU", 72, 17.2),
        _cause("Software Bug", "Dependency", 54, 12.9),
        _cause("Network Switch/Cable", "Network", 35, 8.4),
        _cause("Host Maintenance", "Unplanned Maintenance", 32, 7.6),
        _cause("GPU SRAM Memory", "GPU", 19, 4.5),
        _cause("GPU System Processor", "GPU", 17, 4.1),
        _cause("NIC", "Host", 7, 1.7),
        _cause("NCCL Watchdog Timeouts", "Unknown", 7, 1.7),
        _cause("Silent Data Corruption", "GPU", 6, 1.4),
        _cause("GPU Thermal Interface + Sensor", "GPU", 6, 1.4),
        _cause("SSD", "Host", 3, 0.7),
        _cause("Power Supply", "Host", 3, 0.7),
        _cause("Server Chassis", "Host", 2, 0.5),
        _cause("IO Expansion Board", "Host", 2, 0.5),
        _cause("Dependency", "Dependency", 2, 0.5),
        _cause("CPU", "Host", 2, 0.5),
        _cause("System Memory", "Host", 2, 0.5),
    ),
    notes=(
        "Of 466 job interruptions, 47 were planned (automated maintenance such as firmware "
        "upgrades, or operator-initiated configuration or dataset updates) and 419 unexpected.",
        "Automated maintenance caused at least one training interruption daily.",
        "About 78% of unexpected interruptions were attributed to confirmed or suspected "
        "hardware issues; GPU issues were 58.7% of unexpected issues (the sum of the printed "
        "GPU percentages).",
        "Significant manual intervention was required only three times; automation handled "
        "the rest.",
        "Table 5 as printed is internally inconsistent for one row: Faulty GPU has 148 "
        "interruptions but 30.1% (148/419 is 35.3%). The counts sum to 419; the printed "
        "percentages sum to 94.9%. By count, GPU categories are 268/419 = 64.0%.",
    ),
)


@dataclass(frozen=True)
class CheckpointStorage:
    """Storage and checkpoint-size figures published for one training cluster."""

    name: str
    source: str
    sustained_bytes_per_s: float
    peak_bytes_per_s: float
    capacity_bytes: float
    servers: int
    state_bytes_per_gpu_min: float
    state_bytes_per_gpu_max: float


#: Dubey et al. 2024, Sec. 3.3.1 "Storage": Tectonic, 240 PB on 7,500 SSD servers, 2 TB/s
#: sustained and 7 TB/s peak; checkpoints save each GPU's model state, 1 MB to 4 GB per
#: GPU. Decimal units (TB = 1e12 B) ASSUMED: the paper does not say.
LLAMA3_STORAGE = CheckpointStorage(
    name="Llama 3 pre-training storage (Tectonic)",
    source="Dubey et al. 2024, The Llama 3 Herd of Models, Sec. 3.3.1 (Storage)",
    sustained_bytes_per_s=2e12,
    peak_bytes_per_s=7e12,
    capacity_bytes=240e15,
    servers=7_500,
    state_bytes_per_gpu_min=1e6,
    state_bytes_per_gpu_max=4e9,
)

RUNS: dict[str, RunInterruptions] = {"llama3_405b": LLAMA3_405B}


# --- Table 5 as per-component rates (our grouping; the counts are ASSUMPTIONS) -------

#: Which part of the machine each Table 5 row is charged to, to turn the 54-day counts
#: into per-part rates. Our reading, not the paper's: GPU rows per GPU; host rows (SSD,
#: power supply, chassis, IO board, CPU, DRAM) and unplanned host maintenance per host;
#: NICs per NIC; switches and cables per switch; software, dependencies and NCCL
#: watchdog timeouts per GPU (they grow with the job, not with any one part).
POOL_OF_CAUSE: dict[str, str] = {
    "Faulty GPU": "gpu",
    "GPU HBM3 Memory": "gpu",
    "GPU SRAM Memory": "gpu",
    "GPU System Processor": "gpu",
    "Silent Data Corruption": "gpu",
    "GPU Thermal Interface + Sensor": "gpu",
    "Host Maintenance": "host",
    "SSD": "host",
    "Power Supply": "host",
    "Server Chassis": "host",
    "IO Expansion Board": "host",
    "CPU": "host",
    "System Memory": "host",
    "NIC": "nic",
    "Network Switch/Cable": "switch",
    "Software Bug": "other",
    "Dependency": "other",
    "NCCL Watchdog Timeouts": "other",
}
POOLS: tuple[str, ...] = ("gpu", "host", "nic", "switch", "other")

#: Llama 3's machine as we ASSUME it for the per-part rates: 8 GPUs per server
#: (Sec. 3.3.1: Grand Teton), one 400 Gb/s NIC per GPU (Sec. 3.3.1: RoCE at 400 Gbps
#: between GPUs), and a three-tier Clos of radix-64 switches (Sec. 3.3.1: a three-layer
#: Clos) whose count ``clos_switches`` gives: 1,280 for 16,384 NICs.
LLAMA3_GPUS_PER_HOST = 8
LLAMA3_NICS_PER_HOST = 8
LLAMA3_SWITCH_RADIX = 64


def failures_by_pool(run: RunInterruptions = LLAMA3_405B) -> dict[str, int]:
    """Table 5's counts summed per pool of ``POOL_OF_CAUSE`` (419 in all)."""
    totals = dict.fromkeys(POOLS, 0)
    for cause in run.causes:
        totals[POOL_OF_CAUSE[cause.component]] += cause.count
    return totals


# --- Servers without GPUs (parameter servers) -----------------------------------------

@dataclass(frozen=True)
class FleetFailures:
    """Machine failures counted over a fleet: ``failures`` among ``machines`` in
    ``period_s``."""

    name: str
    source: str
    machines: int
    failures: int
    period_s: float


#: A parameter server is a CPU host: its job-stopping failures are Table 5's host rows
#: (SSD, power supply, chassis, IO board, CPU, DRAM, unplanned host maintenance: 46 in
#: 54 days on 2,048 hosts, one per 6.6 host-years; inputs.reliability.llama3_host_mtbf_s).
#: Google's figure for commodity machines in a new cluster's first year, a pessimistic
#: bound: "~1000 individual machine failures" (Dean, LADIS 2009 keynote, "Designs,
#: Lessons and Advice from Building Large Distributed Systems"), in clusters of 1,800
#: machines (Dean at Google I/O 2008, as CNET reported it). About 0.56 per machine-year.
GOOGLE_NEW_CLUSTER = FleetFailures(
    "Google, a new cluster's first year",
    "Dean, LADIS 2009 keynote: ~1,000 machine failures in a new cluster's first year; "
    "clusters of 1,800 machines (Google I/O 2008, reported by CNET)",
    1_800, 1_000, 365 * SECONDS_PER_DAY)


# --- Checkpoint and recovery assumptions (defaults of the goodput model) ---------------

@dataclass(frozen=True)
class Assumption:
    """A default the sources do not give, with what it rests on."""

    value: float
    basis: str


#: Each node's sustained write bandwidth to shared storage. ASSUMED 25 GB/s (200 Gb/s):
#: NVIDIA's DGX SuperPOD H100 reference architecture expects a GPUDirect Storage read
#: above 40 GB/s per node over its storage fabric; we take writes well below that.
NODE_WRITE_BYTES_PER_S = Assumption(
    25e9, "assumption: below the 40+ GB/s per-node reads the DGX SuperPOD H100 "
    "reference architecture expects of its storage fabric")
#: The storage system's aggregate write cap: Llama 3's Tectonic, 2 TB/s sustained.
STORAGE_BYTES_PER_S = Assumption(
    LLAMA3_STORAGE.sustained_bytes_per_s,
    "Llama 3's Tectonic sustains 2 TB/s (Dubey et al. 2024, Sec. 3.3.1)")
#: GPU -> pinned host memory copy per GPU. ASSUMED 25 GB/s: PCIe Gen5 x16 is 64 GB/s
#: per direction (H100 datasheet: 128 GB/s both ways); GPUs share switches with NICs.
GPU_TO_HOST_BYTES_PER_S = Assumption(
    25e9, "assumption: 40% of PCIe Gen5 x16's 64 GB/s per direction (H100 datasheet: "
    "128 GB/s both ways), as GPUs share PCIe switches with NICs")
#: From failure to noticing it. ASSUMED 2 min: a crash or an Xid error is seen at once,
#: a hang only at a timeout (PyTorch's NCCL default is 10 min, pytorch/pytorch#110947;
#: Llama 3 shortened hang detection with NCCLX timeouts and the flight recorder).
DETECTION_S = Assumption(
    120.0, "assumption: crashes are seen at once, hangs at a timeout (PyTorch's NCCL "
    "default is 10 min; Llama 3 shortened it, Sec. 3.3.4)")
# --- The restart, part by part (formulas.failures.restart) ---------------------------

@dataclass(frozen=True)
class InitMeasurement:
    """NCCL communicator initialisation as a source reports it at one job size."""

    source: str
    gpus: int
    seconds: float


#: Stock NCCL's initialisation of a 96K-GPU job, about 265 s, which Meta's NCCLX cuts
#: 11-fold (Si et al. 2025, "Collective Communication for 100k+ GPUs", arXiv
#: 2510.20171). SECONDARY: read from a summary of the paper, not its text. Consistent
#: with Meta's report of "2.5-minute init time at large scale (e.g. above certain K
#: GPUs)" on NCCL's default path (NVIDIA/nccl#1156, 2024).
NCCL_INIT_AT_96K = InitMeasurement(
    "Si et al. 2025 (Meta, NCCLX), arXiv 2510.20171: stock NCCL at 96K GPUs (secondary)",
    96_000, 265.0)
#: NCCL's initialisation per GPU in the job: linear through the 96K-GPU figure, as the
#: bootstrap's ring allgather of N - 1 steps suggests (NVIDIA/nccl PR #1791).
COMM_INIT_PER_GPU_S = Assumption(
    NCCL_INIT_AT_96K.seconds / NCCL_INIT_AT_96K.gpus,
    "linear in the GPU count through stock NCCL's ~265 s at 96K GPUs (Meta's NCCLX "
    "paper, Si et al. 2025; secondary); the bootstrap is a ring of N - 1 steps "
    "(NVIDIA/nccl PR #1791)")
#: Reschedule and start: the scheduler allocates the nodes (hot spares stand by),
#: containers and processes start, the framework imports, builds the model and its CUDA
#: contexts. ASSUMED 5 min. Not published for Llama 3; FlashRecovery (arXiv 2509.03047,
#: 2025) restores a 4,800-device job in 150 s in all, a state of the art.
STARTUP_S = Assumption(
    300.0, "assumption: allocate nodes, start containers and processes, build the model; "
    "not published for Llama 3 (FlashRecovery restores 4,800 devices in 150 s in all)")
#: The first steps after a restart run slow: kernel autotuning and compilation caches,
#: CUDA graph capture, the data loader refilling its buffers. ASSUMED 2 min.
WARMUP_S = Assumption(
    120.0, "assumption: autotuning, compilation and CUDA graph caches, data loader refill")
#: With the two above and NCCL's 45 s at 16,384 GPUs, a restart of Llama 3's job takes
#: about 8 minutes, the single figure the guide assumed before it had parts.

#: Waiting for a healthy node when no hot spare stands by. ASSUMED 1 h.
REPLACEMENT_S = Assumption(3_600.0, "assumption: finding or draining a healthy node")
#: Share of unexpected interruptions that take a node out: Llama 3's "about 78%"
#: confirmed or suspected hardware (Sec. 3.3.4).
HARDWARE_FRACTION = Assumption(0.78, "Llama 3: about 78% hardware (Sec. 3.3.4)")
#: Turnaround of a node sent for repair. ASSUMED 3 days, for the Little's-law count of
#: nodes out at any time (how many hot spares keep the job whole).
REPAIR_S = Assumption(3 * SECONDS_PER_DAY, "assumption: 3 days from pull to return")
#: Planned stops per day: Llama 3's 47 in 54 days (Sec. 3.3.4).
PLANNED_PER_DAY = Assumption(
    LLAMA3_405B.planned / (LLAMA3_405B.period_s / SECONDS_PER_DAY),
    "Llama 3: 47 planned interruptions in 54 days (Sec. 3.3.4)")
