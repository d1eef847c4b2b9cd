"""The inputs of streaming training (``streaming_training``): the stream, the compute per
sample, freshness, the sync to serving and the checkpoints, each with its source or
marked as an assumption."""

from __future__ import annotations

from calculators.catalogues import hardware
from calculators.core.spec import Choice, Param
from calculators.formulas.sparse.checkpoints import SERVING_DTYPES

DAY_S = 86_400.0

STREAM_PARAMS: tuple[Param, ...] = (
    Param("events_per_s", "Training samples arriving (mean)", "float", 1e6,
          unit="sample/s", minimum=1, maximum=1e10,
          help="Samples per second written to the training log, averaged over a day: "
               "impressions joined with their labels. 1 million is an assumption (a large "
               "feed or ads ranker)."),
    Param("peak_to_mean", "Peak-to-mean ratio", "float", 2.0, minimum=1, maximum=100,
          help="The daily peak over the mean; traffic follows the users' day. 2 is an "
               "assumption. Workers are sized for the peak."),
    Param("passes", "Passes over each sample", "float", 1.0, minimum=1, maximum=100,
          help="1 for online training, which sees each sample once as it arrives "
               "(Monolith, Liu et al. 2022); more multiplies the samples to train."),
)

COMPUTE_PARAMS: tuple[Param, ...] = (
    Param("dense_mfu", "Model FLOPs utilisation of the dense part", "float", 0.046,
          unit="1", minimum=1e-4, maximum=1,
          help="Compute per sample = 6 x dense parameters FLOP at this share of the GPU's "
               "BF16 peak. 4.6%: the training MFU of Kuaishou's earlier ranking models, "
               "as the OneRec technical report (arXiv:2506.13695, Sec. 1) gives it; "
               "OneRec itself reaches 23.7% (abstract)."),
    Param("overlap", "Communication overlaps compute", "bool", True,
          help="On: a step takes the larger of compute and communication (TorchRec "
               "pipelines the next batch's ID alltoall; PERSIA overlaps embedding "
               "traffic with the dense computation). Off: their sum."),
    Param("asynchronous", "PS applies sparse updates asynchronously", "bool", True,
          help="PERSIA's hybrid: embeddings updated asynchronously on the PS, the dense "
               "part synchronously (Lian et al. 2022). Off: the PS waits for every "
               "worker each step, no staleness."),
)

FRESHNESS_PARAMS: tuple[Param, ...] = (
    Param("ingest_delay", "Log to trainer delay", "float", 30.0, unit="s", minimum=0,
          maximum=DAY_S,
          help="From the event to a joined sample at a trainer: the label window of the "
               "joiner and the queue (Monolith joins actions and features in a streaming "
               "job before training). 30 s is an assumption."),
    Param("sparse_sync_interval", "Sparse sync to serving every", "float", 60.0, unit="s",
          minimum=1, maximum=DAY_S,
          help="Monolith ships the changed embedding rows from training to serving at "
               "minute level (Liu et al. 2022, Sec. 2.3, parameter synchronization): "
               "1 minute."),
    Param("dense_sync_interval", "Dense sync to serving every", "float", 3600.0, unit="s",
          minimum=1, maximum=DAY_S,
          help="Monolith syncs the dense part less often than the rows, as it changes "
               "slowly (Liu et al. 2022, Sec. 2.3); one hour is an assumption."),
    Param("serving_dtype", "Serving precision", "choice", "fp16",
          choices=tuple(Choice(k, k) for k in SERVING_DTYPES),
          help="Rows shipped to serving, weights only (no optimizer state); int8 rows "
               "carry 8 B of scale and bias (FBGEMM). fp16 is an assumption."),
    Param("sync_link_bandwidth", "Link to the serving PS", "float",
          hardware.LINKS["roce_400g"].bandwidth, unit="B/s", minimum=1e6, maximum=1e13,
          help="What carries the changed rows from training to serving: one 400 GbE "
               "port (an assumption)."),
    Param("zipf_exponent", "Zipf exponent of ID popularity", "float", 1.0, minimum=0,
          maximum=4,
          help="Row of rank i looked up in proportion to i^-s over the live rows; decides "
               "how many distinct rows an interval touches. 1.0 is an assumption: ID "
               "streams are heavy-tailed; 0 is uniform."),
)

CHECKPOINT_PARAMS: tuple[Param, ...] = (
    Param("checkpoint_interval", "Checkpoint every", "float", 1800.0, unit="s", minimum=1,
          maximum=DAY_S,
          help="Check-N-Run's interval, 30 minutes (Eisenman et al., NSDI 2022, "
               "arXiv:2010.08679)."),
    Param("checkpoint_bits", "Bits per element in increments", "int", 4, minimum=1,
          maximum=32,
          help="Row-wise quantisation of the modified rows. Check-N-Run picks the width "
               "by how many restores a run expects; 4 bits is an assumption."),
    Param("qparam_bytes", "Scale + bias bytes per row", "float", 4.0, unit="B", minimum=0,
          maximum=64,
          help="Two fp16 values per row, as FBGEMM's n-bit row-wise format stores them "
               "(an assumption for the checkpoint format)."),
    Param("full_every", "A full checkpoint every", "int", 8, unit="checkpoint", minimum=1,
          maximum=10_000,
          help="K: one full fp32 checkpoint, then K - 1 increments (Check-N-Run's "
               "intermittent scheme decides K by a predictor; 8 is an assumption). 1: "
               "only full checkpoints."),
    Param("storage_bandwidth", "Checkpoint write bandwidth", "float", 10e9, unit="B/s",
          minimum=1e6, maximum=1e14,
          help="Aggregate write bandwidth to the remote store; 10 GB/s is an assumption."),
)
