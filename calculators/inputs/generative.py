"""The inputs of a generative recommender (its sequence layers, its histories, its
tables) and of its training run, and how they are read into the formulas' objects."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.core.i18n import _
from calculators.core.spec import Choice, Param, ValidationError, When
from calculators.formulas.planner.layout import DEFAULT_OVERLAP
from calculators.formulas.sparse.embeddings import shard_bytes
from calculators.formulas.sparse.generative import Lengths, SequenceModel
from calculators.inputs.hardware import accelerator_choices

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

_HSTU_REPO = "facebookresearch/generative-recommenders"
_TRANSFORMER = When("gr_block", ("transformer",))

MODEL_PARAMS: tuple[Param, ...] = (
    Param("gr_block", "Sequence layer", "choice", "hstu", choices=(
        Choice("hstu", "HSTU (research layer)"),
        Choice("stu", "STU (DLRM-v3 production layer)"),
        Choice("transformer", "Transformer (softmax attention + FFN)")),
          help="HSTU: Zhai et al. 2024, Sec. 3 (two linear layers, pointwise SiLU "
               f"attention, no FFN); {_HSTU_REPO} research/modeling/sequential/hstu.py. "
               "STU: the same repository's modules/stu.py (bias on f1, a three-input f2). "
               "Transformer: SASRec-style (Kang and McAuley 2018)."),
    Param("gr_layers", "Layers", "int", 24, minimum=1, maximum=512,
          help="Sequence layers. HSTU-large on MovieLens-20M: 16; DLRM-v3: 3."),
    Param("gr_dim", "Model width d", "int", 1024, minimum=8, maximum=65536,
          help="Width of the residual stream (HSTU's embedding dimension)."),
    Param("gr_heads", "Heads h", "int", 16, minimum=1, maximum=1024),
    Param("gr_qk_dim", "Query/key width per head", "int", 64, minimum=1, maximum=4096,
          help="d_qk; HSTU's attention_dim."),
    Param("gr_v_dim", "Value width per head", "int", 64, minimum=1, maximum=4096,
          help="d_v; HSTU's linear_hidden_dim (U has the same width)."),
    Param("gr_ffn", "Feed-forward width", "int", 4096, minimum=1, maximum=1_000_000,
          when=_TRANSFORMER, help="Transformer only; 4d is the usual choice."),
    Param("history_max", "History length cap", "int", 8192, unit="token", minimum=1,
          maximum=1_000_000,
          help="Tokens of the longest history kept. Count tokens, not events: a "
               "formulation that interleaves items and actions has two per event. The "
               "HSTU paper times its attention on sequences of 8,192."),
    Param("history_mean", "Mean history length", "float", 4096, unit="token", minimum=1,
          maximum=1_000_000,
          help="Mean tokens per sample (at most the cap). Jagged kernels compute each "
               "history at its own length; assumption for the default: half the cap."),
    Param("history_spread", "Spread of history lengths", "float", 0.5, unit="1",
          minimum=0, maximum=10,
          help="Coefficient of variation of the lengths: attention costs the mean square "
               "length, mean^2 (1 + spread^2), at most mean x cap. Assumption: 0.5; 0 when "
               "every history has the same length."),
    Param("padded", "Padded batches", "bool", False,
          help="Compute every history at the cap (a padded batch, as a plain "
               "FlashAttention-2 transformer does), not at its own length."),
    Param("candidates", "Candidates per sample", "int", 0, unit="item", minimum=0,
          maximum=100_000,
          help="Items scored after the history (a ranking model: DLRM-v3 appends up to "
               "10). 0: a retrieval model, trained on every history position."),
    Param("negatives", "Sampled negatives per target", "int", 128, minimum=0,
          maximum=100_000,
          help="Retrieval only: the sampled softmax scores each position against its "
               "next item and this many others (HSTU's configs: 128, 512 for Books)."),
    Param("lookups_per_token", "Embedding lookups per token", "int", 1, minimum=1,
          maximum=1000,
          help="Rows each token reads (DLRM-v3: the post and its owner, 2)."),
    Param("table_rows", "Embedding rows (all tables)", "float", 2.9e9, unit="row",
          minimum=1, maximum=1e14,
          help="Rows of every table together; the default holds 1.48T parameters at "
               "width 512 (an illustration of the HSTU paper's 1.5T-parameter model)."),
    Param("table_dim", "Embedding width", "int", 512, minimum=1, maximum=65536),
    Param("table_dtype", "Table precision", "choice", "fp32", choices=(
        Choice("fp32", "fp32"), Choice("fp16", "fp16"), Choice("bf16", "bf16"),
        Choice("int8", "int8 (row-wise)")),
          help="Bytes per element as FBGEMM stores them (the sparse chapter)."),
    Param("table_optimizer", "Table optimizer", "choice", "rowwise_adagrad", choices=(
        Choice("sgd", "SGD"), Choice("rowwise_adagrad", "Row-wise Adagrad"),
        Choice("adagrad", "Adagrad"), Choice("adam", "Adam")),
          help="State in fp32 as FBGEMM keeps it."),
    Param("table_placement", "Where the tables live", "choice", "hbm", choices=(
        Choice("hbm", "sharded over the GPUs' HBM"),
        Choice("cache", "host memory and SSD, hot rows cached in HBM")),
          help="Sharded (TorchRec's collective training) needs GPUs enough to hold every "
               "row; behind a cache, each GPU gives a share of its memory to hot rows and "
               "the rest live lower (whether those tiers keep up: embedding_tiers)."),
    Param("hbm_cache_share", "HBM share for the row cache", "float", 0.3, unit="1",
          minimum=0.01, maximum=0.9, when=When("table_placement", ("cache",)),
          help="Share of each GPU's usable memory given to cached rows. Assumption: 30%, "
               "embedding_tiers' default."),
)

TRAINING_PARAMS: tuple[Param, ...] = (
    Param("gr_batch", "Global batch", "int", 4096, unit="sample", minimum=1,
          maximum=100_000_000,
          help="Samples (user histories) per step. Assumption for the default."),
    Param("training_samples", "Training samples", "float", 1e10, unit="sample",
          minimum=1, maximum=1e16,
          help="Histories the run trains on, all epochs. Assumption: 10 billion, a "
               "few days of a large platform's users."),
    Param("deadline_days", "Deadline", "float", 14, unit="days", minimum=0.01,
          maximum=3650),
    Param("num_gpus", "GPUs", "int", 256, minimum=1, maximum=65536),
    Param("gpu", "GPU", "choice", "h100_sxm", choices=accelerator_choices(),
          help="Peak, memory and links from the catalogue (the Hardware page)."),
    Param("gpus_per_node", "GPUs per node", "int", None, minimum=1, maximum=576,
          optional=True, placeholder="the NVLink domain",
          help="The scale-up domain that tensor parallelism stays in and the alltoall "
               "and allreduce reach at NVLink speed. Blank: the catalogue's."),
    Param("tensor_parallel", "Tensor parallelism", "choice", "auto", choices=(
        Choice("auto", "fastest that fits"), Choice("1", "1"), Choice("2", "2"),
        Choice("4", "4"), Choice("8", "8")),
          help="Split each layer over this many GPUs of a node (heads must divide)."),
    Param("gpu_reserve", "GPU memory reserved", "float", 0.1, unit="1", minimum=0,
          maximum=0.9, advanced=True,
          help="Kept back for buffers and fragmentation; assumption: 10%."),
    Param("overlap", "Overlap efficiency", "float", DEFAULT_OVERLAP, unit="1", minimum=0,
          maximum=1, advanced=True,
          help="Share of the embedding alltoalls and the gradient allreduce that hides "
               "under compute, as the planner counts it (assumption 0.8; arXiv:2507.03114)."),
    Param("dlrm_dense_params", "DLRM dense parameters", "float", 2_747_009, unit="param",
          minimum=0, maximum=1e12, advanced=True,
          help="The DLRM compared: the same tables, the history pooled, and MLPs of this "
               "size (default: TorchRec's Criteo 1TB DLRM, bottom 13-512-256-128, top "
               "1024-1024-512-256-1, facebookresearch/dlrm torchrec_dlrm/README.MD)."),
)


def sequence_model(inputs: Inputs) -> SequenceModel:
    """The layers, with the head count checked against the width."""
    block, heads = inputs.text("gr_block"), inputs.whole("gr_heads")
    return SequenceModel(block=block, layers=inputs.whole("gr_layers"),
                         d_model=inputs.whole("gr_dim"), heads=heads,
                         qk_dim=inputs.whole("gr_qk_dim"), v_dim=inputs.whole("gr_v_dim"),
                         ffn=inputs.whole("gr_ffn") if block == "transformer" else 0)


def lengths(inputs: Inputs) -> Lengths:
    """The histories; a mean above the cap is refused by name."""
    cap, mean = inputs.whole("history_max"), inputs.num("history_mean")
    if mean > cap:
        raise ValidationError("history_mean", _(
            "the mean history ({mean:,.0f} tokens) cannot exceed the cap ({cap:,} "
            "tokens)").format(mean=mean, cap=cap))
    return Lengths.from_spread(cap, mean, inputs.num("history_spread"),
                               inputs.whole("candidates"), padded=inputs.flag("padded"))


def negatives(inputs: Inputs) -> int:
    """Sampled negatives: a ranking model (with candidates) has none."""
    return 0 if inputs.whole("candidates") > 0 else inputs.whole("negatives")


def row_bytes(inputs: Inputs) -> float:
    """One embedding row with its optimizer state."""
    return shard_bytes(1, inputs.whole("table_dim"), inputs.text("table_dtype"),
                       inputs.text("table_optimizer"))


def node_size(inputs: Inputs) -> int:
    """GPUs per node: the input, or the accelerator's scale-up domain."""
    given = inputs.opt("gpus_per_node")
    return int(given) if given else hardware.get(inputs.text("gpu")).scale_up_domain


def cache_bytes(inputs: Inputs, usable: float) -> float | None:
    """HBM per GPU for cached rows, or None when the tables are sharded in HBM."""
    if inputs.text("table_placement") != "cache":
        return None
    return usable * inputs.num("hbm_cache_share")


def fixed_tp(inputs: Inputs) -> int | None:
    """The tensor-parallel size asked for, or None for the search."""
    value = inputs.text("tensor_parallel")
    return None if value == "auto" else int(value)
