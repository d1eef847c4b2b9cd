"""cluster_sizing: from a model, a dataset and a deadline to a cluster, step by step.

It composes formulas and adds none of its own: compute, GPU-hours, energy and carbon
from formulas.model.flops; the layout and its memory from the planner (formulas.planner, run
with the planner's own inputs as parallel_plan runs it); collective bytes from
formulas.collectives.costs; embedding memory and the PS-or-collective choice from
formulas.sparse.embeddings and formulas.sparse.step; the read rate from
formulas.sparse.data_loading.
The steps are in ``dense.py`` and ``sparse.py``, the shared glue in ``steps.py`` and
``machine.py``. Like every calculator, it imports no other calculator.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.catalogues.speed_validation import STEP_TIME_BAND
from calculators.cluster_sizing.dense import size_dense
from calculators.cluster_sizing.machine import (
    ASSUMED,
    CAPTIONS,
    SPARSE_LAYOUTS,
    Machine,
    Report,
    deadline_status,
)
from calculators.cluster_sizing.moe import size_moe
from calculators.cluster_sizing.power import POWER_OUTPUTS, POWER_PARAMS, site_power
from calculators.cluster_sizing.sparse import size_sparse
from calculators.core.calculator import Calculator
from calculators.core.i18n import _
from calculators.core.spec import Choice, Output, Param, When
from calculators.inputs import data, training
from calculators.inputs.architecture import ARCHITECTURE_PARAMS
from calculators.inputs.embeddings import gpu_params, table_params
from calculators.inputs.hardware import MFU_BASIS_HELP, accelerator_choices, peak_words
from calculators.inputs.memory import OFFLOAD_PARAM
from calculators.inputs.moe import EP_OVERLAP_PARAM, EXPERT_COMM_PARAMS, MOE_ARCHITECTURE_PARAMS
from calculators.inputs.sparse_step import SPARSE_STEP_PARAMS
from calculators.inputs.speed import FP8_RECIPE_PARAM
from calculators.inputs.training import OPTIMIZER_PARAM, PRECISION_PARAM

if TYPE_CHECKING:
    from calculators.core.calculator import Computed, Inputs


_TABLES = {p.name: p for p in table_params()}
#: The MoE architecture's names that the dense architecture inputs already declare.
_SHARED_NAMES = tuple(p.name for p in ARCHITECTURE_PARAMS
                      if p.name in {q.name for q in MOE_ARCHITECTURE_PARAMS})
_MOE_ONLY = tuple(p for p in MOE_ARCHITECTURE_PARAMS if p.name not in _SHARED_NAMES)
_GPU = {p.name: p for p in gpu_params()}


def _sparse_param(name: str) -> Param:
    param = SPARSE_STEP_PARAMS[name]
    return replace(param, help=(param.help + " Sparse models only.").strip())


_DECLARED: tuple[Param, ...] = (
    Param("model_kind", "Model kind", "choice", "dense",
          choices=(Choice("dense", "dense (transformer LM)"),
                   Choice("moe", "mixture of experts (transformer LM)"),
                   Choice("sparse", "sparse (recommendation: embeddings + MLPs)")),
          help="Dense: sized by compute, then laid out by the TP x PP x DP planner. Mixture "
               "of experts: sized by the active parameters' compute and the total's memory, "
               "then laid out by the EP x TP x PP x DP planner (moe_plan). Sparse: sized by "
               "the dense part's compute, then by the embedding tables' memory and the "
               "PS-or-collective choice."),
    Param("deadline_days", "Deadline", "float", 34.0, unit="days", minimum=0.01,
          maximum=3650,
          help="Wall-clock days the training run may take. Default 34: Narayanan et al. "
               "2021's estimate for GPT-3 on 1,024 A100s (Sec. 5.1)."),
    replace(training.UTILIZATION_PARAM, default=0.3365,
            help="Achieved fraction of peak on the steps that run (MFU), an assumption; "
                 "failures, restarts and checkpoints are the goodput's. An MFU read from a "
                 "run's total GPU-hours (as DeepSeek-V3's) already contains them: give "
                 "it with goodput 1, or they are counted twice. "
                 "Default 33.65%: Megatron's 140 TFLOP/s per A100 for GPT-3, which "
                 "Narayanan et al. 2021 count as 8ND with full recomputation (Eq. 4, "
                 "Sec. 5.1), is 140 x 6/8 = 105 TFLOP/s of model FLOPs (6ND, as "
                 "flop_count 6N counts), 33.65% of 312; counted with the whole attention "
                 "term (Eq. 3), 33.68%. Llama 3 405B reached 38-43% on H100s (Dubey et al. "
                 "2024, Table 4), in PaLM's count. The MFU must be in flop_count's count. "
                 "The run can be no faster than the planner's step model allows for its "
                 "layout: wall-clock time is the longer of the two."),
    training.FLOP_COUNT_PARAM,
    replace(training.FLOPS_PER_PARAM_TOKEN_PARAM, default=6.0,
            help="6 when the utilisation is an MFU (Kaplan et al. 2020, Sec. 2.1), "
                 "whatever the layout recomputes; 8 counts the extra forward pass of full "
                 "recomputation, with a hardware-FLOPs utilisation, as Narayanan et al. "
                 "2021 do (Eq. 4). With 8, the page warns when the planner's layout does "
                 "not recompute fully."),
    # --- dense: the model and its data
    *ARCHITECTURE_PARAMS,
    Param("params", "Parameters N (override)", "float", None, unit="param", minimum=1,
          maximum=1e16, optional=True,
          placeholder="from the architecture",
          help="N in 6N, the weights a token multiplies, and the checkpoint's count. "
               "Blank: from the architecture, its matrices and output layer (the input "
               "embedding, a lookup, left out) for 6N and every parameter (model_params) "
               "for the checkpoint. The planner always uses the architecture."),
    training.TOKENS_PARAM,
    Param("global_batch", "Global batch", "int", 1536, unit="sequence", minimum=1,
          maximum=100_000_000,
          help="Sequences per optimizer step (dense). Data parallelism must divide it. "
               "GPT-3 on 1,024 A100s: 1,536 (Narayanan et al. 2021, Sec. 5.1)."),
    PRECISION_PARAM,
    FP8_RECIPE_PARAM,
    OPTIMIZER_PARAM,
    OFFLOAD_PARAM,
    Param("bytes_per_token", "Stored bytes per token", "float", None, unit="B", minimum=1e-3,
          maximum=1e6, optional=True,
          placeholder="2 or 4 by vocabulary",
          help="Tokenised training data on disk. Blank: 2 B (uint16) when the vocabulary "
               "fits in 65,536 IDs, else 4 B (int32), as Megatron-LM's indexed datasets "
               "store them."),
    # --- mixture of experts: what a dense transformer does not have (the shared names
    # above describe its attention, widths and vocabulary)
    *_MOE_ONLY,
    *EXPERT_COMM_PARAMS,
    EP_OVERLAP_PARAM,
    # --- sparse: the model and its data
    # The data inputs are data_pipeline's, with this calculator's defaults and help.
    replace(data.DATASET_SAMPLES_PARAM, default=500e9,
            help="Sparse models. 500 billion logged impressions is an assumption of "
                 "industrial scale (Criteo 1TB has 4.2 billion)."),
    replace(data.BYTES_PER_SAMPLE_PARAM, default=5e3,
            help="Sparse models. 160 B for DLRM's binary Criteo; production samples with "
                 "thousands of features run to kilobytes (5 kB is an assumption)."),
    replace(data.EPOCHS_PARAM,
            help="Sparse models: passes over the samples (usually one)."),
    replace(_sparse_param("batch_size"), label="Samples per step"),
    _sparse_param("dense_params"),
    replace(_TABLES["tables"], help=_TABLES["tables"].help + " Sparse models only."),
    _TABLES["num_tables"],
    _TABLES["rows_per_table"],
    _TABLES["embedding_dim"],
    replace(SPARSE_STEP_PARAMS["num_sparse_features"], default=None, optional=True,
            placeholder="one per table",
            help=SPARSE_STEP_PARAMS["num_sparse_features"].help.replace(
                " 100 is an assumption.", "") + " Blank: one per table, as in DLRM "
                "(Naumov et al. 2019) and its Criteo configurations. Sparse models only."),
    replace(_TABLES["dtype"], name="embedding_dtype", label="Embedding weight precision"),
    replace(_TABLES["optimizer"], name="embedding_optimizer", label="Embedding optimizer"),
    _sparse_param("pooling_factor"),
    _sparse_param("unique_ratio"),
    replace(SPARSE_STEP_PARAMS["dtype"], name="wire_dtype", label="Embeddings on the wire"),
    _sparse_param("dense_on_ps"),
    Param("num_ps_servers", "PS servers", "int", None, unit="server", minimum=1,
          maximum=10_000_000, optional=True, placeholder="enough to hold the tables",
          help="Sparse models. Blank: as many hosts as the tables need (embedding_memory)."),
    _sparse_param("server_nic_bandwidth"),
    _sparse_param("host_memory"),
    _sparse_param("host_reserve"),
    _sparse_param("price_per_ps_host_hour"),
    _GPU["gpu_reserve"],
    # --- the machines
    Param("gpu", "Accelerator", "choice", "a100_80gb_sxm",
          choices=accelerator_choices(),
          help="Peak dense BF16 FLOP/s, memory, NVLink bandwidth and power from the "
               "datasheet (hardware catalogue)."),
    Param("gpu_memory", "GPU memory override", "float", None, unit="B", minimum=1e6,
          maximum=1e14, optional=True, placeholder="from the GPU",
          help="What the device holds. Blank: the datasheet's label read as GiB (an "
               "\"80GB\" A100 or H100 holds 80 GiB, 85.9e9 B). A dense layout must leave "
               "5% of it free, the embedding tables gpu_reserve of it."),
    Param("gpus_per_node", "GPUs per node", "int", 8, minimum=1, maximum=1024,
          help="The NVLink domain: 8 in a DGX/HGX A100 or H100 node. GPUs are bought in "
               "whole nodes."),
    Param("nics_per_node", "NICs per node", "int", None, minimum=1, maximum=1024,
          optional=True, placeholder="one per GPU",
          help="Scale-out ports per node. Blank: one per GPU (DGX A100 / H100)."),
    Param("nic_bandwidth", "NIC bandwidth", "float", None, unit="B/s", minimum=1e6,
          maximum=1e13, optional=True, placeholder="HDR (A100) or NDR",
          help="Per port, per direction. Blank: InfiniBand HDR 200 Gb/s for A100 and NDR "
               "400 Gb/s otherwise, as parallel_plan assumes."),
    training.PRICE_PER_GPU_HOUR_PARAM,
    training.GPU_POWER_WATTS_PARAM,
    training.PUE_PARAM,
    *POWER_PARAMS,
    training.CARBON_INTENSITY_PARAM,
    training.GOODPUT_PARAM,
)

#: The form's order: the question first (kind, deadline, machines, MFU), then the dense
#: model and data, then the sparse ones; the rest under "More inputs" unless an
#: example sets it. Labels say which kind of model an input is for.
_DENSE = ("tokens", "global_batch", *(p.name for p in ARCHITECTURE_PARAMS))
#: Dense inputs an MoE reads too (same meaning: inputs.moe).
_SHARED = (*_SHARED_NAMES, "tokens", "global_batch", "seq_len", "bytes_per_token", "offload",
           "flop_count")
_MOE = (*(p.name for p in _MOE_ONLY), *(p.name for p in EXPERT_COMM_PARAMS), "ep_overlap")
_SPARSE = ("dataset_samples", "bytes_per_sample", "batch_size", "dense_params", "num_tables",
           "rows_per_table", "embedding_dim", "num_sparse_features", "pooling_factor",
           "dense_on_ps")
_SPARSE_MORE = ("epochs", "tables", "embedding_dtype", "embedding_optimizer", "unique_ratio",
                "wire_dtype", "num_ps_servers", "server_nic_bandwidth", "host_memory",
                "host_reserve", "price_per_ps_host_hour", "gpu_reserve")  # "More inputs"
_FIRST = ("model_kind", "deadline_days", "gpu", "gpus_per_node", "utilization", "goodput",
          "flops_per_param_token", *_DENSE, "routed_experts", "experts_per_token",
          "expert_ffn", "shared_experts", "dense_layers", *_SPARSE)
_BY_NAME = {p.name: p for p in _DECLARED}


def _labelled(param: Param) -> Param:
    name = param.name
    dense, sparse = name in (*_DENSE, "params"), name in (*_SPARSE, *_SPARSE_MORE)
    kind = (" (dense, MoE)" if name in _SHARED else " (dense)" if dense else
            " (MoE)" if name in _MOE else " (sparse)" if sparse else "")
    # The page shows an input only for the kind of model it applies to (values kept),
    # and where its own declaration says so (GQA-only inputs, say) only then.
    kinds = (("dense", "moe") if name in _SHARED else ("dense",) if dense else
             ("moe",) if name in _MOE else ("sparse",) if sparse else None)
    when = param.when if kinds is None else When("model_kind", kinds, also=param.when)
    return replace(param, label=param.label + kind, advanced=param.name not in _FIRST,
                   when=when)


PARAMS: tuple[Param, ...] = tuple(_labelled(p) for p in (
    *(_BY_NAME[name] for name in _FIRST),
    *(p for p in _DECLARED if p.name not in _FIRST)))


OUTPUTS: tuple[Output, ...] = (
    Output("num_gpus", "GPUs", "GPU", "count"),
    Output("num_nodes", "Nodes", "", "count"),
    Output("layout", "Layout", "", "text",
           help="Every parallel dimension, multiplied out to the GPU count (EP folds into "
                "the GPUs of a stage); none for a sparse model."),
    Output("deadline_status", "Deadline", "", "text"),
    Output("gpus_for_deadline", "GPUs the deadline needs (before whole nodes)", "GPU", "count",
           help="Compute / (peak x MFU) / deadline, shown like every count to three "
                "significant figures; the table's row shows the same figure."),
    Output("training_mode", "Training mode", "", "text"),
    Output("total_flops", "Training compute C", "FLOP", "sci"),
    Output("gpu_hours", "GPU-hours", "GPU-h", "count"),
    Output("wall_clock_days", "Wall-clock time", "days", "fixed",
           help="The training time divided by the goodput. Training time, dense: the "
                "longer of the compute at the assumed MFU and the planner's step estimate "
                "for the chosen layout; sparse: steps x the longer of compute and "
                "communication per step. GPU-hours, cost and energy follow it."),
    Output("step_time", "Step time at the assumed MFU", "s", "si"),
    Output("tp", "Tensor parallel", "", "count"),
    Output("cp", "Context parallel", "", "count"),
    Output("pp", "Pipeline parallel", "", "count"),
    Output("dp", "Data parallel", "", "count"),
    Output("ep", "Expert parallel", "", "count"),
    Output("micro_batch", "Micro-batch", "sequence", "count"),
    Output("zero_stage", "ZeRO stage", "", "count"),
    Output("recompute", "Recomputation", "", "text"),
    Output("memory_per_gpu_bytes", "Memory per GPU", "B"),
    Output("memory_headroom_bytes", "Memory headroom per GPU", "B"),
    Output("planner_mfu", "MFU the planner's step model reaches", "1", "percent"),
    Output("mfu_basis", "MFUs against", "", "text", help=MFU_BASIS_HELP),
    Output("planner_days", "Time at the planner's step estimate", "days", "fixed",
           help="The planner's step time is " + STEP_TIME_BAND.words() + ".",
           band=STEP_TIME_BAND.worst),
    Output("intra_node_bytes_per_step", "Sent in node per GPU per step", "B"),
    Output("inter_node_bytes_per_step", "Sent across nodes per GPU per step", "B"),
    Output("intra_node_bandwidth_needed", "In-node bandwidth needed per GPU", "B/s",
           help="Dense: the in-node bytes per step over the step time at the assumed MFU."),
    Output("inter_node_bandwidth_needed", "Network bandwidth needed per GPU", "B/s",
           help="Dense: to hide behind compute at the assumed MFU. Mixture of experts: "
                "over the step the training time rests on (the planner's when it is the "
                "longer). Sparse: to fit the step budget the deadline allows."),
    Output("inter_node_bandwidth_available", "Network line rate per GPU", "B/s"),
    Output("embedding_bytes", "Embedding tables + optimizer state", "B"),
    Output("gpus_for_tables", "GPUs to hold the tables", "GPU", "count"),
    Output("ps_hosts", "Parameter-server hosts", "host", "count"),
    Output("comm_time_per_step", "Sparse communication per step", "s", "si"),
    Output("read_bandwidth", "Storage read bandwidth", "B/s"),
    Output("read_bandwidth_per_gpu", "Read bandwidth per GPU", "B/s"),
    Output("dataset_bytes", "Training data read", "B"),
    Output("checkpoint_bytes", "Checkpoint (model + optimizer states)", "B"),
    Output("goodput", "Goodput (share of wall-clock that trains)", "1", "percent",
           help="Given, or estimated by the goodput model; days, GPU-hours and cost "
                "include it."),
    Output("checkpoint_interval", "Checkpoint interval", "s", "duration",
           help="Daly 2006's optimum for the synchronous write below, at the job's "
                "interruption rate (Llama 3's per GPU)."),
    Output("checkpoint_write_time", "Checkpoint write time", "s", "duration",
           help="Checkpoint / min(nodes x 25 GB/s, 2 TB/s): assumed storage (goodput "
                "calculator); parameter servers write their tables at most at their NIC's "
                "rate, so no faster than tables / (servers x NIC)."),
    Output("cost_usd", "Cost", "USD", "usd", help="GPU-hours x their price, plus PS "
           "host-hours x theirs when parameter servers hold the tables."),
    Output("ps_cost_usd", "Of which parameter servers", "USD", "usd"),
    Output("energy_kwh", "Energy", "kWh", "count"),
    Output("co2_tonnes", "Emissions", "tCO2e", "count"),
    *POWER_OUTPUTS,
)

def size_cluster(inputs: Inputs) -> Computed:
    """The calculator's function: dense or sparse, then storage and money."""
    machine = Machine.from_inputs(inputs)
    report = Report()
    kind = inputs.text("model_kind")
    {"dense": size_dense, "moe": size_moe, "sparse": size_sparse}[kind](inputs, machine, report)
    report.notes.append(_(ASSUMED[kind]))
    report.values.setdefault("ep", None)  # expert parallelism: mixtures of experts only
    if kind == "sparse":  # no TP x PP x DP: the summary names the mode instead
        report.values["layout"] = _(SPARSE_LAYOUTS[str(report.values["training_mode"])])
    # The summary says whether the run meets its deadline, not only a warning below.
    report.values["deadline_status"] = deadline_status(report, machine)
    # The assumed and the planner's MFU are both against the BF16 peak.
    report.values["mfu_basis"] = peak_words(hardware.get(inputs.text("gpu")))
    site_power(inputs, machine, report)  # megawatts at the site (power.py)
    return report.computed(_(CAPTIONS[kind]))


CLUSTER_SIZING = Calculator(
    id="cluster_sizing",
    headline=("num_gpus", "layout", "wall_clock_days", "deadline_status", "cost_usd"),
    title="Sizing a training cluster",
    summary="From a model, a dataset and a deadline to GPUs, layout, memory headroom, "
            "network per GPU, storage bandwidth, energy, cost, carbon and megawatts at the site.",
    chapter="capstone.md",
    params=PARAMS,
    outputs=OUTPUTS,
    function=size_cluster,
    sources=(
        "Kaplan et al. 2020, Sec. 2.1 (C = 6ND), via training_compute",
        "Narayanan et al. 2021, Megatron-LM (SC21), Sec. 5.1 (GPT-3 on 1,024 A100s)",
        "Touvron et al. 2023, LLaMA, Table 15 (energy and carbon), via training_compute",
        "parallel_plan, embedding_memory, sparse_training and data_pipeline (this guide)",
    ),
)
