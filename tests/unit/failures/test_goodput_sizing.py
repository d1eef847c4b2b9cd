"""Goodput where runs are sized: training_compute and cluster_sizing count it in their
days, GPU-hours and dollars (tests that fail without it), the estimate they share, and
the figures the "Running for weeks" chapter quotes."""

from __future__ import annotations

import pytest

import calculators
import published_checks
from calculators.catalogues import failure_rates as fr
from calculators.core.calculator import Result
from calculators.formulas.failures import goodput as gm
from calculators.formulas.failures import reliability as rel
from calculators.goodput import plan_at as goodput_plan_at
from calculators.inputs.reliability import (
    ASSUMED_RECOVERY,
    ASSUMED_STORAGE,
    Hosts,
    estimate_goodput,
)

DAY = 86_400.0
#: Llama 3 405B as compute.md runs it (Dubey et al. 2024): 15.6T tokens, 16,384 H100s.
LLAMA3_405B: dict[str, object] = {"params": "405B", "tokens": "15.6T", "gpu": "h100_sxm",
                                  "num_gpus": 16384}


def value(result: Result, name: str) -> float:
    v = result.value(name)
    assert isinstance(v, (int, float)), (name, v)
    return float(v)


# --- training_compute -----------------------------------------------------------------

def test_training_compute_divides_time_and_money_by_goodput() -> None:
    ideal = calculators.compute("training_compute", **LLAMA3_405B)
    lossy = calculators.compute("training_compute", **LLAMA3_405B, goodput=0.9)
    assert value(ideal, "goodput") == 1.0
    for name in ("gpu_hours", "wall_clock_days", "cost_usd", "energy_kwh", "co2_tonnes"):
        assert value(lossy, name) == pytest.approx(value(ideal, name) / 0.9, rel=1e-12), name
    # C and MFU are untouched: goodput is a separate factor.
    assert value(lossy, "total_flops") == value(ideal, "total_flops")
    assert value(lossy, "effective_flops_per_gpu") == value(ideal, "effective_flops_per_gpu")


def test_training_compute_blank_goodput_is_the_shared_estimate() -> None:
    result = calculators.compute("training_compute", **LLAMA3_405B, goodput="")
    plan = estimate_goodput(16384, 8, 405e9 * 14)
    assert value(result, "goodput") == pytest.approx(plan.goodput, rel=1e-12)
    assert any("estimated" in note for note in result.computed.notes)


def test_llama31_model_card_gpu_hours() -> None:
    # Meta, Llama 3.1 model card: 30.84M H100 GPU-hours for 405B. C / (peak x 40% MFU)
    # gives 26.6M (14% below); with the estimated goodput of 92.3%, 28.8M: 6.5% below.
    # The card's figure also covers work no estimate from C sees (evaluation, phases
    # below 40% MFU), so the estimate must come close from below.
    # The 26.6M and 30.84M are published checks (published_checks.long_runs:
    # llama31-405b-gpu-hours-ideal, llama31-405b-gpu-hours); the 28.8M is tested below.
    ideal = value(calculators.compute("training_compute", **LLAMA3_405B), "gpu_hours")
    lossy = value(calculators.compute("training_compute", **LLAMA3_405B, goodput=""),
                  "gpu_hours")
    card = published_checks.get("llama31-405b-gpu-hours").published
    assert ideal < lossy
    assert 0.9 < lossy / card < 1.0


def test_gpu_hours_with_the_estimated_goodput() -> None:
    # Llama 3.1 405B as long-runs.md runs it, divided by the estimated goodput: 28.8M.
    ideal = value(calculators.compute("training_compute", **LLAMA3_405B), "gpu_hours")
    lossy = calculators.compute("training_compute", **LLAMA3_405B, goodput="")
    assert value(lossy, "gpu_hours") == pytest.approx(28.8e6, rel=2e-3)
    assert value(lossy, "gpu_hours") == pytest.approx(ideal / value(lossy, "goodput"),
                                                      rel=1e-12)


