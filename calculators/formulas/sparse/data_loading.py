"""The "massive samples" side of sparse models: how fast training reads its data.

Recommendation models train on billions of logged impressions, each a few hundred bytes
to tens of kilobytes, usually one or a few passes. The read rate is samples per second
times bytes per sample; what it costs each worker's NIC decides whether loading can
share the network with training traffic or needs its own path.
"""

from __future__ import annotations

#: Criteo 1TB, days 0-22 (the MLPerf / TorchRec training split): 4,195,196,928 samples
#: (NVIDIA HugeCTR's MLPerf DLRM config, num_samples; day 23 holds 178,274,637 more, per
#: the mlcommons/inference DLRM README).
CRITEO_1TB_TRAIN_SAMPLES = 4_195_196_928
#: DLRM's binary Criteo format: label + 13 dense + 26 sparse, 4 bytes each
#: (facebookresearch/dlrm data_utils.py: bytes_per_feature x tot_fea).
CRITEO_BINARY_BYTES_PER_SAMPLE = 4 * (1 + 13 + 26)
#: TorchRec DLRM README, 8 x A100 40GB, global batch 16,384: ~1,671,168 records/s.
TORCHREC_CRITEO_SAMPLES_PER_S = 1_671_168.0


def read_bandwidth(rate: float, bytes_per_sample: float) -> float:
    """B/s the cluster reads: samples/s x bytes/sample (each sample read once per pass)."""
    return rate * bytes_per_sample
