"""model_memory as training runs today: fused attention by default, dropout and FP32
gradients as choices, the logits and working buffers counted, GPU capacity as the
device holds it, context parallelism and the pipeline schedule's micro-batches."""

from __future__ import annotations

import pytest

import calculators
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.parallel.memory import (
    Strategy,
    activation_bytes_per_layer,
    device_capacity_bytes,
    memory_per_gpu,
    state_bytes,
)

GB = 1e9
LLAMA3_405B = {"layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8,
               "ffn_hidden": 53248, "vocab": 128256, "gated_mlp": True, "biases": False,
               "position_embedding": "rotary", "tied_embeddings": False, "gpu": "h100_sxm"}
GPT3 = Architecture(layers=96, hidden=12288, heads=96, kv_heads=96, head_dim=128,
                    ffn_hidden=4 * 12288, vocab=51200, seq_len=2048)
ADAM = state_bytes("bf16_mixed", "adamw")


def test_fp32_main_gradients_are_megatrons_18_bytes() -> None:
    # Megatron-Core distributed-optimizer docs: "float16 param, fp32 grads: 18" bytes
    # per parameter without the distributed optimizer, 6 + 12/d with it; the ZeRO
    # paper's 16 keeps 16-bit gradients (Rajbhandari et al. 2020, Sec. 3.1). Both counts
    # are published checks (published_checks.dense); FP32 gradients add 2 bytes.
    assert state_bytes("bf16_mixed", "adamw", "fp32").total == (
        state_bytes("bf16_mixed", "adamw").total + 2)
    d = 64
    result = calculators.compute("model_memory", params=7.5e9, dp=d, zero_stage=1,
                                 gradients="fp32")
    states = sum(float(result.value(n)) for n in (  # type: ignore[arg-type]
        "weights_bytes", "gradients_bytes", "optimizer_bytes"))
    assert states == pytest.approx(7.5e9 * (6 + 12 / d), rel=1e-12)


def test_an_80gb_gpu_holds_80_gib_and_a_reserve_stays_free() -> None:
    # An "80GB" A100 or H100 has 80 GiB of HBM (nvidia-smi: 81,559 MiB usable on an
    # H100 SXM, 85.5e9 B); 5% of it is kept for the CUDA context, NCCL and fragmentation.
    assert device_capacity_bytes(80e9) == 80 * 2**30
    result = calculators.compute("model_memory", gpu="h100_sxm")
    assert result.value("gpu_memory_bytes") == 80 * 2**30
    assert result.value("usable_bytes") == pytest.approx(0.95 * 80 * 2**30, rel=1e-12)
    roomy = calculators.compute("model_memory", gpu="h100_sxm", memory_reserve=0)
    assert roomy.value("usable_bytes") == 80 * 2**30


def test_fused_attention_is_the_default_and_materialised_the_2021_choice() -> None:
    # Korthikanti et al. 2022, Table 2 (materialised scores, dropout): sbh(34 + 5as/h)
    # per layer at t = 1. The default stores no scores and no masks: 32 sbh + the FP32
    # logsumexp (Dao 2023, Sec. 3.1.1).
    s, h, a = 2048, 12288, 96
    sbh = s * h
    old = calculators.compute("model_memory", attention="materialised", dropout=True)
    new = calculators.compute("model_memory")
    assert old.value("activations_bytes") == pytest.approx(96 * sbh * (34 + 5 * a * s / h),
                                                           rel=1e-12)
    assert new.value("activations_bytes") == pytest.approx(96 * (32 * sbh + 4 * a * s),
                                                           rel=1e-12)