@pytest.mark.parametrize("bad", [0, "0.5%", 1.01, "-0.2", "lots"])
def test_goodput_bounds(bad: object) -> None:
    for calc_id in ("training_compute", "cluster_sizing"):
        with pytest.raises(calculators.ValidationError) as caught:
            calculators.compute(calc_id, goodput=bad)
        assert caught.value.input_name == "goodput"


def test_an_estimate_too_low_to_finish_names_goodput() -> None:
    # 10 million GPUs at Llama 3's rate: an interruption every 18 s.
    with pytest.raises(calculators.ValidationError) as caught:
        calculators.compute("training_compute", num_gpus=10_000_000, goodput="")
    assert caught.value.input_name == "goodput"


# --- cluster_sizing ---------------------------------------------------------------------

def test_cluster_sizing_sizes_for_the_deadline_in_wall_clock() -> None:
    # A goodput of 50% halves the useful time before the deadline: twice the GPUs.
    full = calculators.compute("cluster_sizing")
    half = calculators.compute("cluster_sizing", goodput=0.5)
    assert value(half, "gpus_for_deadline") == pytest.approx(
        2 * value(full, "gpus_for_deadline"), rel=1e-12)
    assert value(half, "num_gpus") >= value(half, "gpus_for_deadline")
    deadline = float(half.inputs["deadline_days"])  # type: ignore[arg-type]
    assert value(half, "wall_clock_days") <= deadline * (1 + 1e-12)
    # GPU-hours are GPUs x wall-clock, failures included; cost follows them.
    assert value(half, "gpu_hours") == pytest.approx(
        value(half, "num_gpus") * value(half, "wall_clock_days") * 24, rel=1e-12)
    assert value(half, "cost_usd") == pytest.approx(value(half, "gpu_hours") * 2.0)
    assert value(half, "goodput") == 0.5


def test_cluster_sizing_estimate_and_checkpoint_outputs() -> None:
    result = calculators.compute("cluster_sizing", goodput="")
    n = int(value(result, "num_gpus"))
    checkpoint = value(result, "checkpoint_bytes")
    plan = estimate_goodput(n, 8, checkpoint)
    assert value(result, "goodput") == pytest.approx(plan.goodput, rel=1e-12)
    assert value(result, "checkpoint_interval") == pytest.approx(plan.interval_s)
    assert value(result, "checkpoint_write_time") == pytest.approx(plan.write_s)
    # GPT-3's 174.6B parameters at 14 B each (weights + optimizer state, no gradients).
    assert checkpoint == pytest.approx(174.6e9 * 14, rel=2e-3)
    rows = [row[0] for row in (result.computed.table.rows if result.computed.table else ())]
    assert "Goodput" in rows


# --- the chapter's figures ----------------------------------------------------------------

def rel_parts(result: Result) -> tuple[tuple[str, float], ...]:
    """The restart's parts as the goodput calculator computed them for ``result``."""
    plan = goodput_plan_at(result.inputs, result.inputs.whole("num_gpus"))
    assert plan.restart_parts is not None
    return plan.restart_parts.rows()


def goodput(**inputs: object) -> Result:
    return calculators.compute("goodput", **inputs)


