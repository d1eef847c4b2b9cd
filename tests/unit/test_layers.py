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
from calculators import formulas
from calculators.registry import CALCULATOR_IDS

PACKAGE = Path(calculators.__file__).parent
#: Top-level names that are not calculators: the API, the entry point, the id table,
#: and the four layers.
NOT_CALCULATORS = {"__init__", "__main__", "registry", "core", "formulas", "catalogues", "inputs"}
DECLARATIONS = {"Param", "Output", "Calculator"}
#: Where those are declared: inputs and outputs in spec, the calculator in calculator.
DECLARING_MODULES = {"calculators.core.spec", "calculators.core.calculator"}


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
            declares = target in DECLARING_MODULES and names & DECLARATIONS
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


# --- inside formulas: subpackages by subject, importing downward only ----------------

FORMULAS = PACKAGE / "formulas"
#: The order named in calculators/formulas/__init__.py: each imports only those before it.
ORDER: tuple[str, ...] = formulas.SUBPACKAGES
#: Size limits of the layout (issue: "one room per subject").
MAX_TOP_LEVEL_MODULES, MAX_MODULE_LINES = 8, 330


def _subpackage(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 3 and parts[:2] == ["calculators", "formulas"]:
        return parts[2]
    return None


def _formula_edges(files: list[Path]) -> dict[str, set[str]]:
    """Module -> the formula modules it imports (anywhere in the file)."""
    edges: dict[str, set[str]] = {}
    for path in files:
        me = _module_name(path)
        edges[me] = set()
        for module, names, _ in _imports(path):
            for target in _targets(module, names):
                if _subpackage(target) is not None and target != me:
                    edges[me].add(target)
    return edges


def upward_imports(edges: dict[str, set[str]], order: tuple[str, ...]) -> list[str]:
    """Every import from a subpackage into one after it in ``order`` (or into none)."""
    wrong = []
    for me, targets in edges.items():
        mine = _subpackage(me)
        for target in targets:
            theirs = _subpackage(target)
            if mine in order and theirs not in order:
                wrong.append(f"{me} imports {target}: not in a subpackage of formulas")
            elif mine in order and theirs in order and order.index(theirs) > order.index(mine):
                wrong.append(f"{me} imports {target}: {theirs} comes after {mine}")
    return sorted(wrong)


def import_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The cycles among modules (Tarjan's strongly connected components of two or more)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in edges:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


FORMULA_FILES = sorted(FORMULAS.rglob("*.py"))


def test_formulas_subpackages_import_downward_only() -> None:
    assert upward_imports(_formula_edges(FORMULA_FILES), ORDER) == []


def test_formulas_modules_import_no_cycle() -> None:
    assert import_cycles(_formula_edges(FORMULA_FILES)) == []


def test_the_order_names_every_subpackage_once() -> None:
    packages = {p.name for p in FORMULAS.iterdir() if (p / "__init__.py").exists()}
    assert sorted(ORDER) == sorted(packages)
    assert len(set(ORDER)) == len(ORDER)
    for name in ORDER:  # each says its job in its docstring
        doc = importlib.import_module(f"calculators.formulas.{name}").__doc__
        assert doc and doc.strip(), name


def test_formulas_has_few_modules_at_its_top_and_none_is_long() -> None:
    top = [p.name for p in FORMULAS.glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_the_order_checks_catch_an_upward_import_and_a_cycle() -> None:
    """Both checks fail on what they are for (a checker that cannot fail proves nothing)."""
    edges = {"calculators.formulas.model.a": {"calculators.formulas.planner.b"},
             "calculators.formulas.planner.b": {"calculators.formulas.planner.c"},
             "calculators.formulas.planner.c": {"calculators.formulas.planner.b"}}
    assert upward_imports(edges, ORDER) == [
        "calculators.formulas.model.a imports calculators.formulas.planner.b: "
        "planner comes after model"]
    assert import_cycles(edges) == [["calculators.formulas.planner.b",
                                     "calculators.formulas.planner.c"]]
