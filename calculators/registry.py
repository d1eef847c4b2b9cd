"""The explicit registry: calculator id -> declaration. Add new calculators here.

Each entry names the module and the attribute that declare the calculator. A module
is imported the first time its calculator is looked up, so a command or a fresh
Pyodide start imports only the calculators it uses (importing all of them costs about
half a second in Pyodide); iterating over the registry imports them all, as the CLI
and tests do. The site's memory snapshot holds every module already imported.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from calculators.spec import Calculator

#: id -> (module, attribute). The order is the order of the guide.
ENTRIES: dict[str, tuple[str, str]] = {
    "training_compute": ("calculators.compute", "TRAINING_COMPUTE"),
    "model_params": ("calculators.model", "MODEL_PARAMS"),
    "model_memory": ("calculators.memory_calc", "MODEL_MEMORY"),
    "mfu": ("calculators.mfu", "MFU"),
    "parallel_plan": ("calculators.plan_calc", "PARALLEL_PLAN"),
    "collective_time": ("calculators.collectives", "COLLECTIVE_TIME"),
    "incast": ("calculators.incast", "INCAST"),
    "ecmp_collisions": ("calculators.ecmp", "ECMP_COLLISIONS"),
    "embedding_memory": ("calculators.embeddings", "EMBEDDING_MEMORY"),
    "embedding_sharding": ("calculators.sharding", "EMBEDDING_SHARDING"),
    "sparse_training": ("calculators.sparse", "SPARSE_TRAINING"),
    "data_pipeline": ("calculators.data_pipeline", "DATA_PIPELINE"),
    "cluster_sizing": ("calculators.sizing", "CLUSTER_SIZING"),
}


class Registry(Mapping[str, "Calculator"]):
    """A read-only mapping from id to calculator that imports each module on demand."""

    def __init__(self, entries: dict[str, tuple[str, str]]) -> None:
        self._entries = entries
        self._loaded: dict[str, Calculator] = {}

    def __getitem__(self, calc_id: str) -> Calculator:
        if calc_id not in self._loaded:
            module, attribute = self._entries[calc_id]
            calc: Calculator = getattr(importlib.import_module(module), attribute)
            if calc.id != calc_id:
                raise RuntimeError(f"registry entry {calc_id!r} declares {calc.id!r}")
            self._loaded[calc_id] = calc
        return self._loaded[calc_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


REGISTRY = Registry(ENTRIES)
