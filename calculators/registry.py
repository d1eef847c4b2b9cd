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
    "parallel_plan",
    "collective_time",
    "incast",
    "ecmp_collisions",
    "embedding_memory",
    "embedding_sharding",
    "sparse_training",
    "data_pipeline",
    "cluster_sizing",
)

REGISTRY = Registry("calculators", CALCULATOR_IDS)
