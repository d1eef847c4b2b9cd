"""NCCL's own cost model for allreduce: which algorithm and protocol it expects to win.

Source, pinned: NVIDIA/nccl v2.20.3 (commit b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2,
makefiles/version.mk 2.20.3), src/graph/tuning.cc, functions ``ncclTopoTuneModel`` and
``ncclTopoGetAlgoTime``. NCCL predicts time = latency + bytes / algorithm bandwidth
(microseconds and GB/s there; seconds and B/s here), with:

- latency = a base latency per algorithm and protocol + per-step hardware latencies
  (NVLink, PCI or network): ring 2(nRanks-1) steps of which 2 nNodes cross the network;
  tree 2((nRanks/nNodes - 1) intra + log2(nNodes) inter) steps; NVLS one NVLink step
  plus one network step when multi-node; NVLS-tree adds 2 log2(nNodes) network steps;
  CollNet chain 2(nRanks/nNodes - 1) intra steps + one network step;
- bus bandwidth = channels x per-channel graph bandwidth (a topology-search result
  we take as an input), trimmed per protocol (LL 1/4, LL128 0.92, tree x0.92 and its
  caps), then converted to algorithm bandwidth: ring x nRanks / (2(nRanks-1)), tree and
  CollNet x 1/2, NVLS x 5/6;
- a size-dependent tree correction and a 1.4x ring-latency "plateau" on Ampere+.

Modelled: compute capability 9.0 (Hopper) tables; Simple, LL and LL128 protocols.
Assumptions (ours, not NCCL's): the graph's per-GPU bandwidth is ``nvlink_bw`` inside a
single node and ``net_bw`` (on both sides of the NIC) for multi-node ring, tree and
CollNet graphs; NVLS graphs have ``nvlink_bw`` inside and ``net_bw`` across; the graph's
extra ``latencyInter`` is 0; x86 CPUs (network post overhead 1 us Intel, 2 us AMD).
Later releases retune these constants (e.g. v2.23+ add PAT and give Tree/Simple a base
latency), so a prediction is NCCL 2.20's, not a measurement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NCCL_VERSION = "2.20.3"
PROTOCOLS = ("LL", "LL128", "Simple")
ALGORITHMS = ("tree", "ring", "collnet_chain", "nvls", "nvls_tree")
_LL, _LL128, _SIMPLE = 0, 1, 2

#: tuning.cc ``baseLat`` (us), by algorithm, protocols (LL, LL128, Simple).
BASE_LATENCY_US: dict[str, tuple[float, float, float]] = {
    "tree": (6.8, 14.0, 0.0), "ring": (6.6, 14.0, 8.4), "collnet_chain": (0.0, 0.0, 0.0),
    "nvls": (0.0, 0.0, 0.0), "nvls_tree": (0.0, 0.0, 0.0)}
#: tuning.cc ``hwLat`` (us per step) for NVLink, PCI and network hops.
HW_LATENCY_US: dict[str, dict[str, tuple[float, float, float]]] = {
    "nvlink": {"tree": (0.6, 1.25, 28.0), "ring": (0.6, 1.9, 3.4),
               "collnet_chain": (0.0, 0.0, 2.8), "nvls": (0.0, 0.0, 23.0),
               "nvls_tree": (0.0, 0.0, 23.0)},
    "pci": {"tree": (1.0, 1.9, 28.0), "ring": (1.0, 2.5, 5.7),
            "collnet_chain": (0.0, 0.0, 2.8), "nvls": (0.0, 0.0, 0.0),
            "nvls_tree": (0.0, 0.0, 0.0)},
    "net": {"tree": (5.0, 8.5, 28.0), "ring": (2.7, 4.0, 14.0),
            "collnet_chain": (0.0, 0.0, 30.0), "nvls": (0.0, 0.0, 18.0),
            "nvls_tree": (0.0, 0.0, 14.0)}}
#: Hopper rows of the per-channel caps (GB/s), by 1 node / 2 nodes / more.
PER_CHANNEL_TREE_GBPS = (38.7, 41.4, 36.0)
PER_CHANNEL_RING_LL128_GBPS = (36.7, 36.7, 36.7)
PER_CHANNEL_TREE_LL128_GBPS = (36.7, 36.7, 29.0)
#: ``llMaxBws``: one node looks at the GPU (Hopper row), more nodes at the CPU vendor.
LL_MAX_GBPS = {"hopper": (87.7, 22.5, 19.0), "intel": (39.0, 39.0, 20.4),
               "amd": (87.7, 22.5, 19.0)}
NET_OVERHEAD_US = {"intel": 1.0, "amd": 2.0}
#: ``treeCorrectionFactor`` by protocol, index log2(bytes / 64), 64 B to 256 MiB.
TREE_CORRECTION: tuple[tuple[float, ...], ...] = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0,
     1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9,
     1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9,
     .9))
RING_PLATEAU = 1.4  # ring/Simple latency x1.4 on compute capability >= 8.0, multi-node


@dataclass(frozen=True)
class Topology:
    """A communicator: ranks over nodes, and per-GPU graph bandwidths in B/s.

    Bounds: ranks a multiple of nodes, >= 2; bandwidths > 0; channels 1-32 (NCCL's
    MAXCHANNELS is 32); ``cpu`` 'intel' or 'amd'.
    """

    ranks: int
    nodes: int
    nvlink_bw: float
    net_bw: float
    channels: int = 16
    nvlink: bool = True
    cpu: str = "intel"
    ll128: bool = True  # NCCL enables LL128 by default on Hopper with NVLink
    nvls: bool = False  # NVLink SHARP present (NVSwitch 3, H100/H200 SXM)
    sharp: bool = False  # in-network reduction on the fabric (CollNet plugin)

    def __post_init__(self) -> None:
        if self.nodes < 1 or self.ranks < 2 or self.ranks % self.nodes:
            raise ValueError(f"need ranks >= 2 and a multiple of nodes, got "
                             f"{self.ranks} ranks on {self.nodes} nodes")
        if self.nvlink_bw <= 0 or self.net_bw <= 0:
            raise ValueError("bandwidths must be > 0")
        if not 1 <= self.channels <= 32:
            raise ValueError(f"channels must be in 1..32, got {self.channels}")
        if self.cpu not in NET_OVERHEAD_US:
            raise ValueError(f"cpu must be 'intel' or 'amd', got {self.cpu!r}")

    @property
    def per_node(self) -> int:
        return self.ranks // self.nodes


@dataclass(frozen=True)
class Prediction:
    algorithm: str
    protocol: str
    latency_s: float
    algbw: float  # B/s, after the size-dependent tree correction
    time_s: float


def _log2i(n: int) -> int:
    """NCCL's log2i: floor(log2 n), 0 for n < 2."""
    return max(0, n.bit_length() - 1)


