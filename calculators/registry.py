"""The calculators of the guide, in its order. Add a new calculator's id here; its
declaration lives in ``calculators/<id>.py`` as ``<ID>`` (the module-name rule of
``core.registry``)."""

from __future__ import annotations

from calculators.core.registry import Registry

CALCULATOR_IDS: tuple[str, ...] = (
    "training_compute",
    "model_params",
    "model_memory",
    "mfu",
    "roofline",
    "parallel_plan",
    "moe_params",
    "moe_step",
    "moe_plan",
    "expert_load",
    "rollout",
    "rl_step",
    "collective_time",
    "incast",
    "ecmp_collisions",
    "fabric_sizing",
    "embedding_memory",
    "embedding_sharding",
    "sparse_training",
    "streaming_training",
    "dynamic_tables",
    "embedding_tiers",
    "generative_recommender",
    "data_pipeline",
    "goodput",
    "cluster_sizing",
)

REGISTRY = Registry("calculators", CALCULATOR_IDS)
