"""The ``ecmp_collisions`` calculator: k large flows hashed onto m equal-cost uplinks;
the busiest link's flow count and what it costs each flow (formulas.fabric.flow_collisions)."""

from __future__ import annotations

import math

from calculators.core.calculator import Calculator, Computed, Inputs, Table
from calculators.core.i18n import _
from calculators.core.spec import Output, Param
from calculators.formulas.fabric.flow_collisions import (
    collision_probability,
    flow_rate,
    max_load_distribution,
)


def _ecmp(inputs: Inputs) -> Computed:
    k, m = inputs.whole("flows"), inputs.whole("uplinks")
    demand, capacity = inputs.num("flow_demand"), inputs.num("uplink_bandwidth")
    dist = max_load_distribution(k, m)
    slowest = math.fsum(p * flow_rate(demand, capacity, c)
                  for c, p in zip(dist.caps, dist.probabilities, strict=True))
    ideal = min(demand, m * capacity / k)
    # P(the slowest flow gets less than it asks for) = P(max load > capacity / demand).
    fits = math.floor(capacity / demand + 1e-12)
    p_slow = math.fsum(
        p for c, p in zip(dist.caps, dist.probabilities, strict=True) if c > fits
    )
    notes = [
        _("Method: exact (dynamic program over links).") if dist.exact else
        _("Method: independent-links approximation P(max <= c) ~ P(Binomial(k, 1/m) <= c)^m: "
          "this size is beyond the exact program's budget."),
        _("Ideal spraying or adaptive routing spreads every flow's packets over all links: "
          "each flow gets min(demand, m C / k) = {ideal:.4g} GB/s.").format(ideal=ideal / 1e9),
    ]
    rows = tuple(
        (str(c), f"{p:.4g}", f"{flow_rate(demand, capacity, c) / 1e9:.4g} GB/s")
        for c, p in zip(dist.caps, dist.probabilities, strict=True) if p >= 1e-6
    )
    return Computed(
        values={
            "expected_max_load": dist.expected,
            "mean_flows_per_link": k / m,
            "collision_probability": collision_probability(k, m),
            "slowdown_probability": p_slow,
            "slowest_flow_throughput": slowest,
            "ideal_flow_throughput": ideal,
            "ecmp_efficiency": slowest / ideal,
            "busiest_link_offered_load": dist.expected * demand / capacity,
            "exact": dist.exact,
        },
        notes=notes,
        table=Table((_("flows on busiest link"), _("probability"), _("slowest flow gets")),
                    rows, caption=_("Distribution of the busiest uplink's flow count")),
    )


ECMP_COLLISIONS = Calculator(
    id="ecmp_collisions",
    headline=("slowest_flow_throughput", "ecmp_efficiency", "expected_max_load"),
    title="ECMP hash collisions: k flows on m uplinks",
    summary="Balls into bins: busiest uplink, collision probability and the slowest "
            "flow's throughput, against ideal spraying / adaptive routing.",
    chapter="communication.md",
    params=(
        Param("flows", "Long-lived flows k", "int", 32, unit="flow", minimum=1,
              maximum=4096,
              help="Flows leaving a switch towards the next tier at the same time, e.g. "
                   "one per GPU NIC in a ring or an alltoall step."),
        Param("uplinks", "Equal-cost uplinks m", "int", 32, unit="link", minimum=1,
              maximum=1024, help="Next hops ECMP can choose from (a leaf's spine ports)."),
        Param("uplink_bandwidth", "Bandwidth per uplink, per direction", "float", 50e9,
              unit="B/s", minimum=1e6, maximum=1e14,
              help="400 Gb/s = 50 GB/s per port (IEEE 802.3bs; InfiniBand NDR)."),
        Param("flow_demand", "Rate each flow would send alone", "float", 50e9,
              unit="B/s", minimum=1e6, maximum=1e14,
              help="Usually the NIC's line rate: a GPU's 400 Gb/s NIC = 50 GB/s. Equal "
                   "to the uplink rate for a 1:1 (non-blocking) leaf."),
    ),
    outputs=(
        Output("expected_max_load", "Expected flows on the busiest uplink", "flow", "fixed"),
        Output("mean_flows_per_link", "Mean flows per uplink k/m", "flow", "fixed"),
        Output("collision_probability", "P(at least one shared uplink)", "1", "percent"),
        Output("slowdown_probability", "P(slowest flow below its demand)", "1", "percent"),
        Output("slowest_flow_throughput", "Slowest flow's throughput (expected)", "B/s"),
        Output("ideal_flow_throughput", "Per-flow throughput with ideal spraying", "B/s"),
        Output("ecmp_efficiency", "Slowest flow / ideal", "1", "percent"),
        Output("busiest_link_offered_load", "Offered load on the busiest uplink", "1",
               "percent"),
        Output("exact", "Computed exactly", "", "bool"),
    ),
    function=_ecmp,
    sources=(
        "Raab and Steger 1998, 'Balls into Bins' - A Simple and Tight Analysis (RANDOM)",
        "Al-Fares et al. 2010, Hedera: Dynamic Flow Scheduling for Data Center Networks "
        "(NSDI), Sec. 2",
        "Gangidi et al. 2024, RDMA over Ethernet for Distributed Training at Meta Scale "
        "(SIGCOMM), routing and load balancing",
    ),
)
