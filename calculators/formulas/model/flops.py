"""FLOPs: the training-compute rule C = kND, the FLOPs per token of a transformer
(model FLOPs for MFU, what recomputation adds for HFU), and the GPU-time, energy and
carbon that follow. Each formula cites its source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.formulas.model.architecture import matmul_params_per_layer

if TYPE_CHECKING:
    from calculators.formulas.model.architecture import Architecture

SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0

#: Hoffmann et al. 2022 (Chinchilla), Table 3: compute-optimal training uses about
#: 20 tokens per parameter (e.g. 70B parameters on 1.4T tokens).
CHINCHILLA_TOKENS_PER_PARAM = 20.0
#: Beyond this factor either side of the Chinchilla ratio the page says so.
CHINCHILLA_NOTE_FACTOR = 2.0


def training_flops(params: float, tokens: float, flops_per_param_token: float = 6.0) -> float:
    """C = k N D. k = 6: forward 2 (multiply + add per weight), backward 4 (a
    multiply-add for the input gradient and one for the weight gradient); k = 8 adds
    one more forward pass under full activation recomputation (Narayanan et al. 2021,
    Sec. 5.1, Eq. 4: time ~ 8TP/(nX)). Kaplan et al. 2020, Sec. 2.1."""
    return flops_per_param_token * params * tokens


def attention_flops(
    tokens: float, n_layers: int, seq_len: int, d_model: int, flops_per_param_token: float = 6.0
) -> float:
    """The attention-score term that C = kND leaves out.

    PaLM (Chowdhery et al. 2022, App. B) counts 12 L H Q T training FLOPs per token for
    QK^T and AV (forward 4 L d s, times 3 for forward + backward); with k/6 scaling the
    recompute case. Kaplan et al. (Table 1, Eq. 2.2) count half of it without saying
    why; causal masking is the usual reading, an interpretation."""
    per_token = 2.0 * flops_per_param_token * n_layers * seq_len * d_model
    return per_token * tokens


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


def attention_score_flops_per_token(arch: Architecture) -> float:
    """QK^T and scores x V, forward + backward, no causal saving: 12 l s (heads x
    head_dim) per token (PaLM App. B's 12 L H Q T; Korthikanti's s/(6h) term)."""
    return 12.0 * arch.layers * arch.seq_len * arch.attention_width


def megatron_model_flops_per_token(arch: Architecture) -> float:
    """Korthikanti et al. 2022, Sec. 6: model FLOPs per iteration 72 B s l h^2 (1 + s/(6h)
    + V/(12 l h)), divided by the B s tokens: 6 x (matrix weights of the layers) + the
    attention scores + 6 V h for the logits. Exact for the standard GPT shape; other
    shapes use their actual matrix sizes."""
    layers = 6.0 * arch.layers * matmul_params_per_layer(arch)
    logits = 6.0 * arch.vocab * arch.hidden
    return layers + attention_score_flops_per_token(arch) + logits


def model_flops_per_token(arch: Architecture, params: float, method: str) -> float:
    """``6N``: 6N (Kaplan et al. 2020, Sec. 2.1); ``6N+attention``: 6N + 12 L H Q T (PaLM,
    App. B); ``megatron``: Korthikanti's model-FLOPs form."""
    if method == "6N":
        return 6.0 * params
    if method == "6N+attention":
        return 6.0 * params + attention_score_flops_per_token(arch)
    return megatron_model_flops_per_token(arch)


def recompute_flops_per_token(arch: Architecture, recompute: str) -> float:
    """FLOPs recomputation adds (hardware, not model, FLOPs).

    full: one more forward pass of every layer, 2 x matrix weights + 4 l s d_attn per
    token; with the model FLOPs this is Narayanan et al. 2021, Eq. 3:
    96 B s l h^2 (1 + s/(6h) + V/(16 l h)). selective: Korthikanti et al. 2022, Sec. 6,
    hardware FLOPs 72 B s l h^2 (1 + s/(3h) + V/(12 l h)), i.e. the attention-score term
    counted twice.
    """
    if recompute == "full":
        return (
            2.0 * arch.layers * matmul_params_per_layer(arch)
            + attention_score_flops_per_token(arch) / 3.0
        )
    if recompute == "selective":
        return attention_score_flops_per_token(arch)
    return 0.0
