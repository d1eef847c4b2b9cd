"""The ``training_compute`` calculator's inputs and outputs: N, D and the run, the count
of model FLOPs (``flop_count``), and the optional architecture that gives the attention
scores and the input embedding table."""

from __future__ import annotations

from dataclasses import replace

from calculators.core.spec import Output, Param
from calculators.formulas.model.context_extension import LLAMA3_FINAL_LENGTH, LLAMA3_STAGES
from calculators.inputs.hardware import (
    MFU_BASIS_HELP,
    PEAK_FLOPS_PARAM,
    PEAK_PRECISION_PARAM,
    accelerator_choices,
)
from calculators.inputs.layer_mix import DOCUMENT_PARAMS, LAYER_MIX_PARAMS
from calculators.inputs.training import (
    CARBON_INTENSITY_PARAM,
    FLOP_COUNT_PARAM,
    FLOPS_PER_PARAM_TOKEN_PARAM,
    GOODPUT_PARAM,
    GPU_POWER_WATTS_PARAM,
    PRICE_PER_GPU_HOUR_PARAM,
    PUE_PARAM,
    TOKENS_PARAM,
    UTILIZATION_PARAM,
)


def _optional_int(name: str, label: str, help_text: str, maximum: float = 10_000_000,
                  unit: str = "") -> Param:
    return Param(name, label, "int", None, unit=unit, minimum=1, maximum=maximum,
                 optional=True, help=help_text, advanced=True)


PARAMS: tuple[Param, ...] = (
    Param(
        "params",
        "Parameters N",
        "float",
        175e9,
        unit="param",
        minimum=1,
        maximum=1e16,
        help="Trainable parameters, as published. 6N counts the weights a token "
        "multiplies: give the vocabulary and width (and an untied output layer) and "
        "the input embedding table, a lookup, is taken out. GPT-3: 175B. For a mixture "
        "of experts, the ACTIVE parameters per token (DeepSeek-V3: 37B of 671B): only "
        "the experts a token visits multiply it.",
    ),
    Param(
        "total_params",
        "Total parameters (mixture of experts)",
        "float",
        None,
        unit="param",
        minimum=1,
        maximum=1e16,
        optional=True,
        placeholder="dense: = N",
        help="Blank: a dense model, N is all of it. Given: N above is read as the "
        "active count of a mixture of experts with this total (DeepSeek-V3: 671B, "
        "report Sec. 1); the result says the active share.",
        advanced=True,
    ),
    TOKENS_PARAM,
    FLOPS_PER_PARAM_TOKEN_PARAM,
    FLOP_COUNT_PARAM,
    Param(
        "gpu",
        "Accelerator",
        "choice",
        "a100_80gb_sxm",
        choices=accelerator_choices(),
        help="Dense peak throughput and power from each vendor's datasheet.",
    ),
    PEAK_PRECISION_PARAM,
    PEAK_FLOPS_PARAM,
    UTILIZATION_PARAM,
    GOODPUT_PARAM,
    Param(
        "num_gpus",
        "Number of accelerators",
        "int",
        1024,
        unit="GPU",
        minimum=1,
        maximum=10_000_000,
        help="Accelerators running in parallel.",
    ),
    PRICE_PER_GPU_HOUR_PARAM,
    GPU_POWER_WATTS_PARAM,
    PUE_PARAM,
    CARBON_INTENSITY_PARAM,
    _optional_int("seq_len", "Sequence length (optional)", "With the layers and the "
                  "heads (or the width): the attention-score FLOPs, counted in C as "
                  "flop_count says.", maximum=100_000_000, unit="token"),
    _optional_int("layers", "Layers (optional)", "Transformer layers, for the attention "
                  "scores.", maximum=100_000),
    _optional_int("hidden", "Model width (optional)", "Hidden size d_model: the input "
                  "table's V x h, and heads x head size when those are blank."),
    _optional_int("heads", "Attention heads (optional)", "Query heads n_h. Blank: heads "
                  "x head size = the width, as in GPT-3 and Llama (Qwen3-235B: 64 heads "
                  "of 128 on a 4,096-wide model).", maximum=100_000),
    _optional_int("head_dim", "Query/key head size (optional)", "d_qk. Blank: width / "
                  "heads. DeepSeek-V3's MLA: 192 (128 + 64 rotary).", maximum=100_000),
    _optional_int("v_head_dim", "Value head size (optional)", "d_v. Blank: = d_qk. "
                  "DeepSeek-V3's MLA: 128.", maximum=100_000),
    _optional_int("vocab", "Vocabulary (optional)", "With the width: the input "
                  "embedding table, V x h, taken out of N when the output layer is "
                  "untied (a lookup is not a multiply). Llama 3: 128,256.",
                  maximum=100_000_000),
    Param(
        "tied_embeddings",
        "Tied input/output embedding",
        "bool",
        True,
        help="On: the output layer reuses the input table (GPT-3), whose weights then "
        "count once in N. Off: a separate output matrix (Llama), and the input table "
        "is taken out of N when the vocabulary is given. Applies only with the "
        "vocabulary and the width given.",
        advanced=True,
    ),
    Param(
        "reported_gpu_hours",
        "Reported GPU-hours (optional)",
        "float",
        None,
        unit="GPU-h",
        minimum=1,
        maximum=1e12,
        optional=True,
        help="A run's published GPU-hours, to read back the MFU they imply against "
        "the chosen peak (DeepSeek-V3 pre-training: 2,664K H800 GPU-hours, report "
        "Table 1).",
        advanced=True,
    ),
    Param("extension_tokens", "Context extension tokens", "float", None, unit="tokens",
          minimum=0, maximum=1e16, exclusive_minimum=True, optional=True, advanced=True,
          placeholder="none",
          help="Tokens of D trained after pre-training at longer and longer sequences "
          "(Llama 3 405B: about 800B in six stages from 8K to 128K, Sec. 3.4.2)."),
    Param("extension_length", "Extended sequence length", "int", LLAMA3_FINAL_LENGTH,
          unit="token", minimum=2, maximum=100_000_000, advanced=True,
          help="The last stage's sequence. Llama 3: 131,072 (128K). Applies only with "
          "context extension tokens given."),
    Param("extension_stages", "Extension stages", "int", LLAMA3_STAGES, minimum=1,
          maximum=64, advanced=True, help="Llama 3: six stages (Sec. 3.4.2). Applies only "
          "with context extension tokens given."),
    *(replace(p, advanced=True) for p in (*LAYER_MIX_PARAMS, *DOCUMENT_PARAMS)
      if not p.name.startswith("linear_")),
)

