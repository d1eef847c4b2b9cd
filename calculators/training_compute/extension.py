"""The staged context extension in ``training_compute``: which of the run's tokens are
trained at which sequence length, and what each stage adds to C
(formulas.model.context_extension)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.core.calculator import Table
from calculators.core.i18n import _
from calculators.core.spec import ValidationError
from calculators.formulas.model.context_extension import ExtensionStage, extension_stages

if TYPE_CHECKING:
    from collections.abc import Callable

    from calculators.core.calculator import Inputs


def stages_of(inputs: Inputs) -> tuple[ExtensionStage, ...]:
    """The extension's stages, or none when ``extension_tokens`` is blank."""
    tokens = inputs.opt("extension_tokens")
    if tokens is None:
        return ()
    start = inputs.opt("seq_len")
    if start is None or inputs.opt("layers") is None:
        raise ValidationError("extension_tokens", _(
            "an extension is priced by its attention: give the sequence length, the layers "
            "and the heads or width"))
    final = inputs.whole("extension_length")
    if final <= start:
        raise ValidationError("extension_length", _(
            "{final:,} tokens is not longer than the pre-training sequence of "
            "{start:,}").format(final=final, start=int(start)))
    if tokens > inputs.num("tokens"):
        raise ValidationError("extension_tokens", _(
            "the extension's tokens are part of D, so they cannot be more than D"))
    return extension_stages(int(start), final, inputs.whole("extension_stages"), tokens)


def extension_flops(stages: tuple[ExtensionStage, ...], per_token_at: Callable[[int], float],
                    base: float) -> tuple[float, Table | None]:
    """What the stages add to C over training their tokens at the pre-training length
    (``base`` FLOPs per token), and a table of the stages."""
    if not stages:
        return 0.0, None
    rows, extra = [], 0.0
    for stage in stages:
        per_token = per_token_at(stage.seq_len)
        # A longer sequence never makes a token cheaper (each document's keys are the
        # same or more); a difference below zero is rounding in two sums of ~1e20 whose
        # attention parts differ by less than their last digit (issue 36).
        extra += max(0.0, per_token - base) * stage.tokens
        rows.append((f"{stage.seq_len:,}", f"{stage.tokens:.3g}", f"{per_token:.3g}",
                     f"{per_token / base:.2f}x"))
    return extra, Table(
        (_("Sequence length"), _("Tokens"), _("FLOPs per token"), _("Against pre-training")),
        tuple(rows), caption=_("Context extension, stage by stage (lengths grow geometrically "
                               "and tokens are shared equally: an assumption)"))


def extension_note(stages: tuple[ExtensionStage, ...], extra: float, at_start: float) -> str:
    """The stages in words: lengths, tokens and what they add to C."""
    tokens = math.fsum(stage.tokens for stage in stages)
    lengths = ", ".join(f"{stage.seq_len:,}" for stage in stages)
    return _("Context extension: {tokens:.3g} of the tokens in {stages} stages of "
             "{lengths} tokens, adding {extra:.3g} FLOP ({share:.1%}) to what "
             "they would cost at the pre-training length. The report gives the stages' "
             "number and total tokens, not each stage's length and share: geometric "
             "lengths and equal shares are an assumption. Long sequences also run at a "
             "lower MFU (Llama 3 405B, Table 4: 38% at 131K against 41-43% at 8K), "
             "which the single MFU here does not model.").format(
        tokens=tokens, stages=len(stages), lengths=lengths, extra=extra, share=extra / at_start)
