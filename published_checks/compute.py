"""Training compute and GPU-hours (docs/compute.md): published totals, times and energy."""

from __future__ import annotations

import calculators
from calculators.formulas.model.flops import training_flops
from published_checks import Check, Value, preset_inputs

#: LLaMA 65B (Touvron et al. 2023, Table 15): 1,022,362 A100-80GB GPU-hours. The MFU
#: that turns 6ND into exactly those hours, so that the energy check isolates Meta's
#: energy method (GPU-hours x 400 W x PUE 1.1) from the MFU.
_LLAMA_65B_MFU = training_flops(65.2e9, 1.4e12) / (1_022_362 * 3600 * 312e12)

_V3_URL = "https://arxiv.org/abs/2412.19437"
#: DeepSeek-V3 (report, Table 1): 2,664K H800 GPU-hours of pre-training on 14.8T tokens,
#: 37B activated of 671B; the H800 has the H100 SXM's tensor cores. Counted as 6ND
#: (flop_count 6N): the basis on which it compares with Llama 3.1 405B below.
_V3_RUN: dict[str, Value] = {"params": "37B", "total_params": "671B", "tokens": "14.8T",
                             "gpu": "h100_sxm", "num_gpus": 2048,
                             "reported_gpu_hours": 2_664_000, "goodput": 1,
                             "flop_count": "6N"}
#: DeepSeek-V3's attention (config.json: 61 layers, 128 heads, MLA with d_qk = 128 + 64
#: rotary and d_v = 128) at its 4K pre-training sequences (report, Sec. 4.2).
_V3_MLA: dict[str, Value] = {"layers": 61, "hidden": 7168, "heads": 128, "head_dim": 192,
                             "v_head_dim": 128, "seq_len": 4096}
#: Llama 3.1 405B: 15.6T tokens (Dubey et al. 2024, Sec. 3.2.1) in the model card's 30.84M
#: H100-80GB GPU-hours; 6ND with every one of the 405B parameters, as Meta counts C.
_LLAMA31_RUN: dict[str, Value] = {"params": "405B", "tokens": "15.6T", "gpu": "h100_sxm",
                                  "num_gpus": 16384, "reported_gpu_hours": 30.84e6,
                                  "goodput": 1, "flop_count": "6N"}
_LLAMA31_CARD = "https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/MODEL_CARD.md"
#: GPT-3's shape for PaLM's attention term, 12 L H T per token (App. B).
_GPT3_ATTENTION: dict[str, Value] = {"params": 175e9, "tokens": 300e9, "seq_len": 2048,
                                     "layers": 96, "hidden": 12288,
                                     "flop_count": "6N+attention"}


def _attention_share() -> float:
    """PaLM's attention term against 6N: C counts both, so the share is of C less it."""
    result = calculators.compute("training_compute", **_GPT3_ATTENTION)
    attention, total = result.value("attention_flops"), result.value("total_flops")
    assert isinstance(attention, float)
    assert isinstance(total, float)
    return attention / (total - attention)


