"""Named, cited configurations that fill a calculator's inputs in one step: which
calculators offer a preset, and what it fills in each.

The presets themselves are data, in ``preset_entries``: values keyed by calculator
input names, so one preset serves every calculator that shares those names. A
calculator takes only the names it has.

Which calculators list a preset (``presets_for``): those it fills at least two inputs
of, or at least one if the calculator has at most ``FEW_INPUTS`` inputs. Mixture-of-experts
presets go only to calculators that describe experts (``MOE_MARKER``), and dense model
presets only to the others, unless the calculator asks for the kind of model
(``model_kind``, which every model preset sets). One shared
name alone (a ``gpu`` choice in a 14-input calculator) is not worth a menu entry; in a
small calculator it is most of the form.

One exception to "every shared name is filled": ``params`` is an *override* in the
calculators that count parameters from the architecture (``model_memory``, ``mfu``:
optional, blank = counted). A preset that gives the architecture leaves it blank
there, since an override also changes how those calculators spread the weights over
pipeline stages; in ``training_compute`` (where ``params`` is required) it is filled.

Mixture-of-experts presets also go to a calculator that reads a model as its active and
total parameter counts (``COUNTS_MARKER``, ``training_compute``: 6N with N the active
count), when the preset states both (``params`` active, ``total_params``); an imported
config.json states neither, so it is not offered there. Dense presets clear
``total_params``, so that a previous MoE's total does not stay behind.

Where one name means different things, ``INPUT_SOURCES`` says which preset key feeds a
calculator's input: ``nic_bandwidth`` is per GPU in the sparse calculators but per port
in ``cluster_sizing`` (next to ``nics_per_node``), so there it takes the preset's
``nic_port_bandwidth``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.catalogues.preset_entries import PRESET_BY_ID, PRESETS
from calculators.core.i18n import _
from calculators.core.spec import ValidationError

if TYPE_CHECKING:
    from collections.abc import Callable

    from calculators.catalogues.preset_base import Preset, PresetValue
    from calculators.core.calculator import Calculator

#: What the package's API offers as ``calculators.presets``: the catalogue itself (for
#: ``core``, which may not import ``preset_entries``) and the rules that apply it.
__all__ = ["COUNTS_MARKER", "DERIVED_FROM", "DERIVED_VALUES", "FEW_INPUTS", "INPUT_SOURCES",
           "MOE_MARKER", "PRESETS", "applicable", "applied_names", "assignments",
           "describes_models", "get", "preset_texts", "presets_for"]

#: A calculator with at most this many inputs lists presets that fill one of them.
FEW_INPUTS = 8
#: Optional inputs that a calculator derives from others: left blank when the preset
#: fills every input they are derived from (see the module docstring).
DERIVED_FROM: dict[str, tuple[str, ...]] = {"params": ("layers", "hidden", "heads", "vocab")}
#: The input that marks a calculator as describing a mixture of experts. MoE presets are
#: offered only there, and dense model presets are not (they leave the experts unset, so
#: the previous model's experts would stay behind).
MOE_MARKER = "routed_experts"
#: The input that marks a calculator as reading a model as active and total counts: it
#: takes MoE presets that state them (see the module docstring).
COUNTS_MARKER = "total_params"
#: calculator id -> {input name: the preset key that feeds it}, where the same input name
#: means something else in that calculator (see the module docstring).
INPUT_SOURCES: dict[str, dict[str, str]] = {
    "cluster_sizing": {"nic_bandwidth": "nic_port_bandwidth"},
    # A model's published EP is the layout moe_step evaluates; in the planner ``ep``
    # would fix the search, so no preset fills it there.
    "moe_plan": {"ep": "planner_ep"},
    # A DLRM preset's fixed tables say nothing of how IDs arrive and expire: none of its
    # keys feeds the dynamic tables' width and precision (no preset is offered there).
    "dynamic_tables": {"embedding_dim": "dynamic_table_dim", "dtype": "dynamic_table_dtype"},
}


def _query_key_head(values: dict[str, PresetValue]) -> PresetValue | None:
    """The query/key head size of a preset's attention: MLA's is the no-position part
    plus the rotary part (DeepSeek-V3: 128 + 64 = 192; DeepSeek-AI 2024, Sec. 2.1.1),
    not ``head_dim``, which an MLA preset leaves blank."""
    if values.get("attention") != "mla":
        return values.get("head_dim")
    nope, rope = values.get("qk_nope_head_dim"), values.get("qk_rope_head_dim")
    if isinstance(nope, int) and isinstance(rope, int):
        return nope + rope
    return None


def _attention_kind(values: dict[str, PresetValue]) -> PresetValue | None:
    """A preset's attention as the KV cache sees it: MLA where stated, else grouped-query
    when it has fewer KV heads than heads, else multi-head."""
    if values.get("attention") == "mla":
        return "mla"
    heads, kv_heads = values.get("heads"), values.get("kv_heads")
    if not isinstance(heads, int):
        return None
    return "gqa" if isinstance(kv_heads, int) and kv_heads < heads else "mha"


def _or_heads(values: dict[str, PresetValue]) -> PresetValue | None:
    """KV heads, or the heads when the preset leaves them blank (MHA, or MLA where the
    input is not used)."""
    kv_heads = values.get("kv_heads")
    return kv_heads if isinstance(kv_heads, int) else values.get("heads")


def _head_size(values: dict[str, PresetValue]) -> PresetValue | None:
    """The head size, or hidden / heads when the preset leaves it blank."""
    head_dim, hidden, heads = values.get("head_dim"), values.get("hidden"), values.get("heads")
    if isinstance(head_dim, int):
        return head_dim
    return hidden // heads if isinstance(hidden, int) and isinstance(heads, int) else None


def _stated(key: str) -> Callable[[dict[str, PresetValue]], PresetValue | None]:
    """The preset's ``key`` where it states one; a blank leaves the input as it is (an
    MLA size in a preset of another attention)."""
    def value(values: dict[str, PresetValue]) -> PresetValue | None:
        found = values.get(key)
        return found if isinstance(found, int) else None
    return value


_KV_CACHE = {"attention": _attention_kind, "kv_heads": _or_heads, "head_dim": _head_size,
             "kv_lora_rank": _stated("kv_lora_rank"),
             "qk_rope_head_dim": _stated("qk_rope_head_dim")}

#: calculator id -> {input name: how it follows from a preset's values}, where the
#: calculator's input is not any one preset key: ``training_compute`` prices attention
#: from the query/key head size, which MLA states as two parts; the post-training
#: calculators read the KV cache's kind from the heads.
DERIVED_VALUES: dict[str, dict[str, Callable[[dict[str, PresetValue]], PresetValue | None]]] = {
    "training_compute": {"head_dim": _query_key_head},
    "rollout": _KV_CACHE,
    "rl_step": _KV_CACHE,
}


def get(preset_id: str) -> Preset:
    """The preset named ``preset_id``; an unknown id is a validation error naming it."""
    try:
        return PRESET_BY_ID[preset_id]
    except (KeyError, TypeError):
        known = ", ".join(PRESET_BY_ID)
        raise ValidationError("preset", _("unknown preset {preset}; known: {known}").format(
            preset=repr(str(preset_id)[:60]), known=known)) from None


def assignments(calc: Calculator, preset: Preset) -> dict[str, PresetValue]:
    """The values ``preset`` gives ``calc``'s inputs, by input name, in the form's order."""
    names = {p.name for p in calc.params}
    keys = INPUT_SOURCES.get(calc.id, {})
    derived = DERIVED_VALUES.get(calc.id, {})
    chosen: dict[str, PresetValue] = {}
    for param in calc.params:
        if param.name in derived:
            value = derived[param.name](preset.values)
            if value is not None:
                chosen[param.name] = value
            continue
        key = keys.get(param.name, param.name)
        if key not in preset.values:
            continue
        sources = DERIVED_FROM.get(param.name, ())
        if (sources and param.optional
                and all(s in names and s in preset.values for s in sources)):
            continue  # an override the calculator derives from what the preset gives
        chosen[param.name] = preset.values[key]
    return chosen


def applied_names(calc: Calculator, preset: Preset) -> tuple[str, ...]:
    """The inputs of ``calc`` that ``preset`` fills, in the calculator's order."""
    return tuple(assignments(calc, preset))