def test_long_runs_chapter_figures() -> None:
    # docs/long-runs.md quotes these; each is recomputed here.
    base = goodput()
    assert value(base, "goodput") == pytest.approx(0.923, abs=0.0005)
    assert f"{value(base, 'recovery_time') / 60:.1f}" == "9.8"
    assert value(base, "checkpoint_interval") / 60 == pytest.approx(4.16, abs=0.005)
    assert value(base, "lost_work_per_failure") / 60 == pytest.approx(2.09, abs=0.005)
    assert f"{value(base, 'extra_days'):.1f}" == "5.7"
    assert f"{value(base, 'extra_cost_usd') / 1e6:.1f}" == "4.4"
    assert rel.per_gpu_mtbf_s(419, 54 * DAY, 16384) / 3600 == pytest.approx(50_700, rel=1e-3)
    assert rel.scaled_mtbi_s(419, 54 * DAY, 16384, 1024) / 3600 == pytest.approx(49, abs=0.5)
    for interval, shown in (("8.3 min", "91.8%"), ("2.1 min", "91.8%"), ("30 min", "86.8%")):
        assert f"{value(goodput(checkpoint_interval=interval), 'goodput'):.1%}" == shown
    slow = goodput(storage_bandwidth="100GB/s")
    assert (f"{value(slow, 'goodput'):.1%}", round(value(slow, "checkpoint_stall"))) == (
        "84.7%", 57)
    assert value(slow, "checkpoint_interval") / 60 == pytest.approx(18, abs=0.5)
    assert f"{value(goodput(storage_bandwidth='100GB/s', asynchronous=True), 'goodput'):.1%}" == (
        "93.2%")
    spares = goodput(hot_spares=False)
    assert (f"{value(spares, 'goodput'):.1%}", round(value(spares, "recovery_time") / 60)) == (
        "71.7%", 57)
    for gpus, shown in ((1024, "98.7%"), (131072, "48.6%")):
        assert f"{value(goodput(num_gpus=gpus), 'goodput'):.1%}" == shown
    # The restart's parts (the chapter's table), and the downtime with detection.
    for gpus, (nccl, restart, down) in ((1024, ("2.8 s", "7.1", "9.1")),
                                         (16384, ("45 s", "7.8", "9.8")),
                                         (131072, ("6.0 min", "13.1", "15.1"))):
        result = goodput(num_gpus=gpus)
        parts = dict(rel_parts(result))
        nccl_text = (f"{parts['NCCL communicators']:.2g} s" if parts["NCCL communicators"] < 60
                     else f"{parts['NCCL communicators'] / 60:.1f} min")
        assert (nccl_text, f"{value(result, 'time_to_restart') / 60:.1f}",
                f"{value(result, 'recovery_time') / 60:.1f}") == (nccl, restart, down)
        assert f"{parts['read the checkpoint']:.2g}" == "2.8"
    fast = goodput(num_gpus=131072, detection_time=30, restart_time=120)
    assert f"{value(fast, 'goodput'):.1%}" == "84.1%"
    # ">90%" read backwards: the longest downtime per interruption (planned stops costing
    # the same) that still reaches 90% with these checkpoints is about 14 minutes.
    m = value(base, "mtbi")
    tau, stall = value(base, "checkpoint_interval"), value(base, "checkpoint_stall")
    low, high = 0.0, 3600.0
    for _ in range(60):
        mid = (low + high) / 2
        g = rel.goodput_with_planned_stops(rel.daly_goodput(tau, stall, mid, m), 0.87, DAY,
                                           mid)
        low, high = (mid, high) if g > 0.9 else (low, mid)
    assert low / 60 == pytest.approx(14, abs=0.5)


#: The capstone's Llama-3-70B-class run (docs/capstone.md), 30 days on H100s.
LLAMA3_70B_30_DAYS: dict[str, object] = {
    "layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 28672,
    "vocab": 128256, "seq_len": 8192, "gated_mlp": True, "biases": False,
    "position_embedding": "rotary", "tied_embeddings": False, "gpu": "h100_sxm",
    "tokens": "15T", "deadline_days": 30, "global_batch": 2048, "utilization": "40%",
    "flops_per_param_token": 6}


