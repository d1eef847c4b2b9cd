"""Pipeline schedules as data: bubble, activations in flight and sends per micro-batch.

Every schedule here is costed in the same three numbers so that a planner can compare
them: the bubble (idle time of one stage per optimizer step, and that time as a fraction
of the ideal compute time, Narayanan et al.'s definition), how many micro-batches'
activation sets the worst stage holds at its peak, and how many point-to-point sends an
interior stage makes per micro-batch (forward activation out + backward gradient out).

Times are per micro-batch per stage and unitless here (any consistent unit): T_F the
forward, T_B the backward for the inputs (activation gradient), T_W the backward for the
weights. A classic backward is T_B + T_W. The default ``EQUAL_PASSES`` is the
assumption Qi et al. (ICLR 2024, "Zero Bubble Pipeline Parallelism", Sec. 2) make for
their handcrafted schedules: T_F = T_B = T_W (their Table 1 FLOPs, sbh(24h + 4s),
sbh(24h + 8s) and 24sbh^2, are about equal when h >> s).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The schedules that feed micro-batches from both ends and pair one micro-batch's
#: forward chunk with another's backward, hiding the pipeline's and the experts' traffic
#: under it (DeepSeek-V3 report, Sec. 3.2.1; deepseek-ai/DualPipe).
DUAL_SCHEDULES = ("dualpipe", "dualpipev")


@dataclass(frozen=True)
class PassTimes:
    """Time of one micro-batch's passes on one stage (any consistent unit)."""

    forward: float = 1.0
    backward_input: float = 1.0
    backward_weight: float = 1.0

    def __post_init__(self) -> None:
        if min(self.forward, self.backward_input, self.backward_weight) < 0:
            raise ValueError("pass times must be >= 0")
        if self.total <= 0:
            raise ValueError("at least one pass time must be > 0")

    @property
    def backward(self) -> float:
        """A full backward (inputs + weights), DeepSeek-V3's B."""
        return self.backward_input + self.backward_weight

    @property
    def total(self) -> float:
        """Ideal compute per micro-batch per stage: T_F + T_B + T_W."""
        return self.forward + self.backward_input + self.backward_weight


#: Qi et al. 2024, Sec. 2: the handcrafted schedules are analysed with T_F = T_B = T_W.
EQUAL_PASSES = PassTimes(1.0, 1.0, 1.0)


@dataclass(frozen=True)
class ScheduleCost:
    """One schedule's cost for ``stages`` stages and ``micro_batches`` per step.

    ``bubble_time`` is in the unit of the pass times; ``bubble_fraction`` is bubble over
    ideal compute (m x (T_F + T_B + T_W)), Narayanan et al. 2021's (p-1)/m form;
    ``in_flight`` counts one stage's activations for one micro-batch as 1 (interleaving
    may give a fraction); ``sends_per_micro_batch`` is per interior stage, forward +
    backward; ``weight_copies`` is 2 for DualPipe's two directions.
    """

    name: str
    stages: int
    micro_batches: int
    bubble_time: float
    bubble_fraction: float
    in_flight: float
    sends_per_micro_batch: int
    weight_copies: int = 1

    @property
    def bubble_share_of_step(self) -> float:
        """Bubble as a share of the whole step, f / (1 + f): (p-1)/(m+p-1) for 1F1B,
        the form Qi et al.'s project page uses after its correction."""
        return self.bubble_fraction / (1.0 + self.bubble_fraction)


def _check(stages: int, micro_batches: int) -> None:
    if stages < 1:
        raise ValueError(f"pipeline stages must be >= 1, got {stages}")
    if micro_batches < 1:
        raise ValueError(f"micro-batches must be >= 1, got {micro_batches}")


def _fraction(bubble_time: float, micro_batches: int, times: PassTimes) -> float:
    return bubble_time / (micro_batches * times.total)


def one_f_one_b(stages: int, micro_batches: int, times: PassTimes = EQUAL_PASSES) -> ScheduleCost:
    """1F1B (PipeDream-Flush): bubble (p-1)(T_F + T_B + T_W), so (p-1)/m of the ideal time.

    Narayanan et al. 2021, Sec. 2.2.1: the bubble is (p-1) forward + backward slots and
    the first stage keeps at most p micro-batches in flight (fewer if m < p). Each
    interior stage sends one activation forward and one gradient back per micro-batch.
    """
    _check(stages, micro_batches)
    bubble = (stages - 1) * times.total
    return ScheduleCost("1F1B", stages, micro_batches, bubble,
                        _fraction(bubble, micro_batches, times),
                        float(min(stages, micro_batches)), 2)


def interleaved_in_flight(stages: int, virtual_stages: int) -> float:
    """Peak activations on the first stage under interleaving, in units of one stage's.

    Korthikanti et al. 2022, Sec. 4.2.3, as implemented in Megatron-LM's
    theoretical_memory_usage.py: 1F1B's p micro-batches times a penalty
    1 + (p-1)/(p v), i.e. p + (p-1)/v (Megatron rounds the count up).
    """
    if virtual_stages < 1:
        raise ValueError(f"virtual stages must be >= 1, got {virtual_stages}")
    return stages * (1.0 + (stages - 1) / (stages * virtual_stages))


