"""Training compute and GPU-hours (docs/compute.md): published totals, times and energy."""

from __future__ import annotations

from calculators.formulas.flops import training_flops
from published_checks import Check

#: LLaMA 65B (Touvron et al. 2023, Table 15): 1,022,362 A100-80GB GPU-hours. The MFU
#: that turns 6ND into exactly those hours, so that the energy check isolates Meta's
#: energy method (GPU-hours x 400 W x PUE 1.1) from the MFU.
_LLAMA_65B_MFU = training_flops(65.2e9, 1.4e12) / (1_022_362 * 3600 * 312e12)

CHECKS: tuple[Check, ...] = (
    Check(
        id="gpt3-training-compute",
        chapter="compute.md",
        claim="GPT-3 175B: total training compute, C = 6ND",
        source="Brown et al. 2020, Language Models are Few-Shot Learners, App. D, "
               "Table D.1 (N = 174.6e9 non-embedding parameters, D = 300e9 tokens)",
        url="https://arxiv.org/abs/2005.14165",
        calculator="training_compute",
        inputs={"params": 174.6e9, "tokens": 300e9},
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
)
