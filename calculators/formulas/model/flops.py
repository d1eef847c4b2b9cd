"""FLOPs: the training-compute rule C = kND, the model FLOPs per token every calculator
counts (one function, ``model_flops_per_token``, under a named convention), what
recomputation adds for HFU, and the GPU-time, energy and carbon that follow. Each
formula cites its source."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from calculators.core.i18n import N_, _
from calculators.formulas.model.architecture import matmul_params, stack_matmul_params

if TYPE_CHECKING:
    from calculators.formulas.model.architecture import Architecture

SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0

#: Hoffmann et al. 2022 (Chinchilla), Table 3: compute-optimal training uses about
#: 20 tokens per parameter (e.g. 70B parameters on 1.4T tokens). Fitted on dense models.
CHINCHILLA_TOKENS_PER_PARAM = 20.0
#: Beyond this factor either side of the Chinchilla ratio the page says so.
CHINCHILLA_NOTE_FACTOR = 2.0


# --- conventions: what "model FLOPs per token" counts ---------------------------------


@dataclass(frozen=True)
class FlopCount:
    """A convention for model FLOPs per token: 6 per weight a token multiplies (N: every
    parameter but the input embedding, a lookup; the output layer once, tied or not),
    plus ``attention_share`` of the attention scores' full training FLOPs (QK^T and
    scores x V over the whole s x s matrix). ``former`` are ids it had before, which
    old links still carry."""

    id: str
    label: str
    attention_share: float
    basis: str
    former: tuple[str, ...] = ()

    def describe(self) -> str:
        """The convention in words, for notes: what it counts and who counts so."""
        return _("{label}: {basis}").format(label=_(self.label), basis=_(self.basis))


#: PaLM (Chowdhery et al. 2022, App. B: 6N + 12 L H Q T), Korthikanti et al. 2022
#: (72 B s l h^2 (1 + s/(6h) + V/(12lh))), torchtitan (get_dense_model_nparams_and_flops:
#: "we follow the convention and do not account for sparsity in causal attention").
FULL_ATTENTION = FlopCount(
    "6N+attention", N_("6N + full attention (PaLM)"), 1.0,
    N_("the whole s x s score matrix, as PaLM (App. B), Korthikanti et al. 2022 and "
       "torchtitan count it"),
    former=("megatron",))
#: Megatron-LM's num_floating_point_operations (megatron/training/training.py) since
#: 2025: the core-attention term "/ 2  # causal mask (only half of the mask is non-zero)".
CAUSAL_ATTENTION = FlopCount(
    "6N+causal_attention", N_("6N + causal attention (Megatron-LM since 2025)"), 0.5,
    N_("the half of the score matrix a causal mask leaves, as Megatron-LM has counted "
       "since 2025"))
#: Kaplan et al. 2020, Sec. 2.1: C = 6ND; the GPT-3 (Brown et al. 2020, App. D) and
#: Llama 3 (Dubey et al. 2024, Sec. 3.2.1) compute totals count so.
SIX_N = FlopCount(
    "6N", N_("6N, attention left out (Kaplan)"), 0.0,
    N_("no attention scores, Kaplan et al. 2020's C = 6ND, as the GPT-3 and Llama 3 "
       "papers count their compute totals"))
FLOP_COUNTS: tuple[FlopCount, ...] = (FULL_ATTENTION, CAUSAL_ATTENTION, SIX_N)
#: What every calculator counts unless the reader chooses otherwise: the convention of
#: the published MFUs the guide quotes (PaLM 46.2%; Llama 3 cites PaLM).
DEFAULT_FLOP_COUNT = FULL_ATTENTION


def computed_count(count: FlopCount, attention: str) -> FlopCount:
    """``count``, with no more of the attention scores than the step's kernel computes: a
    fused causal kernel (FlashAttention) skips the masked half, a materialised one
    computes the whole matrix. The planners' MFU counts so: over scores no kernel
    computes, an MFU passes the kernels' efficiency, and 100% at long sequences (PaLM's
    count at 1M tokens is about twice the FLOPs the step runs)."""
    if attention == "fused" and count.attention_share > CAUSAL_ATTENTION.attention_share:
        return CAUSAL_ATTENTION
    return count


def flop_count(count_id: str) -> FlopCount:
    """The convention named ``count_id`` (or one of its former ids)."""
    for count in FLOP_COUNTS:
        if count_id == count.id or count_id in count.former:
            return count
    raise KeyError(f"no FLOP count {count_id!r}")


# --- the one count of model FLOPs per token -------------------------------------------


def attention_score_flops(
    *, layers: int, seq_len: int, heads: int, qk_head_dim: float, v_head_dim: float
) -> float:
    """Training FLOPs per token of QK^T and scores x V over the whole s x s matrix:
    6 L s n_h (d_qk + d_v). Per layer and token, forward 2 s d_qk per head for the
    scores and 2 s d_v for the weighted sum of V, times 3 for forward + backward.
    With d_qk = d_v = d_model / n_h this is PaLM's 12 L H Q T (Chowdhery et al. 2022,
    App. B); torchtitan's quadratic_attention_flops_per_token is the same form. Under a
    causal mask half the matrix is computed: a convention's ``attention_share``."""
    return 6.0 * layers * seq_len * heads * (qk_head_dim + v_head_dim)


