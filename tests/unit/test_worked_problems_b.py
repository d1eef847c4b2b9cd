"""The worked problems and takeaways of docs/communication.md, network.md and sparse.md
(issue 37): every figure an answer states is what the calculators compute, or the
chapter's own arithmetic, and every link an answer gives opens its widget on those
figures.

As in tests/unit/test_worked_problems_a.py: each test computes a problem's figures with
``calculators.compute``, rounds as the prose does, and checks that the sentence carrying
each number is in the chapter (its Markdown folded as a reader sees a paragraph). It then
opens the answer's link as the page does, the widget's example inputs (its fence)
overridden by the link's inputs as the calculator parses them
(``calculators.core.share.decode_state``), and checks that the link gives the same
figures. A figure that moves with a model fails here with the number the page should
now say.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

import calculators
from tests.unit.worked_problems import check_share_links, link, opened, same
from tests.unit.worked_problems import says as _says
from tests.unit.worked_problems import widgets as _widgets

PAGES = ("communication.md", "network.md", "sparse.md")
#: A 400 Gb/s NIC port, 50 GB/s each way.
NIC = 50e9
#: An H100's 80 GiB less the calculators' 15% reserve.
H100_USABLE = 80 * 2**30 * 0.85
#: A CPU host's 1 TB of DRAM less the 30% kept back.
HOST_USABLE = 1e12 * 0.7


def widget(page: str, anchor: str, **over: object) -> Any:
    """The widget ``anchor`` of ``page`` computed with ``over`` changed."""
    calc_id, example = _widgets(page)[anchor]
    return calculators.compute(calc_id, **{**example, **over})


def v(result: Any, name: str) -> float:
    return float(result.value(name))


def ms(x: float, fmt: str = ".1f") -> str:
    return f"{x * 1e3:{fmt}} ms"


def gbs(x: float, fmt: str = ".1f") -> str:
    return f"{x / 1e9:{fmt}} GB/s"


def mb(x: float, fmt: str = ".1f") -> str:
    return f"{x / 1e6:{fmt}} MB"


# --- Every link in the three chapters ------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_every_share_link_opens_a_widget_with_valid_inputs(page: str) -> None:
    check_share_links(page)


# --- communication.md ----------------------------------------------------------------

def test_communication_the_gradients_of_a_7b_model_over_64_nodes() -> None:
    page = "communication.md"
    ring = {"algorithm": "ring", "message_bytes": "14GB"}
    r512 = widget(page, "multinode-allreduce", ranks=512, **ring)
    r1024 = widget(page, "multinode-allreduce", ranks=1024, **ring)
    sent = v(r512, "bytes_sent_per_rank")
    assert sent == pytest.approx(2 * 511 / 512 * 14e9)
    # The ring pools the node's eight NICs, under NVLink's 450 GB/s, at 80% efficiency.
    rate = min(8 * NIC, 450e9) * 0.8
    assert 8 * 50 == 400 and rate == pytest.approx(320e9)
    assert v(r512, "bandwidth_time_s") == pytest.approx(sent / rate)
    # 2(n - 1) = 1,022 steps: 2 x 63 across the network, the rest on NVLink.
    assert 2 * 511 == 1022 and 2 * 63 == 126 and 1022 - 126 == 896
    latency = v(r512, "latency_time_s")
    assert latency == pytest.approx(126 * 4.0e-6 + 896 * 1.9e-6)
    assert r512.value("regime") == "bandwidth" and r512.value("algorithm_used") == "ring"
    t512, t1024 = v(r512, "time_s"), v(r1024, "time_s")
    assert v(r1024, "latency_time_s") == pytest.approx(2 * latency, rel=0.01)
    assert t1024 / t512 - 1 < 0.03
    _says(page,
          f"2 × 511/512 × 14 GB = {sent / 1e9:.2f} GB",
          "8 × 50 = 400 GB/s (under NVLink's 450), and at 80% of it, 320 GB/s",
          f"{sent / 1e9:.2f} GB / 320 GB/s = {ms(v(r512, 'bandwidth_time_s'))}",
          "2(n−1) = 1,022 steps; 2 × 63 = 126 of them cross the network at 4.0 µs and the "
          f"other 896 stay on NVLink at 1.9 µs, {ms(latency, '.2f')} in all",
          f"The allreduce takes {ms(t512)}, at a busbw of {gbs(v(r512, 'busbw'), '.0f')}: "
          "bandwidth-bound",
          f"({v(r1024, 'bytes_sent_per_rank') / 1e9:.2f} GB, "
          f"{ms(v(r1024, 'bandwidth_time_s'))})",
          f"term doubles to {ms(v(r1024, 'latency_time_s'), '.2f')}, and the allreduce "
          f"takes {ms(t1024)}: doubling the ring costs under 3%")
    state = "algorithm:ring,ranks:512,message_bytes:14GB"
    same(link(page, page, "multinode-allreduce", state), r512,
         "time_s", "bytes_sent_per_rank", "busbw", "latency_time_s")
    same(opened(page, "multinode-allreduce", state.replace("512", "1024")), r1024,
         "time_s", "latency_time_s")


def test_communication_a_15_to_1_incast() -> None:
    page = "communication.md"
    inputs = {"senders": 15, "bytes_per_sender": "4MiB"}
    pfc = widget(page, "incast-31-to-1", flow_control="pfc", **inputs)
    dcqcn = widget(page, "incast-31-to-1", flow_control="dcqcn", **inputs)
    tcp = widget(page, "incast-31-to-1", flow_control="none", loss_recovery="tcp_rto",
                 **inputs)
    total, ideal = v(pfc, "total_bytes_per_receiver"), v(pfc, "ideal_completion_s")
    assert total == 15 * 4 * 2**20 == 62_914_560
    assert ideal == pytest.approx(total / NIC)
    assert v(pfc, "overflow_time_s") == pytest.approx(1e6 / (14 * NIC))
    assert 14 * 50 == 700
    for r in (pfc, dcqcn):
        assert v(r, "completion_s") == pytest.approx(ideal)
        assert v(r, "dropped_bytes") == 0
    assert v(dcqcn, "pause_time_s") < v(pfc, "pause_time_s")
    assert v(tcp, "completion_s") >= 0.2
    _says(page,
          f"15 × 4 MiB = {total:,.0f} bytes, {mb(total)}",
          f"the ideal completion is {ms(ideal, '.2f')}",
          "14 × 50 = 700 GB/s and fills 1 MB in "
          f"{v(pfc, 'overflow_time_s') * 1e6:.2f} µs",
          f"completes in the ideal {ms(v(pfc, 'completion_s'), '.2f')}, but each sender's "
          f"link stands paused for {ms(v(pfc, 'pause_time_s'), '.2f')} of it",
          f"it also completes in {ms(v(dcqcn, 'completion_s'), '.2f')}, and the pauses "
          f"shrink to {v(dcqcn, 'pause_time_s') * 1e6:.0f} µs per sender",
          f"the incast takes {ms(v(tcp, 'completion_s'), '.0f')}, "
          f"{v(tcp, 'completion_s') / ideal:.0f} times the ideal")
    linked = link(page, page, "incast-31-to-1",
                  "senders:15,bytes_per_sender:4MiB,flow_control:pfc")
    same(linked, pfc, "ideal_completion_s", "completion_s", "overflow_time_s",
         "pause_time_s")


def _p_collision(flows: int, links: int) -> float:
    """The chapter's birthday formula: 1 - m! / ((m - k)! m^k)."""
    return 1 - math.prod(1 - i / links for i in range(flows))


