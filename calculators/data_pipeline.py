"""The "massive samples" side of sparse models: how fast training reads its data.

Recommendation models train on billions of logged impressions, each a few hundred bytes
to tens of kilobytes, usually one or a few passes. The read rate is samples per second
times bytes per sample; what it costs each worker's NIC decides whether loading can
share the network with training traffic or needs its own path.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.core.calculator import Calculator, Computed
from calculators.core.i18n import _
from calculators.core.spec import Output, Param, ValidationError
from calculators.formulas.sparse.data_loading import TORCHREC_CRITEO_SAMPLES_PER_S, read_bandwidth
from calculators.inputs.data import BYTES_PER_SAMPLE_PARAM, DATASET_SAMPLES_PARAM, EPOCHS_PARAM

if TYPE_CHECKING:
    from calculators.core.calculator import Inputs

def samples_per_second(rate: float | None, batch: int, step_time: float | None) -> float:
    """The given rate, or global batch / step time."""
    if rate is not None:
        return rate
    if step_time is None:
        raise ValidationError("samples_per_second",
                              _("a value is required (or give step_time and batch_size)"))
    return batch / step_time


def _data_pipeline(inputs: Inputs) -> Computed:
    rate = samples_per_second(inputs.opt("samples_per_second"), inputs.whole("batch_size"),
                              inputs.opt("step_time"))
    per_sample = inputs.num("bytes_per_sample")
    dataset = inputs.num("dataset_samples")
    workers = inputs.whole("num_workers")
    bandwidth = read_bandwidth(rate, per_sample)
    per_worker = bandwidth / workers
    nic_share = per_worker / inputs.num("nic_bandwidth")
    epoch = dataset / rate
    notes = [_("At {rate:,.0f} samples/s the whole dataset is read in {hours:.3g} h per "
               "epoch.").format(rate=rate, hours=epoch / 3600)]
    warnings: list[str] = []
    if nic_share > 0.1:
        warnings.append(_("Loading data takes {share:.0%} of each worker's NIC, traffic that "
                          "competes with the alltoall and allreduce.").format(share=nic_share))
    return Computed(
        values={
            "samples_per_second": rate,
            "read_bandwidth": bandwidth,
            "dataset_bytes": dataset * per_sample,
            "epoch_time_s": epoch,
            "total_time_s": epoch * inputs.num("epochs"),
            "per_worker_bandwidth": per_worker,
            "per_worker_nic_share": nic_share,
            "steps_per_epoch": math.ceil(dataset / inputs.whole("batch_size")),
        },
        warnings=warnings,
        notes=notes,
    )


DATA_PIPELINE = Calculator(
    id="data_pipeline",
    headline=("read_bandwidth", "per_worker_bandwidth", "total_time_s"),
    title="Training data: read bandwidth and epoch time",
    summary="Samples/s x bytes/sample: the read rate, the dataset, epoch time and NIC share.",
    chapter="sparse.md",
    params=(
        Param("samples_per_second", "Samples per second (cluster)", "float",
              TORCHREC_CRITEO_SAMPLES_PER_S, unit="sample/s", minimum=1e-3,
              maximum=1e12, optional=True,
              placeholder="from batch / step time",
              help="Default: TorchRec DLRM on Criteo 1TB, 8 x A100, batch 16,384 "
                   "(~1,671,168 records/s, README). Blank: batch_size / step_time."),
        Param("batch_size", "Global batch", "int", 16_384, unit="sample", minimum=1,
              maximum=1e9),
        Param("step_time", "Step time", "float", None, unit="s", minimum=1e-6,
              maximum=1e5, optional=True,
              placeholder="blank: use samples/s", help="Used when samples/s is blank."),
        BYTES_PER_SAMPLE_PARAM,
        DATASET_SAMPLES_PARAM,
        EPOCHS_PARAM,
        Param("num_workers", "Workers (GPUs)", "int", 8, unit="GPU", minimum=1,
              maximum=1_000_000),
        Param("nic_bandwidth", "NIC bandwidth per worker", "float",
              hardware.LINKS["ib_ndr"].bandwidth, unit="B/s", minimum=1e6,
              maximum=1e13, help="Per direction; 400 Gb/s NDR.", advanced=True),
    ),
    outputs=(
        Output("samples_per_second", "Samples per second", "sample/s", "count"),
        Output("read_bandwidth", "Read bandwidth (cluster)", "B/s", "si"),
        Output("dataset_bytes", "Dataset size", "B", "si"),
        Output("epoch_time_s", "Time per epoch", "s", "count"),
        Output("total_time_s", "Total time", "s", "count"),
        Output("per_worker_bandwidth", "Read bandwidth per worker", "B/s", "si"),
        Output("per_worker_nic_share", "Share of a worker's NIC", "1", "percent"),
        Output("steps_per_epoch", "Steps per epoch", "step", "count"),
    ),
    function=_data_pipeline,
    sources=(
        "facebookresearch/dlrm torchrec_dlrm/README.MD (records/s, time per epoch)",
        "facebookresearch/dlrm data_utils.py (binary Criteo: 40 x 4-byte fields)",
        "NVIDIA HugeCTR MLPerf DLRM config (Criteo 1TB num_samples)",
        "mlcommons/inference recommendation/dlrm/pytorch/README.md (day 23 rows)",
    ),
)
