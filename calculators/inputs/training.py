"""Training-setup inputs shared by the memory, utilisation, planner and sizing
calculators: precision, optimizer and activation recomputation, each with its source."""

from __future__ import annotations

from calculators.core.spec import Choice, Param
from calculators.formulas.model.flops import DEFAULT_FLOP_COUNT, FLOP_COUNTS

PRECISION_PARAM = Param(
    "precision", "Precision", "choice", "bf16_mixed",
    choices=(Choice("bf16_mixed", "BF16 mixed (FP32 master weights)"),
             Choice("fp16_mixed", "FP16 mixed (FP32 master weights)"),
             Choice("fp8_mixed", "FP8 mixed (assumption: + 1 B FP8 weight copy)"),
             Choice("fp32", "FP32")),
    help="Mixed precision: 2 B weights + 2 B gradients + 4 B FP32 master copy (ZeRO, "
         "Sec. 3.1). FP8 is an assumption: BF16 weights kept, plus an FP8 copy; 16-bit "
         "activations. FP32 doubles activations.")
OPTIMIZER_PARAM = Param(
    "optimizer", "Optimizer", "choice", "adamw",
    choices=(Choice("adamw", "AdamW (8 B states)"), Choice("sgd_momentum", "SGD + momentum"),
             Choice("adafactor", "Adafactor (factored, no momentum)"),
             Choice("adamw_8bit", "8-bit AdamW"),
             Choice("adamw_bf16", "AdamW, BF16 moments (DeepSeek-V3)")),
    help="State bytes per parameter: AdamW 8 (K = 12 with the master copy, ZeRO); SGD "
         "momentum 4; Adafactor about 0 (Shazeer and Stern 2018); 8-bit Adam 2 (Dettmers "
         "et al. 2022); AdamW with BF16 moments 4 (DeepSeek-V3 report, Sec. 3.3.3).")
RECOMPUTE_PARAM = Param(
    "recompute", "Activation recomputation", "choice", "none",
    choices=(Choice("none", "none"), Choice("selective", "selective (attention scores)"),
             Choice("full", "full (keep layer inputs only)")),
    help="Korthikanti et al. 2022: selective recomputes the attention-score part "
         "(5as/h; a fused attention kernel stores no scores, so it has little left to "
         "save), full recomputes each layer from its input (+1 forward pass of FLOPs). "
         "Full recomputation still holds one layer's whole activation set while that "
         "layer is rebuilt: counted here as working memory, left out of the paper's "
         "Table 2.")


# --- the training run: inputs ``training_compute`` shares with the sizing -------------

TOKENS_PARAM = Param(
    "tokens",
    "Training tokens D",
    "float",
    300e9,
    unit="token",
    minimum=1,
    maximum=1e17,
    help="Tokens seen in training, all epochs. GPT-3: 300B (Brown et al. 2020).",
)

FLOPS_PER_PARAM_TOKEN_PARAM = Param(
    "flops_per_param_token",
    "FLOP per parameter per token",
    "float",
    6.0,
    minimum=1,
    maximum=24,
    help="6 = forward 2 + backward 4 (Kaplan et al. 2020, Sec. 2.1); 8 with full "
    "activation recomputation (Narayanan et al. 2021, Sec. 5.1, Eq. 4).",
)

FLOP_COUNT_PARAM = Param(
    "flop_count",
    "Model FLOPs counted as",
    "choice",
    DEFAULT_FLOP_COUNT.id,
    choices=tuple(Choice(c.id, c.label, former=c.former) for c in FLOP_COUNTS),
    help="The convention of the MFU: FLOPs per token = 6N, N the weights a token "
    "multiplies (the input embedding is a lookup and is left out; the output layer "
    "counts once), plus the attention scores, 6 L s n_h (d_qk + d_v): whole, as PaLM "
    "(App. B), Korthikanti et al. 2022 and torchtitan count them; their causal half, as "
    "Megatron-LM has counted since 2025; or none, Kaplan's C = 6ND. An MFU only compares "
    "with one counted the same way. Links with the former \"megatron\" get the first.",
)

UTILIZATION_PARAM = Param(
    "utilization",
    "Achieved fraction of peak (MFU)",
    "float",
    0.4,
    unit="1",
    # A floor far below any real run (0.1%), like the peak's: C / (peak x MFU)
    # stays finite at every corner of the bounds.
    minimum=1e-3,
    maximum=1,
    help="Default 0.40: Llama 3 405B reached 38-43% BF16 MFU on 8K-16K H100s "
    "(Dubey et al. 2024, Table 4). GPT-3 trained at 21.3% MFU (PaLM, "
    "Table 3).",
)

PRICE_PER_GPU_HOUR_PARAM = Param(
    "price_per_gpu_hour",
    "Price per GPU-hour",
    "float",
    2.0,
    unit="USD/h",
    minimum=0,
    maximum=1000,
    help="An assumption, not a quote: $2.00 per GPU-hour. Cloud and contract "
    "prices vary several-fold; enter yours.",
)

GPU_POWER_WATTS_PARAM = Param(
    "gpu_power_watts",
    "Power per accelerator",
    "float",
    None,
    unit="W",
    minimum=1,
    maximum=100_000,
    optional=True,
    placeholder="from the accelerator",
    help="Blank: the datasheet's maximum board power, as Meta's method uses "
    "(400 W for A100 in LLaMA, Table 15).",
    advanced=True,
)

PUE_PARAM = Param(
    "pue",
    "Power usage effectiveness",
    "float",
    1.1,
    minimum=1,
    maximum=3,
    help="Data-centre overhead factor; 1.1 as used by Meta (LLaMA, Table 15).",
    advanced=True,
)

CARBON_INTENSITY_PARAM = Param(
    "carbon_intensity",
    "Grid carbon intensity",
    "float",
    0.385,
    unit="kgCO2e/kWh",
    minimum=0,
    maximum=2,
    help="0.385 kgCO2e/kWh, the US national average used by Meta (LLaMA, Table 15).",
    advanced=True,
)

# --- goodput: the share of wall-clock that trains (inputs.reliability reads it) -------

GOODPUT_PARAM = Param(
    "goodput",
    "Goodput (share of wall-clock that trains)",
    "float",
    1.0,
    unit="1",
    # Below 1% a run of days would take years; the floor keeps days finite.
    minimum=0.01,
    maximum=1,
    optional=True,
    placeholder="estimated from Llama 3's failure rate",
    help="Time that advances training over elapsed time (Llama 3's effective training "
    "time: above 90% over 54 days on 16,384 H100s, Dubey et al. 2024, Sec. 3.3.4). MFU "
    "leaves restarts out (PaLM, App. B); this puts them back: days = ideal days / "
    "goodput. 1 (default) ignores failures and checkpoints, as published estimates such "
    "as Megatron's 34 days do; it is also right for an MFU read from a run's total "
    "GPU-hours (as DeepSeek-V3's), which already contains its failures. Blank: "
    "estimated by the goodput calculator's model from Llama 3's interruption rate per "
    "GPU, a synchronous checkpoint of the model state and a restart from its parts.",
)