OUTPUTS: tuple[Output, ...] = (
    Output("total_flops", "Training compute C", "FLOP", "sci",
           help="Model FLOPs per token x D: 6N (k N), plus the attention scores in "
           "the chosen count when the architecture is given. The time is counted "
           "from it."),
    Output("flop_params", "N in 6N", "param", "count",
           help="The weights a token multiplies: N, less the input embedding table "
           "when the vocabulary is given and the output layer untied."),
    Output("attention_flops", "Attention-score FLOPs in C", "FLOP", "sci",
           help="The share of 6 L s n_h (d_qk + d_v) per token that the chosen "
           "count includes (all, half or none), times D."),
    Output("gpu_hours", "GPU-hours", "GPU-h", "count",
           help="GPUs x wall-clock hours: C / (peak x MFU) / goodput."),
    Output("goodput", "Goodput (share of wall-clock that trains)", "1", "percent"),
    Output("wall_clock_days", "Wall-clock time", "days", "fixed"),
    Output("cost_usd", "Cost", "USD", "usd"),
    Output("energy_kwh", "Energy", "kWh", "count"),
    Output("co2_tonnes", "Emissions", "tCO2e", "count"),
    Output("chinchilla_tokens", "Compute-optimal tokens (20 N)", "tokens", "count",
           help="Chinchilla's ratio, for a dense model only: it was fitted on dense "
           "models and has no published counterpart for an MoE's active or total N."),
    Output("effective_flops_per_gpu", "Achieved FLOP/s per GPU", "FLOP/s", "si"),
    Output("active_share", "N as a share of the total (mixture of experts)", "1",
           "percent", help="N / total_params, when the total is given."),
    Output("implied_mfu", "MFU the reported GPU-hours imply", "1", "percent",
           help="C / (reported GPU-hours x peak), in C's count, as if every reported "
           "hour trained."),
    Output("mfu_basis", "MFU against", "", "text", help=MFU_BASIS_HELP),
    Output("extension_flops", "Context extension's added compute", "FLOP", "sci",
           help="What the extension stages add to C over the same tokens at the "
           "pre-training sequence length."),
)
