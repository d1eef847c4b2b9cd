"""Context parallelism: the sequence split over c GPUs, and what attention then sends.

Three ways to let each GPU's queries see every key, all per GPU, per layer, per
micro-batch, in bytes (``bytes_per_element`` 2 for BF16):

- ring (Liu et al. 2023, "Ring Attention with Blockwise Transformers", Sec. 3; as built
  in Megatron-Core's context parallelism): each GPU passes its K and V block to the
  next GPU c - 1 times, overlapping each send with attention on the block it holds.
- all-gather (Dubey et al. 2024, "The Llama 3 Herd of Models", Sec. 3.3.2): K and V are
  all-gathered first, then each GPU computes attention for its local queries; GQA keeps
  K and V small, which is why Llama 3 accepts the exposed all-gather. Same bytes as the
  ring; the difference is overlap and the transient full-length K, V buffer.
- all-to-all over heads (Jacobs et al. 2023, "DeepSpeed Ulysses", Sec. 3): Q, K, V are
  re-split from sequence to heads before attention and the output back after it, so
  heads (and KV heads) must be divisible by c.

Backward (Megatron-Core context-parallel docs): each GPU kept only its own K, V chunk,
so the backward gathers K and V again and reduce-scatters their gradients: twice the
forward bytes for ring and all-gather (gradients taken in the activation precision, an
assumption). Ulysses' backward mirrors its forward: the same four all-to-alls.

Every activation tensor is split along the sequence, so activation memory per GPU is
1/c of the unsplit figure (Megatron-Core docs: "CP times smaller").
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.formulas.collectives import costs as comm

CP_METHODS = ("ring", "allgather", "ulysses")


@dataclass(frozen=True)
class AttentionDims:
    """Sequence length s (whole, before the split), micro-batch b, query heads, KV heads
    (GQA; equal to heads for MHA), head size, and bytes per element."""

    seq_len: int
    micro_batch: int
    heads: int
    kv_heads: int
    head_dim: int
    bytes_per_element: float = 2.0

    def __post_init__(self) -> None:
        for name in ("seq_len", "micro_batch", "heads", "kv_heads", "head_dim"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.heads % self.kv_heads:
            raise ValueError(f"kv_heads ({self.kv_heads}) must divide heads ({self.heads})")
        if self.bytes_per_element <= 0:
            raise ValueError("bytes_per_element must be > 0")


def _check_cp(dims: AttentionDims, cp: int) -> None:
    if cp < 1:
        raise ValueError(f"context parallel size must be >= 1, got {cp}")
    if dims.seq_len % cp:
        raise ValueError(f"sequence length {dims.seq_len} must be divisible by the "
                         f"context parallel size {cp}")


def kv_chunk_bytes(dims: AttentionDims, cp: int) -> float:
    """K and V for one GPU's s/c tokens: 2 x (s/c) x b x kv_heads x head_dim x bytes."""
    _check_cp(dims, cp)
    return (2.0 * dims.seq_len / cp * dims.micro_batch * dims.kv_heads * dims.head_dim
            * dims.bytes_per_element)


def ring_forward_bytes(dims: AttentionDims, cp: int) -> float:
    """Bytes one GPU sends in a layer's forward: (c - 1) K, V chunks around the ring."""
    return (cp - 1) * kv_chunk_bytes(dims, cp)


def allgather_forward_bytes(dims: AttentionDims, cp: int) -> float:
    """Llama 3's all-gather of K and V: each GPU receives (and, in a ring all-gather,
    sends) the other c - 1 chunks, the same bytes as the ring."""
    return (cp - 1) * kv_chunk_bytes(dims, cp)