def _size_index(topo: Topology) -> int:
    return 0 if topo.nodes == 1 else 1 if topo.nodes == 2 else 2


def _graph_bw_gbps(algorithm: str, topo: Topology) -> float:
    """Bus bandwidth before protocol refinements (nChannels x graph bw), GB/s."""
    intra = topo.nvlink_bw if topo.nodes == 1 else topo.net_bw  # our assumption
    if algorithm == "nvls":
        bw = min(topo.nvlink_bw, topo.net_bw) if topo.nodes > 1 else topo.nvlink_bw
    elif algorithm == "nvls_tree":
        inter = topo.net_bw if topo.nodes <= 2 else topo.net_bw / 2.0
        bw = min(topo.nvlink_bw, inter)
    else:
        bw = intra
    return bw / 1e9


def algorithm_bandwidth_gbps(algorithm: str, protocol: str, topo: Topology) -> float:
    """``comm->bandwidths[AllReduce][a][p]`` of tuning.cc v2.20.3 (0 = not available)."""
    p = PROTOCOLS.index(protocol)
    if algorithm in ("collnet_chain", "nvls", "nvls_tree") and p != _SIMPLE:
        return 0.0
    if p == _LL128 and not topo.ll128:
        return 0.0
    i2, ch = _size_index(topo), topo.channels
    bus = _graph_bw_gbps(algorithm, topo)
    ll_max = LL_MAX_GBPS["hopper" if topo.nodes == 1 else topo.cpu][i2]
    if algorithm == "ring":
        if p == _LL:
            bus = min(ll_max, bus / 4.0)
        elif p == _LL128:
            bus = min(bus * (0.7 if topo.per_node < 2 else 0.92),
                      ch * PER_CHANNEL_RING_LL128_GBPS[i2])
        return bus * topo.ranks / (2.0 * (topo.ranks - 1))
    if algorithm == "tree":
        bus = min(bus * 0.92, ch * PER_CHANNEL_TREE_GBPS[i2])
        if p == _LL:
            bus = min(bus / 3.8, ll_max)
        elif p == _LL128:
            bus = min(bus * (7.0 / 9.0 if topo.nodes == 1 else 120.0 / 128.0),
                      ch * PER_CHANNEL_TREE_LL128_GBPS[i2])
        return bus * 0.5
    if algorithm == "collnet_chain":
        return bus * 0.5
    return bus * 5.0 / 6.0  # nvls, nvls_tree


