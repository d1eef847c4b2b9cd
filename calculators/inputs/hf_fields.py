"""Reading a Hugging Face ``config.json`` field by field: each read is recorded (so the
result can say which fields it used), a missing or malformed field is an error that
names it, and a field the release leaves out takes the default of the model family's
configuration class in transformers, said in a note."""

from __future__ import annotations

import json

from calculators.core.i18n import _
from calculators.core.spec import ValidationError

#: The input name a config error is reported against (the page's paste box).
CONFIG_INPUT = "config"


class ConfigError(ValidationError):
    """A config.json that cannot be read; the message names the field."""

    def __init__(self, message: str) -> None:
        super().__init__(CONFIG_INPUT, message)


class Fields:
    """One configuration object (the top level, or Gemma 3's ``text_config``), read with
    a record of the fields used and the defaults taken."""

    def __init__(self, data: dict[str, object], family: str, prefix: str = "") -> None:
        self.data, self.family, self.prefix = data, family, prefix
        self.used: list[str] = []
        self.defaults: list[str] = []

    def _name(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def raw(self, key: str, default: object = None) -> object:
        """The field's value (recorded as used), or ``default`` (recorded as taken)."""
        if key in self.data and self.data[key] is not None:
            self.used.append(self._name(key))
            return self.data[key]
        if default is not None:
            self.defaults.append(f"{self._name(key)} = {json.dumps(default)}")
        return default

    def whole(self, key: str, default: int | None = None, minimum: int = 1) -> int:
        """A whole-number field of at least ``minimum``."""
        value = self.raw(key, default)
        if value is None:
            raise ConfigError(_("{field} is missing: a {family} config needs it").format(
                field=self._name(key), family=self.family))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise ConfigError(_("{field} must be a whole number, not {value}").format(
                field=self._name(key), value=repr(value))[:160])
        if int(value) < minimum:
            raise ConfigError(_("{field} must be at least {minimum}, not {value}").format(
                field=self._name(key), minimum=minimum, value=repr(value)))
        return int(value)

    def optional_whole(self, key: str) -> int | None:
        """A whole-number field that may be absent or null."""
        return self.whole(key, minimum=0) if self.has(key) else None

    def flag(self, key: str, default: bool) -> bool:
        """A true/false field."""
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise ConfigError(_("{field} must be true or false, not {value}").format(
                field=self._name(key), value=repr(value))[:160])
        return value

    def text(self, key: str, default: str | None = None) -> str:
        value = self.raw(key, default)
        if not isinstance(value, str):
            raise ConfigError(_("{field} must be text, not {value}").format(
                field=self._name(key), value=repr(value))[:160])
        return value

    def strings(self, key: str) -> list[str] | None:
        """A list of texts (``layer_types``, ``hybrid_override_pattern``), or None."""
        if not self.has(key):
            return None
        value = self.raw(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(_("{field} must be a list of texts").format(field=self._name(key)))
        return value

    def require_absent_or(self, key: str, allowed: tuple[object, ...], why: str) -> None:
        """A field whose other values the guide does not model: an error saying why
        (``why`` marked with ``N_`` by the caller, translated here)."""
        if key in self.data and self.data[key] not in allowed:
            raise ConfigError(_("{field} = {value} is not modelled: {why}").format(
                field=self._name(key), value=repr(self.data[key]), why=_(why))[:300])
        if key in self.data:
            self.used.append(self._name(key))
