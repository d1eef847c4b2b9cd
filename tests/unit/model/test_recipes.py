"""Low-precision recipes (formulas.model.recipes): the bytes each keeps, checked against
Transformer Engine's published memory example and the formats' specifications, and how
model_memory, the kernels and the planners take them."""

from __future__ import annotations

from pathlib import Path

import pytest

import calculators
from calculators.core.spec import ValidationError
from calculators.formulas.failures.checkpoints import checkpoint_bytes_per_param
from calculators.formulas.model import recipes
from calculators.formulas.model.recipes import (
    BF16,
    FP8_BLOCKWISE,
    FP8_TENSORWISE,
    MXFP8,
    NVFP4,
    linear_memory_bytes,
    recipe_for,
)
from calculators.formulas.parallel.memory import state_bytes
from calculators.inputs.machine import machine_for
from published_checks.speed import RUNS

MIB = float(1 << 20)
LLAMA3_70B = {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 28672,
              "vocab": 128256, "seq_len": 8192, "gated_mlp": True, "biases": False,
              "position_embedding": "rotary", "tied_embeddings": False}


def test_transformer_engines_memory_example_fp8_does_not_halve() -> None:
    # TE docs, "Performance considerations", Memory usage: a 1,024 x 1,024 Linear on 1,024
    # tokens holds 2 MB weight + 2 MB saved input + 2 MB output = 6 MB in BF16, and
    # 2 MB weight + 1 MB FP8 weight + 1 MB FP8 input + 2 MB output = 6 MB in FP8.
    assert linear_memory_bytes(1024, 1024, 1024, BF16) == 6 * MIB
    assert linear_memory_bytes(1024, 1024, 1024, FP8_TENSORWISE) == 6 * MIB


@pytest.mark.parametrize(("recipe", "element", "weights"), [
    # OCP MX v1.0: 32 elements share one E8M0 byte; two copies (row- and column-wise).
    (MXFP8, 1 + 1 / 32, 2 * (1 + 1 / 32)),
    # NVFP4 (arXiv 2509.25149): E2M1 half-bytes, an E4M3 byte per 16 (activations) or
    # per 16 x 16 (weights); 16% of the linear layers stay BF16.
    (NVFP4, 0.16 * 2 + 0.84 * (0.5 + 1 / 16), 0.84 * 2 * (0.5 + 1 / 256)),
    # DeepSeek-V3 Sec. 3.3.2: FP32 scales per 1 x 128 tile and 128 x 128 block.
    (FP8_BLOCKWISE, 1 + 4 / 128, 1 + 4 / 128 ** 2),
    (FP8_TENSORWISE, 1.0, 1.0),
    (BF16, 2.0, 0.0),
])
def test_bytes_per_element_follow_the_formats(recipe: recipes.Recipe, element: float,
                                              weights: float) -> None:
    assert recipe.saved_input_bytes == pytest.approx(element)
    assert recipe.weight_cache_bytes == pytest.approx(weights)


def test_delayed_scalings_history_is_a_few_mib() -> None:
    # 1,024 FP32 amaxes (+ scale and inverse) for 3 tensors of each of 4 GEMMs per layer.
    assert FP8_TENSORWISE.scaling_metadata_bytes(126 * 4) == 126 * 4 * 3 * 1026 * 4
    assert FP8_BLOCKWISE.scaling_metadata_bytes(100) == 0.0


def test_recipe_for_reads_the_two_inputs() -> None:
    assert recipe_for("bf16_mixed", "mxfp8") is BF16
    assert recipe_for("fp8_mixed") is FP8_TENSORWISE
    assert recipe_for("fp8_mixed", "blockwise") is FP8_BLOCKWISE
    assert recipe_for("fp4_mixed", "blockwise") is NVFP4
    with pytest.raises(ValueError, match="unknown FP8 recipe"):
        recipe_for("fp8_mixed", "rowwise")


def test_state_bytes_add_the_copies_and_the_checkpoint_leaves_them_out() -> None:
    # 2 (BF16) + 1 (FP8 copy) + 2 + 12 = 17 B per parameter; the checkpoint saves the
    # 16-bit weights and the optimizer, 2 + 12 = 14, as in BF16.
    fp8 = state_bytes("fp8_mixed", "adamw")
    assert (fp8.weights, fp8.total, fp8.wide_weights) == (3.0, 17.0, 2.0)
    assert checkpoint_bytes_per_param(fp8) == checkpoint_bytes_per_param(
        state_bytes("bf16_mixed", "adamw")) == 14.0
    mx = state_bytes("fp8_mixed", "adamw", fp8_recipe="mxfp8")
    assert mx.weights == pytest.approx(2 + 2 * 33 / 32)