def interleaved_1f1b(stages: int, micro_batches: int, virtual_stages: int,
                     times: PassTimes = EQUAL_PASSES) -> ScheduleCost:
    """Interleaved 1F1B with v model chunks per device: bubble (p-1)/(v m).

    Narayanan et al. 2021, Sec. 2.2.2: each device runs v chunks of l/(p v) layers, so a
    bubble slot is 1/v as long; the price is v times more pipeline communication (each
    micro-batch now crosses a device boundary at every chunk) and, for the schedule as
    built in Megatron-LM, m must be a multiple of p.
    """
    _check(stages, micro_batches)
    if virtual_stages < 1:
        raise ValueError(f"virtual stages must be >= 1, got {virtual_stages}")
    if virtual_stages > 1 and micro_batches % stages:
        raise ValueError(f"the interleaved schedule needs micro-batches ({micro_batches}) "
                         f"to be a multiple of the pipeline stages ({stages})")
    bubble = (stages - 1) * times.total / virtual_stages
    in_flight = interleaved_in_flight(stages, virtual_stages) if stages > 1 else 1.0
    return ScheduleCost(f"interleaved 1F1B (v={virtual_stages})", stages, micro_batches,
                        bubble, _fraction(bubble, micro_batches, times),
                        min(in_flight, float(micro_batches)), 2 * virtual_stages)


def zero_bubble_h1(stages: int, micro_batches: int,
                   times: PassTimes = EQUAL_PASSES) -> ScheduleCost:
    """ZB-H1: bubble (p-1)(T_F + T_B - T_W), peak memory as 1F1B (p micro-batches).

    Qi et al. 2024 (ICLR), Sec. 2.1 and Table 2: splitting the backward into B and W lets
    W fill the tail bubble; with T_F = T_B = T_W the bubble is a third of 1F1B's. The
    same expression is DeepSeek-V3's ZB1P row, (PP-1)(F + B - 2W) with B the full
    backward. Floored at 0 for a (non-physical) T_W > T_F + T_B.
    """
    _check(stages, micro_batches)
    bubble = max(0.0, (stages - 1) * (times.forward + times.backward_input
                                      - times.backward_weight))
    return ScheduleCost("ZB-H1", stages, micro_batches, bubble,
                        _fraction(bubble, micro_batches, times),
                        float(min(stages, micro_batches)), 2)


def zero_bubble_h2(stages: int, micro_batches: int,
                   times: PassTimes = EQUAL_PASSES) -> ScheduleCost:
    """ZB-H2: bubble (p-1)(T_F + T_B - 2 T_W), zero when T_F + T_B <= 2 T_W.

    Qi et al. 2024, Sec. 2.2 and Table 2: extra warm-up forwards fill the head bubble,
    at a peak of 2p - 1 micro-batches in flight (twice 1F1B). Floored at 0.
    """
    _check(stages, micro_batches)
    bubble = max(0.0, (stages - 1) * (times.forward + times.backward_input
                                      - 2.0 * times.backward_weight))
    return ScheduleCost("ZB-H2", stages, micro_batches, bubble,
                        _fraction(bubble, micro_batches, times),
                        float(min(2 * stages - 1, micro_batches)), 2)


def _dual_check(name: str, stages: int, micro_batches: int) -> None:
    """DualPipe's and DualPipeV's constraints (``schedule_constraint``) as a ValueError."""
    _check(stages, micro_batches)
    reason = schedule_constraint(name, stages, micro_batches)
    if reason:
        raise ValueError(reason)


def _overlapped(times: PassTimes, overlapped_forward_backward: float | None) -> float:
    f_and_b = (times.forward + times.backward if overlapped_forward_backward is None
               else overlapped_forward_backward)
    if f_and_b < 0:
        raise ValueError("the overlapped forward + backward time must be >= 0")
    return f_and_b


def dualpipe(stages: int, micro_batches: int, times: PassTimes = EQUAL_PASSES,
             overlapped_forward_backward: float | None = None) -> ScheduleCost:
    """DeepSeek-V3's DualPipe: bubble (PP/2 - 1)(F&B + B - 3W), 2x weights, PP + 1 in flight.

    DeepSeek-AI 2024 (arXiv:2412.19437), Sec. 3.2.1 and Table 2; the same row in the
    deepseek-ai/DualPipe README's table. ``stages`` is PP, the pipeline's ranks, and the
    model is cut into PP stages: rank r holds stage r for the micro-batches fed from
    the first rank and stage PP-1-r for those fed from the last, so the model's
    parameters are held twice across the pipeline. B is the full backward, W its weight
    part, F&B the time of a forward chunk and a backward chunk run overlapped.
    ``overlapped_forward_backward`` defaults to F + B, i.e. no gain from the overlap: our
    assumption, an upper bound (the paper gives no number). Each micro-batch crosses
    every stage boundary once each way, so an interior rank sends 2 per micro-batch as
    in 1F1B. Constraints in ``schedule_constraint``.
    """
    _dual_check("dualpipe", stages, micro_batches)
    f_and_b = _overlapped(times, overlapped_forward_backward)
    bubble = max(0.0, (stages / 2 - 1) * (f_and_b + times.backward
                                          - 3.0 * times.backward_weight))
    return ScheduleCost("DualPipe", stages, micro_batches, bubble,
                        _fraction(bubble, micro_batches, times),
                        float(min(stages + 1, micro_batches)), 2, weight_copies=2)


