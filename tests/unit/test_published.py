"""Every published figure the guide reproduces (published_checks), computed with today's
code: the same declarations make the Validation page, so a figure is checked once."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import pytest

from published_checks import Check, Outcome, all_checks, get, run

CHECKS = all_checks()


@pytest.mark.parametrize("check", CHECKS, ids=[c.id for c in CHECKS])
def test_published_figure_is_reproduced(check: Check) -> None:
    outcome = run(check)
    assert outcome.passed, (
        f"{check.id}: computed {outcome.value:.6g}, published {check.published:.6g} "
        f"({check.source}); difference {outcome.difference:+.3%}, tolerance "
        f"{check.rel_tol:.3%} ({check.why_tolerance})")


def test_a_check_outside_its_tolerance_fails() -> None:
    """The comparison can fail: 1% off with a 0.5% tolerance is a failure."""
    check = CHECKS[0]
    assert not Outcome(check, check.published * 1.01).passed
    assert Outcome(check, check.published * 1.004).passed


def test_every_calculator_check_names_a_real_input_and_output() -> None:
    import calculators

    for check in CHECKS:
        if check.calculator is None:
            continue
        calc = calculators.REGISTRY[check.calculator]
        assert check.output in {o.name for o in calc.outputs}, check.id
        for name in check.inputs:
            calc.param(name)


# --- no published figure outside the declarations --------------------------------------
# A test that cites a source (a paper's section, table or equation, a datasheet, a README,
# a config) and compares a result to a bare number is checking a published figure: that
# figure belongs in published_checks, where the Validation page shows it. The scan below
# finds such tests. It lets through what is not a figure: numbers the test itself feeds
# in (inputs), small integers and simple fractions, bounds (<, >), derivations written
# out as expressions (2 * 7 / 8), and tests of the figures a chapter quotes that cite
# only the guide's own pages. A test that needs a published figure for more than the
# check does (a bound, another code path) reads it with ``published_checks.get``.

ROOT = Path(__file__).resolve().parents[2]
CITES = re.compile(
    r"et al\.|(?-i:\bTable [0-9A-Z])|\bSecs?\. ?[0-9]|\bEq\. ?[0-9]|\bApp(?:\.|endix) ?[A-Z]|"
    r"\bFigs?\. ?[0-9]|datasheet|README|config\.json|PERFORMANCE\.md|model card|"
    r"technical report|\breport\b|\b[a-z][\w.-]{2,}/[\w.-]{3,}|\.(?:md|py|sh|json)\b",
    re.IGNORECASE)
#: The guide's own chapters: citing one is not citing a source.
OWN_PAGES = re.compile(r"(?:docs/)?\b(?:" + "|".join(
    re.escape(p.name) for p in sorted((ROOT / "docs").glob("*.md"))) + r")")
#: Integers up to this, and these fractions, are not figures.
SMALL_INTEGER = 32
SIMPLE_FRACTIONS = {0.5, 0.25, 0.75, 1.5, 2.5}


def _number(node: ast.AST) -> float | None:
    """The value of a bare numeric literal (signed), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not (
            isinstance(node.value, bool)):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    return None


