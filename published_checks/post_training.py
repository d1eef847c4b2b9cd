"""Post-training (docs/post-training.md): the KV cache per token, decoding throughput
against measured serving deployments, and weight-update times against measured refits.

The decode model's parameters are the speed model's kernel and collective figures
(catalogues.kernel_speeds, link_speeds, deepep); nothing here was fitted to these rows.
The reload rate of the weight sync is fitted to the single-engine rows of
catalogues.weight_updates; the checks are the rows with sixteen engines and NVIDIA
NeMo-RL's refit, which the fit never saw.
"""

from __future__ import annotations

from calculators import REGISTRY
from calculators.catalogues.weight_updates import MANY_ENGINES, URL, WeightUpdate
from calculators.formulas.rl import kv_cache
from calculators.formulas.rl.weight_sync import weight_sync
from calculators.inputs.machine import fabric_for
from calculators.inputs.rl import generator, reload_for
from published_checks import Check, preset_inputs

_V2 = "https://arxiv.org/abs/2405.04434"
_SGLANG = "https://lmsys.org/blog/2025-05-05-large-scale-ep/"
_DEEPSEEK = ("https://github.com/deepseek-ai/open-infra-index/blob/main/202502OpenSourceWeek/"
             "day_6_one_more_thing_deepseekV3R1_inference_system_overview.md")
_NEMO = ("https://github.com/NVIDIA-NeMo/RL/blob/main/docs/guides/"
         "checkpoint-engine-refit.md")


def _decode_per_node(gpu: str, engine_gpus: int, per_gpu: int, cached: int) -> float:
    """Output tokens/s per 8-GPU node of DeepSeek-V3 decoding with data-parallel
    attention over ``engine_gpus`` GPUs (experts over all of them), FP8 weights, a BF16
    cache, ``per_gpu`` sequences per GPU holding ``cached`` tokens each."""
    calc = REGISTRY["rollout"]
    inputs = calc.validate(preset_inputs(
        "rollout", "deepseek_v3", gpu=gpu, engine_gpus=engine_gpus,
        generation_gpus=engine_gpus, attention_parallel="dp", weight_precision="fp8",
        max_sequences=per_gpu, prompt_tokens=cached, mean_response=1,
        max_response=1))
    gen = generator(inputs, engine_gpus)
    batch = gen.slots
    return 8 * batch / gen.engine.step_s(batch, batch * cached) / engine_gpus


def _refit(row: WeightUpdate) -> float:
    fabric = fabric_for(row.accelerator, domain=8)
    return weight_sync(row.model_bytes, engine_gpus=row.engine_gpus, trainer_gpus=row.gpus,
                       fabric=fabric, colocated=False,
                       reload=reload_for(row.accelerator)).total_s


def _refit_check(row: WeightUpdate, slug: str) -> Check:
    return Check(
        id=f"refit-{slug}-256-h20", chapter="post-training.md",
        claim=f"Weight update of {row.model} into 16 vLLM engines of TP 16 on 256 H20",
        source="MoonshotAI/checkpoint-engine, README, Benchmark (commit 59a3c4f; vLLM "
               "v0.10.2rc1, broadcast update, 8 GiB buckets)", url=URL,
        formula=lambda: _refit(row),
        formula_name=f"formulas.rl.weight_sync.weight_sync ({row.model}, 256 x H20)",
        unit="s", published=row.seconds, rel_tol=0.15,
        why_tolerance="a prediction: the reload rate is fitted to the same models on one "
                      "engine of 16 H20 (10.19 and 14.36 s), and the model finds sixteen "
                      "engines no slower, since each GPU still receives one shard; the "
                      "measured update is 11% slower with sixteen: 15%")


def _nemo_refit() -> float:
    fabric = fabric_for("h100_sxm", domain=8)
    return weight_sync(671.03e9 * 2, engine_gpus=32, trainer_gpus=256, fabric=fabric,
                       colocated=False, reload=reload_for("h100_sxm")).total_s