def test_communication_the_ecmp_takeaway() -> None:
    # "more likely than not once k reaches about 1.2 sqrt(m) (7 flows on 32 uplinks)"
    assert _p_collision(7, 32) > 0.5 > _p_collision(6, 32)
    assert round(1.2 * math.sqrt(32)) == 7
    for m in (16, 32, 64, 128, 256, 1024):
        first = next(k for k in range(2, m) if _p_collision(k, m) > 0.5)
        assert abs(first - 1.2 * math.sqrt(m)) <= 1, m
    r = calculators.compute("ecmp_collisions", flows=7, uplinks=32)
    assert v(r, "collision_probability") == pytest.approx(_p_collision(7, 32), rel=1e-6)
    _says("communication.md", "once k reaches about 1.2√m (7 flows on 32 uplinks)")


def test_communication_one_flow_or_four_per_nic() -> None:
    page = "communication.md"
    one = widget(page, "ecmp-leaf", flows=64, uplinks=64)
    four = widget(page, "ecmp-four-qps", flows=256, uplinks=64)
    assert v(one, "mean_flows_per_link") == 1 and v(four, "mean_flows_per_link") == 4
    assert f"{v(one, 'collision_probability'):.0%}" == "100%"
    assert v(one, "ideal_flow_throughput") == NIC
    slow1, slow4 = v(one, "slowest_flow_throughput"), v(four, "slowest_flow_throughput")
    assert v(one, "ecmp_efficiency") == pytest.approx(slow1 / NIC)
    assert v(four, "ecmp_efficiency") == pytest.approx(slow4 / 12.5e9)
    assert 4 * slow4 < NIC / 2
    _says(page,
          f"the busiest link carries {v(one, 'expected_max_load'):.2f} flows on average "
          "and a collision is certain (100%)",
          f"The slowest flow gets {gbs(slow1)} on average, "
          f"{v(one, 'ecmp_efficiency'):.1%} of its 50 GB/s",
          f"the busiest link carries {v(four, 'expected_max_load'):.2f}; the slowest flow "
          f"gets {gbs(slow4, '.2f')}, {v(four, 'ecmp_efficiency'):.1%} of its demand",
          f"4 × {slow4 / 1e9:.2f} = {gbs(4 * slow4)}: better, still under half the NIC")
    same(link(page, page, "ecmp-leaf", "flows:64,uplinks:64"), one,
         "expected_max_load", "slowest_flow_throughput", "ecmp_efficiency")
    same(link(page, page, "ecmp-four-qps", "flows:256,uplinks:64"), four,
         "expected_max_load", "slowest_flow_throughput", "ecmp_efficiency")