def _literals(node: ast.AST) -> list[ast.AST]:
    """The bare numeric literals an operand is: itself, or the elements of a list or
    tuple of them (with their signs)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal for element in node.elts for literal in _literals(element)]
    return [] if _number(node) is None else [node]


def _numbers(node: ast.AST) -> list[float]:
    return [v for literal in _literals(node) if (v := _number(literal)) is not None]


def _trivial(value: float) -> bool:
    return (value.is_integer() and abs(value) <= SMALL_INTEGER) or abs(value) in (
        SIMPLE_FRACTIONS)


def _compared(fn: ast.FunctionDef) -> list[ast.expr]:
    """What an equality compares: both sides of == and !=, and pytest.approx's value."""
    found: list[ast.expr] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and all(
                isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            found.extend([node.left, *node.comparators])
        elif (isinstance(node, ast.Call) and node.args and "approx" in (
                getattr(node.func, "attr", None), getattr(node.func, "id", None))):
            found.append(node.args[0])
    return found


def _parametrized(fn: ast.FunctionDef, module: dict[str, ast.expr]) -> dict[str, list[ast.expr]]:
    """Each parametrized argument's cases (a module-level list is looked up)."""
    cases: dict[str, list[ast.expr]] = {}
    for dec in fn.decorator_list:
        if not (isinstance(dec, ast.Call) and getattr(dec.func, "attr", "") == "parametrize"
                and len(dec.args) >= 2):
            continue
        names_node, values = dec.args[0], dec.args[1]
        if isinstance(values, ast.Name):
            values = module.get(values.id, values)
        if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
            names = [n.strip() for n in names_node.value.split(",")]
        elif isinstance(names_node, (ast.Tuple, ast.List)):
            names = [str(e.value) for e in names_node.elts if isinstance(e, ast.Constant)]
        else:
            continue
        if not isinstance(values, (ast.List, ast.Tuple)):
            continue
        for case in values.elts:
            several = len(names) > 1 and isinstance(case, (ast.Tuple, ast.List))
            items = case.elts if several and isinstance(case, (ast.Tuple, ast.List)) else [case]
            for name, item in zip(names, items, strict=False):
                cases.setdefault(name, []).append(item)
    return cases


def published_constants(source: str, filename: str = "<test>") -> list[str]:
    """``file::test compares to <numbers>`` for each test in ``source`` that cites a
    source and compares a result to a bare number that is not an input."""
    lines = source.splitlines()
    tree = ast.parse(source)
    module = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
              for target in node.targets if isinstance(target, ast.Name)}
    found = []
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("test")):
            continue
        first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
        text = "\n".join(lines[max(0, first - 4):fn.end_lineno])
        if not CITES.search(OWN_PAGES.sub("", text)):
            continue
        compared = _compared(fn)
        inside = {id(n) for operand in compared for literal in _literals(operand)
                  for n in ast.walk(literal)}
        inputs = {v for n in ast.walk(fn) if id(n) not in inside
                  and (v := _number(n)) is not None}
        hits = [v for operand in compared for v in _numbers(operand)
                if not _trivial(v) and v not in inputs]
        bare_names = {operand.id for operand in compared if isinstance(operand, ast.Name)}
        for name, items in _parametrized(fn, module).items():
            if name in bare_names:
                hits += [v for item in items for v in _numbers(item) if not _trivial(v)]
        if hits:
            found.append(f"{filename}::{fn.name} compares to "
                         + ", ".join(f"{v:g}" for v in hits[:4]))
    return found


def test_no_published_figure_is_left_outside_the_checks() -> None:
    found = [hit for path in sorted((ROOT / "tests" / "unit").rglob("test_*.py"))
             if path.name != Path(__file__).name
             for hit in published_constants(path.read_text(encoding="utf-8"), path.name)]
    assert found == [], (
        "published figures outside published_checks (declare a Check, or read the "
        "figure with published_checks.get): " + "; ".join(found))


CITING_TEST = '''
def test_gpt3_compute() -> None:
    # Brown et al. 2020, Table D.1: 3.14e23 FLOP.
    assert compute(params=174.6e9).value("total_flops") == pytest.approx({value})
'''


def test_the_scan_finds_a_published_constant_and_lets_invariants_through() -> None:
    assert published_constants(CITING_TEST.format(value="3.14e23")) == [
        "<test>::test_gpt3_compute compares to 3.14e+23"]
    # An input, a derivation written out, a bound: not figures.
    assert published_constants(CITING_TEST.format(value="174.6e9")) == []
    assert published_constants(CITING_TEST.format(value="6 * 174.6e9 * 300e9")) == []
    bound = CITING_TEST.replace("== pytest.approx({value})", "< 3.2e23")
    assert published_constants(bound) == []
    # Without a citation the same comparison is a plain regression test.
    assert published_constants(CITING_TEST.replace("Brown et al. 2020, Table D.1: ", "")
                               .format(value="3.14e23")) == []
    # A parametrized published value compared as it stands is found too.
    parametrized = '''
@pytest.mark.parametrize(("shape", "published"), [(GPT3, 174.6e9)])
def test_counts(shape: Shape, published: float) -> None:
    # Brown et al. 2020, App. D.
    assert count(shape) == pytest.approx(published)
'''
    assert published_constants(parametrized) == ["<test>::test_counts compares to 1.746e+11"]
    # Code that names a table is not a citation of one.
    assert published_constants(CITING_TEST.replace("Brown et al. 2020, Table D.1: ", "")
                               .replace("# ", "table = None  # the table is not cited; ")
                               .format(value="3.14e23")) == []


