"""The ``goodput`` calculator's inputs: the model and its checkpoint, the job, how often
it stops (Llama 3's rate, your own, or per-part MTBFs), storage, and recovery.

Defaults reproduce Llama 3 405B's 54-day snapshot (Dubey et al. 2024, Sec. 3.3); what
the paper does not give is an assumption from ``catalogues.failure_rates``, said so in
its help.
"""

from __future__ import annotations

from dataclasses import replace

from calculators.catalogues import failure_rates as fr
from calculators.core.spec import Choice, Param, When
from calculators.formulas.failures import goodput as gm
from calculators.inputs.training import OPTIMIZER_PARAM, PRECISION_PARAM, PRICE_PER_GPU_HOUR_PARAM

HOUR = 3600.0
OBSERVED = When("failure_model", ("observed",))
COMPONENTS = When("failure_model", ("components",))
#: Bounds shared by the time inputs (s): up to 1e7 s, about 116 days.
MAX_TIME_S = 1e7


def _llama3_mtbf_hours() -> dict[str, float]:
    """Table 5's rows per part (``failure_rates.POOL_OF_CAUSE``) over Llama 3's assumed
    machine: 16,384 GPUs and NICs, 2,048 hosts, ``clos_switches`` switches; rounded to
    3 significant figures for the form (the tests check they give back 54 days / 419)."""
    run = fr.LLAMA3_405B
    hosts = run.gpus // fr.LLAMA3_GPUS_PER_HOST
    nics = hosts * fr.LLAMA3_NICS_PER_HOST
    units = {"gpu": run.gpus, "host": hosts, "nic": nics,
             "switch": gm.clos_switches(nics, fr.LLAMA3_SWITCH_RADIX), "other": run.gpus}
    failures = fr.failures_by_pool(run)
    return {pool: float(f"{gm.pool_mtbf_s(failures[pool], units[pool], run.period_s) / HOUR:.3g}")
            for pool in fr.POOLS}


LLAMA3_MTBF_HOURS = _llama3_mtbf_hours()
_TABLE5 = "Default from Llama 3's Table 5 (Dubey et al. 2024) over its assumed machine"


def _mtbf(pool: str, label: str, per: str, rows: str) -> Param:
    return Param(f"{pool}_mtbf_hours", label, "float", LLAMA3_MTBF_HOURS[pool], unit="h",
                 minimum=1, maximum=1e10, advanced=True, when=COMPONENTS,
                 help=f"Component model: job-stopping failures of one {per}, as a mean "
                      f"time between them. {_TABLE5}: {rows}.")


def _time(name: str, label: str, default: float, help_text: str, *, advanced: bool = False,
          when: When | None = None) -> Param:
    return Param(name, label, "float", default, unit="s", minimum=0, maximum=MAX_TIME_S,
                 help=help_text, advanced=advanced, when=when)