def test_muon_keeps_one_momentum_buffer() -> None:
    # Liu et al. 2025, Sec. 2: Muon's only state is a momentum; with the FP32 master
    # copy, 4 + 4 = 8 B where AdamW keeps 12.
    assert state_bytes("bf16_mixed", "muon").optimizer == 8.0
    assert state_bytes("bf16_mixed", "adamw").optimizer == 12.0


def test_block_scaled_recipes_need_blackwell() -> None:
    with pytest.raises(ValueError, match="block-scaled"):
        machine_for("h100_sxm", precision="fp8_mixed", fp8_recipe="mxfp8")
    with pytest.raises(ValueError, match="NVIDIA Blackwell"):
        machine_for("mi355x", precision="fp4_mixed")
    with pytest.raises(ValidationError, match="block-scaled"):
        calculators.compute("model_memory", precision="fp8_mixed", fp8_recipe="mxfp8",
                            gpu="h100_sxm")
    mx = machine_for("b200", precision="fp8_mixed", fp8_recipe="mxfp8")
    fp4 = machine_for("b200", precision="fp4_mixed")
    assert fp4.layer_gemm.peak_flops == 2 * mx.layer_gemm.peak_flops  # 9 against 4.5 PF
    assert (fp4.layer_bf16_share, mx.layer_bf16_share) == (0.16, 0.0)


def test_fp8_on_llama3_70b_trades_weight_bytes_for_activation_bytes() -> None:
    # The same layout in BF16 and in FP8 (TE): weights grow by the FP8 copy, 1 B per
    # parameter (half again the BF16 weights); the layers' activations shrink where the
    # GEMM inputs are saved in FP8; the note says which bytes changed.
    layout = {**LLAMA3_70B, "gpu": "h100_sxm", "tp": 8, "pp": 4, "dp": 8, "zero_stage": 1,
              "recompute": "none", "sequence_parallel": True, "attention": "fused"}
    bf16 = calculators.compute("model_memory", **layout)
    fp8 = calculators.compute("model_memory", **layout, precision="fp8_mixed")
    assert fp8.value("weights_bytes") == pytest.approx(1.5 * bf16.value("weights_bytes"))
    assert fp8.value("activations_bytes") < 0.9 * bf16.value("activations_bytes")
    assert any("quantized copies" in note for note in fp8.computed.notes)


def test_planner_mfu_names_its_basis() -> None:
    result = calculators.compute("parallel_plan", precision="fp8_mixed", gpu="h100_sxm")
    assert "BF16 peak, 989.4 TFLOP/s" in str(result.value("mfu_basis"))
    (note,) = [n for n in result.computed.notes
               if n.startswith("This MFU is against the BF16 peak")]
    mfu = result.value("mfu")
    assert isinstance(mfu, float)
    assert f"{mfu / 2:.1%}" in note  # H100: the FP8 peak is twice BF16's


DENSE = Path(__file__).resolve().parents[3] / "docs" / "dense.md"
L70_PLAN = {**LLAMA3_70B, "gpu": "h100_sxm", "num_gpus": 512, "global_batch": 512, "tp": 8,
            "pp": 4, "cp": 1}


