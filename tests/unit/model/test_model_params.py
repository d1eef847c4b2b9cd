"""model_params against published parameter counts, its invariants, and bad inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators
import published_checks
from calculators.formulas.model.architecture import megatron_params

# GPT-3, PaLM, Llama 2 and Llama 3 counts and Narayanan et al. 2021 (SC21), Table 1 are
# published checks (published_checks.dense), computed by model_params.
SC21_ROWS = [c for c in published_checks.all_checks() if c.id.startswith("sc21-table-1-")]


@pytest.mark.parametrize("check", SC21_ROWS, ids=[c.id for c in SC21_ROWS])
def test_megatron_eq2_on_sc21_table_1(check: published_checks.Check) -> None:
    hidden, layers = int(check.inputs["hidden"]), int(check.inputs["layers"])
    result = calculators.compute("model_params", **check.inputs)
    # Eq. 2 (what the table prints, to one decimal) agrees to within its rounding too.
    assert result.value("megatron_formula_params") == pytest.approx(check.published,
                                                                    abs=0.05e9)
    # Exactly Eq. 2 once the final LayerNorm (2h), which Eq. 2 omits, is taken off.
    exact = megatron_params(layers, hidden, 51200, 2048)
    assert result.value("params") - 2 * hidden == pytest.approx(exact, rel=1e-12)


@given(
    layers=st.integers(1, 200), heads=st.sampled_from([1, 2, 4, 8, 16, 32]),
    width=st.integers(1, 256), vocab=st.integers(1, 300_000),
    gated=st.booleans(), tied=st.booleans(), biases=st.booleans(),
)
def test_parts_add_up_and_grow_with_layers(*, layers: int, heads: int, width: int, vocab: int,
                                           gated: bool, tied: bool, biases: bool) -> None:
    shape = {"heads": heads, "hidden": heads * width, "vocab": vocab, "gated_mlp": gated,
             "tied_embeddings": tied, "biases": biases}
    one = calculators.compute("model_params", layers=layers, **shape)
    more = calculators.compute("model_params", layers=layers + 1, **shape)
    assert one.value("embedding_params") + one.value("non_embedding_params") == one.value(
        "params")
    assert more.value("params") - one.value("params") == one.value("params_per_layer")
    untied = calculators.compute("model_params", layers=layers, **{**shape,
                                                                  "tied_embeddings": False})
    assert untied.value("params") >= one.value("params")


@pytest.mark.parametrize(
    ("inputs", "name"),
    [
        ({"hidden": 100, "heads": 7}, "heads"),
        ({"kv_heads": 7}, "kv_heads"),
        ({"kv_heads": 192}, "kv_heads"),
        ({"layers": 0}, "layers"),
        ({"vocab": -1}, "vocab"),
        ({"hidden": 2.5}, "hidden"),
        ({"position_embedding": "alibi"}, "position_embedding"),
        ({"gated_mlp": "perhaps"}, "gated_mlp"),
        ({"seq_len": "lots"}, "seq_len"),
    ],
)
def test_bad_inputs_name_the_input(inputs: dict[str, object], name: str) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("model_params", **inputs)
    assert caught.value.input_name == name
