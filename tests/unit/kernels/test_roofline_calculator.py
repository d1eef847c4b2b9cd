"""The roofline calculator against the scaling-book's worked examples (Part 1, "All
About Rooflines") and Williams et al. 2009's model, and its TP, precision and embedding
stories."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import calculators
import published_checks

if TYPE_CHECKING:
    from calculators.core.calculator import Result


def _value(result: Result, name: str) -> float:
    value = result.value(name)
    assert isinstance(value, float)
    return value


def test_tpu_v5e_matmul_bound_at_240_tokens_scaling_book() -> None:
    # Scaling-book Part 1: on TPU v5e (1.97e14 FLOP/s, 8.2e11 B/s) a bf16 (B x D) @
    # (D x F) matmul is compute-bound when B > 240. D = F = 16,384: intensity
    # B / (1 + 2B/D) = 234 at B = 240 (just under), 506 at B = 512.
    common = {"operation": "gemm", "k": 16384, "n": 16384, "peak_flops": 1.97e14,
              "memory_bandwidth": 8.2e11}
    below = calculators.compute("roofline", m=240, **common)
    above = calculators.compute("roofline", m=512, **common)
    assert _value(below, "ridge") == pytest.approx(240, rel=0.005)
    assert _value(below, "intensity") == pytest.approx(240 / (1 + 480 / 16384), rel=1e-9)
    assert below.value("bound") == "memory"
    assert above.value("bound") == "compute"
    assert _value(above, "fraction_of_peak") == 1.0


def test_williams_attainable_is_min_of_two_roofs() -> None:
    # Williams et al. 2009: attainable = min(peak, intensity x bandwidth).
    result = calculators.compute("roofline", operation="gemm", m=64, k=8192, n=8192,
                                 gpu="h100_sxm")
    intensity = 64 * 8192 * 8192 / (64 * 8192 + 8192 * 8192 + 64 * 8192)
    assert _value(result, "intensity") == pytest.approx(intensity)
    assert _value(result, "attainable_flops") == pytest.approx(
        min(989.4e12, intensity * 3.35e12))


def test_fp8_doubles_intensity_and_ridge_but_bf16_outputs_cost() -> None:
    # FP8 operands halve the bytes read; outputs stay BF16 (2 B), so a GEMM's intensity
    # less than doubles while the ridge doubles (1,978.9 / 3.35 = 591).
    bf16 = calculators.compute("roofline", operation="gemm", m=4096, k=8192, n=8192)
    fp8 = calculators.compute("roofline", operation="gemm", m=4096, k=8192, n=8192,
                              peak_precision="fp8")
    # 1,978.9 is the FP8 datasheet figure; 2 x 989.4 = 1,978.8 (rounding): 1e-4.
    assert _value(fp8, "ridge") == pytest.approx(2 * _value(bf16, "ridge"), rel=1e-4)
    assert _value(bf16, "intensity") < _value(fp8, "intensity") < 2 * _value(bf16, "intensity")
    flops, bytes_fp8 = 2 * 4096 * 8192 * 8192, 4096 * 8192 + 8192 * 8192 + 2 * 4096 * 8192
    assert _value(fp8, "intensity") == pytest.approx(flops / bytes_fp8)


def test_tensor_parallelism_shrinks_gemms_below_the_ridge_on_nvl72() -> None:
    # GPT-3's layer at 2,048 tokens per micro-batch: every GEMM compute-bound at TP 8;
    # at TP 48 (possible in a 72-GPU NVLink domain) the attention output GEMM has
    # k = 12,288 / 48 = 256 and falls under GB200's ridge of 2.5e15 / 8e12 = 312.
    tp8 = calculators.compute("roofline", gpu="gb200", tp=8)
    tp48 = calculators.compute("roofline", gpu="gb200", tp=48)
    assert tp8.value("bound") == "compute"
    assert tp48.value("bound") == "mixed"
    assert _value(tp48, "fraction_of_peak") < _value(tp8, "fraction_of_peak") == 1.0
    table = tp48.computed.table
    assert table is not None
    attention_out = next(row for row in table.rows if row[0] == "attention out")
    assert attention_out[1] == "2,048 x 256 x 12,288"
    assert attention_out[3] == "memory"


def test_few_tokens_per_micro_batch_is_memory_bound() -> None:
    # Intensity ~ m when m << k, n (scaling-book): 256 tokens < H100's 295.
    result = calculators.compute("roofline", micro_batch_tokens=256)
    assert result.value("bound") == "memory"
    assert 0.7 < _value(result, "fraction_of_peak") < 0.9


def test_embedding_lookups_are_bandwidth_bound() -> None:
    # One 128-wide fp32 row read and written: 1,024 B; 3.35e12 / 1,024 = 3.27e9 per s
    # on H100 (published_checks.sparse: h100-embedding-lookups), and twice that (bf16
    # rows) per byte halved.
    result = calculators.compute("roofline")
    assert _value(result, "embedding_bytes_per_lookup") == 2 * 128 * 4
    assert _value(result, "embedding_lookups_per_s") == pytest.approx(
        _value(calculators.compute(
            "roofline", **published_checks.get("h100-embedding-lookups").inputs),
            "embedding_lookups_per_s"))
    half = calculators.compute("roofline", embedding_dtype="bf16")
    assert _value(half, "embedding_lookups_per_s") == pytest.approx(
        2 * _value(result, "embedding_lookups_per_s"))


def test_gqa_with_more_ranks_than_kv_heads() -> None:
    # Llama 3 70B (64 heads, 8 KV heads) at TP 16: each rank keeps one KV head copy.
    result = calculators.compute("roofline", hidden=8192, heads=64, kv_heads=8,
                                 ffn_hidden=28672, gated_mlp=True, tp=16,
                                 micro_batch_tokens=8192)
    table = result.computed.table
    assert table is not None
    assert table.rows[0][1] == f"8,192 x 8,192 x {(64 // 16 + 2) * 128:,}"


def test_chart_has_ridge_and_every_gemm() -> None:
    chart = calculators.compute("roofline").computed.chart
    assert chart is not None
    for label in ("ridge 295", "qkv", "attention out", "mlp up", "mlp down"):
        assert label in chart


@pytest.mark.parametrize(
    ("raw", "name"),
    [({"tp": 5}, "tp"), ({"heads": 100}, "heads"), ({"kv_heads": 7}, "kv_heads"),
     ({"micro_batch_tokens": 0}, "micro_batch_tokens"),
     ({"peak_precision": "fp2"}, "peak_precision")],
)
def test_bad_inputs_name_the_input(raw: dict[str, object], name: str) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("roofline", **raw)
    assert caught.value.input_name == name
