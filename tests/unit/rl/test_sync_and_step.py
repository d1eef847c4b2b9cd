"""The weight sync (fitted to checkpoint-engine's single-engine rows) and the placements
of an RL step."""

from __future__ import annotations

import pytest

from calculators import compute
from calculators.catalogues.weight_updates import FITTED, WeightUpdate
from calculators.core.spec import ValidationError
from calculators.formulas.rl import step as rl
from calculators.formulas.rl.weight_sync import Sync, weight_sync
from calculators.inputs.machine import fabric_for
from calculators.inputs.rl import reload_for
from published_checks import preset_inputs


@pytest.mark.parametrize("row", FITTED, ids=lambda r: f"{r.model}-{r.accelerator}")
def test_the_fit_gives_back_the_rows_it_was_fitted_to(row: WeightUpdate) -> None:
    fabric = fabric_for(row.accelerator, domain=8)
    sync = weight_sync(row.model_bytes, engine_gpus=row.engine_gpus,
                       trainer_gpus=row.engine_gpus, fabric=fabric, colocated=True,
                       reload=reload_for(row.accelerator))
    assert sync.total_s == pytest.approx(row.seconds, rel=1e-9)


def test_hopper_parts_share_the_h800_reload_and_the_h20_has_its_own() -> None:
    assert reload_for("h100_sxm") == reload_for("h800")
    assert reload_for("h20").accelerator == "h20"
    assert reload_for("h20").bytes_per_s < reload_for("h800").bytes_per_s


def test_the_network_side_is_the_slower_of_receiving_and_sending() -> None:
    fabric = fabric_for("h100_sxm", domain=8)
    reload = reload_for("h100_sxm")
    many = weight_sync(1e12, engine_gpus=8, trainer_gpus=512, fabric=fabric, colocated=False,
                       reload=reload)
    few = weight_sync(1e12, engine_gpus=8, trainer_gpus=4, fabric=fabric, colocated=False,
                      reload=reload)
    assert few.transfer_s == pytest.approx(2 * many.transfer_s)
    inside = weight_sync(1e12, engine_gpus=8, trainer_gpus=512, fabric=fabric,
                         colocated=True, reload=reload)
    assert inside.transfer_s < many.transfer_s / 5


def test_grpo_runs_no_critic_and_ppo_trains_one() -> None:
    grpo = rl.Algorithm(critic=False, reference=True, reward_model=False, epochs=1)
    ppo = rl.Algorithm(critic=True, reference=True, reward_model=True, epochs=1)
    assert grpo.flops_per_token(1.0) == 10.0  # 6 update + 2 old log-probs + 2 reference
    assert ppo.flops_per_token(1.0) == 20.0  # + 8 critic + 2 reward model


def test_placements_add_or_overlap_their_phases() -> None:
    sync = Sync(1e9, 1.0, 2.0)
    together = rl.colocated(64, 100.0, 50.0, sync, 4.0)
    assert together.step_s == 157.0
    assert together.idle_share == pytest.approx(7 / 157)
    in_turn = rl.separate("disaggregated", generation_gpus=32, training_gpus=32,
                          generation_s=200.0, training_s=100.0, sync=sync)
    assert in_turn.step_s == 303.0
    overlapped = rl.separate("one_step_off", generation_gpus=32, training_gpus=32,
                             generation_s=200.0, training_s=100.0, sync=sync)
    assert overlapped.step_s == 202.0
    assert overlapped.idle_share == pytest.approx(1 - (32 * 200 + 32 * 100) / (64 * 202))
    assert 0 <= in_turn.idle_share <= 1


def test_the_split_search_finds_the_brute_force_best() -> None:
    def step_at(engines: int) -> rl.Placement:
        generating = 8 * engines
        sync = Sync(1e9, 0.5, 1.0)
        return rl.separate("one_step_off", generation_gpus=generating,
                           training_gpus=1000 - generating,
                           generation_s=30_000 / generating,
                           training_s=9_000 / (1000 - generating), sync=sync)
    found = rl.best_split(1000, 8, step_at)
    brute = min((step_at(e) for e in range(1, 125)), key=lambda p: p.step_s)
    assert found.step_s == pytest.approx(brute.step_s)


def test_the_fastest_placement_is_no_slower_than_the_chosen_one() -> None:
    for placement in rl.PLACEMENTS:
        result = compute("rl_step", placement=placement)
        values = result.computed.values
        fastest = next(row for row in result.computed.table.rows  # type: ignore[union-attr]
                       if row[0] == values["fastest"])
        assert float(fastest[5].rstrip(" s").replace(",", "")) <= round(
            float(values["step_time"])) + 1  # type: ignore[arg-type]
        assert 0 <= float(values["idle_share"]) <= 1  # type: ignore[arg-type]


def test_a_deepseek_v3_phase_sizes_in_the_page() -> None:
    values = compute("rl_step", **preset_inputs(
        "rl_step", "deepseek_v3", gpu="h800", num_gpus=512, weight_precision="fp8",
        attention_parallel="dp", placement="one_step_off")).computed.values
    assert values["generation_gpus"] + values["training_gpus"] == 512  # type: ignore[operator]
    assert 0 < values["phase_days"] < 100  # type: ignore[operator]


@pytest.mark.parametrize(("inputs", "named"), [
    ({"engine_gpus": 3}, "engine_gpus"),
    ({"num_gpus": 100, "engine_gpus": 8}, "num_gpus"),
    ({"placement": "one_step_off", "generation_gpus": 12, "engine_gpus": 8},
     "generation_gpus"),
    ({"mean_response": 20000}, "mean_response"),
    ({"max_response": 10_000_000}, "engine_gpus"),
    ({"model_kind": "moe", "total_params": 1e9}, "total_params"),
])
def test_refusals_name_the_input_to_change(inputs: dict[str, object], named: str) -> None:
    with pytest.raises(ValidationError) as refused:
        compute("rl_step", **inputs)
    assert refused.value.input_name == named