def latency_us(algorithm: str, protocol: str, topo: Topology) -> float:
    """``comm->latencies[AllReduce][a][p]`` of tuning.cc v2.20.3, microseconds."""
    p = PROTOCOLS.index(protocol)
    intra = HW_LATENCY_US["nvlink" if topo.nvlink else "pci"][algorithm][p]
    inter = HW_LATENCY_US["net"][algorithm][p]
    base = BASE_LATENCY_US[algorithm][p]
    nodes, local = topo.nodes, topo.per_node
    if algorithm == "ring":
        if nodes > 1:  # inter-node rings still pay the network post overhead per step
            overhead = NET_OVERHEAD_US[topo.cpu] * (3.0 if p == _SIMPLE else 1.0)
            intra = max(intra, overhead)
        steps = 2 * (topo.ranks - 1)
        inter_steps = 2 * nodes if nodes > 1 else 0  # as written in v2.20.3
        return base + (steps - inter_steps) * intra + inter_steps * inter
    if algorithm == "tree":
        return base + 2.0 * ((local - 1) * intra + _log2i(nodes) * inter)
    if algorithm == "collnet_chain":
        return base + 2.0 * (local - 1) * intra + inter
    if algorithm == "nvls":
        return intra + (inter if nodes > 1 else 0.0)
    return base + intra + 2.0 * _log2i(nodes) * inter  # nvls_tree


def available(algorithm: str, topo: Topology) -> bool:
    """NCCL's defaults: tree and ring always; CollNet needs SHARP across nodes; NVLS
    needs NVLink SHARP and, across nodes, CollNet too; NVLS-tree needs > 1 node."""
    if algorithm == "collnet_chain":
        return topo.sharp and topo.nodes > 1
    if algorithm == "nvls":
        return topo.nvls and (topo.nodes == 1 or topo.sharp)
    if algorithm == "nvls_tree":
        return topo.nvls and topo.nodes > 1
    return algorithm in ("tree", "ring")


def predict(algorithm: str, protocol: str, message_bytes: float,
            topo: Topology) -> Prediction | None:
    """``ncclTopoGetAlgoTime`` for one allreduce of ``message_bytes`` (one operation,
    numPipeOps = 1). None when NCCL would not use that pair."""
    if message_bytes <= 0:
        raise ValueError("message size must be > 0 bytes")
    bw = algorithm_bandwidth_gbps(algorithm, protocol, topo)
    if bw <= 0 or not available(algorithm, topo):
        return None
    lat = latency_us(algorithm, protocol, topo)
    p = PROTOCOLS.index(protocol)
    log_size = _log2i(int(message_bytes) >> 6)
    if algorithm == "tree" and log_size < len(TREE_CORRECTION[p]):
        bw *= TREE_CORRECTION[p][log_size]
    if (algorithm == "ring" and p == _SIMPLE and topo.nodes > 1
            and message_bytes / (topo.channels * topo.ranks) >= 64):
        lat *= RING_PLATEAU
    time_us = lat + message_bytes / (1000.0 * bw)
    return Prediction(algorithm, protocol, lat * 1e-6, bw * 1e9, time_us * 1e-6)


def rank_allreduce(message_bytes: float, topo: Topology) -> list[Prediction]:
    """Every available (algorithm, protocol), fastest first: NCCL picks the first."""
    found = [pred for a in ALGORITHMS for p in PROTOCOLS
             if (pred := predict(a, p, message_bytes, topo)) is not None]
    return sorted(found, key=lambda pred: pred.time_s)


def nvls_algbw_over_busbw(ranks: int) -> float:
    """NVLink SHARP inside a node: algbw = busbw x n / (n + 1).

    Stated by the NCCL maintainer (nccl-tests PR #239, 2024-09-02). Derivation: each GPU
    sends its S bytes once to the switch (out: S) and receives its reduced 1/n share
    plus the n multicast shares (in: S (n + 1) / n), so t = S (n + 1) / (n B), where B
    is the link bandwidth ("busbw" in the maintainer's sentence). What nccl-tests
    prints is another matter: its ``AllReduceGetBw`` (src/all_reduce.cu, checked up to
    v2.19.6) applies 2(n-1)/n whatever NCCL_ALGO is, and doc/PERFORMANCE.md lists no
    other allreduce factor. The (n-1)/(n+1) for NCCL_ALGO=NVLS comes from PR #239 (its
    commit 4ec7c79 edits both files), which is open and was never merged; it also
    disagrees with this count. So nccl-tests' busbw under NVLS is not a link bandwidth.
    """
    if ranks < 2:
        raise ValueError(f"ranks must be >= 2, got {ranks}")
    return ranks / (ranks + 1.0)


def ideal_ring_time_s(message_bytes: float, ranks: int, link_bw: float) -> float:
    """nccl-tests PERFORMANCE.md's bound for point-to-point allreduce: S 2(n-1)/(n B)."""
    if ranks < 2 or link_bw <= 0:
        raise ValueError("need ranks >= 2 and bandwidth > 0")
    return message_bytes * 2.0 * (ranks - 1) / (ranks * link_bw)


def crossover_bytes(topo: Topology, lo: float = 64.0, hi: float = 2.0 ** 34) -> float:
    """Smallest power-of-two size at which ring/* becomes NCCL's first choice
    (``math.inf`` if it never does within [lo, hi])."""
    size = lo
    while size <= hi:
        if rank_allreduce(size, topo)[0].algorithm == "ring":
            return size
        size *= 2.0
    return math.inf
