"""Declarations of calculators: inputs, outputs, validation and results.

A calculator is declared once, as data (``Param``, ``Output``, ``Calculator``), and
everything else (the HTML form, the CLI, the JSON, the reference page, the tests'
sweeps) is generated from that declaration. Values are SI base units inside (FLOP, s,
B, B/s, W, USD); only ``units`` parses and formats them for people.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

from calculators.core import units

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

Kind = Literal["int", "float", "choice", "bool", "text"]
Value: TypeAlias = int | float | str | bool | None

#: The largest text a reader may paste into any field; anything longer is refused
#: before parsing so that a hostile value cannot make the parser work hard.
MAX_TEXT_LENGTH = 20_000
#: Headline outputs of a calculator that declares none: its first outputs.
DEFAULT_HEADLINES = 3


class ValidationError(ValueError):
    """The one error a bad input raises: it names the input, the value and the rule."""

    def __init__(self, input_name: str, message: str) -> None:
        super().__init__(f"{input_name}: {message}")
        self.input_name = input_name
        self.message = message


@dataclass(frozen=True)
class When:
    """A condition on a choice (or yes/no) input: it holds while ``input`` has one of
    ``values`` (texts as the form holds them: a choice's value, or "true"/"false").

    Declares what applies in which mode, for the page: an input that applies only when
    the condition holds is hidden otherwise (its value kept), and a choice that only
    goes with some other choices is disabled otherwise, with the reason."""

    input: str
    values: tuple[str, ...]

    def holds(self, texts: Mapping[str, object]) -> bool:
        """Whether the condition holds for these field texts (or values)."""
        value = texts.get(self.input)
        if isinstance(value, bool):
            value = "true" if value else "false"
        return str(value) in self.values


@dataclass(frozen=True)
class Choice:
    """One allowed value of a choice input, with the label a reader sees.

    ``when``: the choice goes only with those values of another choice input (the page
    disables it otherwise and says why); ``why_not`` is that reason in words, when the
    generated one ("only with <label> = ...") says too little."""

    value: str
    label: str
    when: When | None = None
    why_not: str = ""


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
            return "one of " + ", ".join(self.choice_values)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "text":
            return f"text of at most {MAX_TEXT_LENGTH} characters"
        low = "" if self.minimum is None else units.format_plain(self.minimum, self.unit)
        high = "" if self.maximum is None else units.format_plain(self.maximum, self.unit)
        whole = "a whole number" if self.kind == "int" else "a number"
        if low and high:
            lower = "above" if self.exclusive_minimum else "from"
            return f"{whole} {lower} {low} to {high}"
        if low:
            return f"{whole} {'above' if self.exclusive_minimum else 'of at least'} {low}"
        if high:
            return f"{whole} of at most {high}"
        return whole

    def _fail(self, value: object, why: str = "") -> ValidationError:
        shown = repr(value) if not isinstance(value, str) else repr(value[:60])
        reason = why or f"must be {self.describe_range()}"
        return ValidationError(self.name, f"{shown} is not allowed: {reason}")

    def parse(self, raw: object) -> Value:
        """Turn a reader's or caller's value (number or text with units) into a value.

        Blank text on an optional input means "derived"; bools accept the usual words.
        """
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            if self.optional:
                return None
            raise ValidationError(self.name, "a value is required")
        if isinstance(raw, str) and len(raw) > MAX_TEXT_LENGTH:
            raise ValidationError(self.name, f"text longer than {MAX_TEXT_LENGTH} characters")
        if self.kind == "text":
            if not isinstance(raw, str):
                raise self._fail(raw, "must be text")
            return raw
        if self.kind == "choice":
            text = str(raw).strip()
            for choice in self.choices:
                if text in (choice.value, choice.label):
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
            raise self._fail(raw, "must be a number, not true/false")
        if isinstance(raw, (int, float)):
            number: float = raw
        elif isinstance(raw, str):
            try:
                number = units.parse_quantity(raw, self.unit)
            except units.UnitError as err:
                raise ValidationError(self.name, f"{raw[:60]!r} is not allowed: {err}") from None
            try:
                return self.check(number)
            except ValidationError as err:
                # Name the reader's own text, not the float it parsed to.
                raise self._fail(raw, err.message.split(": ", 1)[-1]) from None
        else:
            raise self._fail(raw, "must be a number")
        return self.check(number)

    def check(self, value: float) -> float | int:
        """Check a number against this numeric input's bounds (whole, finite, in range)."""
        if not math.isfinite(value):
            raise self._fail(value, "must be a finite number")
        if self.kind == "int":
            if value != int(value):
                raise self._fail(value, "must be a whole number")
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


@dataclass(frozen=True)
class Table:
    """Rows of a result table; cells are already formatted text."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "caption": self.caption,
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
        }


@dataclass
class Computed:
    """What a calculator's function returns: raw values plus optional extras."""

    values: dict[str, float | bool | str | None]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    table: Table | None = None
    chart: str | None = None


class Inputs(dict[str, Value]):
    """Validated inputs, with typed getters so that formulas read cleanly."""

    def num(self, name: str) -> float:
        value = self[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"input {name!r} is not a number")
        return float(value)

    def whole(self, name: str) -> int:
        value = self[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"input {name!r} is not a whole number")
        return value

    def opt(self, name: str) -> float | None:
        """A numeric input that may be blank (None: derived from elsewhere)."""
        return None if self[name] is None else self.num(name)

    def text(self, name: str) -> str:
        return str(self[name])

    def flag(self, name: str) -> bool:
        return bool(self[name])


def find_param(params: tuple[Param, ...], name: str, *, owner: str) -> Param:
    """The declaration named ``name``; an unknown name is a validation error."""
    for p in params:
        if p.name == name:
            return p
    raise ValidationError(name, f"{owner} has no input named {name!r}")


def validate(params: tuple[Param, ...], raw: Mapping[str, object], *, owner: str) -> Inputs:
    """The defaults of ``params`` overlaid with ``raw`` (names with ``-`` or ``_``),
    each value parsed by its declaration; unknown names and bad values raise. Used by a
    calculator for its own inputs, and by one that runs a shared search with the inputs
    that search declares (``owner`` names them in errors)."""
    values = Inputs((p.name, p.default) for p in params)
    for name, value in raw.items():
        key = name.replace("-", "_")
        values[key] = find_param(params, key, owner=owner).parse(value)
    return values


@dataclass(frozen=True)
class Calculator:
    """A declared calculator: id, inputs, outputs and the pure function between them."""

    id: str
    title: str
    summary: str
    params: tuple[Param, ...]
    outputs: tuple[Output, ...]
    function: Callable[[Inputs], Computed]
    sources: tuple[str, ...] = ()
    chapter: str = ""
    #: Inputs folded under "More inputs" in the form, besides those marked advanced.
    advanced: tuple[str, ...] = ()
    #: The few outputs a reader watches (two to four): they stay in view while the
    #: reader edits, lead the announcement after a recompute and the comparison with a
    #: pinned baseline. Empty: the first ``DEFAULT_HEADLINES`` outputs.
    headline: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise TypeError(f"calculator {self.id!r} declares an input twice")
        unknown = set(self.advanced) - set(names)
        if unknown:
            raise TypeError(f"calculator {self.id!r} folds unknown inputs {sorted(unknown)}")
        outs = [o.name for o in self.outputs]
        if len(set(outs)) != len(outs):
            raise TypeError(f"calculator {self.id!r} declares an output twice")
        if set(self.headline) - set(outs) or len(set(self.headline)) != len(self.headline):
            raise TypeError(f"calculator {self.id!r}: headline {self.headline} must name "
                            "distinct outputs")
        for param in self.params:
            conditions = [(f"input {param.name!r}", param.when)] + [
                (f"choice {param.name}={c.value!r}", c.when) for c in param.choices]
            for where, when in conditions:
                if when is not None:
                    self._check_condition(where, when, param.name)

    def _check_condition(self, where: str, when: When, own: str) -> None:
        """A condition must name another choice or yes/no input, and its values."""
        target = next((p for p in self.params if p.name == when.input), None)
        if target is None or target.name == own or target.kind not in ("choice", "bool"):
            raise TypeError(f"calculator {self.id!r}: {where} depends on {when.input!r}, "
                            "which is not another choice or yes/no input")
        allowed = target.choice_values if target.kind == "choice" else ("true", "false")
        if not when.values or set(when.values) - set(allowed):
            raise TypeError(f"calculator {self.id!r}: {where} names values {when.values} "
                            f"of {when.input!r}, which allows {allowed}")

    @property
    def headline_outputs(self) -> tuple[Output, ...]:
        """The declared headline outputs, in their order (see ``headline``)."""
        if not self.headline:
            return self.outputs[:DEFAULT_HEADLINES]
        by_name = {o.name: o for o in self.outputs}
        return tuple(by_name[name] for name in self.headline)

    def is_advanced(self, name: str) -> bool:
        return name in self.advanced or self.param(name).advanced

    def param(self, name: str) -> Param:
        return find_param(self.params, name, owner=self.id)

    @property
    def defaults(self) -> Inputs:
        return Inputs((p.name, p.default) for p in self.params)

    def validate(self, raw: Mapping[str, object]) -> Inputs:
        """Defaults overlaid with ``raw``; unknown names and bad values raise."""
        return validate(self.params, raw, owner=self.id)

    def compute(self, raw: Mapping[str, object] | None = None) -> Result:
        inputs = self.validate(raw or {})
        computed = self.function(inputs)
        missing = {o.name for o in self.outputs} - set(computed.values)
        if missing:
            raise RuntimeError(f"{self.id} did not compute {sorted(missing)}")
        return Result(self, inputs, computed)


@dataclass(frozen=True)
class Result:
    """A computed result; ``to_dict`` is the JSON contract."""

    calculator: Calculator
    inputs: Inputs
    computed: Computed

    def value(self, name: str) -> float | bool | str | None:
        return self.computed.values[name]

    def raw(self, name: str) -> str:
        """The raw value as text (``data-value``): repr for floats, so it round-trips."""
        value = self.computed.values[name]
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return repr(value) if isinstance(value, float) else str(value)

    def text(self, name: str) -> str:
        out = next(o for o in self.calculator.outputs if o.name == name)
        return units.format_value(self.computed.values[name], out.unit, out.fmt)

    def to_dict(self) -> dict[str, object]:
        outputs: dict[str, object] = {}
        for out in self.calculator.outputs:
            value = self.computed.values[out.name]
            outputs[out.name] = {
                "value": value,
                "unit": out.unit,
                "text": units.format_value(value, out.unit, out.fmt),
                "raw": self.raw(out.name),
            }
        return {
            "calculator": self.calculator.id,
            "inputs": dict(self.inputs),
            "outputs": outputs,
            "warnings": list(self.computed.warnings),
            "notes": list(self.computed.notes),
            "table": None if self.computed.table is None else self.computed.table.to_dict(),
            "chart": self.computed.chart,
            "parsed": self.parsed(),
        }

    def parsed(self) -> dict[str, str]:
        """Each numeric input's value as understood, in words and units, for the form."""
        shown: dict[str, str] = {}
        for param in self.calculator.params:
            value = self.inputs[param.name]
            if param.kind in ("int", "float") and isinstance(value, (int, float)):
                shown[param.name] = units.echo(value, param.unit)
        return shown