def test_capstone_figures_with_failures() -> None:
    # docs/capstone.md, "Training data storage and loading": each quoted figure.
    ideal = calculators.compute("cluster_sizing", **LLAMA3_70B_30_DAYS)
    lossy = calculators.compute("cluster_sizing", **LLAMA3_70B_30_DAYS, goodput="")
    assert value(lossy, "checkpoint_bytes") / 1e9 == pytest.approx(988, abs=0.5)
    assert f"{value(lossy, 'goodput'):.1%}" == "96.4%"
    assert f"{1 - value(lossy, 'goodput'):.1%}" == "3.6%"
    assert value(lossy, "checkpoint_interval") / 60 == pytest.approx(2.5, abs=0.05)
    assert value(lossy, "checkpoint_write_time") == pytest.approx(0.49, abs=0.005)
    assert round(value(ideal, "gpus_for_deadline"), -1) == 7040
    assert round(value(lossy, "gpus_for_deadline"), -1) == 7280
    assert value(lossy, "num_gpus") == value(ideal, "num_gpus") == 8192
    assert (round(value(ideal, "wall_clock_days"), 1), round(value(lossy, "wall_clock_days"), 1)
            ) == (25.8, 26.7)
    assert value(lossy, "gpu_hours") / 1e6 == pytest.approx(5.26, abs=0.005)
    assert value(lossy, "cost_usd") / 1e6 == pytest.approx(10.51, abs=0.005)
    assert value(lossy, "cost_usd") / value(ideal, "cost_usd") == pytest.approx(1.04, abs=0.005)
    # Each interruption: 2 minutes to notice, a 7.4-minute restart at 8,192 GPUs, of which
    # NCCL's communicators take 23 s (the restart's parts, formulas.failures.restart).
    plan = estimate_goodput(8192, 8, value(lossy, "checkpoint_bytes"))
    assert plan.restart_parts is not None
    assert (f"{plan.downtime_s / 60:.1f}", f"{plan.restart_s / 60:.1f}",
            f"{plan.restart_parts.comm_init_s:.0f}") == ("9.4", "7.4", "23")


def test_sparse_sizing_counts_goodput_too() -> None:
    # The capstone's recommender (100 features of 10 IDs over 1,000 tables), 14 days.
    sparse = {"model_kind": "sparse", "num_tables": 1000, "rows_per_table": "93.75M",
              "embedding_dim": 128, "num_sparse_features": 100, "gpu": "h100_sxm",
              "deadline_days": 14, "dense_on_ps": False, "utilization": "40%",
              "flops_per_param_token": 6}
    full = calculators.compute("cluster_sizing", **sparse)
    half = calculators.compute("cluster_sizing", **sparse, goodput=0.5)
    assert value(half, "goodput") == 0.5
    assert value(half, "wall_clock_days") <= 14 * (1 + 1e-9)
    assert value(half, "gpu_hours") == pytest.approx(
        value(half, "num_gpus") * value(half, "wall_clock_days") * 24, rel=1e-9)
    # Half the deadline trains: the 7.5-day run of the full goodput takes 15 days at
    # 50%, so the sizing must buy speed (more workers or PS hosts) to stay inside 14.
    assert value(full, "wall_clock_days") / 0.5 > 14
    assert (value(half, "num_gpus"), value(half, "ps_hosts")) != (
        value(full, "num_gpus"), value(full, "ps_hosts"))
    # The capstone's figures for it with goodput left blank: 98.9%, a 55.3 s checkpoint
    # write, a checkpoint every 4.7 h.
    blank = calculators.compute("cluster_sizing", **sparse, goodput="")
    assert blank.inputs == calculators.compute("cluster_sizing", **RECOMMENDER).inputs
    assert value(blank, "goodput") == pytest.approx(0.989, abs=0.0005)
    assert value(blank, "checkpoint_write_time") == pytest.approx(55.3, abs=0.05)
    assert value(blank, "checkpoint_interval") / 3600 == pytest.approx(4.7, abs=0.05)
    table = blank.computed.table
    assert table is not None
    assert any("an interruption every 30.4 days" in row[2] for row in table.rows)


RECOMMENDER: dict[str, object] = {
    "model_kind": "sparse", "num_tables": 1000, "rows_per_table": "93.75M",
    "embedding_dim": 128, "num_sparse_features": 100, "gpu": "h100_sxm",
    "deadline_days": 14, "dense_on_ps": False, "utilization": "40%",
    "flops_per_param_token": 6, "goodput": ""}


