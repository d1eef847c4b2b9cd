"""The built wheel in Pyodide under Node answers exactly what native Python answers.

Cases: every calculator's defaults, every worked example (fence) in the guide, and a
bad value for every calculator's first numeric input.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import calculators
from bigmodel_guide import bundle
from bigmodel_guide.fence import find_fences, parse_fence
from calculators.core.bridge import compute_json

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.pyodide


def _cases() -> list[tuple[str, dict[str, object]]]:
    cases: list[tuple[str, dict[str, object]]] = []
    for calc in calculators.REGISTRY.values():
        cases.append((calc.id, {}))
        numeric = next((p for p in calc.params if p.kind in ("int", "float")), None)
        if numeric is not None:
            cases.append((calc.id, {numeric.name: "-1e999"}))
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for located in find_fences(page.read_text(encoding="utf-8")):
            fence = parse_fence(located.source)
            cases.append((fence.calc_id, fence.overrides))
    return cases


@pytest.fixture(scope="module", params=["fresh start", "memory snapshot"])
def pyodide_answers(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[tuple[str, dict[str, object]]], dict[str, object]]:
    """Every case in Pyodide, started normally and from the site's memory snapshot."""
    if shutil.which("node") is None:
        pytest.fail("node is needed for the Pyodide tier (make setup installs the runtime)")
    work = tmp_path_factory.mktemp("pyodide")
    made = bundle.prepare(
        package_dir=ROOT / "calculators",
        pyodide_dir=ROOT / "node_modules" / "pyodide",
        tool=ROOT / ".venv-pyodide" / "bin" / "pyodide",
        cache_dir=work / "cache",
        snapshot=request.param == "memory snapshot",
    )
    cases = _cases()
    cases_file = work / "cases.json"
    cases_file.write_text(json.dumps(cases), encoding="utf-8")
    done = subprocess.run(
        [
            "node",
            str(ROOT / "tests" / "pyodide" / "run_calculators.mjs"),
            str(made.wheel),
            str(cases_file),
            *([str(made.snapshot)] if made.snapshot else []),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return cases, json.loads(done.stdout)


def test_the_snapshot_holds_every_calculator_module_imported(
    pyodide_answers: tuple[list[object], dict[str, object]],
) -> None:
    """From the snapshot, a page imports nothing (a module's first import cost about
    60 ms in Node); a fresh start imports modules only as they are used."""
    _, answers = pyodide_answers
    package = ROOT / "calculators"
    names = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts) for path in package.rglob("*.py")
    }
    modules = {name.removesuffix(".__init__") for name in names
               if name.rsplit(".", 1)[-1] not in ("__main__", "cli")}
    preloaded = set(answers["preloaded"])  # type: ignore[call-overload]
    if answers["snapshot"]:
        assert preloaded == modules
    else:
        assert preloaded == set()


#: The calculators the snapshot leaves cold: computing their defaults makes the runtime's
#: memory grow, and the snapshot is the whole memory (bigmodel_guide/snapshot.mjs). None
#: since the planner builds layout records only for the layouts it shows (it built one
#: for each of the thousands it costed, and grew the memory by 6 MB).
LEFT_COLD: set[str] = set()


def test_the_snapshot_holds_every_calculator_run_once_but_those_that_grow_memory(
    pyodide_answers: tuple[list[object], dict[str, object]],
) -> None:
    """From the snapshot, a calculator's first computation finds its code already
    specialised by the interpreter (and the calculators' caches filled): the capstone's
    sizing search took about half as long. A fresh start has run nothing."""
    _, answers = pyodide_answers
    specialised = set(answers["specialised"])  # type: ignore[call-overload]
    if answers["snapshot"]:
        assert specialised == set(calculators.REGISTRY) - LEFT_COLD
    else:
        assert specialised == set()


def test_runs_on_pyodide_python_3_14(
    pyodide_answers: tuple[list[object], dict[str, object]],
) -> None:
    _, answers = pyodide_answers
    assert str(answers["python"]).startswith("3.14")


def test_json_identical_to_native(
    pyodide_answers: tuple[list[tuple[str, dict[str, object]]], dict[str, object]],
) -> None:
    cases, answers = pyodide_answers
    got = answers["answers"]
    assert isinstance(got, list)
    assert len(got) == len(cases)
    for (calc_id, inputs), answer in zip(cases, got, strict=True):
        native = compute_json(calc_id, json.dumps(inputs))
        assert answer["text"] == native, f"{calc_id} {inputs}"


def test_every_calculator_ran(
    pyodide_answers: tuple[list[tuple[str, dict[str, object]]], dict[str, object]],
) -> None:
    cases, answers = pyodide_answers
    ok = {
        calc
        for (calc, _), a in zip(cases, answers["answers"], strict=True)  # type: ignore[call-overload]
        if json.loads(a["text"])["ok"]
    }
    assert ok == set(calculators.REGISTRY)