def dualpipe_v(stages: int, micro_batches: int, times: PassTimes = EQUAL_PASSES,
               overlapped_forward_backward: float | None = None) -> ScheduleCost:
    """DualPipeV ("cut-in-half"): DualPipe folded into a V, 2 PP chunks on PP ranks.

    deepseek-ai/DualPipe README, DualPipeV row (from Sea AI Lab's "cut-in-half" post,
    Qi et al. 2025): for 2n pipeline stages on n devices the bubble is DualPipe's,
    (2n/2 - 1)(F&B + B - 3W) = (n - 1)(F&B + B - 3W) in chunk times, with 2 chunks' weights
    and 2n + 1 chunks' activations per device. Here ``stages`` = n is the pipeline's
    ranks and ``times`` are a rank's passes (its two chunks, so a chunk's are half):
    the bubble is (n - 1)(F&B + B - 3W)/2 in rank times, half of DualPipe's on the same
    ranks at each rank's share of the model, and in flight n + 1/2 micro-batches of a
    rank's layers. Rank r holds chunks r and 2n-1-r: every parameter once (no copy).
    An interior rank sends 4 per micro-batch (each chunk, each way), as interleaving
    with v = 2; the turn at the last rank stays local.
    """
    _dual_check("dualpipev", stages, micro_batches)
    f_and_b = _overlapped(times, overlapped_forward_backward)
    bubble = max(0.0, (stages - 1) * (f_and_b + times.backward
                                      - 3.0 * times.backward_weight) / 2.0)
    return ScheduleCost("DualPipeV", stages, micro_batches, bubble,
                        _fraction(bubble, micro_batches, times),
                        min(stages + 0.5, float(micro_batches)), 4 if stages > 1 else 0)


def schedule_constraint(name: str, stages: int, micro_batches: int,
                        virtual_stages: int = 1) -> str:
    """Why ``name`` cannot run ``micro_batches`` per step on ``stages`` ranks ("" if it can).

    Interleaved 1F1B in Megatron-LM: m a multiple of p (Narayanan et al. 2021, Sec.
    2.2.2). DualPipe: p and m even (DeepSeek-V3 report, Sec. 3.2.1: "only requires that
    the pipeline stages and micro-batches be divisible by 2") and, in the reference
    implementation, m >= 2p (deepseek-ai/DualPipe, dualpipe.py ``step``: ``num_chunks >=
    num_ranks * 2``, each direction at least p micro-batches so that the steady phase is
    reached). DualPipeV: m >= 2p (dualpipev.py ``step``, the same assertion; any p).
    """
    if stages <= 1:
        return ""
    if name == "interleaved" and virtual_stages > 1 and micro_batches % stages:
        return (f"the interleaved schedule needs micro-batches ({micro_batches}) to be a "
                f"multiple of the pipeline stages ({stages})")
    if name == "dualpipe" and stages % 2:
        return f"DualPipe needs an even number of pipeline stages, got {stages}"
    if name == "dualpipe" and micro_batches % 2:
        return f"DualPipe needs an even number of micro-batches per step, got {micro_batches}"
    if name in DUAL_SCHEDULES and micro_batches < 2 * stages:
        label = "DualPipe" if name == "dualpipe" else "DualPipeV"
        return (f"{label} needs at least twice as many micro-batches per step as pipeline "
                f"ranks ({2 * stages} for {stages}), got {micro_batches}")
    return ""


SCHEDULES = ("1f1b", "interleaved", "zb_h1", "zb_h2", *DUAL_SCHEDULES)


def schedule_cost(name: str, stages: int, micro_batches: int, *, virtual_stages: int = 2,
                  times: PassTimes = EQUAL_PASSES) -> ScheduleCost:
    """Dispatch by name (one of ``SCHEDULES``), for calculators with a choice input."""
    if name == "1f1b":
        return one_f_one_b(stages, micro_batches, times)
    if name == "interleaved":
        return interleaved_1f1b(stages, micro_batches, virtual_stages, times)
    if name == "zb_h1":
        return zero_bubble_h1(stages, micro_batches, times)
    if name == "zb_h2":
        return zero_bubble_h2(stages, micro_batches, times)
    if name == "dualpipe":
        return dualpipe(stages, micro_batches, times)
    if name == "dualpipev":
        return dualpipe_v(stages, micro_batches, times)
    raise ValueError(f"unknown schedule {name!r}; choose one of {', '.join(SCHEDULES)}")
