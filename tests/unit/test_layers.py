"""The layout of ``calculators/`` (README, "How it fits together"): the folder says what a
file is, and imports point one way, calculator -> inputs, formulas, catalogues -> core.

Walks every module's imports with ``ast`` (including imports inside functions and under
``TYPE_CHECKING``), so a rule is broken the moment a line is written, not when it runs.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import calculators
from calculators.registry import CALCULATOR_IDS

PACKAGE = Path(calculators.__file__).parent
#: Top-level names that are not calculators: the API, the entry point, the id table,
#: and the four layers.
NOT_CALCULATORS = {"__init__", "__main__", "registry", "core", "formulas", "catalogues", "inputs"}
DECLARATIONS = {"Param", "Output", "Calculator"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str | None = None) -> list[tuple[str, set[str], int]]:
    """(module, names imported from it, line) for every import in ``path``; relative
    imports are resolved against the module's package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = (module or _module_name(path)).split(".")
    if path.name != "__init__.py":
        here = here[:-1]
    found: list[tuple[str, set[str], int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, set(), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            found.append((base, {a.name for a in node.names}, node.lineno))
    return found


def _targets(module: str, names: set[str]) -> set[str]:
    """Every ``calculators`` module an import may reach: ``from calculators import x``
    reaches ``calculators.x`` when ``x`` is a submodule."""
    reached = {module}
    if module == "calculators":
        reached |= {f"calculators.{n}" for n in names}
    elif module.startswith("calculators."):
        reached |= {f"{module}.{n}" for n in names}
    return reached


def _owner(module: str) -> str | None:
    """The calculator whose module (or package) ``module`` is, if any."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "calculators" and parts[1] in CALCULATOR_IDS:
        return parts[1]
    return None


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "calculators" and parts[1] in {
            "core", "formulas", "catalogues", "inputs"}:
        return parts[1]
    return None


def _core_may_import(module: str, names: set[str], target: str) -> bool:
    """core knows nothing about training: it imports itself, the standard library, and
    the package's public API (``from calculators import get``), nothing else of ours."""
    if module == "calculators":
        return target == "calculators" or target.split(".")[1] in calculators.__all__
    return not target.startswith("calculators") or _layer(target) == "core"


FILES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_one_way(path: Path) -> None:
    me = _module_name(path)
    my_owner, my_layer = _owner(me), _layer(me)
    wrong: list[str] = []
    for module, names, line in _imports(path):
        for target in _targets(module, names):
            owner, layer = _owner(target), _layer(target)
            where = f"{path.relative_to(PACKAGE)}:{line} imports {target}"
            if owner is not None and owner != my_owner:
                wrong.append(f"{where}: a calculator module is imported outside it")
            if my_layer == "formulas" and layer == "inputs":
                wrong.append(f"{where}: formulas read no input declarations")
            declares = target == "calculators.core.spec" and names & DECLARATIONS
            if my_layer == "formulas" and declares:
                wrong.append(f"{where}: formulas declare no {sorted(names & DECLARATIONS)}")
            if my_layer == "catalogues" and layer == "inputs":
                wrong.append(f"{where}: catalogues are data, not input declarations")
            if my_layer == "core" and not _core_may_import(module, names, target):
                wrong.append(f"{where}: core reaches calculators only through the API")
    assert not wrong, "\n".join(wrong)


def test_the_folder_reads_like_the_table_of_contents() -> None:
    """Every top-level module or package is a layer, the API, or one calculator named by
    its id; and every registered id has that module."""
    names = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert names - NOT_CALCULATORS == set(CALCULATOR_IDS)


@pytest.mark.parametrize("calc_id", CALCULATOR_IDS)
def test_each_id_is_declared_in_the_module_named_by_it(calc_id: str) -> None:
    calc = calculators.REGISTRY[calc_id]
    module = importlib.import_module(f"calculators.{calc_id}")
    assert getattr(module, calc_id.upper()) is calc
    assert calc.function.__module__ in (f"calculators.{calc_id}",) or \
        calc.function.__module__.startswith(f"calculators.{calc_id}.")


def test_the_checker_catches_a_calculator_importing_another(tmp_path: Path) -> None:
    """The walk sees ``from calculators import x`` and relative imports, not only the
    dotted form (a checker that cannot fail proves nothing)."""
    bad = tmp_path / "probe.py"
    bad.write_text("from calculators import mfu\nfrom calculators.inputs import training\n")
    reached = {t for m, n, _ in _imports(bad, "calculators.model_memory")
               for t in _targets(m, n)}
    assert "calculators.mfu" in reached
    assert {_owner(t) for t in reached} >= {"mfu"}
    assert not _core_may_import("calculators.inputs", {"training"},
                                "calculators.inputs.training")
    assert _core_may_import("calculators", {"get"}, "calculators.get")