def model_flops_per_token(
    flop_params: float, full_attention: float, count: FlopCount = DEFAULT_FLOP_COUNT,
    flops_per_param_token: float = 6.0,
) -> float:
    """Model FLOPs per token, the one count every calculator uses: k N + the counted
    share of the attention scores, scaled k/6 alike (k = 8 repeats the forward pass
    under full recomputation, Narayanan et al. 2021, Sec. 5.1). ``flop_params`` is N,
    the weights a token multiplies; ``full_attention`` from ``attention_score_flops``."""
    scale = flops_per_param_token / 6.0
    return flops_per_param_token * flop_params + scale * count.attention_share * full_attention


def dense_attention_flops(arch: Architecture) -> float:
    """``attention_score_flops`` for a dense transformer (Q, K and V heads of one size),
    summed over its attention layers at the keys each is charged for
    (``LayerMix.key_length``): s for full attention, less for a window, the documents'
    length under document masking (``arch.documents``); none for linear layers."""
    keys = arch.mix.key_length_sum(arch.layers, arch.seq_len, arch.documents)
    return 6.0 * keys * arch.heads * 2.0 * arch.head_dim


def counted_mixing_flops(arch: Architecture, count: FlopCount = DEFAULT_FLOP_COUNT) -> float:
    """The sequence mixing ``count`` counts per token: its share of the attention scores,
    plus the linear-attention layers' recurrence (no mask to halve it: counted whole by
    every convention that counts attention, left out with it by 6N)."""
    linear = arch.mix.linear_flops_per_token(arch.layers) if count.attention_share else 0.0
    return count.attention_share * dense_attention_flops(arch) + linear


def dense_model_flops_per_token(
    arch: Architecture, count: FlopCount = DEFAULT_FLOP_COUNT, params: float | None = None,
    flops_per_param_token: float = 6.0,
) -> float:
    """``model_flops_per_token`` of a dense transformer: N = ``params`` or the
    architecture's matrix weights (``matmul_params``). Under FULL_ATTENTION it is
    Korthikanti et al. 2022's model FLOPs, 72 B s l h^2 (1 + s/(6h) + V/(12lh)) per
    iteration for the standard GPT shape, and torchtitan's count for Llama."""
    flop_params = float(matmul_params(arch)) if params is None else params
    return (flops_per_param_token * flop_params
            + flops_per_param_token / 6.0 * counted_mixing_flops(arch, count))


def recompute_flops_per_token(
    arch: Architecture, recompute: str, count: FlopCount = DEFAULT_FLOP_COUNT
) -> float:
    """FLOPs recomputation adds (hardware, not model, FLOPs), the attention scores in
    ``count``'s share.

    full: one more forward pass of every layer, 2 x the layers' matrix weights + a third
    of the attention term; with FULL_ATTENTION's model FLOPs this is Narayanan et al.
    2021, Eq. 3: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). selective: Korthikanti et al.
    2022, Sec. 6, hardware FLOPs 72 B s l h^2 (1 + s/(3h) + V/(12 l h)), i.e. the
    attention-score term counted twice.
    """
    attention = counted_mixing_flops(arch, count)
    if recompute == "full":
        return 2.0 * stack_matmul_params(arch) + attention / 3.0
    if recompute == "selective":
        return attention
    return 0.0


# --- C = kND and what follows ---------------------------------------------------------


def training_flops(params: float, tokens: float, flops_per_param_token: float = 6.0) -> float:
    """C = k N D. k = 6: forward 2 (multiply + add per weight), backward 4 (a
    multiply-add for the input gradient and one for the weight gradient); k = 8 adds
    one more forward pass under full activation recomputation (Narayanan et al. 2021,
    Sec. 5.1, Eq. 4: time ~ 8TP/(nX)). Kaplan et al. 2020, Sec. 2.1."""
    return flops_per_param_token * params * tokens


def gpu_seconds(total_flops: float, peak_flops: float, utilization: float) -> float:
    """Accelerator-seconds at ``utilization`` (MFU) of ``peak_flops``."""
    return total_flops / (peak_flops * utilization)


def energy_kwh(gpu_hours: float, power_watts: float, pue: float) -> float:
    """Meta's method (Touvron et al. 2023, LLaMA, Table 15 caption):
    energy = GPU-hours x GPU power x PUE."""
    return gpu_hours * power_watts / 1000.0 * pue


def co2_tonnes(energy: float, carbon_intensity: float) -> float:
    """tCO2e = kWh x kgCO2e/kWh / 1000 (LLaMA, Table 15 caption)."""
    return energy * carbon_intensity / 1000.0

