"""The inputs the sparse calculators share: the embedding tables (a list, a preset or
equal tables), their precision and optimizer, the GPU and the PS host memory, and the
scale-out network of a sparse step."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.catalogues.embedding_tables import (
    MAX_DIM,
    MAX_ROWS,
    MAX_TABLES,
    PRESETS,
    TableSpec,
    parse_tables,
)
from calculators.core.spec import Choice, Param
from calculators.formulas.model.model_states import device_capacity_bytes
from calculators.formulas.sparse.embeddings import TORCHREC_RESERVE
from calculators.formulas.sparse.sharding import Network
from calculators.inputs.hardware import accelerator_choices

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs


def tables_from_inputs(inputs: Inputs) -> tuple[TableSpec, ...]:
    """The pasted list or preset when given, otherwise ``num_tables`` equal tables."""
    dim = inputs.whole("embedding_dim")
    if inputs["tables"] is not None:
        return parse_tables(inputs.text("tables"), dim)
    rows = inputs.whole("rows_per_table")
    return tuple(TableSpec(f"T{i + 1}", rows, dim) for i in range(inputs.whole("num_tables")))


def table_params() -> tuple[Param, ...]:
    """The inputs every sparse calculator shares: the tables, their precision, optimizer."""
    presets = ", ".join(p.id for p in PRESETS)
    return (
        Param("tables", "Table list (or preset)", "text", None, optional=True,
              placeholder="blank: the counts below",
              help=f"One table per line, 'rows dim' and an optional name (e.g. 'C3 10131227 "
                   f"16'; rows alone take the embedding dim below), or a preset: {presets}. "
                   "Presets use the published row counts and dims."),
        Param("num_tables", "Number of tables", "int", 26, minimum=1, maximum=MAX_TABLES,
              help="Used when no list is given: this many equal tables (Criteo has 26)."),
        Param("rows_per_table", "Rows per table", "int", 10_000_000, unit="row", minimum=1,
              maximum=MAX_ROWS, help="Distinct IDs (hash buckets) per table, e.g. 10M. "
                                     "Used when no list is given."),
        Param("embedding_dim", "Embedding dimension", "int", 128, minimum=1, maximum=MAX_DIM,
              help="Width of each embedding vector; DLRM uses 16 (Kaggle) and 128 (1TB). "
                   "With a list, only for lines that give rows alone."),
        Param("dtype", "Weight precision", "choice", "fp32",
              choices=(Choice("fp32", "fp32 (4 B)"), Choice("fp16", "fp16 (2 B)"),
                       Choice("bf16", "bf16 (2 B)"),
                       Choice("int8", "int8 + fp32 scale/bias per row"))),
        Param("optimizer", "Optimizer", "choice", "rowwise_adagrad",
              choices=(Choice("sgd", "SGD (no state)"),
                       Choice("adagrad", "Adagrad (one fp32 per element)"),
                       Choice("rowwise_adagrad", "Row-wise Adagrad (one fp32 per row)"),
                       Choice("adam", "Adam (two fp32 per element)")),
              help="State as FBGEMM's TBE stores it (fp32); TorchRec's planner: Adam 2x the "
                   "table, row-wise Adagrad 1/dim, SGD 0."),
    )


def gpu_params() -> tuple[Param, ...]:
    """Accelerator memory and the share kept back for everything but the tables."""
    return (
        Param("gpu", "Accelerator", "choice", hardware.DEFAULT_ACCELERATOR,
              choices=accelerator_choices(),
              help="Memory as the device holds it: the datasheet's label read as GiB (an "
                   "\"80GB\" A100 or H100 holds 80 GiB, 85.9e9 B), as TorchRec's planner "
                   "counts capacity in binary units (constants.HBM_CAP = 32 x 1024^3)."),
        Param("gpu_memory", "GPU memory override", "float", None, unit="B", minimum=1e6,
              maximum=1e14, optional=True,
              placeholder="from the accelerator",
              help="What the device holds, before the reserve below is taken off (e.g. "
                   "42.9e9 for a 40 GiB A100). Enter what is left after other uses only "
                   "with the reserve set to 0, or it is counted twice.",
              advanced=True),
        Param("gpu_reserve", "GPU memory reserved", "float", TORCHREC_RESERVE, unit="1",
              minimum=0, maximum=0.95,
              help="Kept for the dense model, activations and buffers; 15% is TorchRec's "
                   "planner default (HeuristicalStorageReservation).", advanced=True),
    )


def usable_gpu_bytes(inputs: Inputs) -> float:
    """The device's capacity (its label in GiB, as the dense memory model reads it) less
    the ``gpu_reserve`` share."""
    memory = inputs.opt("gpu_memory") or device_capacity_bytes(
        hardware.get(inputs.text("gpu")).memory_bytes)
    return memory * (1.0 - inputs.num("gpu_reserve"))


def host_params() -> tuple[Param, ...]:
    """The memory of a parameter-server host and the share kept back."""
    return (
        Param("host_memory", "Memory per PS host", "float", 1e12, unit="B", minimum=1e6,
              maximum=1e15,
              help="DRAM of one parameter-server host; 1 TB is an assumption (a two-socket "
                   "CPU server). AWS p4d.24xlarge has 1,152 GB (TorchRec DLRM README). "
                   "Tables that fit in one host need one whatever this is."),
        Param("host_reserve", "Host memory reserved", "float", 0.3, unit="1", minimum=0,
              maximum=0.95,
              help="Kept for the OS, network buffers and the hash map's keys and pointers; "
                   "30% is an assumption. Tables that fit in one host need one whatever "
                   "this is.", advanced=True),
    )


def host_usable_bytes(inputs: Inputs) -> float:
    return inputs.num("host_memory") * (1.0 - inputs.num("host_reserve"))


#: The alpha of a message step in the sparse calculators' alpha-beta costs (an
#: assumption, stated in the input's help).
DEFAULT_LATENCY_S = 5e-6


def network_params() -> tuple[Param, ...]:
    """Per-GPU network inputs shared with ``sparse_training``."""
    return (
        Param("nic_bandwidth", "NIC bandwidth per GPU", "float",
              hardware.LINKS["ib_ndr"].bandwidth, unit="B/s", minimum=1e6,
              maximum=1e13,
              help="Scale-out bandwidth per GPU, per direction: 400 Gb/s (InfiniBand NDR) "
                   "line rate by default; measured NCCL bus bandwidth is about 80% of it. "
                   "Applies only when the GPUs span more than one node."),
        Param("scale_up_bandwidth", "NVLink bandwidth per GPU", "float",
              hardware.LINKS["nvlink4"].bandwidth, unit="B/s", minimum=1e6,
              maximum=1e14,
              help="Inside a node, per direction: NVLink 4 is 450 GB/s (900 GB/s "
                   "bidirectional, H100 datasheet).", advanced=True),
        Param("gpus_per_node", "GPUs per node", "int", 8, minimum=1, maximum=1024,
              help="GPUs joined by NVLink in one server: 8 in an HGX/DGX node.",
              advanced=True),
        Param("latency", "Latency per message step", "float", DEFAULT_LATENCY_S, unit="s",
              minimum=0,
              maximum=1, help="Alpha of the alpha-beta model; 5 us is an assumption.",
              advanced=True),
    )


def network_from_inputs(inputs: Inputs) -> Network:
    """The per-GPU network of ``network_params``, validated."""
    return Network(inputs.num("nic_bandwidth"), inputs.num("scale_up_bandwidth"),
                   inputs.whole("gpus_per_node"), inputs.num("latency"))