# --- derived checks: the arithmetic on the row, snapshots in the unit tests -------------
# A derived check's value is computed from published numbers by arithmetic that its row
# (claim, source, tolerance) writes out, so that a reader can redo it. What the guide's
# own model gives with its own assumptions or defaults (a goodput, a sized cluster, a
# ratio of two calculator outputs) is not a check: it is a regression test in the unit
# tests of its subject.

#: Arithmetic written out: an operator between spaces, or an equals sign.
SPELLED_OUT = re.compile(r"\S (?:x|/|\+|-|×) \S|=")


def spells_out(check: Check) -> bool:
    """Whether a derived check's row writes out the arithmetic from published numbers
    (and does not appeal to a calculator's defaults instead)."""
    row = " ".join((check.claim, check.source, check.why_tolerance))
    return bool(SPELLED_OUT.search(row)) and not re.search(r"\bdefaults?\b", check.source)


@pytest.mark.parametrize("check", [c for c in CHECKS if c.derived],
                         ids=[c.id for c in CHECKS if c.derived])
def test_every_derived_check_spells_out_its_derivation(check: Check) -> None:
    assert spells_out(check), (
        f"{check.id}: a derived check writes out the arithmetic from published numbers "
        f"(claim, source or tolerance); a figure of the guide's own model is a unit test")


def test_a_snapshot_of_the_defaults_is_not_a_derivation() -> None:
    snapshot = Check(id="snapshot", chapter="sparse.md", claim="The chapter's default step: "
                     "PS communication time over the collective's",
                     source="Derivation: the sparse_training defaults", derived=True,
                     calculator="sparse_training", output="ps_step_comm_time_s",
                     published=56.8, rel_tol=0.01, why_tolerance="quoted to three digits")
    assert not spells_out(snapshot)
    assert spells_out(replace(snapshot, source="Derivation: 33,762,577 x 16 x 4 B"))


#: Rows that were snapshots of the guide's own output (issue 32): each is now asserted,
#: with the same value, by the unit test named here.
MOVED_TO_UNIT_TESTS = {
    "ps-over-collective": ("sparse/test_sparse_training.py",
                           "test_matched_bandwidth_comparison", 56.8),
    "ps-over-collective-matched": ("sparse/test_sparse_training.py",
                                   "test_matched_bandwidth_comparison", 2.37),
    "ps-push-over-tcp": ("fabric/test_incast_recovery.py",
                         "test_calculator_rows_and_the_ps_push_over_tcp", 0.348),
    "llama3-goodput-model": ("failures/test_goodput_sizing.py",
                             "test_long_runs_chapter_figures", 0.923),
    "llama3-checkpoint-interval": ("failures/test_goodput_sizing.py",
                                   "test_long_runs_chapter_figures", 4.16),
    "llama3-recovery-budget": ("failures/test_reliability.py",
                               "test_llama3_recovery_budget_at_the_chapter_stall", 15.3),
    "llama31-405b-gpu-hours-estimated": ("failures/test_goodput_sizing.py",
                                         "test_gpu_hours_with_the_estimated_goodput", 28.8e6),
    "capstone-recommender-goodput": ("failures/test_goodput_sizing.py",
                                     "test_sparse_sizing_counts_goodput_too", 0.989),
    "capstone-recommender-checkpoint-write": ("failures/test_goodput_sizing.py",
                                              "test_sparse_sizing_counts_goodput_too", 55.3),
    "capstone-recommender-checkpoint-interval": ("failures/test_goodput_sizing.py",
                                                 "test_sparse_sizing_counts_goodput_too", 4.7),
}


@pytest.mark.parametrize("check_id", sorted(MOVED_TO_UNIT_TESTS))
def test_a_snapshot_moved_to_its_unit_test(check_id: str) -> None:
    path, test, value = MOVED_TO_UNIT_TESTS[check_id]
    with pytest.raises(KeyError):
        get(check_id)
    tree = ast.parse((ROOT / "tests" / "unit" / path).read_text(encoding="utf-8"))
    fn = next((node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
               and node.name == test), None)
    assert fn is not None, f"{check_id}: {path}::{test} is gone"
    assert value in _numbers_compared(fn), f"{check_id}: {path}::{test} no longer checks {value:g}"


def _numbers_compared(fn: ast.FunctionDef) -> list[float]:
    return [v for operand in _compared(fn) for v in _numbers(operand)]


def test_no_page_links_a_removed_check() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    linked = set(re.findall(r"validation\.md#check-([a-z0-9-]+)", text))
    assert linked <= {c.id for c in CHECKS}, sorted(linked - {c.id for c in CHECKS})