# --- network.md ----------------------------------------------------------------------

def test_network_the_radix_takeaway() -> None:
    k64 = widget("network.md", "superpod-1024")
    k128 = widget("network.md", "two-tiers-8k")
    assert v(k64, "max_gpus_two_tiers") == 64**2 / 2
    assert v(k64, "max_gpus_three_tiers") == 64**3 / 4
    assert v(k128, "max_gpus_two_tiers") == 4 * v(k64, "max_gpus_two_tiers")
    # k^2/2 GPUs on 3k/2 switches: at k = 64 the full two tiers are 64 leaves, 32 spines.
    full = widget("network.md", "superpod-1024", num_gpus=2048)
    assert v(full, "tiers") == 2 and v(full, "switches") == 3 * 64 / 2
    over = widget("network.md", "superpod-1024", num_gpus=2049)
    assert v(over, "tiers") == 3
    _says("network.md", "holds k²/2 GPUs on 3k/2 switches in two tiers and k³/4 GPUs on "
          "5k²/4 switches in three")


def test_network_4096_gpus_on_64_or_128_port_switches() -> None:
    page = "network.md"
    k64 = widget(page, "superpod-1024", num_gpus=4096)
    k128 = widget(page, "superpod-1024", num_gpus=4096, switch="sn5600_400g")
    assert v(k64, "max_gpus_two_tiers") == 2048 and v(k64, "tiers") == 3
    assert (v(k64, "leaf_switches"), v(k64, "spine_switches"),
            v(k64, "core_switches")) == (4096 / 32, 4 * 32, 128 * 32 / 64)
    assert 32 * 32 == 1024
    assert v(k64, "switches") == 128 + 128 + 64
    assert (v(k64, "host_links"), v(k64, "switch_links")) == (4096, 8192)
    assert v(k64, "transceivers") == 2 * (4096 + 8192)
    assert v(k128, "max_gpus_two_tiers") == 8192 and v(k128, "tiers") == 2
    assert (v(k128, "leaf_switches"), v(k128, "spine_switches")) == (4096 / 64, 4096 / 128)
    assert v(k128, "switch_links") == 4096
    assert v(k128, "transceivers") == 2 * (4096 + 4096)
    for r in (k64, k128):
        assert v(r, "bisection_fraction") == 1
        assert v(r, "bisection_bandwidth") == pytest.approx(102.4e12)
    assert v(k128, "transceivers") / v(k64, "transceivers") == pytest.approx(2 / 3)
    _says(page,
          "two tiers hold k²/2 = 2,048 GPUs, so 4,096 need three",
          "so 4,096 / 32 = 128 leaves; a pod of 32 leaves and 32 spines holds 32 × 32 = "
          "1,024 GPUs, so four pods bring 128 spines; their 128 × 32 = 4,096 uplinks take "
          f"4,096 / 64 = 64 core switches: {v(k64, 'switches'):,.0f} switches in all",
          "4,096 from the NICs and 8,192 between switches, "
          f"{v(k64, 'transceivers'):,.0f} transceivers",
          f"two tiers hold {v(k128, 'max_gpus_two_tiers'):,.0f} GPUs: 4,096 / 64 = 64 "
          f"leaves and 4,096 / 128 = 32 spines, {v(k128, 'switches'):,.0f} switches, with "
          "4,096 NIC links and 4,096 leaf-spine links, "
          f"{v(k128, 'transceivers'):,.0f} transceivers",
          f"full bisection of {v(k64, 'bisection_bandwidth') / 1e12:.0f} TB/s",
          f"the higher radix saves {v(k64, 'switches') - v(k128, 'switches'):,.0f} "
          "switches, a third of the optics")
    same(link(page, page, "superpod-1024", "num_gpus:4096"), k64,
         "switches", "tiers", "transceivers")
    same(link(page, page, "superpod-1024", "num_gpus:4096,switch:sn5600_400g"), k128,
         "switches", "tiers", "transceivers")


