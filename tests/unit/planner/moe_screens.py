"""The MoE sizing's scan, watched: every micro-batch-1 screen it made, by GPU count (the
planner's fastest layout at each count it tried), beside its result."""

from __future__ import annotations

from typing import Any

import pytest

import calculators
from calculators.cluster_sizing import moe as sizing_moe


def sized_with_screens(inputs: dict[str, object]) -> tuple[Any, dict[int, Any]]:
    """``cluster_sizing`` on ``inputs``, and the screen of each GPU count it tried."""
    screens: dict[int, Any] = {}
    planner = sizing_moe.moe_plan_at

    def spy(plan_raw: Any, num_gpus: int, blame: str, **kw: Any) -> Any:
        plan = planner(plan_raw, num_gpus, blame, **kw)
        if kw.get("micro_batch") == 1:
            screens[num_gpus] = plan
        return plan

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sizing_moe, "moe_plan_at", spy)
        return calculators.compute("cluster_sizing", **inputs), screens
