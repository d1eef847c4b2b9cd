"""Generative recommenders (docs/sparse.md): the HSTU paper's activation bytes per
layer, and the parameters of the reference code's layers at its published
configurations."""

from __future__ import annotations

from functools import partial

from calculators.formulas.sparse.generative import SequenceModel
from published_checks import Check

_REPO = "https://github.com/facebookresearch/generative-recommenders"
_EXACT = "a count of weights: it must match exactly"


def _layer_params(block: str, d: int, heads: int, head_dim: int) -> float:
    model = SequenceModel(block=block, layers=1, d_model=d, heads=heads, qk_dim=head_dim,
                          v_dim=head_dim, ffn=0)
    return float(model.layer_params())


def _activation_per_width(block: str) -> float:
    """Bytes per token per layer over d, at h d_qk = h d_v = d (HSTU's setting)."""
    model = SequenceModel(block=block, layers=1, d_model=1024, heads=8, qk_dim=128,
                          v_dim=128, ffn=4096)
    return model.activation_bytes_per_token() / 1024


CHECKS: tuple[Check, ...] = (
    Check(
        id="hstu-activation-bytes", chapter="sparse.md",
        claim="HSTU: activation bytes kept per token per layer, in units of d, in bf16",
        source="Zhai et al. 2024 (arXiv:2402.17152), Sec. 3: 14d per layer for HSTU against "
               "about 33d for a transformer. The guide counts what the backward needs: the "
               "input, f1's output, the attention output and f2's gated input, "
               "d + 4d + d + d = 7d values of 2 bytes",
        url="https://arxiv.org/abs/2402.17152",
        formula=partial(_activation_per_width, "hstu"),
        formula_name="SequenceModel.activation_bytes_per_token / d",
        unit="count", published=14.0, rel_tol=0.0, why_tolerance="a count of tensors",
    ),
    Check(
        id="hstu-ml20m-layer-params", chapter="sparse.md",
        claim="HSTU research layer at the MovieLens-20M configuration (d 256, 4 heads of "
              "64): weights per layer",
        source="Derivation from facebookresearch/generative-recommenders research/modeling/"
               "sequential/hstu.py (f1 without bias: 256 x 4 x (2 x 64 + 2 x 64); f2 = "
               "Linear(4 x 64, 256) with bias) and configs/ml-20m/hstu-sampled-softmax-"
               "n128-final.gin: 262,144 + 65,792 = 327,936",
        url=_REPO, derived=True,
        formula=partial(_layer_params, "hstu", 256, 4, 64),
        formula_name="SequenceModel.layer_params", unit="param",
        published=327_936, rel_tol=0.0, why_tolerance=_EXACT,
    ),
    Check(
        id="dlrm-v3-stu-layer-params", chapter="sparse.md",
        claim="STU layer of the DLRM-v3 reference (d 512, 4 heads of 128): weights per layer",
        source="Derivation from facebookresearch/generative-recommenders modules/stu.py "
               "(f1 512 x 2,048 with a bias of 2,048; f2 1,536 x 512 without bias; input "
               "LayerNorm 2 x 512; group norm 2 x 4) and dlrm_v3/configs.py "
               "(get_hstu_configs): 1,048,576 + 2,048 + 786,432 + 1,024 + 8 = 1,838,088",
        url=_REPO, derived=True,
        formula=partial(_layer_params, "stu", 512, 4, 128),
        formula_name="SequenceModel.layer_params", unit="param",
        published=1_838_088, rel_tol=0.0, why_tolerance=_EXACT,
    ),
)
