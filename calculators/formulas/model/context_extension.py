"""Staged context extension: training on longer sequences in steps after pre-training.

The Llama 3 report (Dubey et al. 2024, Sec. 3.4.2) extends the 405B model from 8K to
128K tokens "in six stages", on "approximately 800B training tokens", moving on only
when short-context quality has recovered and the model solves needle-in-a-haystack at
the new length. It does not give each stage's length or tokens: here the stages grow
geometrically from the pre-training length to the final one and share the tokens
equally, an assumption the page states. What a stage costs follows from its length
through the attention term (formulas.model.flops), and its time from the GPUs' rate."""

from __future__ import annotations

from dataclasses import dataclass

#: Llama 3 405B (Dubey et al. 2024, Sec. 3.4.2): six stages, 8K to 128K, ~800B tokens.
LLAMA3_STAGES = 6
LLAMA3_FINAL_LENGTH = 131_072
LLAMA3_EXTENSION_TOKENS = 800e9


@dataclass(frozen=True)
class ExtensionStage:
    """One stage: its sequence length and the tokens trained at it."""

    seq_len: int
    tokens: float


def extension_stages(start: int, final: int, stages: int, tokens: float
                     ) -> tuple[ExtensionStage, ...]:
    """``stages`` lengths from just above ``start`` to ``final``, each the same factor
    longer than the one before (8K to 128K in six: x1.59 a stage), each with an equal
    share of ``tokens``."""
    if stages < 1 or final <= start or tokens <= 0:
        raise ValueError("an extension needs at least one stage, a final length above "
                         "the start and some tokens")
    ratio = (final / start) ** (1.0 / stages)
    lengths = [round(start * ratio**i) for i in range(1, stages)] + [final]
    return tuple(ExtensionStage(length, tokens / stages) for length in lengths)
