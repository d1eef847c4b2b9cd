"""Links from the Validation page to the calculator reference: each opens a calculator
on its own page with exactly a row's inputs, through the same share links a reader
copies (``calculators.core.share``). Used by every kind of row the page shows: a
published figure (``published_checks.Check``) and a measured run
(``published_checks.speed.MeasuredRun``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import calculators
from bigmodel_guide.reference import slug, widget_anchor
from calculators.core import share

if TYPE_CHECKING:
    from collections.abc import Mapping

    from published_checks import Value

#: Where the reference's pages live, relative to the Validation page (both are in
#: reference/, with directory URLs); each calculator's page is a folder below.
REFERENCE_LINK = "../calculators/"


class Linkable(Protocol):
    """What a link needs from a row: the calculator (None: a bare formula, no link)
    and the inputs it is computed with."""

    @property
    def calculator(self) -> str | None: ...

    @property
    def inputs(self) -> Mapping[str, Value]: ...


def link_for(item: Linkable) -> str:
    """The share link (``?<calc id>=name:value,...#ref-<calc>``) that opens the
    calculator on its reference page with exactly ``item``'s inputs; "" when ``item``
    is a formula no calculator shows."""
    if item.calculator is None:
        return ""
    calc = calculators.REGISTRY[item.calculator]
    texts = {name: calc.param(name).as_text(value) for name, value in item.inputs.items()}
    state = share.encode_state(calc, texts)
    page = f"{REFERENCE_LINK}{slug(calc)}/"
    anchor = widget_anchor(calc)
    return f"{page}?{calc.id}={state}#{anchor}" if state else f"{page}#{anchor}"