def test_dropout_is_an_input() -> None:
    # Korthikanti Sec. 4.1: dropout adds two sbh masks per layer and, with materialised
    # attention, the mask as^2b and the dropout output 2as^2b.
    s, h, a = 2048, 12288, 96
    off = activation_bytes_per_layer(GPT3, 1, 1, False, "none", dropout=False)
    on = activation_bytes_per_layer(GPT3, 1, 1, False, "none", dropout=True)
    assert on - off == pytest.approx(2 * s * h + 3 * a * s * s, rel=1e-12)
    fused_off = activation_bytes_per_layer(GPT3, 1, 1, False, "none", attention="fused",
                                           dropout=False)
    fused_on = activation_bytes_per_layer(GPT3, 1, 1, False, "none", attention="fused",
                                          dropout=True)
    assert fused_on - fused_off == pytest.approx(2 * s * h, rel=1e-12)


def test_full_recomputation_holds_one_layer_while_it_is_rebuilt() -> None:
    # The layer being recomputed needs its whole activation set once (left out of the
    # paper's Table 2 and of peer tools): the working buffer equals one layer's
    # no-recompute activations.
    result = calculators.compute("model_memory", tp=8, pp=16, sequence_parallel=True,
                                 recompute="full")
    one_layer = activation_bytes_per_layer(GPT3, 1, 8, True, "none", attention="fused",
                                           dropout=False)
    assert result.value("working_bytes") == pytest.approx(one_layer, rel=1e-12)
    assert result.value("activations_bytes") == pytest.approx(96 * 2 * 2048 * 12288 / 8,
                                                              rel=1e-12)


def test_llama3_405b_at_128k_fits_once_context_parallel() -> None:
    # The case: 128K tokens, TP 8, PP 16, SP, selective recomputation was 1.17 TB
    # per GPU with materialised scores. Context parallelism of 16 divides every
    # activation by 16 (Dubey et al. 2024, Table 4: TP 8, CP 16, PP 16 at 131,072).
    base = {**LLAMA3_405B, "seq_len": 131072, "tp": 8, "pp": 16, "dp": 8,
            "sequence_parallel": True, "recompute": "selective", "zero_stage": 1}
    alone = calculators.compute("model_memory", **base)
    split = calculators.compute("model_memory", **base, cp=16)
    assert float(alone.value("total_bytes")) > 1e12  # type: ignore[arg-type]
    assert split.value("activations_bytes") == pytest.approx(
        float(alone.value("activations_bytes")) / 16, rel=1e-12)  # type: ignore[arg-type]
    assert split.value("fits") is True


def test_interleaving_keeps_more_micro_batches_on_the_first_stages() -> None:
    # Korthikanti Sec. 4.2.3 / Megatron's estimate: interleaving with v chunks holds
    # p (1 + (p-1)/(p v)) micro-batches' worth of a stage's layers on rank 0.
    flat = memory_per_gpu(GPT3, Strategy(tp=8, pp=8, sequence_parallel=True), ADAM)
    inter = memory_per_gpu(GPT3, Strategy(tp=8, pp=8, sequence_parallel=True,
                                          schedule="interleaved", virtual_stages=4), ADAM)
    per_layer = activation_bytes_per_layer(GPT3, 1, 8, True, "none", attention="fused",
                                           dropout=False)
    assert flat.activations == pytest.approx(96 * per_layer, rel=1e-12)
    assert inter.activations == pytest.approx(96 * (1 + 7 / 32) * per_layer, rel=1e-12)
    zb2 = memory_per_gpu(GPT3, Strategy(tp=8, pp=8, sequence_parallel=True, schedule="zb_h2"),
                         ADAM)
    assert zb2.activations == pytest.approx(15 * 12 * per_layer, rel=1e-12)  # 2p - 1


@pytest.mark.parametrize(("inputs", "name"), [
    ({"cp": 3}, "cp"), ({"cp": 16, "cp_method": "ulysses", "heads": 8, "hidden": 1024},
                        "cp"),
    ({"pp": 5, "layers": 96}, "pp"), ({"memory_reserve": 0.9}, "memory_reserve"),
    ({"gradients": "fp64"}, "gradients"), ({"schedule": "gpipe"}, "schedule"),
])
def test_bad_inputs_name_the_input(inputs: dict[str, object], name: str) -> None:
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("model_memory", **inputs)
    assert caught.value.input_name == name