PARAMS: tuple[Param, ...] = (
    Param("params", "Parameters N", "float", 405e9, unit="param", minimum=1, maximum=1e16,
          help="Parameters whose state the checkpoint holds. Llama 3 405B: 405B."),
    replace(PRECISION_PARAM, advanced=True),
    replace(OPTIMIZER_PARAM, advanced=True),
    Param("checkpoint_bytes", "Checkpoint size (override)", "float", None, unit="B",
          minimum=1, maximum=1e17, optional=True, placeholder="weights + optimizer state",
          advanced=True,
          help="Blank: N x (weight + optimizer-state bytes), 14 B per parameter for BF16 "
               "with AdamW; gradients are not saved. Llama 3: 1 MB to 4 GB per GPU "
               "(Sec. 3.3.1)."),
    Param("num_gpus", "GPUs in the job", "int", 16_384, unit="GPU", minimum=1,
          maximum=10_000_000, help="Llama 3 405B: up to 16,384 H100s (Sec. 3.3.1, Table 4)."),
    Param("gpus_per_node", "GPUs per node", "int", 8, minimum=1, maximum=1024,
          help="8 in a Grand Teton, DGX or HGX server. It counts the component model's "
               "hosts and the nodes writing checkpoints, which matter only when they, not "
               "the storage, limit the write."),
    Param("ideal_days", "Training days without failures", "float", 67.7, unit="days",
          minimum=0.001, maximum=10_000,
          help="Wall-clock at the run's MFU with nothing going wrong (training_compute). "
               "67.7: Llama 3 405B, 15.6T tokens, 16,384 H100s at 40% MFU."),
    PRICE_PER_GPU_HOUR_PARAM,
    # --- how often the job stops
    Param("failure_model", "Interruption rate from", "choice", "llama3",
          choices=(Choice("llama3", "Llama 3: 419 in 54 days on 16,384 GPUs, per GPU"),
                   Choice("observed", "an observed rate (below), per GPU"),
                   Choice("components", "per-part MTBFs x counts (below)")),
          help="llama3: Dubey et al. 2024, Sec. 3.3.4, scaled to this GPU count with every "
               "cause charged to the GPUs. observed: your own count, scaled the same way. "
               "components: the sum of count / MTBF over GPUs, hosts, NICs, switches and "
               "software (a job stops when any part does)."),
    Param("observed_interruptions", "Observed interruptions", "int", 419, minimum=1,
          maximum=10_000_000, advanced=True, when=OBSERVED,
          help="Observed model: unexpected interruptions counted. Llama 3: 419."),
    Param("observed_days", "Observed over", "float", 54.0, unit="days", minimum=0.01,
          maximum=10_000, advanced=True, when=OBSERVED,
          help="Observed model: the period. Llama 3: 54."),
    Param("observed_gpus", "Observed on", "int", 16_384, unit="GPU", minimum=1,
          maximum=10_000_000, advanced=True, when=OBSERVED,
          help="Observed model: GPUs in the observed job. Llama 3: up to 16,384 (the "
               "paper does not give the snapshot's count; an assumption)."),
    _mtbf("gpu", "GPU MTBF", "GPU", "faulty GPU, HBM3, SRAM, system processor, silent "
          "data corruption, thermal: 268 over 16,384 GPUs"),
    _mtbf("host", "Host MTBF", "host", "SSD, power supply, chassis, IO board, CPU, DRAM and "
          "unplanned host maintenance: 46 over 2,048 hosts"),
    _mtbf("nic", "NIC MTBF", "NIC", "7 over 16,384 NICs"),
    _mtbf("switch", "Switch MTBF", "switch (with its cables)", "35 over 1,280 switches "
          "(a three-tier Clos of radix 64, our count)"),
    _mtbf("other", "Software MTBF per GPU", "GPU's share of software, dependency and NCCL "
          "timeout failures", "63 over 16,384 GPUs"),
    Param("nics_per_node", "NICs per node", "int", 8, minimum=0, maximum=1024, advanced=True,
          when=COMPONENTS,
          help="Component model. Llama 3: one 400 Gb/s NIC per GPU (Sec. 3.3.1)."),
    Param("switches", "Switches", "int", None, minimum=0, maximum=10_000_000, optional=True,
          placeholder="a radix-64 Clos for the NICs", advanced=True, when=COMPONENTS,
          help="Component model. Blank: a non-blocking folded Clos of 64-port switches for "
               "the NICs, (2t - 1) switches per 64 ports with t tiers (Al-Fares et al. "
               "2008)."),
    Param("planned_stops_per_day", "Planned stops per day", "float",
          round(fr.PLANNED_PER_DAY.value, 2), minimum=0, maximum=100,
          help="Maintenance that stops the job after a checkpoint: one restart each, no "
               "lost work. Llama 3: 47 in 54 days, 0.87 a day (Sec. 3.3.4)."),
    # --- checkpoints
    Param("asynchronous", "Asynchronous checkpoints", "bool", False,
          help="Copy the state to host memory, then write it in the background (PyTorch "
               "DCP async_save; CheckFreq's snapshot and persist, Mohan et al. 2021): "
               "training stalls for the copy only, and a failure during the write rolls "
               "back one checkpoint more."),
    Param("node_write_bandwidth", "Write bandwidth per node", "float",
          fr.NODE_WRITE_BYTES_PER_S.value, unit="B/s", minimum=1e6, maximum=1e15,
          help=f"To shared storage. Default 25 GB/s, an {fr.NODE_WRITE_BYTES_PER_S.basis}. "
               "It matters only when the nodes together write slower than the storage "
               "absorbs."),
    Param("storage_bandwidth", "Storage write bandwidth (aggregate)", "float",
          fr.STORAGE_BYTES_PER_S.value, unit="B/s", minimum=1e6, maximum=1e16,
          help="What the storage system absorbs from all nodes at once. Llama 3's Tectonic: "
               "2 TB/s sustained, 7 TB/s peak (Sec. 3.3.1)."),
    Param("gpu_to_host_bandwidth", "GPU-to-host copy bandwidth", "float",
          fr.GPU_TO_HOST_BYTES_PER_S.value, unit="B/s", minimum=1e6, maximum=1e13,
          advanced=True,
          help=f"Per GPU, for asynchronous snapshots. Default 25 GB/s, an "
               f"{fr.GPU_TO_HOST_BYTES_PER_S.basis}. With synchronous saves it changes only "
               "the chart's asynchronous curve."),
    Param("checkpoint_interval", "Checkpoint interval", "float", None, unit="s", minimum=1,
          maximum=1e8, optional=True, placeholder="optimal (Daly 2006)",
          help="Compute time between checkpoints. Blank: Daly 2006's Eq. 37, "
               "sqrt(2 d M) [1 + sqrt(d/2M)/3 + (d/2M)/9] - d for a stall d < 2M, else M "
               "(Young 1974's sqrt(2 d M) is its first term); for asynchronous saves at "
               "least the time to persist one."),
    # --- recovery
    _time("detection_time", "Detection time", fr.DETECTION_S.value,
          f"From failure to noticing it. Default 2 min, an {fr.DETECTION_S.basis}."),
    Param("restart_time", "Restart time (override)", "float", None, unit="s", minimum=0,
          maximum=MAX_TIME_S, optional=True, placeholder="from its parts, below",
          help="From noticing a failure to training at full speed again. Blank: the sum "
               "of its parts at this job's size: start-up, NCCL's communicator "
               "initialisation (grows with the GPUs), reading the checkpoint back (at "
               "the write bandwidths above) and warm-up."),
    _time("startup_time", "Restart: reschedule and start", fr.STARTUP_S.value,
          f"Allocate nodes, start containers and processes, build the model. Default "
          f"5 min, an {fr.STARTUP_S.basis}.", advanced=True),
    Param("comm_init_per_gpu", "Restart: NCCL initialisation per GPU", "float",
          fr.COMM_INIT_PER_GPU_S.value, unit="s", minimum=0, maximum=1.0, advanced=True,
          help="Communicator initialisation grows with the job: this many seconds per "
               f"GPU. Default {fr.COMM_INIT_PER_GPU_S.value * 1e3:.3g} ms: "
               f"{fr.COMM_INIT_PER_GPU_S.basis}. NCCL 2.23's scalable initialisation and "
               "NCCLX are faster."),
    _time("warmup_time", "Restart: warm-up", fr.WARMUP_S.value,
          f"Slow first steps after a restart. Default 2 min, an {fr.WARMUP_S.basis}.",
          advanced=True),
    Param("hot_spares", "Hot spares", "bool", True,
          help="Healthy nodes standing by: a failed node is swapped at once. Without, "
               "the hardware share of interruptions also waits for a replacement."),
    _time("replacement_time", "Wait for a node without spares", fr.REPLACEMENT_S.value,
          f"Default 1 h, an {fr.REPLACEMENT_S.basis}.", advanced=True,
          when=When("hot_spares", ("false",))),
    Param("hardware_fraction", "Share of interruptions that take a node out", "float",
          fr.HARDWARE_FRACTION.value, unit="1", minimum=0, maximum=1, advanced=True,
          help="Llama 3: about 78% confirmed or suspected hardware (Sec. 3.3.4)."),
    _time("repair_time", "Repair turnaround of a node", fr.REPAIR_S.value,
          f"For the hot spares the job needs (Little's law). Default 3 days, an "
          f"{fr.REPAIR_S.basis}.", advanced=True),
)
