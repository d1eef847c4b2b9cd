"""The generated calculator reference: a first page listing every calculator, then one
page per calculator with its inputs, units, defaults, sources and the widget at its
defaults.

One page per calculator rather than one page for all: the single page carried 20
widgets and 40 tables (905 kB of HTML), which made it the slowest page of the guide to
reach by instant navigation (make bench), and a link to one calculator opened them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from markdown.extensions.toc import slugify

import calculators
from bigmodel_guide.render import condition_text, field_text
from calculators.core.i18n import _

if TYPE_CHECKING:
    from collections.abc import Mapping

    from jinja2 import Environment

    from calculators.core.calculator import Calculator

REFERENCE_DIR = "reference/calculators"
REFERENCE_INDEX = f"{REFERENCE_DIR}/index.md"
INDEX_TEMPLATE = "calculator/reference_index.md"
PAGE_TEMPLATE = "calculator/reference_page.md"


def slug(calc: Calculator) -> str:
    """The calculator's id with hyphens, as in every URL: its page's name."""
    return calc.id.replace("_", "-")


def widget_anchor(calc: Calculator) -> str:
    """The id of the widget at its defaults on the calculator's page."""
    return f"ref-{slug(calc)}"


def page_name(calc: Calculator) -> str:
    """The page's file name in REFERENCE_DIR."""
    return f"{slug(calc)}.md"


def page_path(calc: Calculator) -> str:
    return f"{REFERENCE_DIR}/{page_name(calc)}"


def _rows(calc: Calculator) -> list[dict[str, Any]]:
    return [
        {
            "param": p,
            "default": field_text(p, p.default) or (p.placeholder or _("blank")),
            "allowed": p.describe_range(),
            "when": _("Only when {condition}. ").format(condition=condition_text(calc, p.when))
            if p.when else "",
        }
        for p in calc.params
    ]


def title_anchor(calc: Calculator) -> str:
    """The page title's anchor, as the English title makes it: the same in both
    editions, so that a link to it works in either."""
    english = calculators.REGISTRY[calc.id].title
    return str(slugify(f"{calc.id}: {english}", "-"))


def reference_pages(env: Environment, registry: Mapping[str, Calculator],
                    chapter_titles: Mapping[str, str]) -> dict[str, str]:
    """{source path: Markdown} for the reference: the first page, then one per calculator.
    ``chapter_titles`` maps a chapter's file (``compute.md``) to its title in the nav."""
    index = env.get_template(INDEX_TEMPLATE).render(
        calculators=registry,
        pages={calc.id: page_name(calc) for calc in registry.values()},
        chapters={calc.id: chapter_titles.get(calc.chapter.split("#")[0], _("the chapter"))
                  for calc in registry.values()},
    )
    page = env.get_template(PAGE_TEMPLATE)
    return {REFERENCE_INDEX: index} | {
        page_path(calc): page.render(calc=calc, rows=_rows(calc), anchor=widget_anchor(calc),
                                      title_anchor=title_anchor(calc))
        for calc in registry.values()
    }


def reference_nav(registry: Mapping[str, Calculator]) -> list[Any]:
    """The reference's nav section: its first page, then each calculator by its id (the
    name the command line and the JSON use; the titles are long for a sidebar)."""
    return [REFERENCE_INDEX, *({calc.id: page_path(calc)} for calc in registry.values())]
