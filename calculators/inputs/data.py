"""The training data's inputs, shared by ``data_pipeline`` and the sizing of a sparse
model: dataset size, bytes per sample and passes over it."""

from __future__ import annotations

from calculators.core.spec import Param
from calculators.formulas.sparse.data_loading import (
    CRITEO_1TB_TRAIN_SAMPLES,
    CRITEO_BINARY_BYTES_PER_SAMPLE,
)

BYTES_PER_SAMPLE_PARAM = Param("bytes_per_sample", "Bytes per sample", "float",
      CRITEO_BINARY_BYTES_PER_SAMPLE, unit="B", minimum=1e-3, maximum=1e9,
      help="160 B: DLRM's binary Criteo (label, 13 dense, 26 sparse; 4 B each). "
           "Production samples with thousands of features run to kilobytes.")
DATASET_SAMPLES_PARAM = Param("dataset_samples", "Samples in the dataset", "float",
      float(CRITEO_1TB_TRAIN_SAMPLES), unit="sample", minimum=1, maximum=1e15,
      help="Criteo 1TB training days 0-22: 4,195,196,928 (HugeCTR MLPerf config).")
EPOCHS_PARAM = Param("epochs", "Epochs", "float", 1.0, minimum=1e-3, maximum=1e4,
      help="Recommendation models usually see their data once.")
