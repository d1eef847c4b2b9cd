"""Dense models (docs/dense.md): parameter counts against papers and released
checkpoints, ZeRO's model-state bytes, Korthikanti et al.'s activation savings, and
the utilisation figures of PaLM and Megatron-LM."""

from __future__ import annotations

from functools import partial

import calculators
from calculators.catalogues import hardware
from calculators.formulas.kernels.roofline import ridge_point
from calculators.formulas.model import activations as act
from calculators.formulas.model.architecture import Architecture
from calculators.formulas.model.model_states import model_state_bytes, state_bytes
from calculators.formulas.model.recipes import BF16, FP8_TENSORWISE, linear_memory_bytes
from calculators.formulas.parallel.memory import activation_bytes_per_layer
from published_checks import Check, Value, preset_inputs

GB = 1e9
_EXACT = "a parameter count of a released checkpoint: it must match exactly"
_BROWN = "https://arxiv.org/abs/2005.14165"
_PALM = "https://arxiv.org/abs/2204.02311"
_SC21 = "https://arxiv.org/abs/2104.04473"
_ZERO = "https://arxiv.org/abs/1910.02054"
_KORTHIKANTI = "https://arxiv.org/abs/2205.05198"
_LLAMA2 = "https://arxiv.org/abs/2307.09288"
_LLAMA3 = "https://arxiv.org/abs/2407.21783"
_SCALING_BOOK = "https://jax-ml.github.io/scaling-book/roofline/"

#: PaLM 540B (Chowdhery et al. 2022, Table 1): 118 layers, d_model 18,432, 48 heads of
#: 256, multi-query attention, SwiGLU of 4d, shared input/output embedding, 256K vocabulary.
PALM_540B: dict[str, Value] = {
    "layers": 118, "hidden": 18432, "heads": 48, "kv_heads": 1, "head_dim": 256,
    "ffn_hidden": 4 * 18432, "vocab": 256000, "gated_mlp": True, "biases": False,
    "position_embedding": "rotary", "tied_embeddings": True}
#: PaLM, Table 3 and App. B: 238.3K tokens/s on 6,144 TPU v4 chips of 275 TFLOP/s.
_PALM_RUN: dict[str, Value] = {**PALM_540B, "params": 540e9, "tokens_per_second": 238.3e3,
                               "num_gpus": 6144, "peak_flops": "275 TFLOP/s",
                               "recompute": "none"}

#: Narayanan et al. 2021 (SC21), Table 1: (row, heads, hidden, layers, billions) with
#: V = 51,200 and s = 2,048. Row 1 (1.7B) is left out: Eq. 2 gives 1.65B for its shape.
SC21_TABLE_1 = (
    (2, 32, 3072, 30, 3.6), (3, 32, 4096, 36, 7.5), (4, 48, 6144, 40, 18.4),
    (5, 64, 8192, 48, 39.1), (6, 80, 10240, 60, 76.1), (7, 96, 12288, 80, 145.6),
    (8, 128, 16384, 96, 310.1), (9, 128, 20480, 105, 529.6), (10, 160, 25600, 128, 1008.0),
)

#: Korthikanti et al. 2022, Table 3 shapes (heads, hidden, layers) at s = 2,048,
#: V = 51,200, with their MFU and HFU on A100s (SP + selective recomputation).
KORTHIKANTI_TABLE_3 = (
    ("22b", 64, 6144, 48, 0.415, 0.437), ("175b", 96, 12288, 96, 0.514, 0.528),
    ("530b", 128, 20480, 105, 0.560, 0.570), ("1t", 160, 25600, 128, 0.563, 0.570),
)


def _gpt(layers: int, hidden: int, heads: int) -> Architecture:
    return Architecture(layers=layers, hidden=hidden, heads=heads, kv_heads=heads,
                        head_dim=hidden // heads, ffn_hidden=4 * hidden, vocab=51200,
                        seq_len=2048)


_GPT3, _MT_NLG, _GPT_1T = _gpt(96, 12288, 96), _gpt(105, 20480, 128), _gpt(128, 25600, 160)