def test_network_3072_gpus_with_three_to_one_leaves() -> None:
    page = "network.md"
    over = widget(page, "leaf-three-to-one", num_gpus=3072)
    full = widget(page, "leaf-three-to-one", num_gpus=3072, leaf_oversubscription=1)
    assert v(full, "tiers") == 3 and v(over, "tiers") == 2
    assert (v(full, "leaf_switches"), v(full, "spine_switches"),
            v(full, "core_switches")) == (96, 96, 64)
    assert 64 * 48 == 3072
    assert (v(over, "leaf_switches"), v(over, "spine_switches")) == (3072 / 48, 64 * 16 / 64)
    # f = 1 - 384/3,072 = 7/8 of each GPU's bytes leave a rail leaf of 48 nodes.
    f = 1 - 48 * 8 / 3072
    assert f == 7 / 8
    alltoall = v(over, "alltoall_bandwidth_per_gpu")
    assert alltoall == pytest.approx(NIC / (3 * f))
    assert v(full, "alltoall_bandwidth_per_gpu") == NIC
    for r in (over, full):
        assert v(r, "allreduce_bandwidth_per_gpu") == NIC
    assert f"{v(over, 'allreduce_time_s') * 1e3:.2f}" == f"{v(full, 'allreduce_time_s') * 1e3:.2f}"
    t_over, t_full = v(over, "alltoall_time_s"), v(full, "alltoall_time_s")
    _says(page,
          f"96 leaves, 96 spines and 64 core switches, {v(full, 'switches'):,.0f} in all, "
          f"with {v(full, 'transceivers'):,.0f} transceivers",
          "so a spine's 64 ports reach 64 × 48 = 3,072: two tiers suffice, 3,072 / 48 = 64 "
          f"leaves and 64 × 16 / 64 = 16 spines, {v(over, 'switches'):,.0f} switches and "
          f"{v(over, 'transceivers'):,.0f} transceivers",
          f"50 GB/s per GPU on both fabrics and takes {ms(v(over, 'allreduce_time_s'), '.2f')} "
          "for 1 GiB",
          "f = 1 − 384/3,072 = 7/8",
          f"50 / (3 × 7/8) = {gbs(alltoall)}",
          f"alltoall takes {ms(t_over)} against {ms(t_full)} on the non-blocking fabric",
          f"Saving {v(full, 'switches') - v(over, 'switches'):,.0f} switches and a tier "
          f"costs the alltoall {t_over / t_full:.1f} times its time")
    same(link(page, page, "leaf-three-to-one", "num_gpus:3072"), over,
         "switches", "alltoall_bandwidth_per_gpu", "alltoall_time_s", "allreduce_time_s")
    same(opened(page, "leaf-three-to-one", "num_gpus:3072,leaf_oversubscription:1"), full,
         "switches", "alltoall_time_s")


