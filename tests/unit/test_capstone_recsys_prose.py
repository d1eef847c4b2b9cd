"""docs/capstone.md, "The same recommender in 2026": every figure its prose quotes is
what the tiers and generative-recommender calculators compute for its blocks (or the
variants the prose names)."""

from __future__ import annotations

from typing import Any

import calculators
from tests.unit.test_capstone_prose import _says, block


def pct(result: Any, name: str, digits: int) -> str:
    return f"{float(result.value(name)):.{digits}%}"


def test_one_node_of_tiers_is_short_of_ssd_reads() -> None:
    tiers = block("recsys-2026-tiers")
    hbm_share = float(tiers.value("hbm_bytes")) / float(tiers.value("table_bytes"))
    _says(f"holds {hbm_share:.1%} of the 48.4 TB",
          f"serves {pct(tiers, 'hbm_hit_share', 1)} of the lookups",
          f"1 TB of DRAM serves {pct(tiers, 'dram_hit_share', 2)} more",
          f"asked for the remaining {pct(tiers, 'ssd_hit_share', 1)}",
          f"would need {float(tiers.value('ssd_utilisation')):.1f} times the random reads")
    assert tiers.value("binding_tier") == "SSD" and tiers.value("keeps_up") is False


def test_four_nodes_of_tiers_keep_up() -> None:
    wider = block("recsys-2026-tiers", num_gpus=32, samples_per_s_per_gpu=24000)
    _says(f"leave {pct(wider, 'ssd_hit_share', 2)} of the lookups to 32 drives, which run "
          f"at {pct(wider, 'ssd_utilisation', 1)} of their random reads")
    assert wider.value("keeps_up") is True


def test_the_generative_ranker_is_sized_by_its_compute() -> None:
    cached = block("recsys-2026-generative")
    in_hbm = block("recsys-2026-generative", table_placement="hbm")
    flops = float(cached.value("flops_per_sample"))
    _says(f"{flops / 1e11:.2f} × 10<sup>11</sup> FLOPs",
          f"{flops / (6 * 50e6):,.0f} times a sample of the DLRM above",
          f"the run {float(cached.value('training_flops')) / 1e21:.2f} × 10<sup>21</sup>",
          f"ask for {int(in_hbm.value('gpus_to_hold_tables'))} H100s",
          f"**{int(cached.value('gpus_for_deadline'))} H100s** train the 50 billion requests "
          f"in {float(cached.value('days_at_that_size')):.1f} days at an estimated "
          f"{pct(cached, 'mfu', 1)} MFU")
    assert float(in_hbm.value("days_at_that_size")) < 1.0  # "finishes ... in under a day"
    # The requests per GPU per second the prose hands to embedding_tiers.
    rate = 5e10 / (float(cached.value("training_days")) * 86_400) / 16
    assert round(rate, -2) == 2700
    tiers = calculators.compute("embedding_tiers", rows=93.75e9, embedding_dim=128,
                                num_gpus=16, samples_per_s_per_gpu=2700,
                                lookups_per_sample=4132)
    _says(f"the SSDs at {float(tiers.value('ssd_utilisation')):.0%}")
    assert tiers.value("keeps_up") is True