CHECKS: tuple[Check, ...] = (
    Check(
        id="kv-mla-per-layer", chapter="post-training.md",
        claim="MLA keeps 9/2 d_h elements per token and layer (d_c = 4 d_h = 512, "
              "d_h^R = d_h / 2 = 64, d_h = 128)",
        source="DeepSeek-AI 2024, DeepSeek-V2, arXiv 2405.04434, Sec. 2.1.4 and Table 1",
        url=_V2, formula=lambda: kv_cache.elements_per_token_layer(
            "mla", kv_heads=0, head_dim=0, kv_lora_rank=512, rope_dim=64),
        formula_name="formulas.rl.kv_cache.elements_per_token_layer('mla', 512, 64)",
        unit="count", published=4.5 * 128, rel_tol=0.0,
        why_tolerance="an element count: exact"),
    Check(
        id="kv-llama3-70b-per-token", chapter="post-training.md",
        claim="Llama 3 70B's KV cache per token in BF16: 2 x 8 KV heads x 128 x 80 "
              "layers x 2 B = 327,680 B (320 KiB)",
        source="Derivation from Dubey et al. 2024 (Llama 3), Table 3 (80 layers, 8 KV "
               "heads, head size 8,192 / 64 = 128)",
        calculator="rollout", inputs=preset_inputs("rollout", "llama3_70b"),
        output="kv_bytes_per_token", published=327_680.0, rel_tol=0.0, derived=True,
        why_tolerance="a byte count: exact"),
    Check(
        id="decode-sglang-ep72", chapter="post-training.md",
        claim="DeepSeek-V3 decoding on 9 nodes of 8 H100 (EP 72, data-parallel "
              "attention), 256 sequences per GPU at 2,000 tokens: output tokens/s per node",
        source="LMSYS (SGLang team) 2025-05-05, \"Deploying DeepSeek with PD "
               "Disaggregation and Large-scale Expert Parallelism\", decode results",
        url=_SGLANG, formula=lambda: _decode_per_node("h100_sxm", 72, 256, 2000),
        formula_name="formulas.rl.decode.Engine.step_s (DeepSeek-V3, H100, EP 72)",
        unit="count", published=22_282.0, rel_tol=0.15,
        why_tolerance="a prediction from kernel and collective figures, communication "
                      "added to the step (the deployment overlaps two micro-batches; the "
                      "model's overlapped mode, a best case, is 68% high): 15%"),
    Check(
        id="decode-deepseek-production", chapter="post-training.md",
        claim="DeepSeek-V3/R1 serving on H800, decode units of 18 nodes (EP 144): output "
              "tokens/s per node at an average KV length of 4,989, with 88 sequences per "
              "GPU (1,850 tokens/s per GPU at 20-22 tokens/s per user)",
        source="DeepSeek 2025, \"Day 6: DeepSeek-V3/R1 Inference System Overview\" "
               "(24 h of production statistics)", url=_DEEPSEEK,
        formula=lambda: _decode_per_node("h800", 144, 88, 4989),
        formula_name="formulas.rl.decode.Engine.step_s (DeepSeek-V3, H800, EP 144)",
        unit="count", published=14_800.0, rel_tol=0.20,
        why_tolerance="a day's average of a production service, not a saturated "
                      "benchmark, and the batch per GPU derived from the per-user speed; "
                      "communication added to the step as above: 20%"),
    _refit_check(MANY_ENGINES[0], "deepseek-v31"),
    _refit_check(MANY_ENGINES[1], "kimi-k2"),
    Check(
        id="refit-nemo-rl-deepseek-v3", chapter="post-training.md",
        claim="DeepSeek-V3 (BF16) from 256 trainer GPUs to one vLLM engine of TP 32 on "
              "4 other nodes of H100 (NIXL GPU-RDMA refit, asynchronous timer)",
        source="NVIDIA NeMo-RL, docs/guides/checkpoint-engine-refit.md (commit 7ea279a)",
        url=_NEMO, formula=_nemo_refit,
        formula_name="formulas.rl.weight_sync.weight_sync (DeepSeek-V3 BF16, TP 32)",
        unit="s", published=9.25, rel_tol=0.45,
        why_tolerance="the model moves the 41.9 GB of weights a rank of TP 32 holds; "
                      "NeMo-RL reports 69.95 GiB (75.1 GB) loaded per vLLM rank, which "
                      "the model does not explain; with those bytes it gives 8.7 s. The "
                      "reload rate is the H800's: 45%"),
)