def presets_for(calc: Calculator) -> tuple[Preset, ...]:
    """The presets worth offering in ``calc``: see the module docstring for the rule."""
    return applicable(calc, PRESETS)


def describes_models(calc: Calculator) -> bool:
    """Whether ``calc`` has a transformer's architecture among its inputs (what an
    imported config.json fills)."""
    names = {p.name for p in calc.params}
    return {"layers", "hidden", "heads"} <= names


def applicable(calc: Calculator, candidates: tuple[Preset, ...]) -> tuple[Preset, ...]:
    """Those of ``candidates`` that ``calc`` takes, by the rule of ``presets_for``."""
    needed = 1 if len(calc.params) <= FEW_INPUTS else 2
    moe = any(param.name == MOE_MARKER for param in calc.params)
    counts = any(param.name == COUNTS_MARKER for param in calc.params)
    # A calculator that asks which kind of model it sizes takes both: every model preset
    # sets ``model_kind``, so the inputs of the other kind are left unused.
    either = any(param.name == "model_kind" for param in calc.params)

    def same_kind_of_model(preset: Preset) -> bool:
        if preset.kind == "moe_model":
            return moe or (counts and {"params", COUNTS_MARKER} <= preset.values.keys())
        return preset.kind != "model" or not moe or either

    return tuple(p for p in candidates
                 if same_kind_of_model(p) and len(applied_names(calc, p)) >= needed)


def preset_texts(calc: Calculator, preset: Preset) -> dict[str, str]:
    """The preset as field texts for ``calc`` (only its inputs); each parses back."""
    return {name: calc.param(name).as_text(value)
            for name, value in assignments(calc, preset).items()}
