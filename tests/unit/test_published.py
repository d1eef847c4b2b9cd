"""Every published figure the guide reproduces (published_checks), computed with today's
code: the same declarations make the Validation page, so a figure is checked once."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from published_checks import Check, Outcome, all_checks, run

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
    r"et al\.|\bTable [0-9A-Z]|\bSecs?\. ?[0-9]|\bEq\. ?[0-9]|\bApp(?:\.|endix) ?[A-Z]|"
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
