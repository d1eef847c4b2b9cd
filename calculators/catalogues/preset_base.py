"""What a preset is (``Preset``), shared by the modules that hold presets
(``preset_entries``, ``released_models``), and the input values that a model of one
layer kind leaves at their plain settings."""

from __future__ import annotations

from dataclasses import dataclass, field

PresetValue = float | int | str | bool
KINDS: tuple[str, ...] = ("model", "cluster", "sparse_model", "moe_model",
                          "generative_model")


@dataclass(frozen=True)
class Preset:
    """One named configuration: values keyed by input names, and where they come from."""

    id: str
    label: str
    kind: str  # one of KINDS
    values: dict[str, PresetValue] = field(hash=False)
    source: str

    def __post_init__(self) -> None:
        if not self.id.isidentifier():
            raise TypeError(f"preset id {self.id!r} is not an identifier")
        if self.kind not in KINDS:
            raise TypeError(f"preset {self.id!r}: kind {self.kind!r} is not one of {KINDS}")
        if not self.values or not self.source:
            raise TypeError(f"preset {self.id!r} needs values and a source")



#: The stack inputs a model of one layer kind leaves blank (calculators.inputs.layer_mix).
PLAIN_STACK: dict[str, PresetValue] = {
    "layer_pattern": "", "attention_window": "", "linear_key_heads": "",
    "linear_value_heads": "", "linear_head_dim": ""}
#: The dense inputs beyond GPT's and Llama's shape, at their plain values; a dense model
#: has one value head size (= the query/key one) and no separate total count.
PLAIN_DENSE: dict[str, PresetValue] = {
    "qkv_bias": False, "qk_norm": False, "norms_per_layer": 2, "layernorm": False,
    "v_head_dim": "", "total_params": "",
    **PLAIN_STACK}
