"""The ``model_params`` calculator: a transformer's parameters, matrix by matrix, and
Megatron's Eq. 2 for the standard GPT shape (formulas.model.architecture)."""

from __future__ import annotations

from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output
from calculators.formulas.model.architecture import (
    embedding_params,
    layer_params,
    megatron_params,
    mixers_params,
    mlp_params,
    norm_params,
    total_params,
)
from calculators.inputs.architecture import ARCHITECTURE_DETAIL, ARCHITECTURE_PARAMS, architecture


def _model_params(inputs: Inputs) -> Computed:
    arch = architecture(inputs)
    total, embedding = total_params(arch), embedding_params(arch)
    eq2 = megatron_params(arch.layers, arch.hidden, arch.vocab, arch.seq_len)
    n = arch.layers
    rows = [
        (_("Attention and linear mixers (all layers)"), mixers_params(arch)),
        (_("MLP (all layers)"), n * mlp_params(arch)),
        (_("Norms (all layers + final)"), (arch.norms_per_layer * n + 1) * norm_params(arch)),
        (_("Token embedding"), arch.vocab * arch.hidden),
        (_("Position embedding"), arch.seq_len * arch.hidden if arch.learned_positions else 0),
        (_("Output layer (untied)"), 0 if arch.tied_embeddings else arch.vocab * arch.hidden),
    ]
    table = Table(
        (_("Component"), _("Parameters"), _("Share")),
        tuple((name, f"{n:,}", f"{n / total:.2%}") for name, n in rows),
        caption=_("Where the parameters are"),
    )
    notes = []
    if arch.is_standard_gpt:
        notes.append(_(
            "Standard GPT shape: Megatron's Eq. 2 gives {eq2:,.0f}; the count here adds "
            "the final LayerNorm ({norm:,}) that Eq. 2 omits.").format(
            eq2=eq2, norm=norm_params(arch)))
    else:
        notes.append(_(
            "Not the standard GPT shape, so Megatron's Eq. 2 ({eq2:.4g}) does not apply; "
            "the count here is built up matrix by matrix.").format(eq2=eq2))
    return Computed(
        values={
            "params": float(total),
            "embedding_params": float(embedding),
            "non_embedding_params": float(total - embedding),
            "params_per_layer": float(layer_params(arch)),
            "megatron_formula_params": eq2 if arch.is_standard_gpt else None,
        },
        notes=notes,
        table=table,
    )



MODEL_PARAMS = Calculator(
    id="model_params",
    headline=("params", "non_embedding_params", "embedding_params"),
    advanced=ARCHITECTURE_DETAIL,
    title="Parameters from the architecture",
    summary="Count a transformer's parameters matrix by matrix; Megatron's Eq. 2 for GPT.",
    chapter="dense.md",
    params=ARCHITECTURE_PARAMS,
    outputs=(
        Output("params", "Parameters", "param", "count"),
        Output("embedding_params", "Embedding parameters", "param", "count"),
        Output("non_embedding_params", "Non-embedding parameters", "param", "count"),
        Output("params_per_layer", "Parameters per layer", "param", "count"),
        Output("megatron_formula_params", "Megatron Eq. 2 (standard GPT shape)", "param", "count"),
    ),
    function=_model_params,
    sources=(
        "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU "
        "Clusters Using Megatron-LM (SC21), Eq. 2 and Table 1",
        "Brown et al. 2020, GPT-3, Table 2.1",
        "Shazeer 2020, GLU Variants Improve Transformer",
        "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3",
    ),
)