def test_network_256_workers_pushing_into_48_servers() -> None:
    page = "network.md"
    r = widget(page, "ps-push", num_gpus=256, incast_senders=256, incast_receivers=48,
               receiver_bandwidth="200Gb/s")
    per_worker = v(r, "incast_bandwidth_per_gpu")
    assert per_worker == pytest.approx(min(NIC, 48 * 25e9 / 256))
    assert 48 * 25 == 1200 and 256 * 50 / 25 == 512
    push = 300e6 / per_worker
    _says(page,
          "48 × 25 = 1,200 GB/s, shared by 256 workers: 1,200 / 256 = "
          f"{gbs(per_worker, '.2f')} per worker, {per_worker / NIC:.1%} of its 50 GB/s NIC",
          f"300 MB / {gbs(per_worker, '.2f')} = {ms(push)}, against "
          f"{ms(300e6 / NIC)} at the NIC's rate",
          "256 × 50 / 25 = 512 ports",
          f"The fabric's {v(r, 'bisection_bandwidth') / 1e12:.1f} TB/s of bisection")
    # The bisection does not enter: the push rate is the same on a 3:1 fabric.
    thin = widget(page, "ps-push", num_gpus=256, incast_senders=256, incast_receivers=48,
                  receiver_bandwidth="200Gb/s", leaf_oversubscription=3)
    assert v(thin, "incast_bandwidth_per_gpu") == pytest.approx(per_worker)
    linked = link(page, page, "ps-push", "num_gpus:256,incast_senders:256,"
                  "incast_receivers:48,receiver_bandwidth:200Gb/s")
    same(linked, r, "incast_bandwidth_per_gpu", "bisection_bandwidth")


# --- sparse.md -----------------------------------------------------------------------

