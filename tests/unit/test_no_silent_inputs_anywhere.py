"""No silent input in any calculator (issue 37): at its defaults, every input a widget
shows changes an output, the table, a note or a warning when edited (doubled, halved,
stepped, or each other choice), or its help says beside the field why it does not.

The edits and what counts as a change are those of the capstone's test
(tests/unit/planner/test_no_silent_inputs.py); an input hidden by its condition (``when``)
is skipped, as the page hides it. Each silent input is listed below with the words of its
help that state when it applies, so the reason is on the page where the input sits."""

from __future__ import annotations

import pytest

import calculators
from tests.unit.planner.test_no_silent_inputs import silent_inputs

_ONE_NODE = "Applies only when the ranks span more than one node."
_PLANNER_NODE = "the links follow the NVLink domain below, so it may not change the layout"
_DOCUMENTS = "Applies only with a mean document length given."
_HEADS = "parameters and FLOPs do not depend on it"
_ONE_HOST = "Tables that fit in one host need one whatever"
_ROUTING = "Routing only: it changes the alltoall, not the parameter count."
_MATMULS = "Not counted here: 6N counts only the weights of matrix multiplies"
_FIT_ONLY = "Here it decides only whether the shards fit"
_WRITE = "matter only when they, not the storage, limit the write"

#: By calculator, the inputs shown at its defaults that change nothing there, each with
#: the words of its help that say why (the condition under which it applies).
SILENT: dict[str, dict[str, str]] = {
    "training_compute": {
        "tied_embeddings": "Applies only with the vocabulary and the width given.",
        "extension_length": "Applies only with context extension tokens given.",
        "extension_stages": "Applies only with context extension tokens given.",
        "document_spread": _DOCUMENTS,
    },
    "model_params": {"heads": _HEADS},
    "model_memory": {
        "zero_stage": "Partitions nothing while dp x cp = 1.",
        "dp": "At ZeRO stage 0 each holds everything: dp changes nothing per GPU.",
        "schedule": "Applies only with PP > 1.",
        "cp_method": "Applies only with CP > 1.",
    },
    "mfu": {
        "heads": _HEADS,
        "biases": _MATMULS,
        "qk_norm": _MATMULS,
        "norms_per_layer": _MATMULS,
        "position_embedding": "Not counted here: a learned position is a lookup",
        "tied_embeddings": "Not counted here: the output layer multiplies once either way",
        "document_spread": _DOCUMENTS,
    },
    "roofline": {},
    "parallel_plan": {
        "document_spread": _DOCUMENTS,
        "gpus_per_node": _PLANNER_NODE,
        "attention_kernel": "On Ampere both are FlashAttention-2.",
    },
    "moe_params": {"expert_groups": _ROUTING, "groups_per_token": _ROUTING},
    "moe_step": {},
    "moe_plan": {"document_spread": _DOCUMENTS, "gpus_per_node": _PLANNER_NODE},
    "rollout": {},
    "rl_step": {},
    "expert_load": {
        "redundant_experts": "not at uniform routing's small spread (load_cv blank)",
    },
    "collective_time": {
        "inter_node_bandwidth": _ONE_NODE,
        "inter_node_latency": _ONE_NODE,
        "tree_inter_node_latency": _ONE_NODE,
    },
    "incast": {},
    "ecmp_collisions": {},
    "fabric_sizing": {},
    "embedding_memory": {"host_memory": _ONE_HOST, "host_reserve": _ONE_HOST},
    "embedding_sharding": {
        "num_tables": "Used when no list is given",
        "rows_per_table": "Used when no list is given.",
        "embedding_dim": "With a list, only for lines that give rows alone.",
        "gpu": _FIT_ONLY,
        "gpu_reserve": _FIT_ONLY,
        "nic_bandwidth": "Applies only when the GPUs span more than one node.",
    },
    "sparse_training": {},
    "streaming_training": {},
    "dynamic_tables": {},
    "embedding_tiers": {
        "ssd_capacity": "It binds only when the drives cannot hold what HBM and host DRAM "
                        "leave of the table.",
        "ssd_read_bandwidth": "It binds only when below the random reads per second x 4 KiB",
    },
    "generative_recommender": {},
    "data_pipeline": {},
    "goodput": {
        "gpus_per_node": _WRITE,
        "node_write_bandwidth": "It matters only when the nodes together write slower than "
                                "the storage absorbs.",
        "gpu_to_host_bandwidth": "With synchronous saves it changes only the chart's "
                                 "asynchronous curve.",
    },
    "cluster_sizing": {},  # dense, its default; both modes: planner/test_no_silent_inputs
}


def _silent(calc_id: str) -> set[str]:
    """The inputs shown at the defaults whose every edit changes nothing the page shows
    in words (outputs, table, notes, warnings), or is refused."""
    return silent_inputs(calculators.REGISTRY[calc_id], {})


def test_every_calculator_is_listed() -> None:
    assert set(SILENT) == set(calculators.REGISTRY)


@pytest.mark.parametrize("calc_id", list(calculators.REGISTRY))
def test_every_input_shown_changes_an_output_or_says_why_not(calc_id: str) -> None:
    assert _silent(calc_id) == set(SILENT[calc_id])


@pytest.mark.parametrize("calc_id", [c for c in calculators.REGISTRY if SILENT[c]])
def test_a_silent_input_says_why_beside_the_field(calc_id: str) -> None:
    calc = calculators.REGISTRY[calc_id]
    for name, words in SILENT[calc_id].items():
        assert words in calc.param(name).help, f"{calc_id}.{name}: {words!r} not in its help"