def _korthikanti_inputs(heads: int, hidden: int, layers: int, mfu: float) -> dict[str, Value]:
    """The mfu inputs of one Table 3 row, with the throughput that gives its MFU on 8
    GPUs (MFU is linear in throughput: probe at 1 token/s, then scale)."""
    # Korthikanti et al. count model FLOPs with the whole score matrix (Sec. 6: s/(6h)).
    shape: dict[str, Value] = {"heads": heads, "hidden": hidden, "layers": layers,
                               "num_gpus": 8, "recompute": "selective",
                               "flop_count": "6N+attention"}
    probe = calculators.compute("mfu", **shape, tokens_per_second=1.0).value("mfu")
    assert isinstance(probe, float)
    return {**shape, "tokens_per_second": mfu / probe}


def _sp_selective_ratio(arch: Architecture) -> float:
    """Activation memory of TP 8 alone over TP 8 + SP + selective recomputation."""
    return (activation_bytes_per_layer(arch, 1, 8, False, "none")
            / activation_bytes_per_layer(arch, 1, 8, True, "selective"))


def _zero_states(params: float, stage: int, dp: int) -> float:
    return sum(model_state_bytes(params, state_bytes("bf16_mixed", "adamw"), stage, dp))


def _params(check_id: str, preset: str, claim: str, source: str, published: float, *,
            url: str, rel_tol: float = 0.0, why: str = _EXACT) -> Check:
    return Check(id=check_id, chapter="dense.md", claim=claim, source=source, url=url,
                 calculator="model_params", inputs=preset_inputs("model_params", preset),
                 output="params", published=published, rel_tol=rel_tol, why_tolerance=why)


_COUNTS = (
    _params("gpt3-params", "gpt3_175b", "GPT-3 175B: parameters from its shape",
            "Brown et al. 2020, Table 2.1 (shape) and App. D, Table D.1: N = 174.6B",
            174.6e9, url=_BROWN, rel_tol=5e-4, why="printed to 0.1B (0.03%)"),
    _params("gpt3-params-175b", "gpt3_175b", "GPT-3 175B: the headline count",
            "Brown et al. 2020, Table 2.1: 175.0B", 175.0e9, url=_BROWN, rel_tol=3e-3,
            why="Table 2.1 rounds 174.6B to 175.0B (0.23%)"),
    Check(id="palm-540b-params", chapter="dense.md",
          claim="PaLM 540B: parameters from its shape (multi-query, SwiGLU, shared table)",
          source="Chowdhery et al. 2022, PaLM, Table 1: 540.35B", url=_PALM,
          calculator="model_params", inputs=PALM_540B, output="params",
          published=540.35e9, rel_tol=2e-4,
          why_tolerance="PaLM's parallel blocks share one norm per layer (2M parameters "
                        "fewer than counted here, 0.0004%); printed to 0.01B"),
    _params("llama2-7b-params", "llama2_7b", "Llama 2 7B: parameters from its shape",
            "Touvron et al. 2023, Llama 2, Table 1; released checkpoint: 6,738,415,616",
            6_738_415_616, url=_LLAMA2),
    _params("llama2-70b-params", "llama2_70b", "Llama 2 70B: parameters from its shape",
            "Touvron et al. 2023, Llama 2, Table 1; released checkpoint: 68,976,648,192",
            68_976_648_192, url=_LLAMA2),
    _params("llama3-8b-params", "llama3_8b", "Llama 3 8B: parameters from its shape",
            "Dubey et al. 2024, Table 3 (8B); released checkpoint: 8,030,261,248",
            8_030_261_248, url=_LLAMA3),
    _params("llama3-70b-params", "llama3_70b", "Llama 3 70B: parameters from its shape",
            "Dubey et al. 2024, Table 3 (70B); released checkpoint: 70,553,706,496",
            70_553_706_496, url=_LLAMA3),
    _params("llama3-405b-params", "llama3_405b", "Llama 3 405B: parameters from its shape",
            "Dubey et al. 2024, Table 3 (405B); released checkpoint: 405,853,388,800",
            405_853_388_800, url=_LLAMA3),
    *(Check(id=f"sc21-table-1-row-{row}", chapter="dense.md",
            claim=f"Megatron-LM SC21, Table 1, row {row}: {heads} heads, hidden {hidden:,}, "
                  f"{layers} layers",
            source=f"Narayanan et al. 2021, Table 1 (Eq. 2, V = 51,200, s = 2,048): "
                   f"{billions}B",
            url=_SC21, calculator="model_params",
            inputs={"heads": heads, "hidden": hidden, "layers": layers, "vocab": 51200,
                    "seq_len": 2048},
            output="params", published=billions * 1e9, rel_tol=0.05 / billions,
            why_tolerance="the table prints one decimal: within 0.05B")
      for row, heads, hidden, layers, billions in SC21_TABLE_1),
)

