"""Every published figure the guide reproduces (published_checks), computed with today's
code: the same declarations make the Validation page, so a figure is checked once."""

from __future__ import annotations

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
