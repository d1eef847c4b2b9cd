"""Recommendation models of 2026 (docs/sparse.md): published figures for streaming
training, its syncs and its checkpoints (Check-N-Run, Eisenman et al., NSDI 2022)."""

from __future__ import annotations

from published_checks import Check

_CHECK_N_RUN = "https://www.usenix.org/conference/nsdi22/presentation/eisenman"

CHECKS: tuple[Check, ...] = (
    Check(
        id="check-n-run-4bit-row", chapter="sparse.md",
        claim="A 128-wide fp32 embedding row quantised to 4 bits with an fp16 scale and "
              "bias: how much smaller",
        source="Derivation: 128 x 4 B = 512 B against 128 x 4 bits = 64 B plus 2 x 2 B "
               "of scale and bias = 68 B; 512 / 68 = 7.53 (row-wise quantisation as "
               "Check-N-Run applies it to checkpoints, Eisenman et al., NSDI 2022)",
        url=_CHECK_N_RUN, derived=True,
        calculator="streaming_training",
        inputs={"embedding_dim": 128, "checkpoint_bits": 4, "qparam_bytes": 4},
        output="checkpoint_row_quantisation_ratio", published=512 / 68, rel_tol=1e-9,
        why_tolerance="exact byte arithmetic",
    ),
    Check(
        id="check-n-run-capacity-top", chapter="sparse.md",
        claim="The top of Check-N-Run's capacity reduction, 8x, is what 4-bit quantisation "
              "of fp32 rows gives once the per-row scale and bias are small",
        source="Check-N-Run abstract: capacity reduced \"by 2.5-8x on real-world models at "
               "Facebook\". Derivation: fp32 to 4 bits is 32 / 4 = 8x; a 1,024-wide row "
               "with 4 B of scale and bias: 4,096 B / (512 + 4) B = 7.94, within 1% of 8",
        url=_CHECK_N_RUN, derived=True,
        calculator="streaming_training",
        inputs={"embedding_dim": 1024, "checkpoint_bits": 4, "qparam_bytes": 4},
        output="checkpoint_row_quantisation_ratio", published=8.0, rel_tol=0.01,
        why_tolerance="the scale and bias of a 1,024-wide row cost 0.8%; whether the "
                      "paper's 8x comes from 4 bits alone is not stated in its abstract",
    ),
)
