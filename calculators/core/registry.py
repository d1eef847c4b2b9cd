"""The lazy registry: calculator id -> declaration, by the module-name rule.

The calculator with id ``X`` is declared as ``X.upper()`` in the module
``<package>.X``: the folder is the table of contents, and the rule makes the table
trivial to check. A module is imported the first time its calculator is looked up, so a
command or a fresh Pyodide start imports only the calculators it uses (importing all of
them costs about half a second in Pyodide); iterating over the registry imports them
all, as the CLI and tests do. The site's memory snapshot holds every module already
imported.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from calculators.core.calculator import Calculator


def module_name(package: str, calc_id: str) -> str:
    """The module that declares ``calc_id``: named exactly by the id."""
    return f"{package}.{calc_id}"


def attribute_name(calc_id: str) -> str:
    """The module attribute that holds the declaration: the id in capitals."""
    return calc_id.upper()


class Registry(Mapping[str, "Calculator"]):
    """A read-only mapping from id to calculator that imports each module on demand."""

    def __init__(self, package: str, ids: tuple[str, ...]) -> None:
        if len(set(ids)) != len(ids):
            raise ValueError("calculator ids repeat")
        self.package = package
        self._ids = ids
        self._loaded: dict[str, Calculator] = {}

    def __getitem__(self, calc_id: str) -> Calculator:
        if calc_id not in self._loaded:
            if calc_id not in self._ids:
                raise KeyError(calc_id)
            module = importlib.import_module(module_name(self.package, calc_id))
            calc: Calculator = getattr(module, attribute_name(calc_id))
            if calc.id != calc_id:
                raise RuntimeError(f"module {module.__name__} declares {calc.id!r}")
            self._loaded[calc_id] = calc
        return self._loaded[calc_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)
