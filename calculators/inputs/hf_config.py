"""Import a model's Hugging Face ``config.json``: the text a reader pastes (or
``--config FILE`` on the command line) becomes the model inputs of a calculator, and
the result says which fields it read, which defaults it took and what it left alone.

The mapping per family is ``hf_families``; this module parses, picks the family by
``model_type``, and applies the values as a preset of the model's kind would be applied
(``catalogues.presets``): the same inputs, the same rules for which calculators take a
dense or a mixture-of-experts model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TypedDict

from calculators.catalogues import presets
from calculators.catalogues.preset_base import Preset
from calculators.core.i18n import _
from calculators.inputs.hf_families import FAMILIES, Values
from calculators.inputs.hf_fields import ConfigError, Fields

__all__ = ["ConfigAnswer", "ConfigError", "ImportedModel", "apply_config", "read_config"]

#: Longest config text accepted (a released config.json is a few kilobytes; DeepSeek's
#: with its quantisation block is under 2 KB, gpt-oss's with 36 layer types under 3 KB).
MAX_CONFIG_CHARS = 200_000


@dataclass(frozen=True)
class ImportedModel:
    """A config.json read: its family, the input values, what was read and assumed."""

    family: str
    name: str
    values: Values
    used: tuple[str, ...]
    defaults: tuple[str, ...]
    model: str = ""  # the name without "from config.json"

    @property
    def kind(self) -> str:
        """The preset kind it applies as: a dense model or a mixture of experts."""
        return "moe_model" if self.values.get("model_kind") == "moe" else "model"

    def as_preset(self) -> Preset:
        return Preset("config_json", self.name, self.kind, dict(self.values),
                      f"config.json (model_type {self.family})")


class ConfigAnswer(TypedDict):
    """What an imported config.json gives one calculator."""

    texts: dict[str, str]
    family: str
    name: str
    used: list[str]
    defaults: list[str]
    kind: str


def _parse(text: str | dict[str, object]) -> dict[str, object]:
    if isinstance(text, dict):
        return dict(text)
    if len(text) > MAX_CONFIG_CHARS:
        raise ConfigError(_("the text is longer than {most:,} characters; a config.json is "
                            "a few kilobytes").format(most=MAX_CONFIG_CHARS))
    if not text.strip():
        raise ConfigError(_("paste the contents of the model's config.json"))
    try:
        data = json.loads(text)
    except ValueError as err:
        raise ConfigError(_("not JSON: {error}").format(error=err)[:200]) from None
    if not isinstance(data, dict):
        raise ConfigError(_("a config.json is a JSON object ({...})"))
    return data


def _model(data: dict[str, object], family: str) -> str:
    names = data.get("architectures")
    if isinstance(names, list) and names and isinstance(names[0], str):
        return names[0]
    return _("{family} model").format(family=family)


def read_config(text: str | dict[str, object]) -> ImportedModel:
    """Read a config.json (text or an already parsed object) into input values."""
    data = _parse(text)
    family = data.get("model_type")
    if not isinstance(family, str) or not family:
        raise ConfigError(_("model_type is missing: it names the model family (llama, "
                            "qwen3_moe, deepseek_v3, gpt_oss, ...)"))
    mapping = FAMILIES.get(family)
    if mapping is None:
        known = ", ".join(sorted(FAMILIES))
        raise ConfigError(_("model_type {family} is not mapped; mapped families: "
                            "{known}").format(family=repr(family[:40]), known=known))
    fields = Fields(data, family)
    fields.used.append("model_type")
    values = mapping(fields)
    model = _model(data, family)
    return ImportedModel(family, _("{model} from config.json").format(model=model), values,
                         tuple(dict.fromkeys(fields.used)), tuple(fields.defaults), model)


def apply_config(calc_id: str, text: str | dict[str, object]) -> ConfigAnswer:
    """The field texts a config.json gives calculator ``calc_id``, with what was read:
    ``{"texts", "family", "name", "used", "defaults", "kind"}``. A config of a kind the
    calculator does not describe (a dense model in an MoE-only calculator) is an error
    that says where it goes."""
    from calculators import get  # the registry imports this module's users

    calc = get(calc_id)
    model = read_config(text)
    preset = model.as_preset()
    if not presets.describes_models(calc):
        raise ConfigError(_("{calculator} takes no model architecture").format(
            calculator=calc.id))
    if preset not in presets.applicable(calc, (preset,)):
        said = (_("{model} is a mixture of experts, which {calculator} does not describe: "
                  "use the calculator for that kind of model") if model.kind == "moe_model"
                else _("{model} is a dense model, which {calculator} does not describe: use "
                       "the calculator for that kind of model"))
        raise ConfigError(said.format(model=model.model, calculator=calc.id))
    return {"texts": presets.preset_texts(calc, preset), "family": model.family,
            "name": model.name, "used": list(model.used), "defaults": list(model.defaults),
            "kind": model.kind}