_MEMORY = (
    Check(id="zero-gpt2-model-states", chapter="dense.md",
          claim="GPT-2 1.5B with mixed-precision Adam: model states, 16 bytes per parameter",
          source="Rajbhandari et al. 2020, ZeRO, Sec. 3.1: at least 24 GB", url=_ZERO,
          formula=partial(_zero_states, 1.5e9, 0, 1),
          formula_name="model_states.model_state_bytes(1.5B, AdamW in BF16, no ZeRO)",
          published=24e9, rel_tol=1e-9, why_tolerance="16 x 1.5B is exactly 24 GB", unit="B"),
    Check(id="zero-gpt2-weights", chapter="dense.md",
          claim="GPT-2 1.5B: its 16-bit weights",
          source="Rajbhandari et al. 2020, ZeRO, Sec. 3.1: 3 GB", url=_ZERO,
          calculator="model_memory", inputs={"params": 1.5e9}, output="weights_bytes",
          published=3e9, rel_tol=1e-9, why_tolerance="2 x 1.5B is exactly 3 GB"),
    Check(id="zero-adam-bytes-per-param", chapter="dense.md",
          claim="Model-state bytes per parameter, mixed precision with Adam: 2 + 2 + 12",
          source="Rajbhandari et al. 2020, ZeRO, Sec. 3.1: 16 bytes (K = 12)", url=_ZERO,
          calculator="model_memory", inputs={"params": 1.5e9}, output="bytes_per_param",
          published=16, rel_tol=0.0, why_tolerance="a sum of whole bytes: exact"),
    Check(id="megatron-fp32-grads-bytes-per-param", chapter="dense.md",
          claim="The same with FP32 main gradients (Megatron-LM's BF16 default)",
          source="Megatron-Core distributed optimizer docs: \"float16 param, fp32 grads: "
                 "18\" bytes per parameter",
          url="https://docs.nvidia.com/megatron-core/developer-guide/latest/api-guide/"
              "dist_optimizer.html",
          calculator="model_memory", inputs={"params": 1.5e9, "gradients": "fp32"},
          output="bytes_per_param", published=18, rel_tol=0.0,
          why_tolerance="a sum of whole bytes: exact"),
    *(Check(id=f"zero-fig-1-stage-{stage}", chapter="dense.md",
            claim=f"7.5B parameters on 64 data-parallel GPUs, ZeRO stage {stage}: model "
                  "states per GPU",
            source=f"Rajbhandari et al. 2020, ZeRO, Fig. 1 (Psi = 7.5B, K = 12, "
                   f"Nd = 64): {gigabytes} GB",
            url=_ZERO, formula=partial(_zero_states, 7.5e9, stage, 64),
            formula_name=f"model_states.model_state_bytes(7.5B, AdamW, stage {stage}, "
                         "dp 64)",
            published=gigabytes * GB, rel_tol=0.05 / gigabytes, unit="B",
            why_tolerance="the figure prints one decimal: within 0.05 GB")
      for stage, gigabytes in ((0, 120), (1, 31.4), (2, 16.6), (3, 1.9))),
    *(Check(id=f"korthikanti-selective-saving-{name}", chapter="dense.md",
            claim=f"{label}: activation memory selective recomputation saves (TP 8 + SP)",
            source=f"Korthikanti et al. 2022, Sec. 5: {round(100 * saving)}%",
            url=_KORTHIKANTI,
            formula=partial(act.selective_saving, act.LayerShape(
                seq_len=2048, micro_batch=1, hidden=hidden, heads=heads), tp=8),
            formula_name=f"activations.selective_saving({label} layer, tp 8)",
            published=saving, rel_tol=0.005 / saving, unit="%",
            why_tolerance="the paper rounds to whole percent: within half a point")
      for name, label, hidden, heads, saving in (("gpt3", "GPT-3 175B", 12288, 96, 0.70),
                                                 ("mt-nlg", "MT-NLG 530B", 20480, 128,
                                                  0.65))),
    *(Check(id=f"korthikanti-sp-selective-5x-{name}", chapter="dense.md",
            claim=f"{label}: activation memory of TP 8 over TP 8 + SP + selective "
                  "recomputation",
            source="Korthikanti et al. 2022, abstract and Fig. 7: \"by 5x\"",
            url=_KORTHIKANTI, formula=partial(_sp_selective_ratio, arch),
            formula_name=f"memory.activation_bytes_per_layer({label}), ratio",
            published=5.0, rel_tol=0.1,
            why_tolerance="the paper says \"5x\": within half a unit")
      for name, label, arch in (("gpt3", "GPT-3 175B", _GPT3),
                                ("mt-nlg", "MT-NLG 530B", _MT_NLG),
                                ("1t", "1T GPT", _GPT_1T))),
)