def test_sparse_the_memory_of_a_640_billion_parameter_recommender() -> None:
    page = "sparse.md"
    shape = {"num_tables": 500, "rows_per_table": "20M", "embedding_dim": 64,
             "dtype": "fp16"}
    adam = widget(page, "trillion-scale", optimizer="adam", **shape)
    rowwise = widget(page, "trillion-scale", optimizer="rowwise_adagrad", **shape)
    params = 500 * 20e6 * 64
    assert v(adam, "total_rows") == 10e9 and v(adam, "embedding_params") == params
    assert v(adam, "table_bytes") == pytest.approx(2 * params)
    assert v(adam, "optimizer_bytes") == pytest.approx(8 * params)
    assert v(rowwise, "optimizer_bytes") == pytest.approx(4 * 10e9)
    total_a, total_r = v(adam, "total_bytes"), v(rowwise, "total_bytes")
    assert v(adam, "min_gpus") == math.ceil(total_a / H100_USABLE)
    assert v(adam, "min_ps_hosts") == math.ceil(total_a / HOST_USABLE)
    assert v(rowwise, "min_gpus") == math.ceil(total_r / H100_USABLE)
    assert v(rowwise, "min_ps_hosts") == math.ceil(total_r / HOST_USABLE)
    _says(page,
          f"of which the calculator's 15% reserve leaves {H100_USABLE / 1e9:.1f} GB usable",
          f"500 × 20 million = {v(adam, 'total_rows') / 1e9:.0f} billion rows and 10¹⁰ × 64 "
          f"= {params / 1e9:.0f} billion parameters: "
          f"{v(adam, 'table_bytes') / 1e12:.2f} TB of fp16 weights",
          f"640 × 10⁹ × 8 bytes = {v(adam, 'optimizer_bytes') / 1e12:.2f} TB, four times the "
          f"weights: {total_a / 1e12:.2f} TB in all",
          f"{total_a / 1e12:.2f} TB / 73.0 GB = {total_a / H100_USABLE:.1f}, so "
          f"{v(adam, 'min_gpus'):.0f} H100s, or {total_a / 1e12:.2f} TB / 700 GB = "
          f"{total_a / HOST_USABLE:.1f}, so {v(adam, 'min_ps_hosts'):.0f} hosts",
          f"10¹⁰ × 4 bytes = {v(rowwise, 'optimizer_bytes') / 1e9:.0f} GB: "
          f"{total_r / 1e12:.2f} TB in all, {v(rowwise, 'min_gpus'):.0f} H100s or "
          f"{v(rowwise, 'min_ps_hosts'):.0f} hosts")
    linked = link(page, page, "trillion-scale", "num_tables:500,rows_per_table:20M,"
                  "embedding_dim:64,dtype:fp16,optimizer:adam")
    same(linked, adam, "table_bytes", "optimizer_bytes", "total_bytes", "min_gpus",
         "min_ps_hosts")


def test_sparse_a_dynamic_table_for_a_smaller_catalogue() -> None:
    page = "sparse.md"
    inputs = {"new_ids_per_day": "100M", "admit_share": 0.2, "active_days": 60,
              "expiry_days": 14, "embedding_dim": 64}
    half = widget(page, "dynamic-trillion", **inputs)
    full = widget(page, "dynamic-trillion", load_factor=0.8, **inputs)
    live = v(half, "live_rows")
    assert live == pytest.approx(100e6 * 0.2 * (60 + 14))
    assert v(half, "row_bytes") == 64 * 4 + 4 == 260
    slot = 260 + 17
    assert v(half, "table_slots") == pytest.approx(live / 0.5)
    assert v(half, "total_bytes") == pytest.approx(v(half, "table_slots") * slot)
    assert v(half, "min_gpus") == math.ceil(v(half, "total_bytes") / H100_USABLE)
    assert v(half, "rows_without_eviction") == pytest.approx(20e6 * 365)
    _says(page,
          f"100M × 0.2 × (60 + 14) = {live / 1e9:.2f} billion live rows",
          "64 × 4 + 4 = 260 bytes and a slot 260 + 17 = 277 bytes",
          f"the table has {v(half, 'table_slots') / 1e9:.2f} billion slots, "
          f"{v(half, 'table_slots') / 1e9:.2f} × 10⁹ × 277 = "
          f"{v(half, 'total_bytes') / 1e9:.0f} GB, "
          f"{v(half, 'bytes_per_live_id'):.0f} bytes per live ID: "
          f"{v(half, 'min_gpus'):.0f} H100s",
          f"it has {v(full, 'table_slots') / 1e9:.2f} billion slots and takes "
          f"{v(full, 'total_bytes') / 1e9:.0f} GB, {v(full, 'min_gpus'):.0f} H100s",
          f"add up to {v(half, 'rows_without_eviction') / 1e9:.1f} billion rows after 365 "
          f"days, {v(half, 'growth_without_eviction'):.1f} times the steady state")
    state = ("new_ids_per_day:100M,admit_share:0.2,active_days:60,expiry_days:14,"
             "embedding_dim:64")
    same(link(page, page, "dynamic-trillion", state), half,
         "live_rows", "table_slots", "total_bytes", "min_gpus")
    same(opened(page, "dynamic-trillion", state + ",load_factor:0.8"), full,
         "total_bytes", "min_gpus")


