"""What a computed result must never say, whatever its inputs (issue 36): shares beyond
100%, an MFU above 100% or above the MFU the reader assumed, and reports that contradict
themselves. ``problems`` lists what is wrong with one result, in words, empty when
nothing is; the property tests and the scratch fuzz share it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from calculators.catalogues import hardware
from calculators.inputs.memory import gpu_capacity

if TYPE_CHECKING:
    from collections.abc import Callable

    from calculators.core.calculator import Result

#: A relative slack for sums and comparisons of floats.
SLACK = 1e-9
SECONDS_PER_DAY = 86_400.0

#: Outputs declared as shares (unit "1", shown as a percentage) that legitimately exceed
#: 100%, each with its reason. Every other such output must lie in [0, 1].
OVER_ONE: dict[tuple[str, str], str] = {
    # Demand over capacity: above 100% is the finding ("328% utilised: does not keep
    # up"), warned about, and keeps_up says no.
    ("embedding_tiers", "hbm_utilisation"): "HBM traffic needed over HBM bandwidth",
    ("embedding_tiers", "link_utilisation"): "host-link traffic needed over its bandwidth",
    ("embedding_tiers", "dram_utilisation"): "DRAM traffic needed over DRAM bandwidth",
    ("embedding_tiers", "ssd_utilisation"): "SSD traffic needed over the drives' bandwidth",
    ("embedding_tiers", "binding_utilisation"): "the largest of the four utilisations",
    ("data_pipeline", "per_worker_nic_share"): "read rate needed over one NIC: >100% is the "
                                               "finding that loading cannot keep up",
    ("ecmp_collisions", "busiest_link_offered_load"): "oversubscription: several flows "
                                                      "hashed onto one uplink offer more "
                                                      "than its bandwidth",
    # Ratios to something else than a whole.
    ("dynamic_tables", "overhead_ratio"): "bytes of empty slots, keys and metadata over "
                                          "the live rows' bytes: 1/load_factor - 1 + ...",
    ("parallel_plan", "bubble_fraction"): "bubble over the ideal (bubble-free) time, "
                                          "(p - 1) / m for 1F1B: above 1 with few "
                                          "micro-batches per stage",
    ("moe_plan", "bubble_fraction"): "as parallel_plan's",
}

#: MFUs computed from the reader's own measurement (a step time, reported GPU-hours), not
#: modelled: above 100% they say the measurement is impossible, which the result must
#: warn about ("... of peak"); a modelled MFU never exceeds 100%.
MEASURED = frozenset({("mfu", "mfu"), ("mfu", "hfu"), ("training_compute", "implied_mfu")})


def _num(result: Result, name: str) -> float | None:
    value = result.computed.values.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _texts(result: Result) -> str:
    return " ".join([*result.computed.warnings, *result.computed.notes]).lower()


def shares(result: Result) -> list[str]:
    """Shares declared as percentages lie in [0, 1], except those of ``OVER_ONE``."""
    calc = result.calculator
    found = []
    for out in calc.outputs:
        value = _num(result, out.name)
        if out.unit != "1" or out.fmt != "percent" or value is None:
            continue
        if (calc.id, out.name) in OVER_ONE or _measured_over_one(result, out.name):
            continue
        if not -SLACK <= value <= 1 + SLACK:
            found.append(f"share {out.name} = {value!r} outside [0, 1]")
    return found


def _measured_over_one(result: Result, name: str) -> bool:
    """A measured MFU above 100% that the result warns about (see ``MEASURED``)."""
    warned = any("peak" in w for w in result.computed.warnings)
    return (result.calculator.id, name) in MEASURED and warned


def mfus(result: Result) -> list[str]:
    """No MFU above 100% (hfu included) but a warned measured one; the mfu calculator's
    HFU is at least its MFU."""
    found = []
    for out in result.calculator.outputs:
        value = _num(result, out.name)
        is_mfu = out.unit == "1" and ("mfu" in out.name or out.name == "hfu")
        if (is_mfu and value is not None and value > 1 + SLACK
                and not _measured_over_one(result, out.name)):
            found.append(f"{out.name} = {value!r} above 100%")
    mfu, hfu = _num(result, "mfu"), _num(result, "hfu")
    if mfu is not None and hfu is not None and hfu < mfu * (1 - SLACK):
        found.append(f"hfu {hfu!r} below mfu {mfu!r}")
    return found


def _cluster_sizing(result: Result) -> list[str]:
    """The run's time never implies more than the assumed MFU; a design that fits
    nowhere reports no layout; a run has a time that is not zero, but for a sparse
    design whose tables fit neither way, which reports no run at all (no days, hours
    or cost) and says why."""
    found = []
    values = result.computed.values
    days, hours = _num(result, "wall_clock_days"), _num(result, "gpu_hours")
    if values.get("training_mode") == "neither":
        if days is not None or hours is not None or values.get("cost_usd") is not None:
            found.append("a sparse design that fits neither way reports a run")
        if "neither fits" not in _texts(result).lower():
            found.append("a sparse design that fits neither way does not say so")
    elif not days or not hours:
        found.append(f"wall_clock_days {days!r}, gpu_hours {hours!r}: a run of no time")
    total, gpus, goodput = (_num(result, n) for n in ("total_flops", "num_gpus", "goodput"))
    if days and total and gpus and goodput:
        peak = hardware.get(result.inputs.text("gpu")).peak_bf16_flops
        implied = total / (gpus * peak * days * goodput * SECONDS_PER_DAY)
        if implied > result.inputs.num("utilization") * (1 + 1e-6):
            found.append(f"the run's time implies {implied:.4g} MFU, above the assumed "
                         f"utilization {result.inputs.num('utilization')!r}")
    texts = _texts(result)
    nowhere = any(w in texts for w in ("no layout fits", "neither fits", "fits nowhere"))
    if nowhere and any(values.get(n) is not None for n in ("tp", "pp", "dp", "planner_mfu")):
        found.append("says no layout fits yet reports a layout (tp/pp/dp/planner_mfu)")
    return found


def _planner(result: Result) -> list[str]:
    """parallel_plan and moe_plan: the winner fits in the GPU, counts agree, exposed
    communication is no more than the communication."""
    found = []
    fitting, evaluated = _num(result, "layouts_fitting"), _num(result, "layouts_evaluated")
    if fitting is not None and evaluated is not None and fitting > evaluated:
        found.append(f"layouts_fitting {fitting} > layouts_evaluated {evaluated}")
    memory = _num(result, "memory_per_gpu_bytes")
    capacity = gpu_capacity(result.inputs, hardware.get(result.inputs.text("gpu")))
    if memory is not None and memory > capacity * (1 + SLACK):
        found.append(f"memory_per_gpu_bytes {memory:.4g} above the GPU's {capacity:.4g}")
    if fitting == 0 and result.computed.values.get("tp") is not None:
        found.append("no layout fits, yet a layout is reported")
    for shown, whole in (("dp_exposed_time", "dp_comm_time"), ("cp_exposed_time", "cp_comm_time"),
                         ("alltoall_exposed_time", "alltoall_time")):
        part, of = _num(result, shown), _num(result, whole)
        if part is not None and of is not None and part > of * (1 + SLACK) + 1e-12:
            found.append(f"{shown} {part!r} > {whole} {of!r}")
    return found


def _ordered(result: Result, pairs: tuple[tuple[str, str], ...]) -> list[str]:
    """Each pair (small, large): small <= large."""
    found = []
    for small, large in pairs:
        a, b = _num(result, small), _num(result, large)
        if a is not None and b is not None and a > b * (1 + 1e-6) + 1e-12:
            found.append(f"{small} {a!r} > {large} {b!r}")
    return found


def _fits(result: Result) -> list[str]:
    """A "fits" output agrees with the bytes beside it and with the warnings."""
    found = []
    fits = result.computed.values.get("fits")
    total, usable = _num(result, "total_bytes"), _num(result, "usable_bytes")
    if (isinstance(fits, bool) and total is not None and usable is not None
            and fits != (total <= usable)):
        found.append(f"fits {fits} with total_bytes {total:.4g}, usable_bytes {usable:.4g}")
    warned = " ".join(result.computed.warnings).lower()
    if fits is True and ("does not fit" in warned or "doesn't fit" in warned):
        found.append("fits is true, yet a warning says it does not fit")
    if result.computed.values.get("keeps_up") is True and "does not keep up" in warned:
        found.append("keeps_up is true, yet a warning says it does not keep up")
    return found


def _tiers(result: Result) -> list[str]:
    found = _ordered(result, tuple((f"{tier}_utilisation", "binding_utilisation")
                                   for tier in ("hbm", "link", "dram", "ssd")))
    keeps, binding = result.computed.values.get("keeps_up"), _num(result, "binding_utilisation")
    if binding is not None and keeps != (binding <= 1.0):
        found.append(f"keeps_up {keeps} with binding_utilisation {binding!r}")
    hits = [_num(result, f"{tier}_hit_share") for tier in ("hbm", "dram", "ssd")]
    if all(h is not None for h in hits) and sum(h or 0.0 for h in hits) > 1 + 1e-6:
        found.append(f"hit shares {hits} sum above 1")
    return found


#: Relations between one calculator's outputs (beyond shares and MFUs).
_RELATIONS: dict[str, Callable[[Result], list[str]]] = {
    "cluster_sizing": _cluster_sizing,
    "parallel_plan": _planner,
    "moe_plan": _planner,
    "embedding_tiers": _tiers,
    "moe_params": lambda r: _ordered(r, (("active_params", "total_params"),
                                         ("routed_expert_params", "total_params"),
                                         ("moe_layer_active_params", "moe_layer_params"))),
    "moe_step": lambda r: _ordered(r, (("exposed_alltoall_time", "alltoall_time"),
                                       ("compute_time", "step_time"))),
    "incast": lambda r: _ordered(r, (("ideal_completion_s", "completion_s"),)),
    "ecmp_collisions": lambda r: _ordered(r, (("mean_flows_per_link", "expected_max_load"),
                                              ("slowest_flow_throughput",
                                               "ideal_flow_throughput"))),
}


def model_params_sum(result: Result) -> list[str]:
    """model_params: the embedding and non-embedding parameters add up to the total."""
    total, emb, rest = (_num(result, n) for n in
                        ("params", "embedding_params", "non_embedding_params"))
    if total is None or emb is None or rest is None:
        return []
    if not math.isclose(total, emb + rest, rel_tol=1e-9):
        return [f"params {total!r} != embedding {emb!r} + non-embedding {rest!r}"]
    return []


_RELATIONS["model_params"] = model_params_sum


def problems(result: Result) -> list[str]:
    """Everything ``result`` says that cannot be: empty when it is consistent."""
    relation = _RELATIONS.get(result.calculator.id)
    return [*shares(result), *mfus(result), *_fits(result),
            *(relation(result) if relation else [])]
