"""A calculator: its declared inputs and outputs tied to the pure function between them,
and what running it makes.

``Calculator`` holds the declaration (``spec.Param``, ``spec.Output``) and its function;
``validate`` turns raw values into ``Inputs``; the function returns ``Computed`` (values,
notes, a ``Table``, a chart); and ``Result.to_dict`` is the JSON contract.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from calculators.core import units
from calculators.core.spec import ValidationError, Value

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from calculators.core.spec import FormerInput, Output, Param, When

#: Headline outputs of a calculator that declares none: its first outputs.
DEFAULT_HEADLINES = 3


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
    #: Inputs it had before a rename, so that old share links still load (share.py).
    former_inputs: tuple[FormerInput, ...] = ()

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise TypeError(f"calculator {self.id!r} declares an input twice")
        for former in self.former_inputs:
            if former.name in names or former.becomes not in names:
                raise TypeError(f"calculator {self.id!r}: former input {former.name!r} must "
                                "be gone and name an input that replaced it")
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
        if when.also is not None:
            self._check_condition(where, when.also, own)

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
        """The value as people read it, with its band (``Output.band``) when it has one."""
        out = next(o for o in self.calculator.outputs if o.name == name)
        value = self.computed.values[name]
        text = units.format_value(value, out.unit, out.fmt)
        if out.band is not None and isinstance(value, (int, float)):
            return f"{text} ± {out.band:.0%}"
        return text

    def to_dict(self) -> dict[str, object]:
        outputs: dict[str, object] = {}
        for out in self.calculator.outputs:
            value = self.computed.values[out.name]
            entry: dict[str, object] = {
                "value": value,
                "unit": out.unit,
                "text": self.text(out.name),
                "raw": self.raw(out.name),
            }
            if out.band is not None and isinstance(value, (int, float)):
                entry["band"] = out.band
            outputs[out.name] = entry
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
