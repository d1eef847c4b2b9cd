"""model_params against published parameter counts, its invariants, and bad inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators
from calculators.formulas.architecture import megatron_params

LLAMA2_7B = {"layers": 32, "hidden": 4096, "heads": 32, "ffn_hidden": 11008, "vocab": 32000,
             "seq_len": 4096, "gated_mlp": True, "biases": False,
             "position_embedding": "rotary", "tied_embeddings": False}
LLAMA3_8B = {**LLAMA2_7B, "kv_heads": 8, "ffn_hidden": 14336, "vocab": 128256, "seq_len": 8192}
PALM_540B = {"layers": 118, "hidden": 18432, "heads": 48, "kv_heads": 1, "head_dim": 256,
             "ffn_hidden": 4 * 18432, "vocab": 256000, "gated_mlp": True, "biases": False,
             "position_embedding": "rotary", "tied_embeddings": True}


# Narayanan et al. 2021 (SC21), Table 1: (attention heads, hidden size, layers) and the
# parameter count in billions, with V = 51,200 and s = 2,048. The table's first row
# (1.7B: 24 heads, h = 2304, l = 24) is left out: Eq. 2 gives 1.65B for that shape.
SC21_TABLE_1 = [
    (32, 3072, 30, 3.6), (32, 4096, 36, 7.5), (48, 6144, 40, 18.4), (64, 8192, 48, 39.1),
    (80, 10240, 60, 76.1), (96, 12288, 80, 145.6), (128, 16384, 96, 310.1),
    (128, 20480, 105, 529.6), (160, 25600, 128, 1008.0),
]


@pytest.mark.parametrize(("heads", "hidden", "layers", "billions"), SC21_TABLE_1)
def test_megatron_eq2_on_sc21_table_1(heads: int, hidden: int, layers: int,
                                      billions: float) -> None:
    result = calculators.compute("model_params", heads=heads, hidden=hidden, layers=layers,
                                 vocab=51200, seq_len=2048)
    # The table prints one decimal: agree to within its rounding.
    assert result.value("params") == pytest.approx(billions * 1e9, abs=0.05e9)
    assert result.value("megatron_formula_params") == pytest.approx(billions * 1e9, abs=0.05e9)
    # Exactly Eq. 2 once the final LayerNorm (2h), which Eq. 2 omits, is taken off.
    exact = megatron_params(layers, hidden, 51200, 2048)
    assert result.value("params") - 2 * hidden == pytest.approx(exact, rel=1e-12)


def test_gpt3_175b_brown_2020() -> None:
    # Brown et al. 2020, Table 2.1 (96 layers, d_model 12,288, 96 heads, context 2,048)
    # with GPT-2's 50,257-token vocabulary; App. D, Table D.1 uses N = 174.6B.
    result = calculators.compute("model_params", vocab=50257)
    assert result.value("params") == pytest.approx(174.6e9, rel=5e-4)


@pytest.mark.parametrize(
    ("shape", "published"),
    [
        # Touvron et al. 2023, Llama 2, Table 1 (7B): the released checkpoint holds
        # 6,738,415,616 parameters (SwiGLU f = 11,008, RMSNorm, RoPE, untied output).
        (LLAMA2_7B, 6_738_415_616),
        # Dubey et al. 2024, Llama 3, Table 3 (8B: 32 layers, 4,096 wide, 8 KV heads,
        # FFN 14,336, vocabulary 128K): 8,030,261,248 in the released checkpoint.
        (LLAMA3_8B, 8_030_261_248),
    ],
)
def test_llama_counts_exactly(shape: dict[str, object], published: int) -> None:
    assert calculators.compute("model_params", **shape).value("params") == published


def test_palm_540b_chowdhery_2022_table_1() -> None:
    # Chowdhery et al. 2022, Table 1: 118 layers, d_model 18,432, 48 heads of 256,
    # multi-query attention, SwiGLU with 4d, shared embeddings, 256K vocabulary:
    # 540.35B parameters. (PaLM's parallel blocks share one norm: 2M fewer, negligible.)
    result = calculators.compute("model_params", **PALM_540B)
    assert result.value("params") == pytest.approx(540.35e9, rel=2e-4)


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