def ulysses_forward_bytes(dims: AttentionDims, cp: int) -> float:
    """Bytes one GPU sends in a layer's forward under DeepSpeed Ulysses.

    Four all-to-alls, Q (heads), K and V (kv_heads) before attention and the output
    (heads) after it, each over the GPU's s/c tokens; an all-to-all keeps 1/c locally and
    sends the rest: (c-1)/c x (s/c) b d_h bytes x (2 heads + 2 kv_heads). For MHA this is
    Jacobs et al.'s 4Nh/P per link (their Sec. 3.2) with N = s b, times (P-1)/P.
    """
    _check_cp(dims, cp)
    if dims.heads % cp or dims.kv_heads % cp:
        raise ValueError(f"Ulysses needs heads ({dims.heads}) and KV heads "
                         f"({dims.kv_heads}) divisible by the group size {cp}")
    local = dims.seq_len / cp * dims.micro_batch * dims.head_dim * dims.bytes_per_element
    return (cp - 1) / cp * local * (2 * dims.heads + 2 * dims.kv_heads)


def forward_bytes(method: str, dims: AttentionDims, cp: int) -> float:
    """Per-GPU bytes sent in one layer's forward, by method (one of ``CP_METHODS``)."""
    if method == "ring":
        return ring_forward_bytes(dims, cp)
    if method == "allgather":
        return allgather_forward_bytes(dims, cp)
    if method == "ulysses":
        return ulysses_forward_bytes(dims, cp)
    raise ValueError(f"unknown CP method {method!r}; choose one of {', '.join(CP_METHODS)}")


def backward_bytes(method: str, dims: AttentionDims, cp: int) -> float:
    """Per-GPU bytes in one layer's backward: 2x forward for ring and all-gather (K, V
    gathered again + their gradients reduce-scattered, Megatron-Core CP docs); 1x for
    Ulysses (the gradients of the same four tensors go back through all-to-alls)."""
    once = forward_bytes(method, dims, cp)
    return once if method == "ulysses" else 2.0 * once


def gathered_kv_bytes(dims: AttentionDims) -> float:
    """The all-gather method's transient buffer: K and V for the whole sequence,
    2 s b kv_heads d_h bytes (per layer, freed after it; the ring never holds it)."""
    return 2.0 * dims.seq_len * dims.micro_batch * dims.kv_heads * dims.head_dim * (
        dims.bytes_per_element)


def attention_forward_flops(dims: AttentionDims, cp: int, causal: bool = True) -> float:
    """QK^T and the product with V for one GPU's queries against all keys:
    4 (s/c) s b heads d_h FLOPs, halved for a causal mask (load-balanced chunks, as
    Llama 3's 2 x CP chunking and Megatron-Core do)."""
    _check_cp(dims, cp)
    full = 4.0 * dims.seq_len / cp * dims.seq_len * dims.micro_batch * dims.heads * (
        dims.head_dim)
    return full / 2.0 if causal else full


def ring_min_tokens_per_gpu(peak_flops: float, bandwidth: float) -> float:
    """Smallest chunk (tokens per GPU) at which the ring's sends hide behind compute.

    Liu et al. 2023, Sec. 3 (derivation as theirs): a step computes a c-token query block
    against a c-token KV block, 4 c^2 d FLOPs, while sending K and V, 4 c d bytes in
    16-bit; overlap needs 4c^2d/F >= 4cd/B, i.e. c >= F/B (for MHA; GQA lowers it by
    kv_heads/heads).
    """
    if peak_flops <= 0 or bandwidth <= 0:
        raise ValueError("peak FLOP/s and bandwidth must be > 0")
    return peak_flops / bandwidth


def activation_bytes_with_cp(per_layer_bytes: float, cp: int) -> float:
    """Per-GPU activations under context parallelism: every tensor is split along the
    sequence, so 1/c (Megatron-Core CP docs)."""
    if cp < 1:
        raise ValueError(f"context parallel size must be >= 1, got {cp}")
    return per_layer_bytes / cp


def comm_time_s(message_bytes: float, bandwidth: float) -> float:
    """bytes / bandwidth (B/s per GPU per direction, efficiency already applied)."""
    if bandwidth <= 0:
        raise ValueError("bandwidth must be > 0")
    return message_bytes / bandwidth