CHECKS: tuple[Check, ...] = (
    Check(
        id="gpt3-training-compute",
        chapter="compute.md",
        claim="GPT-3 175B: total training compute, C = 6ND (counted as the paper counts: "
              "6N, attention left out)",
        source="Brown et al. 2020, Language Models are Few-Shot Learners, App. D, "
               "Table D.1 (N = 174.6e9 non-embedding parameters, D = 300e9 tokens)",
        url="https://arxiv.org/abs/2005.14165",
        calculator="training_compute",
        inputs=preset_inputs("training_compute", "gpt3_175b", flop_count="6N"),
        output="total_flops",
        published=3.14e23,
        rel_tol=0.005,
        why_tolerance="the table gives three significant figures (3.14e23)",
    ),
    Check(
        id="megatron-gpt3-days",
        chapter="compute.md",
        claim="GPT-3 175B on 1,024 A100s at 140 TFLOP/s each, 8TP/(nX): training days",
        source="Narayanan et al. 2021, Efficient Large-Scale Language Model Training on "
               "GPU Clusters Using Megatron-LM (SC21), Sec. 5.1",
        url="https://arxiv.org/abs/2104.04473",
        calculator="training_compute",
        inputs={"params": "175B", "tokens": "300B", "flops_per_param_token": 8,
                "gpu": "a100_80gb_sxm", "peak_flops": "140 TFLOP/s", "utilization": 1.0,
                "num_gpus": 1024},
        output="wall_clock_days",
        published=34.0,
        rel_tol=0.01,
        why_tolerance="the paper says \"about 34 days\" (whole days)",
    ),
    Check(
        id="chinchilla-70b-tokens",
        chapter="compute.md",
        claim="Chinchilla 70B: compute-optimal tokens at 20 per parameter",
        source="Hoffmann et al. 2022, Training Compute-Optimal Large Language Models, "
               "Sec. 4.1: Chinchilla, 70B parameters, trained on 1.4T tokens",
        url="https://arxiv.org/abs/2203.15556",
        calculator="training_compute",
        inputs={"params": 70e9, "tokens": 1.4e12},
        output="chinchilla_tokens",
        published=1.4e12,
        rel_tol=1e-9,
        why_tolerance="20 x 70B is the published 1.4T",
    ),
    Check(
        id="chinchilla-175b-tokens",
        chapter="compute.md",
        claim="Compute-optimal tokens for a 175B model",
        source="Hoffmann et al. 2022, Table 3: 3.7 trillion tokens for 175B parameters",
        url="https://arxiv.org/abs/2203.15556",
        calculator="training_compute",
        inputs={"params": 175e9, "tokens": 300e9},
        output="chinchilla_tokens",
        published=3.7e12,
        rel_tol=0.06,
        why_tolerance="20 tokens per parameter is a rounding of the paper's fitted law, "
                      "which gives about 21 at this size (3.5T against 3.7T)",
    ),
    Check(
        id="llama-65b-energy",
        chapter="compute.md",
        claim="LLaMA 65B: training energy from 1,022,362 A100 GPU-hours",
        source="Touvron et al. 2023, LLaMA, Table 15 and its caption (400 W, PUE 1.1): "
               "449 MWh",
        url="https://arxiv.org/abs/2302.13971",
        calculator="training_compute",
        inputs={"params": 65.2e9, "tokens": 1.4e12, "gpu": "a100_80gb_sxm",
                "utilization": _LLAMA_65B_MFU},
        output="energy_kwh",
        published=449_000.0,
        rel_tol=0.005,
        why_tolerance="the table gives whole MWh",
    ),
    Check(
        id="llama-65b-carbon",
        chapter="compute.md",
        claim="LLaMA 65B: training emissions at 0.385 kgCO2e/kWh",
        source="Touvron et al. 2023, LLaMA, Table 15: 173 tCO2eq",
        url="https://arxiv.org/abs/2302.13971",
        calculator="training_compute",
        inputs={"params": 65.2e9, "tokens": 1.4e12, "gpu": "a100_80gb_sxm",
                "utilization": _LLAMA_65B_MFU},
        output="co2_tonnes",
        published=173.0,
        rel_tol=0.005,
        why_tolerance="the table gives whole tonnes",
    ),
    Check(
        id="llama3-405b-training-compute",
        chapter="compute.md",
        claim="Llama 3 405B: total training compute, C = 6ND on 15.6T tokens (counted as "
              "Meta counts: 6N with N all 405B parameters, the input table included, and "
              "no attention)",
        source="Dubey et al. 2024, The Llama 3 Herd of Models, Secs. 1 and 3.2.1: "
               "3.8 x 10^25 FLOP",
        url="https://arxiv.org/abs/2407.21783",
        calculator="training_compute",
        inputs=preset_inputs("training_compute", "llama3_405b", flop_count="6N", vocab=""),
        output="total_flops",
        published=3.8e25,
        rel_tol=0.005,
        why_tolerance="printed to two significant figures; 6ND gives 3.79e25",
    ),
    Check(
        id="deepseek-v3-implied-mfu",
        chapter="compute.md",
        claim="DeepSeek-V3: the MFU its pre-training GPU-hours imply (6ND with the 37B "
              "active, dense BF16 peak, attention left out)",
        source="Derivation from DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Table 1: "
               "2,664K H800 GPU-hours for 14.8T tokens, 6 x 37e9 x 14.8e12 FLOP / (2,664K "
               "h x 3,600 s x 989 TFLOP/s) = 34.6%",
        url=_V3_URL, derived=True,
        calculator="training_compute", inputs=_V3_RUN, output="implied_mfu",
        published=0.346, rel_tol=0.001 / 0.346, why_tolerance="quoted to 0.1 point",
    ),
    Check(
        id="deepseek-v3-implied-mfu-fp8",
        chapter="compute.md",
        claim="The same GPU-hours against the FP8 peak",
        source="Derivation from DeepSeek-AI 2024, Table 1 (2,664K GPU-hours) and the "
               "H100's FP8 peak: 34.6% x 989 / 1,979 TFLOP/s = 17.3%",
        url=_V3_URL, derived=True,
        calculator="training_compute", inputs={**_V3_RUN, "peak_precision": "fp8"},
        output="implied_mfu", published=0.173, rel_tol=0.005,
        why_tolerance="quoted to 0.1 point (0.3%); the tolerance of the first test of it",
    ),
    Check(
        id="deepseek-v3-gpu-hours",
        chapter="compute.md",
        claim="DeepSeek-V3: pre-training GPU-hours at 34.6% MFU on 2,048 H800s (6ND)",
        source="DeepSeek-AI 2024, DeepSeek-V3 Technical Report, Table 1: 2,664K H800 "
               "GPU-hours (the MFU is the one these hours imply: a consistency check), "
               "6 x 37e9 x 14.8e12 FLOP / (34.6% x 989 TFLOP/s) / 3,600 s = 2,664K",
        url=_V3_URL, derived=True,
        calculator="training_compute",
        inputs={"params": "37B", "tokens": "14.8T", "gpu": "h100_sxm", "utilization": 0.346,
                "num_gpus": 2048, "flop_count": "6N"},
        output="gpu_hours", published=2_664_000, rel_tol=0.01,
        why_tolerance="the MFU is rounded to 0.1 point",
    ),
    Check(
        id="gpt3-attention-share",
        chapter="compute.md",
        claim="GPT-3 175B: share of the training FLOPs in attention scores, 12 L H T per "
              "token against 6N",
        source="Derivation with PaLM's attention term (Chowdhery et al. 2022, App. B) at "
               "GPT-3's shape (96 layers, width 12,288, 2,048 tokens): 12 x 96 x 12,288 x "
               "2,048 / (6 x 175e9) = 2.76%",
        url="https://arxiv.org/abs/2204.02311", derived=True,
        formula=_attention_share,
        formula_name="training_compute: attention_flops / (total_flops - attention_flops)",
        unit="%", published=0.0276, rel_tol=0.01, why_tolerance="quoted to three digits",
    ),
    Check(
        id="deepseek-v3-attention-flops",
        chapter="compute.md",
        claim="DeepSeek-V3: attention-score FLOPs per token at 4K tokens, the whole matrix, "
              "6 L s n_h (d_qk + d_v) with MLA's d_qk = 192 and d_v = 128",
        source="Derivation from DeepSeek-V3's config.json (61 layers, 128 heads, "
               "qk_nope 128 + qk_rope 64, v 128) and its 4K pre-training sequences (report, "
               "Sec. 4.2): 6 x 61 x 4,096 x 128 x 320 = 61.4 GFLOP (12 L s d_model: 21.5)",
        url=_V3_URL, derived=True,
        calculator="training_compute",
        inputs={**_V3_RUN, **_V3_MLA, "tokens": 1, "flop_count": "6N+attention"},
        output="attention_flops", published=61.4e9, rel_tol=0.05 / 61.4,
        why_tolerance="quoted to 0.1 GFLOP",
    ),
    Check(
        id="deepseek-v3-attention-flops-causal",
        chapter="compute.md",
        claim="The same, the causal half (as Megatron-LM counts since 2025)",
        source="Derivation: half of the above, 61.4 / 2 = 30.7 GFLOP",
        url=_V3_URL, derived=True,
        calculator="training_compute",
        inputs={**_V3_RUN, **_V3_MLA, "tokens": 1, "flop_count": "6N+causal_attention"},
        output="attention_flops", published=30.7e9, rel_tol=0.05 / 30.7,
        why_tolerance="quoted to 0.1 GFLOP",
    ),
    Check(
        id="llama31-405b-implied-mfu",
        chapter="compute.md",
        claim="Llama 3.1 405B: the MFU its GPU-hours imply, on DeepSeek-V3's basis (6ND "
              "with all 405B parameters, dense BF16 peak, every hour as training)",
        source="Derivation from Meta's Llama 3.1 model card (30.84M H100-80GB GPU-hours "
               "for 405B) and Dubey et al. 2024, Sec. 3.2.1 (15.6T tokens): 6 x 405e9 x "
               "15.6e12 FLOP / (30.84M h x 3,600 s x 989 TFLOP/s) = 34.5%",
        url=_LLAMA31_CARD, derived=True,
        calculator="training_compute", inputs=_LLAMA31_RUN, output="implied_mfu",
        published=0.345, rel_tol=0.001 / 0.345, why_tolerance="quoted to 0.1 point",
    ),
    Check(
        id="deepseek-v3-implied-mfu-mla",
        chapter="compute.md",
        claim="DeepSeek-V3: the same hours with its MLA attention scores counted, causal "
              "half (6N + 6 L s n_h (d_qk + d_v) / 2 at 4K tokens)",
        source="Derivation from DeepSeek-AI 2024, Table 1 (2,664K GPU-hours) and the "
               "released config.json (61 layers, 128 heads, d_qk 192, d_v 128): 34.6% x "
               "(6 x 37B + 30.7 GFLOP) / (6 x 37B) = 39.4%",
        url=_V3_URL, derived=True,
        calculator="training_compute",
        inputs={**_V3_RUN, **_V3_MLA, "flop_count": "6N+causal_attention"},
        output="implied_mfu", published=0.394, rel_tol=0.001 / 0.394,
        why_tolerance="quoted to 0.1 point",
    ),
)