_RACKS = tuple(
    Check(id=f"{gpu}-hbm-{scope}", chapter="dense.md",
          claim=f"{label}: HBM of the {scope} from the catalogue's per-GPU figure x {gpus}",
          source=source,
          formula=partial(lambda g, n: hardware.get(g).memory_bytes * n, gpu, gpus),
          formula_name=f"hardware {gpu} memory_bytes x {gpus}", unit="B",
          published=published, rel_tol=0.005,
          why_tolerance=f"the {scope} figure is the per-GPU one rounded: {why}")
    for gpu, label, scope, gpus, published, source, why in (
        ("b300", "HGX B300", "board", 8, 2.3e12,
         "NVIDIA HGX B300 datasheet: up to 2.3 TB of HBM3e for 8 GPUs (288 GB each)",
         "8 x 288 GB = 2.304 TB"),
        ("gb300", "GB300 NVL72", "rack", 72, 20e12,
         "NVIDIA GB300 NVL72 datasheet: 20 TB of HBM3e per rack (279 GB per GPU in "
         "NVIDIA's table)", "72 x 279 GB = 20.09 TB"),
    ))

_UTILISATION = (
    Check(id="palm-540b-mfu", chapter="dense.md",
          claim="PaLM 540B on 6,144 TPU v4: model FLOPs utilisation, 6N + 12LHQT per token "
                "(PaLM's count: the whole attention-score matrix, N = 540B)",
          source="Chowdhery et al. 2022, PaLM, Table 3 and App. B: 46.2%", url=_PALM,
          calculator="mfu", inputs={**_PALM_RUN, "flop_count": "6N+attention"},
          output="mfu", published=0.462, rel_tol=0.0005 / 0.462,
          why_tolerance="printed to 0.1 point: within 0.05 point"),
    Check(id="palm-540b-mfu-6n", chapter="dense.md",
          claim="The same run counted as 6N per token (attention left out)",
          source="Derivation: PaLM's Table 3 throughput with 6N FLOPs per token (App. B "
                 "gives both terms), 6 x 540e9 x 238.3K tokens/s / (6,144 x 275 TFLOP/s) "
                 "= 45.7%", url=_PALM, derived=True,
          calculator="mfu", inputs={**_PALM_RUN, "flop_count": "6N"},
          output="mfu", published=0.457, rel_tol=0.0005 / 0.457,
          why_tolerance="quoted to 0.1 point: within 0.05 point"),
    Check(id="scaling-book-h100-ridge", chapter="dense.md",
          claim="H100 SXM: the roofline's ridge point, dense BF16 peak over HBM bandwidth",
          source="Austin et al., How to Scale Your Model (the scaling-book), Part 1, All "
                 "About Rooflines, Question 5: 9.89e14 / 3.35e12 = 295 FLOP/byte",
          url=_SCALING_BOOK, calculator="roofline", inputs={"gpu": "h100_sxm"},
          output="ridge", published=295, rel_tol=0.005,
          why_tolerance="the book rounds to whole FLOP per byte"),
    Check(id="scaling-book-tpu-v5e-ridge", chapter="dense.md",
          claim="TPU v5e: the same ridge point, 1.97e14 FLOP/s over 8.2e11 B/s",
          source="Austin et al., the scaling-book, Part 1, All About Rooflines: 240 FLOP/byte",
          url=_SCALING_BOOK, formula=partial(ridge_point, 1.97e14, 8.2e11),
          formula_name="roofline.ridge_point(1.97e14 FLOP/s, 8.2e11 B/s)", unit="FLOP/B",
          published=240, rel_tol=0.005,
          why_tolerance="the book rounds 240.2 to 240"),
    Check(id="sc21-gpt3-hfu", chapter="dense.md",
          claim="GPT-3 175B on 1,024 A100s (SC21): hardware FLOPs utilisation, 140 of "
                "312 TFLOP/s",
          source="Narayanan et al. 2021, Sec. 5.1: 140 TFLOP/s per GPU, counted with "
                 "Eq. 3 (full recomputation: 6N + the whole score matrix, plus the "
                 "recomputed forward pass)", url=_SC21,
          calculator="mfu", inputs={"flop_count": "6N+attention", "recompute": "full"},
          output="hfu", published=140 / 312, rel_tol=2e-3,
          why_tolerance="the default step time, 31.5 s, is the paper's rate rounded"),
    *(Check(id=f"korthikanti-hfu-{name}", chapter="dense.md",
            claim=f"Korthikanti et al. Table 3, {name.upper()} model: HFU at the published "
                  f"MFU ({100 * mfu:.1f}%), selective recomputation",
            source=f"Korthikanti et al. 2022, Table 3: HFU {100 * hfu:.1f}%",
            url=_KORTHIKANTI, calculator="mfu",
            inputs=_korthikanti_inputs(heads, hidden, layers, mfu), output="hfu",
            published=hfu, rel_tol=0.001 / hfu,
            why_tolerance="both percentages are printed to 0.1 point")
      for name, heads, hidden, layers, mfu, hfu in KORTHIKANTI_TABLE_3),
)

