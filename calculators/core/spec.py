"""Declarations of a calculator's inputs and outputs, and the one error a bad input raises.

A calculator is declared once, as data (``Param`` and ``Output`` here, tied to its
function by ``calculator.Calculator``), and everything else (the HTML form, the CLI,
the JSON, the reference page, the tests' sweeps) is generated from that declaration.
Each input parses and checks a value on its own. Values are SI base units inside
(FLOP, s, B, B/s, W, USD); only ``unit_parsing`` and ``units`` read and show them for
people.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from calculators.core import units
from calculators.core.i18n import _
from calculators.core.unit_parsing import UnitError, parse_quantity

if TYPE_CHECKING:
    from collections.abc import Mapping

Kind = Literal["int", "float", "choice", "bool", "text"]
Value: TypeAlias = int | float | str | bool | None

#: The largest text a reader may paste into any field; anything longer is refused
#: before parsing so that a hostile value cannot make the parser work hard.
MAX_TEXT_LENGTH = 20_000


class ValidationError(ValueError):
    """The one error a bad input raises: it names the input, the value and the rule."""

    def __init__(self, input_name: str, message: str, *, reason: str = "") -> None:
        super().__init__(f"{input_name}: {message}")
        self.input_name = input_name
        self.message = message
        #: The rule broken, without the value (to restate it with the reader's text).
        self.reason = reason or message


@dataclass(frozen=True)
class When:
    """A condition on a choice (or yes/no) input: it holds while ``input`` has one of
    ``values`` (texts as the form holds them: a choice's value, or "true"/"false").

    Declares what applies in which mode, for the page: an input that applies only when
    the condition holds is hidden otherwise (its value kept), and a choice that only
    goes with some other choices is disabled otherwise, with the reason. ``also``: a
    second condition that must hold too (an MoE's GQA-only input, say, in a calculator
    whose model kind already decides whether it shows)."""

    input: str
    values: tuple[str, ...]
    also: When | None = None

    def holds(self, texts: Mapping[str, object]) -> bool:
        """Whether the condition (and ``also``) holds for these field texts (or values)."""
        value = texts.get(self.input)
        if isinstance(value, bool):
            value = "true" if value else "false"
        return str(value) in self.values and (self.also is None or self.also.holds(texts))


@dataclass(frozen=True)
class Choice:
    """One allowed value of a choice input, with the label a reader sees.

    ``when``: the choice goes only with those values of another choice input (the page
    disables it otherwise and says why); ``why_not`` is that reason in words, when the
    generated one ("only with <label> = ...") says too little. ``former``: values this
    choice had before a rename, which old links and scripts still carry; they parse to
    ``value``."""

    value: str
    label: str
    when: When | None = None
    why_not: str = ""
    former: tuple[str, ...] = ()


@dataclass(frozen=True)
class FormerInput:
    """An input a calculator had before a rename, which old links still carry: its
    ``name``, the input that replaced it (``becomes``) and, for each old value text, the
    new input's value (``values``). A link's old pair loads as the new one."""

    name: str
    becomes: str
    values: tuple[tuple[str, str], ...]

    def translate(self, text: str) -> str | None:
        """The new input's text for the old ``text``, or None when it has none."""
        return dict(self.values).get(text.strip().lower())


@dataclass(frozen=True)
class Param:
    """One input of a calculator.

    ``default=None`` with ``optional=True`` means "derived" (for example, taken from
    the hardware catalogue); ``help`` says where the formula or default comes from.
    """

    name: str
    label: str
    kind: Kind
    default: Value
    unit: str = ""
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple[Choice, ...] = ()
    optional: bool = False
    placeholder: str = ""
    #: Shown under "More inputs" (collapsed unless the example sets it).
    advanced: bool = False
    #: Rows of a text input's box: 1 is a one-line field (a pattern), more a list.
    lines: int = 4
    #: The input applies only while this condition holds (e.g. only to sparse models):
    #: the page hides it otherwise and keeps its value. The calculator must not read it
    #: then (tests/unit/core/test_page_declarations.py checks that it changes no output).
    when: When | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise TypeError(f"input name {self.name!r} is not an identifier")
        if self.kind == "choice" and not self.choices:
            raise TypeError(f"choice input {self.name!r} has no choices")
        if self.default is None and not self.optional:
            raise TypeError(f"input {self.name!r} has no default and is not optional")
        if self.default is not None:
            self.parse(self.default)

    def as_text(self, value: Value) -> str:
        """The text a field shows for ``value``; it parses back to exactly ``value``."""
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return units.input_text(value, self.unit)
        return str(value)

    @property
    def choice_values(self) -> tuple[str, ...]:
        return tuple(c.value for c in self.choices)

    def describe_range(self) -> str:
        """The allowed values, in words, for error messages and help text."""
        if self.kind == "choice":
            return _("one of {values}").format(values=", ".join(self.choice_values))
        if self.kind == "bool":
            return _("true or false")
        if self.kind == "text":
            return _("text of at most {count} characters").format(count=MAX_TEXT_LENGTH)
        low = "" if self.minimum is None else units.format_plain(self.minimum, self.unit)
        high = "" if self.maximum is None else units.format_plain(self.maximum, self.unit)
        whole = self.kind == "int"
        above = self.exclusive_minimum
        if low and high:
            return (_("a whole number above {low} to {high}") if whole and above
                    else _("a whole number from {low} to {high}") if whole
                    else _("a number above {low} to {high}") if above
                    else _("a number from {low} to {high}")).format(low=low, high=high)
        if low:
            return (_("a whole number above {low}") if whole and above
                    else _("a whole number of at least {low}") if whole
                    else _("a number above {low}") if above
                    else _("a number of at least {low}")).format(low=low)
        if high:
            return (_("a whole number of at most {high}") if whole
                    else _("a number of at most {high}")).format(high=high)
        return _("a whole number") if whole else _("a number")

    def _fail(self, value: object, why: str = "") -> ValidationError:
        text = repr(value) if not isinstance(value, str) else repr(value[:60])
        shown = text if len(text) <= 64 else _("{start}...({count} characters)").format(
            start=text[:30], count=len(text))
        reason = why or _("must be {range}").format(range=self.describe_range())
        return ValidationError(self.name, _("{value} is not allowed: {reason}").format(
            value=shown, reason=reason), reason=reason)

    def parse(self, raw: object) -> Value:
        """Turn a reader's or caller's value (number or text with units) into a value.

        Blank text on an optional input means "derived"; bools accept the usual words.
        """
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            if self.optional:
                return None
            raise ValidationError(self.name, _("a value is required"))
        if isinstance(raw, str) and len(raw) > MAX_TEXT_LENGTH:
            raise ValidationError(self.name, _("text longer than {count} characters").format(
                count=MAX_TEXT_LENGTH))
        if self.kind == "text":
            if not isinstance(raw, str):
                raise self._fail(raw, _("must be text"))
            return raw
        if self.kind == "choice":
            text = str(raw).strip()
            for choice in self.choices:
                if text in (choice.value, choice.label, *choice.former):
                    return choice.value
            raise self._fail(raw)
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            word = str(raw).strip().lower()
            if word in ("true", "yes", "on", "1"):
                return True
            if word in ("false", "no", "off", "0"):
                return False
            raise self._fail(raw)
        if isinstance(raw, bool):
            raise self._fail(raw, _("must be a number, not true/false"))
        if isinstance(raw, (int, float)):
            try:  # a Python int may lie beyond float range (10**400)
                number: float = float(raw)
            except OverflowError:
                raise self._fail(raw, _("must be {range}").format(
                    range=self.describe_range())) from None
            if isinstance(raw, int) and self.kind == "int" and abs(raw) < 2**53:
                number = raw
        elif isinstance(raw, str):
            try:
                number = parse_quantity(raw, self.unit)
            except UnitError as err:
                raise ValidationError(self.name, _("{value} is not allowed: {reason}").format(
                    value=repr(raw[:60]), reason=err)) from None
            try:
                return self.check(number)
            except ValidationError as err:
                # Name the reader's own text, not the float it parsed to.
                raise self._fail(raw, err.reason) from None
        else:
            raise self._fail(raw, _("must be a number"))
        return self.check(number)

    def check(self, value: float) -> float | int:
        """Check a number against this numeric input's bounds (whole, finite, in range)."""
        if not math.isfinite(value):
            raise self._fail(value, _("must be a finite number"))
        if self.kind == "int":
            if value != int(value):
                raise self._fail(value, _("must be a whole number"))
            value = int(value)
        if self.minimum is not None and (
            value < self.minimum or (self.exclusive_minimum and value == self.minimum)
        ):
            raise self._fail(value)
        if self.maximum is not None and value > self.maximum:
            raise self._fail(value)
        return value


@dataclass(frozen=True)
class Output:
    """One result of a calculator: the unit of its value and how to show it."""

    name: str
    label: str
    unit: str = ""
    fmt: units.Format = "si"
    help: str = ""
    #: The value's relative uncertainty, measured (e.g. a model's error against
    #: measurements): the text shows it as "± x%" and the JSON carries it as ``band``.
    band: float | None = None
