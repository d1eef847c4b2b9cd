"""The ``moe_params`` calculator: a mixture-of-experts transformer's parameters, in total
(what memory holds) and active per token (what compute pays for), per layer and for the
model, matrix by matrix (formulas.moe.architecture)."""

from __future__ import annotations

from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output
from calculators.formulas.moe.architecture import (
    active_matmul_params,
    active_params,
    dense_layer_params,
    embedding_params,
    expert_params,
    mixers_params,
    moe_layer_active_params,
    moe_layer_params,
    mtp_params,
    norm_params,
    output_head_params,
    routed_expert_params_total,
    router_flops_per_token,
    router_params,
    shared_expert_params,
    total_params,
    training_flops_per_token,
)
from calculators.formulas.moe.architecture import mlp_params as ffn_params
from calculators.inputs.moe import (
    MOE_ARCHITECTURE_DETAIL,
    MOE_ARCHITECTURE_PARAMS,
    moe_architecture,
)


def _moe_params(inputs: Inputs) -> Computed:
    model = moe_architecture(inputs)
    total, active = total_params(model), active_params(model)
    compute = active_matmul_params(model)
    moe_n, dense_n, k = model.moe_layers, model.dense_layers, model.experts_per_token
    dense_ffn = ffn_params(model.hidden, model.dense_ffn, gated=model.gated_mlp)
    head = output_head_params(model)
    rows = [
        (_("Attention and linear mixers (all layers)"), mixers_params(model),
         mixers_params(model)),
        (_("Routed experts"), moe_n * model.routed_experts * expert_params(model),
         moe_n * k * expert_params(model)),
        (_("Shared experts"), moe_n * shared_expert_params(model),
         moe_n * shared_expert_params(model)),
        (_("Routers"), moe_n * router_params(model), moe_n * router_params(model)),
        (_("Dense layers' FFN"), dense_n * dense_ffn, dense_n * dense_ffn),
        (_("Norms"), (2 * model.layers + 1) * norm_params(model),
         (2 * model.layers + 1) * norm_params(model)),
        (_("Input embedding (one row read per token)"), embedding_params(model),
         embedding_params(model)),
        (_("Output head"), head, head),
    ]
    table = Table(
        (_("Component"), _("Total"), _("Active per token"), _("Share of total")),
        tuple((name, f"{t:,}", f"{a:,}", f"{t / total:.2%}") for name, t, a in rows),
        caption=_("Where the parameters are (the active column counts the whole input table)"),
    )
    notes = [
        _("{share:.1%} of the parameters are active per token: memory holds {total:.4g}B, "
          "each token's multiply-adds use {compute:.4g}B.").format(
            share=active / total, total=total / 1e9, compute=compute / 1e9),
    ]
    if model.routed_experts == 1 and k == 1:
        notes.append(_("One expert chosen from one: this is a dense model, and active = total."))
    # The MTP modules train with the model: their pass is in the FLOPs per token.
    flops = training_flops_per_token(model, include_mtp=True)
    main = training_flops_per_token(model)
    router_share = router_flops_per_token(model) / (main / 3) if main else 0.0
    if model.mtp_modules:
        said = (_("Training FLOPs per token count the {n} MTP modules too, {extra:.1%} on top "
                  "of 6 N_active: each is one more block and one more pass through the shared "
                  "output head, and trains with the model (DeepSeek-V3 report, Sec. 2.2).")
                if model.mtp_modules > 1 else
                _("Training FLOPs per token count the {n} MTP module too, {extra:.1%} on top "
                  "of 6 N_active: each is one more block and one more pass through the shared "
                  "output head, and trains with the model (DeepSeek-V3 report, Sec. 2.2)."))
        notes.append(said.format(n=model.mtp_modules, extra=flops / main - 1))
    return Computed(
        values={
            "total_params": float(total),
            "active_params": float(active),
            "active_compute_params": float(compute),
            "active_share": active / total,
            "moe_layer_params": float(moe_layer_params(model)) if moe_n else None,
            "moe_layer_active_params": float(moe_layer_active_params(model)) if moe_n else None,
            "dense_layer_params": float(dense_layer_params(model)) if dense_n else None,
            "expert_params": float(expert_params(model)),
            "routed_expert_params": float(routed_expert_params_total(model)),
            "embedding_params": float(embedding_params(model)),
            "mtp_params": float(mtp_params(model)),
            "training_flops_per_token": flops,
            "router_flops_share": router_share,
        },
        notes=notes,
        table=table,
    )


MOE_PARAMS = Calculator(
    id="moe_params",
    headline=("total_params", "active_params", "active_compute_params", "active_share"),
    advanced=MOE_ARCHITECTURE_DETAIL,
    title="Mixture of experts: total and active parameters",
    summary="Count an MoE transformer matrix by matrix: total (memory) and active per "
            "token (compute), per layer and for the model; MLA, shared experts, dense "
            "first layers.",
    chapter="moe.md",
    params=MOE_ARCHITECTURE_PARAMS,
    outputs=(
        Output("total_params", "Total parameters", "param", "count",
               help="The main model: every expert of every layer, embeddings, output head "
                    "and norms; MTP modules not included (as DeepSeek counts 671B)."),
        Output("active_params", "Active per token (whole input table counted)", "param",
               "count", help="Attention, k routed + shared experts, routers, dense layers, "
                             "both embedding tables: Mistral's convention (Mixtral: 12.9B)."),
        Output("active_compute_params", "Active per token, N for 6N (input table left out)",
               "param", "count",
               help="The weights a token multiplies: a token reads one row of the input "
                    "table. DeepSeek's published active counts fit this one (V3: 37B)."),
        Output("active_share", "Active share of the total", "1", "percent"),
        Output("moe_layer_params", "One MoE layer, total", "param", "count"),
        Output("moe_layer_active_params", "One MoE layer, active per token", "param", "count"),
        Output("dense_layer_params", "One dense layer", "param", "count"),
        Output("expert_params", "One routed expert", "param", "count"),
        Output("routed_expert_params", "All routed experts (what EP shards)", "param", "count"),
        Output("embedding_params", "Input embedding table", "param", "count"),
        Output("mtp_params", "MTP modules (unique, not in the total)", "param", "count"),
        Output("training_flops_per_token", "Training FLOPs per token, 6 N_active", "FLOP",
               "sci", help="6 per active matmul weight, the MTP modules' pass included "
                           "(they train with the model); attention scores left out (they "
                           "depend on the sequence length: moe_plan counts them)."),
        Output("router_flops_share", "Router share of the forward matmul FLOPs", "1",
               "percent"),
    ),
    function=_moe_params,
    sources=(
        "DeepSeek-AI 2024, DeepSeek-V3 Technical Report (arXiv 2412.19437), Secs. 2.1-2.2, "
        "4.2; deepseek-ai/DeepSeek-V3 config.json and README_WEIGHTS.md",
        "Jiang et al. 2024, Mixtral of Experts (arXiv 2401.04088), Sec. 2; "
        "mistralai/Mixtral-8x7B-v0.1 config.json",
        "Yang et al. 2025, Qwen3 Technical Report (arXiv 2505.09388), Table 2; "
        "Qwen/Qwen3-235B-A22B config.json",
        "Fedus et al. 2021, Switch Transformers, Sec. 2.1 (the router)",
        "Kaplan et al. 2020, Scaling Laws, Sec. 2.1 (6N per token)",
    ),
)