def test_a_parameter_servers_checkpoint_goes_through_its_nic() -> None:
    # Issue 32: 48.4 TB in 27 s (1.77 TB/s) from 70 hosts with one 100 GbE port each,
    # which carry at most 875 GB/s. Each server writes its share of the tables through
    # its NIC, so the write takes at least tables / (servers x NIC): 55.3 s.
    result = calculators.compute("cluster_sizing", **RECOMMENDER)
    servers, nic = value(result, "ps_hosts"), 100e9 / 8
    assert servers == 70
    tables = value(result, "embedding_bytes")
    write = value(result, "checkpoint_write_time")
    assert write >= tables / (servers * nic) * (1 - 1e-12)
    assert write == pytest.approx(tables / (servers * nic), rel=1e-9)
    assert write == pytest.approx(55.3, abs=0.05)
    goodput_row = next(r for r in (result.computed.table.rows if result.computed.table else ())
                       if r[0] == "Goodput")
    assert "at the 70 parameter servers' 12.5 GB/s NICs (691 GB each)" in goodput_row[2]
    # A restart reads the tables back through the same ports.
    plan = estimate_goodput(8, 8, value(result, "checkpoint_bytes"),
                            hosts=Hosts(70, tables, nic))
    assert plan.read_s == pytest.approx(write)
    assert plan.restart_parts is not None
    assert plan.restart_parts.checkpoint_read_s == pytest.approx(write)
    # With more servers (1,000 features: 175) their ports outrun the storage's 2 TB/s.
    many = calculators.compute("cluster_sizing", **{**RECOMMENDER, "num_sparse_features": 1000})
    storage = ASSUMED_STORAGE.aggregate_bytes_per_s
    assert value(many, "ps_hosts") * nic > storage
    assert value(many, "checkpoint_write_time") == pytest.approx(
        value(many, "checkpoint_bytes") / storage, rel=1e-9)


def test_parameter_servers_fail_at_llama3s_host_rate() -> None:
    # A CPU server is a host without GPUs: Table 5's host rows (46 in 54 days on 2,048
    # hosts, Dubey et al. 2024) per server, Llama 3's whole rate per GPU for the GPUs.
    plan = estimate_goodput(8, 8, 48.4e12, hosts=Hosts(70, 48.4e12, 12.5e9))
    host = 54 * DAY * 2048 / 46
    gpu = 54 * DAY * 16384 / 419
    assert plan.mtbi_s == pytest.approx(1 / (8 / gpu + 70 / host), rel=1e-12)
    # The capstone's comparison: the servers stop the job 7.7 times as often as the GPUs;
    # at Google's rate for a new cluster (about 1,000 failures among 1,800 machines in a
    # year, Dean, LADIS 2009) the job would stop every 9.1 days, goodput 98.3%.
    assert f"{(70 / host) / (8 / gpu):.1f}" == "7.7"
    google = fr.GOOGLE_NEW_CLUSTER
    per_machine_s = google.period_s * google.machines / google.failures
    assert f"{per_machine_s ** -1 * host:.1f}" == "3.7"
    mtbi = 1 / (8 / gpu + 70 / per_machine_s)
    assert f"{mtbi / DAY:.1f}" == "9.1"
    worse = gm.plan_goodput(mtbi_s=mtbi, checkpoint_bytes=48.4e12 + 50e6 * 14, gpus=8,
                            gpus_per_node=8, storage=ASSUMED_STORAGE, recovery=ASSUMED_RECOVERY,
                            hosts=Hosts(70, 48.4e12, 12.5e9).writers())
    assert f"{worse.goodput:.1%}" == "98.3%"


def test_the_help_does_not_invite_counting_failures_twice() -> None:
    # Issue 32, item 5: an MFU read from a run's total GPU-hours already contains its
    # failures; the inputs and the Goodput row say to give it with goodput 1.
    calc = calculators.REGISTRY["cluster_sizing"]
    helps = {p.name: p.help for p in calc.params}
    assert "goodput 1" in helps["utilization"] and "counted twice" in helps["utilization"]
    assert "already contains its failures" in helps["goodput"]
    given = calculators.compute("cluster_sizing", goodput=1)
    goodput_row = next(r for r in (given.computed.table.rows if given.computed.table else ())
                       if r[0] == "Goodput")
    assert "total GPU-hours already contains its failures" in goodput_row[2]
