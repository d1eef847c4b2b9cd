"""The inputs of one sparse training step that ``sparse_training`` and the sizing of a
sparse model share, each declared once with its source or marked as an assumption."""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.core.spec import Choice, Param
from calculators.formulas.sparse.sharding import COMM_BYTES

BATCH_SIZE_PARAM = Param(
    "batch_size", "Global batch", "int", 65_536, unit="sample", minimum=1,
    maximum=1e9, help="Samples per step over all workers.")
NUM_SPARSE_FEATURES_PARAM = Param(
    "num_sparse_features", "Sparse features per sample", "int", 100, minimum=1,
    maximum=100_000,
    help="Categorical features a sample carries; each looks up one table and is pooled "
         "into one vector, so a sample reads features x IDs-per-feature rows. Features "
         "and tables differ: several features may share a table (TorchRec's "
         "EmbeddingBagConfig lists the features of each table). Criteo: 26, one per "
         "table. 100 is an assumption.")
POOLING_FACTOR_PARAM = Param(
    "pooling_factor", "IDs per feature per sample", "float", 10.0, minimum=1e-3,
    maximum=1e5,
    help="Multi-hot features look up several rows and pool them (sum or mean); "
         "Criteo has 1. 10 is an assumption.")
UNIQUE_RATIO_PARAM = Param(
    "unique_ratio", "Unique fraction after de-duplication", "float", 0.5, unit="1",
    minimum=1e-6, maximum=1,
    help="Share of a worker's IDs left after removing repeats within its batch; "
         "popular items repeat, so real data is well below 1 (an assumption).")
DTYPE_PARAM = Param(
    "dtype", "Precision on the wire", "choice", "fp32",
    choices=tuple(Choice(k, k) for k in COMM_BYTES),
    help="For embeddings, their gradients and the dense gradients.", advanced=True)
DENSE_PARAMS_PARAM = Param(
    "dense_params", "Dense parameters", "float", 50e6, unit="param", minimum=0,
    maximum=1e12, help="The MLPs and interaction layers; 50M is an assumption.")
SERVER_NIC_BANDWIDTH_PARAM = Param(
    "server_nic_bandwidth", "NIC bandwidth per PS server", "float",
    hardware.LINKS["roce_100g"].bandwidth, unit="B/s", minimum=1e6,
    maximum=1e13,
    help="A CPU server with one 100 GbE port (an assumption); a GPU PS has more.")
DENSE_ON_PS_PARAM = Param(
    "dense_on_ps", "Dense part on the PS too", "bool", True,
    help="Classic PS: yes. Hybrid (PERSIA): no, the workers allreduce it.")
HOST_MEMORY_PARAM = Param(
    "host_memory", "Memory per PS server", "float", 1e12, unit="B", minimum=1e6,
    maximum=1e15, help="1 TB (an assumption).")
HOST_RESERVE_PARAM = Param(
    "host_reserve", "Host memory reserved", "float", 0.3, unit="1", minimum=0,
    maximum=0.95, help="OS, buffers and hash-map overhead (an assumption).",
    advanced=True)

PS_HOST_PRICE_PARAM = Param(
    "price_per_ps_host_hour", "Price per PS host-hour", "float", 4.0, unit="USD/h",
    minimum=0, maximum=1000,
    help="An assumption, not a quote: $4.00 per hour for a CPU server with 1 TB of memory "
         "and a 100 GbE port (the PS server assumed here); prices vary several-fold: "
         "enter yours. Counted only when the design uses parameter servers.")

#: By input name, for a calculator that takes them with its own help.
SPARSE_STEP_PARAMS: dict[str, Param] = {p.name: p for p in (
    BATCH_SIZE_PARAM,
    NUM_SPARSE_FEATURES_PARAM,
    POOLING_FACTOR_PARAM,
    UNIQUE_RATIO_PARAM,
    DTYPE_PARAM,
    DENSE_PARAMS_PARAM,
    SERVER_NIC_BANDWIDTH_PARAM,
    DENSE_ON_PS_PARAM,
    HOST_MEMORY_PARAM,
    HOST_RESERVE_PARAM,
    PS_HOST_PRICE_PARAM,
)}