def exposed_time_s(comm_s: float, compute_s: float, overlap: float) -> float:
    """Communication left on the critical path when a share ``overlap`` (0..1) of the
    attention compute can hide it: max(0, comm - overlap x compute). An assumption,
    kept separate from the bytes so the page can show both."""
    if not 0.0 <= overlap <= 1.0:
        raise ValueError(f"overlap must be in [0, 1], got {overlap}")
    return max(0.0, comm_s - overlap * compute_s)


def ring_exposed_time_s(send_s: float, cp: int, attention_s: float, overlap: float) -> float:
    """The ring's sends left on the critical path in one pass (forward or backward).

    Liu et al. 2023, Sec. 3: each of the c - 1 steps sends one K, V block while
    computing attention on the block it holds, so a send hides only behind that one
    block's compute, never behind another step's, and the last block's compute has
    nothing left to hide. ``send_s`` is the pass's c - 1 sends together, ``attention_s``
    the pass's attention compute for the local queries against all c blocks (equal
    blocks with load-balanced causal chunks): (c - 1) x max(0, send_s/(c - 1) -
    overlap x attention_s/c). Nothing hides when a block computes faster than it sends,
    which happens below ``ring_min_tokens_per_gpu`` tokens per GPU (twice that under a
    causal mask, whose blocks do half the work).
    """
    if cp <= 1:
        return 0.0
    steps = cp - 1
    return steps * exposed_time_s(send_s / steps, attention_s / cp, overlap)


@dataclass(frozen=True)
class Links:
    """Where a CP group runs: its members per scale-up domain, the bandwidths (B/s per
    GPU per direction, efficiency applied) and the per-step latency."""

    per_domain: int
    intra_bandwidth: float
    inter_bandwidth: float
    latency: float


@dataclass(frozen=True)
class LayerComm:
    """One layer's context-parallel communication for one micro-batch on one GPU."""

    forward_s: float
    backward_s: float
    bytes_sent: float
    overlappable: bool  # the ring hides behind attention; the other two do not


def layer_comm(method: str, dims: AttentionDims, cp: int, links: Links) -> LayerComm:
    """Time and bytes of one layer's CP traffic (forward, backward), via the collective
    model of formulas.collectives.costs: the ring as c - 1 sends of one K, V chunk over the
    slowest link of the ring (the network once the group leaves the domain); the
    all-gather as a two-level all-gather of the c chunks; Ulysses as four two-level
    all-to-alls of the local Q, K, V and output. Backward: twice the forward for ring
    and all-gather (gather again + reduce-scatter of the gradients), once for Ulysses."""
    if cp <= 1:
        return LayerComm(0.0, 0.0, 0.0, overlappable=False)
    crosses = links.per_domain < cp
    chunk = kv_chunk_bytes(dims, cp)
    if method == "ring":
        bandwidth = links.inter_bandwidth if crosses else links.intra_bandwidth
        forward = (cp - 1) * (links.latency + chunk / bandwidth)
        return LayerComm(forward, 2.0 * forward, 3.0 * ring_forward_bytes(dims, cp),
                         overlappable=True)
    if method == "allgather":
        cost = comm.hierarchical_cost("allgather", cp * chunk, cp, links.per_domain,
                                      links.intra_bandwidth, links.inter_bandwidth,
                                      links.latency)
        return LayerComm(cost.time_s, 2.0 * cost.time_s, 3.0 * cost.bytes_sent_per_rank,
                         overlappable=False)
    if method == "ulysses":
        ulysses_forward_bytes(dims, cp)  # checks the head counts
        local = dims.seq_len / cp * dims.micro_batch * dims.head_dim * dims.bytes_per_element
        forward = sent = 0.0
        for heads in (dims.heads, dims.kv_heads, dims.kv_heads, dims.heads):
            cost = comm.hierarchical_cost("alltoall", local * heads, cp, links.per_domain,
                                          links.intra_bandwidth, links.inter_bandwidth,
                                          links.latency)
            forward += cost.time_s
            sent += cost.bytes_sent_per_rank
        return LayerComm(forward, forward, 2.0 * sent, overlappable=False)
    raise ValueError(f"unknown CP method {method!r}; choose one of {', '.join(CP_METHODS)}")