PS_STATE = ("batch_size:131072,num_workers:128,num_sparse_features:50,pooling_factor:20,"
            "embedding_dim:64,unique_ratio:0.3,embedding_bytes:4TB,num_ps_servers:32,"
            "dense_on_ps:false")


def test_sparse_4tb_then_20tb_of_tables_on_128_gpus() -> None:
    page = "sparse.md"
    inputs = {"batch_size": 131072, "num_workers": 128, "num_sparse_features": 50,
              "pooling_factor": 20, "embedding_dim": 64, "unique_ratio": 0.3,
              "num_ps_servers": 32, "dense_on_ps": False}
    small = widget(page, "ps-vs-collective", embedding_bytes="4TB", **inputs)
    large = widget(page, "ps-vs-collective", embedding_bytes="20TB", **inputs)
    assert small.inputs["server_nic_bandwidth"] == 12.5e9
    assert v(small, "collective_min_gpus_memory") == math.ceil(4e12 / H100_USABLE)
    assert v(small, "ps_min_hosts_memory") == math.ceil(4e12 / HOST_USABLE)
    pull = v(small, "ps_pull_bytes_per_worker")
    assert pull == pytest.approx(0.3 * 131072 / 128 * 50 * 20 * 64 * 4)
    egress, ingress = v(small, "ps_server_egress_bytes"), v(small, "ps_server_ingress_bytes")
    assert egress == pytest.approx(128 * pull / 32)
    ports = (egress + ingress) / 12.5e9
    ps_time = v(small, "ps_step_comm_time_s")
    assert ports < ps_time
    pooled = 131072 * math.ceil(50 / 128) * 64 * 4
    assert math.ceil(50 / 128) == 1
    coll_time = v(small, "collective_step_comm_time_s")
    assert small.value("recommended_mode") == "collective"
    assert round(ps_time / coll_time) == 10
    assert large.value("recommended_mode") == "ps"
    assert v(large, "collective_min_gpus_memory") > 2 * 128
    assert v(large, "ps_min_hosts_memory") <= 32
    assert v(large, "ps_step_comm_time_s") == pytest.approx(ps_time)
    _says(page,
          f"4 TB needs {v(small, 'collective_min_gpus_memory'):.0f} H100s at 73.0 GB usable "
          f"(the job has 128) or {v(small, 'ps_min_hosts_memory'):.0f} hosts (it has 32)",
          f"0.3 × (131,072 / 128) × 50 × 20 × 64 × 4 bytes = {mb(pull)} of rows",
          f"128 × {pull / 1e6:.1f} / 32 = {mb(egress, '.0f')} of rows out and "
          f"{mb(ingress, '.0f')} of IDs and gradients in per step, "
          f"{mb(egress + ingress, '.0f')} / 12.5 GB/s = {ms(ports)}",
          f"the PS step takes {ms(ps_time)}",
          f"131,072 × 1 × 64 × 4 bytes = {mb(pooled)} of pooled vectors each way "
          f"({mb(v(small, 'collective_alltoall_bytes_per_gpu'))} sent in its three alltoalls, "
          "the IDs included)",
          f"the step takes {ms(coll_time, '.2f')}, ten times less",
          f"the collective would need {v(large, 'collective_min_gpus_memory'):.0f} GPUs' "
          "memory, more than twice the 128 it has, while "
          f"{v(large, 'ps_min_hosts_memory'):.0f} of the 32 servers hold the tables",
          f"at the same {ms(v(large, 'ps_step_comm_time_s'))}")
    same(link(page, page, "ps-vs-collective", PS_STATE), small,
         "ps_step_comm_time_s", "collective_step_comm_time_s", "ps_pull_bytes_per_worker",
         "collective_min_gpus_memory")
    same(opened(page, "ps-vs-collective", PS_STATE.replace("4TB", "20TB")), large,
         "collective_min_gpus_memory", "ps_min_hosts_memory", "ps_step_comm_time_s")
