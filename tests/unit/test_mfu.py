"""mfu against published utilisation figures, its invariants, and bad inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import calculators
from calculators.formulas.architecture import Architecture
from calculators.formulas.flops import megatron_model_flops_per_token, recompute_flops_per_token

PALM_540B = {"layers": 118, "hidden": 18432, "heads": 48, "kv_heads": 1, "head_dim": 256,
             "ffn_hidden": 4 * 18432, "vocab": 256000, "gated_mlp": True, "biases": False,
             "position_embedding": "rotary", "tied_embeddings": True}


@pytest.mark.parametrize(("flop_count", "expected"), [("6N+attention", 0.462),
                                                      ("6N", 0.457)])
def test_palm_540b_mfu_chowdhery_2022_table_3_app_b(flop_count: str, expected: float) -> None:
    # PaLM, Table 3 and App. B: 238.3K tokens/s on 6,144 TPU v4 chips (275 TFLOP/s
    # peak), N = 540B, model FLOPs per token 6N + 12 L H Q T (L = 118, H = 48, Q = 256,
    # T = 2,048): 46.2% MFU. Without the attention term, 45.7%.
    result = calculators.compute(
        "mfu", **PALM_540B, params=540e9, tokens_per_second=238.3e3, num_gpus=6144,
        peak_flops="275 TFLOP/s", flop_count=flop_count, recompute="none")
    assert result.value("mfu") == pytest.approx(expected, abs=0.0005)


# Korthikanti et al. 2022, Table 3 shapes (heads, hidden, layers) with s = 2,048 and
# V = 51,200, and their MFU / HFU with sequence parallelism + selective recomputation
# on A100s (the same table as the Megatron-LM README): the ratio HFU / MFU is fixed by
# the two FLOP formulas, 1 + s/(3h) + V/(12lh) over 1 + s/(6h) + V/(12lh).
KORTHIKANTI = [
    ((64, 6144, 48), 0.415, 0.437), ((96, 12288, 96), 0.514, 0.528),
    ((128, 20480, 105), 0.560, 0.570), ((160, 25600, 128), 0.563, 0.570),
]


@pytest.mark.parametrize(("shape", "mfu", "hfu"), KORTHIKANTI)
def test_hfu_from_mfu_korthikanti_2022(shape: tuple[int, int, int], mfu: float,
                                       hfu: float) -> None:
    heads, hidden, layers = shape
    arch = {"heads": heads, "hidden": hidden, "layers": layers}
    # Pick the throughput that gives the published MFU on 8 A100s, then read HFU.
    probe = calculators.compute("mfu", **arch, tokens_per_second=1.0, num_gpus=8,
                                recompute="selective")
    rate = mfu / probe.value("mfu")
    result = calculators.compute("mfu", **arch, tokens_per_second=rate, num_gpus=8,
                                 recompute="selective")
    assert result.value("mfu") == pytest.approx(mfu)
    # Both published figures are rounded to 0.1 point: agree within that.
    assert result.value("hfu") == pytest.approx(hfu, abs=0.001)


def test_flops_per_token_match_the_papers_closed_forms() -> None:
    # Korthikanti Sec. 6: model FLOPs 72 B s l h^2 (1 + s/(6h) + V/(12lh)); Narayanan et
    # al. 2021 Eq. 3 (full recomputation): 96 B s l h^2 (1 + s/(6h) + V/(16lh)).
    s, layers, h, v = 2048, 96, 12288, 51200
    arch = Architecture(layers=layers, hidden=h, heads=96, kv_heads=96, head_dim=128,
                        ffn_hidden=4 * h, vocab=v, seq_len=s)
    model = megatron_model_flops_per_token(arch)
    assert model == pytest.approx(72 * layers * h**2 * (1 + s / (6 * h) + v / (12 * layers * h)))
    full = model + recompute_flops_per_token(arch, "full")
    assert full == pytest.approx(96 * layers * h**2 * (1 + s / (6 * h) + v / (16 * layers * h)))
    selective = model + recompute_flops_per_token(arch, "selective")
    assert selective == pytest.approx(
        72 * layers * h**2 * (1 + s / (3 * h) + v / (12 * layers * h)))


def test_sc21_gpt3_140_tflops_is_the_default_hfu() -> None:
    # Narayanan et al. 2021, Sec. 5.1: 140 TFLOP/s per A100 counted with Eq. 3 (full
    # recomputation). The default step time (31.5 s at batch 1,536 on 1,024 GPUs) is
    # that rate: HFU = 140 / 312 (within the rounding of 31.5 s).
    result = calculators.compute("mfu")
    assert result.value("hfu") * 312e12 == pytest.approx(140e12, rel=2e-3)
    assert result.value("mfu") < result.value("hfu")


@given(step=st.floats(0.01, 1e4), gpus=st.integers(1, 100_000),
       recompute=st.sampled_from(["none", "selective", "full"]),
       count=st.sampled_from(["6N", "6N+attention", "megatron"]))
def test_hfu_at_least_mfu_and_inverse_in_time(step: float, gpus: int, recompute: str,
                                              count: str) -> None:
    one = calculators.compute("mfu", step_time=step, num_gpus=gpus, recompute=recompute,
                              flop_count=count)
    two = calculators.compute("mfu", step_time=2 * step, num_gpus=gpus, recompute=recompute,
                              flop_count=count)
    assert one.value("hfu") >= one.value("mfu")
    assert two.value("mfu") == pytest.approx(one.value("mfu") / 2)
    assert one.value("tokens_per_second") * step == pytest.approx(1536 * 2048)


def test_throughput_wins_over_step_time() -> None:
    result = calculators.compute("mfu", step_time=10, tokens_per_second=1e5)
    assert result.value("tokens_per_second") == 1e5
    assert result.computed.notes


@pytest.mark.parametrize(
    ("inputs", "name"),
    [
        ({"step_time": ""}, "step_time"), ({"step_time": 0}, "step_time"),
        ({"num_gpus": 0}, "num_gpus"), ({"flop_count": "7n"}, "flop_count"),
        ({"peak_flops": -1}, "peak_flops"), ({"tokens_per_second": "fast"}, "tokens_per_second"),
        ({"global_batch": 0}, "global_batch"), ({"heads": 7}, "heads"),
    ],
)
def test_bad_inputs_name_the_input(inputs: dict[str, object], name: str) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("mfu", **inputs)
    assert caught.value.input_name == name