_TE_MEMORY = ("https://nvidia.github.io/TransformerEngine/features/low_precision_training/"
              "performance_considerations/performance_considerations.html")
_LOW_PRECISION = (
    *(Check(id=f"te-linear-memory-{name}", chapter="dense.md",
            claim=f"A 1,024 x 1,024 linear layer on 1,024 tokens after its forward, {label}",
            source=f"Transformer Engine docs, Performance considerations, Memory usage: "
                   f"{parts} = 6 MB",
            url=_TE_MEMORY,
            formula=partial(linear_memory_bytes, 1024, 1024, 1024, recipe),
            formula_name=f"recipes.linear_memory_bytes(1,024 tokens, 1,024 x 1,024, {label})",
            published=6 * 2 ** 20, rel_tol=0.0,
            why_tolerance="whole bytes: exact (TE's MB is 2^20 B: 1,024 x 1,024 x 2 B is "
                          "its 2 MB)", unit="B")
      for name, label, recipe, parts in (
          ("bf16", "BF16", BF16, "2 MB weight + 2 MB input saved + 2 MB output"),
          ("fp8", "FP8 with BF16 weights (FP8 does not halve it)", FP8_TENSORWISE,
           "2 MB weight + 1 MB FP8 weight + 1 MB FP8 input + 2 MB output"))),
)

CHECKS: tuple[Check, ...] = (*_COUNTS, *_MEMORY, *_LOW_PRECISION, *_RACKS, *_UTILISATION)