def test_the_chapters_fp8_figures_are_the_calculators() -> None:
    # docs/dense.md, "Low-precision recipes": what FP8 saves on Llama 3 70B (memory and
    # step time) and what it makes fit on DeepSeek-V3's published layout.
    text = " ".join(DENSE.read_text(encoding="utf-8").split())
    layout = {**LLAMA3_70B, "gpu": "h100_sxm", "tp": 8, "pp": 4, "dp": 16, "zero_stage": 1,
              "sequence_parallel": True}
    memory = {p: calculators.compute("model_memory", **layout, precision=p)
              for p in ("bf16_mixed", "fp8_mixed")}
    for name in ("weights_bytes", "activations_bytes", "total_bytes"):
        low, high = (memory[p].value(name) for p in ("bf16_mixed", "fp8_mixed"))
        assert isinstance(low, float)
        assert isinstance(high, float)
        assert f"{low / 1e9:.1f} to {high / 1e9:.1f} GB" in text or (
            f"{low / 1e9:.1f} GB becomes {high / 1e9:.1f} GB" in text)
    steps = [calculators.compute("parallel_plan", **L70_PLAN, precision=p).value("step_time")
             for p in ("bf16_mixed", "fp8_mixed")]
    assert isinstance(steps[0], float)
    assert isinstance(steps[1], float)
    assert f"FP8 saves {1 - steps[1] / steps[0]:.1%} of the step" in text
    run = next(r for r in RUNS if r.id.startswith("deepseek"))
    fp8 = calculators.compute(run.calculator, **run.inputs)
    bf16_inputs = {**run.inputs, "precision": "bf16_mixed", "dispatch_bytes": 2,
                   "offload": "none"}
    bf16_inputs.pop("fp8_recipe")
    bf16 = calculators.compute(run.calculator, **bf16_inputs)
    assert bf16.value("step_time") is None  # nothing fits
    fp8_bytes = fp8.value("memory_per_gpu_bytes")
    assert isinstance(fp8_bytes, float)
    assert f"in FP8 the fullest GPU needs {fp8_bytes / 1e9:.1f} GB" in text
    (warning,) = bf16.computed.warnings
    needed = warning.split("the smallest needs ")[1].split(" GB")[0]
    assert f"the smallest needing {needed} GB" in text
    # BF16 fits that layout only with full recomputation; FP8 with it isolates the GEMMs.
    free = {key: value for key, value in bf16_inputs.items() if key != "recompute"}
    recomputed = calculators.compute(run.calculator, **free)
    assert recomputed.value("recompute") == "full"
    fp8_full = calculators.compute(run.calculator, **{**run.inputs, "recompute": "full"})
    wide, narrow, gemms = (r.value("step_time") for r in (recomputed, fp8, fp8_full))
    assert isinstance(wide, float)
    assert isinstance(narrow, float)
    assert isinstance(gemms, float)
    assert (f"its step is then {wide:.1f} s against FP8's {narrow:.1f} s: FP8 saves "
            f"{1 - narrow / wide:.1%} of the step on this layout. The faster GEMMs alone save "
            f"{1 - gemms / wide:.1%} (FP8 with full recomputation takes {gemms:.1f} s)") in text


def test_weights_kept_in_fp8_only() -> None:
    # TE's third scenario, weights "stored directly in low precision" with FP32 master
    # weights in the optimizer (Megatron-Core --fp8-param-gather): 1 + 2 + 12 = 15 B with
    # FP8; with MXFP8 one copy is the weights, the other orientation remade each step.
    fp8 = state_bytes("fp8_mixed", "adamw", narrow_weights=True)
    assert (fp8.weights, fp8.wide_weights, fp8.total) == (1.0, 1.0, 15.0)
    mx = state_bytes("fp8_mixed", "adamw", fp8_recipe="mxfp8", narrow_weights=True)
    assert (mx.weights, mx.wide_weights) == (pytest.approx(2 * 33 / 32), pytest.approx(33 / 32))
    nv = state_bytes("fp4_mixed", "adamw", narrow_weights=True)
    assert nv.wide_weights == pytest.approx(0.84 * (0.5 + 1 / 256) + 0.16 * 2)
    assert state_bytes("bf16_mixed", "adamw", narrow_weights=True).weights == 2.0
    # model_memory's note says the 16-bit weights are gone, not that they stay.
    note = next(n for n in calculators.compute(
        "model_memory", precision="fp8_mixed", gpu="h100_sxm", fp8_weights=True
    ).computed.notes if n.startswith("FP8, per-tensor"))
    assert "kept in it only, 1 B per parameter" in note and "16-bit weights stay" not in note
    # The planner's ZeRO-3 all-gather moves the FP8 weights: half the 16-bit bytes.
    layout = {**L70_PLAN, "zero_stage": 3, "dp": 16, "micro_batch": 1, "recompute": "full",
              "precision": "fp8_mixed"}
    wide = calculators.compute("parallel_plan", **layout)
    narrow = calculators.compute("parallel_plan", **layout, fp8_weights=True)
    wide_w, narrow_w = wide.value("weights_bytes"), narrow.value("weights_bytes")
    assert isinstance(wide_w, float)
    assert isinstance(narrow_w, float)
    assert narrow_w == pytest.approx(wide_w / 3)
    wide_dp, narrow_dp = wide.value("dp_comm_time"), narrow.value("dp_comm_time")
    assert isinstance(wide_dp, float)
    assert isinstance(narrow_dp, float)
    assert narrow_dp < wide_dp
