"""docs/sparse.md, "Generative recommenders": every figure the prose quotes is what
generative_recommender computes for the section's blocks (or the variants it names)."""

from __future__ import annotations

from typing import Any

import calculators
from tests.unit.sparse import chapter_text

_says = chapter_text.says


def block(anchor: str, **over: object) -> Any:
    calc_id, inputs = chapter_text.blocks()[anchor]
    return calculators.compute(calc_id, **{**inputs, **over})


def value(result: Any, name: str) -> float:
    return float(result.value(name))


def test_the_flops_are_in_the_layers_and_the_bytes_in_the_tables() -> None:
    result = block("generative-recommender")
    flops = value(result, "flops_per_sample")
    _says(f"{value(result, 'embedding_params') / 1e12:.2f} trillion of the parameters",
          f"({value(result, 'table_bytes') / 1e12:.2f} TB with their optimizer state)",
          f"hold {value(result, 'dense_params') / 1e6:,.0f} million",
          f"costs {flops / 1e12:.1f} × 10<sup>12</sup> FLOPs",
          f"the run {value(result, 'training_flops') / 1e22:.1f} × 10<sup>22</sup>")
    assert value(result, "attention_share") > 0.5  # "over half of them in attention"
    ratio = value(result, "dlrm_flops_ratio")
    _says(f"about {round(ratio, -5):,.0f} times fewer FLOPs")
    table = {row[0]: row for row in result.to_dict()["table"]["rows"]}
    assert table["Embedding rows read per sample"][1] == "4,096"


def test_jagged_kernels_and_the_transformer() -> None:
    jagged = block("generative-recommender")
    padded = block("generative-recommender", padded=True)
    transformer = block("generative-recommender", gr_block="transformer")
    both = block("generative-recommender", gr_block="transformer", padded=True)
    _says(f"attention's share rises to {value(padded, 'attention_share'):.0%}",
          f"needs {int(value(padded, 'gpus_for_deadline'))} GPUs instead of "
          f"{int(value(jagged, 'gpus_for_deadline'))}",
          f"needs {int(value(transformer, 'gpus_for_deadline'))} jagged, "
          f"{int(value(both, 'gpus_for_deadline'))} padded")


def test_memory_sizes_the_cluster_at_shorter_histories() -> None:
    full = block("generative-recommender")
    short = block("generative-recommender", history_mean=1024)
    fall = value(full, "flops_per_sample") / value(short, "flops_per_sample")
    assert 6.5 < fall < 7.0  # "fall almost seven times"
    hold = int(value(short, "gpus_to_hold_tables"))
    assert int(value(short, "gpus_for_deadline")) == hold
    _says(f"but {hold} GPUs remain the fewest whose HBM holds")
    assert any("tables set the cluster's size" in note
               for note in short.to_dict()["notes"])


def test_layouts_stay_at_tp_one() -> None:
    assert str(block("generative-recommender").value("layout")).startswith("TP 1 ")


def test_the_dlrm_v3_ranker() -> None:
    result = block("dlrm-v3")
    flops = value(result, "flops_per_sample")
    _says(f"about {round(value(result, 'dlrm_flops_ratio'), -3):,.0f} times a Criteo "
          f"DLRM's FLOPs ({flops / 1e11:.1f} × 10<sup>11</sup>), "
          f"{value(result, 'attention_share'):.0%} of them in attention",
          f"trains about {round(value(result, 'samples_per_second'), -3):,.0f} samples a "
          f"second at an estimated {value(result, 'mfu'):.0%} MFU")
    memory_bound, linear = value(result, "memory_bound_time"), value(result, "gemm_time")
    assert 0.8 < memory_bound / linear < 1.25  # "taking as long as the linear layers"
