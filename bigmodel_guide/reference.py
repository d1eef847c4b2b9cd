"""The generated reference page: every calculator's inputs, units, defaults and sources."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bigmodel_guide.render import condition_text, field_text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from jinja2 import Environment

    from calculators.core.spec import Calculator

REFERENCE_PATH = "reference/calculators.md"
REFERENCE_TEMPLATE = "calculator/reference.md"


def reference_markdown(env: Environment, registry: Mapping[str, Calculator]) -> str:
    """Markdown for the reference page, rendered from a (theme-overridable) template."""
    rows = {
        calc.id: [
            {
                "param": p,
                "default": field_text(p, p.default) or (p.placeholder or "blank"),
                "allowed": p.describe_range(),
                "when": f"Only when {condition_text(calc, p.when)}. " if p.when else "",
            }
            for p in calc.params
        ]
        for calc in registry.values()
    }
    return env.get_template(REFERENCE_TEMPLATE).render(calculators=registry, rows=rows)
