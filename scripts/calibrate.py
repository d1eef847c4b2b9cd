"""``make calibrate``: refit the speed model's kernel and link parameters to the published
measurements in ``calibration/*.json`` and compare them with the catalogue.

Every prediction goes through the functions the site itself runs (formulas.kernels.gemm,
formulas.kernels.attention, formulas.collectives.achieved, formulas.kernels.memory_bound,
with the rates built by inputs.machine), so a fit here is a fit of the site's model. Each
group of points calibrates one catalogue entry (catalogues.kernel_speeds,
catalogues.link_speeds); its free parameters are fitted by least squares on the log of
predicted / measured (a Nelder-Mead search written here: the standard library only),
and their spread is the linearised standard error at the optimum. Points marked
``"use": "context"`` are printed, never fitted: each says why.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calculators.catalogues import hardware
from calculators.catalogues.kernel_speeds import FLASH2, kernel_speed
from calculators.catalogues.link_speeds import LINK_SPEEDS, SCALE_UP_LINK
from calculators.formulas.collectives.achieved import (
    Fabric,
    collective_time_s,
    plateau_bus_bandwidth,
    send_time_s,
)
from calculators.formulas.collectives.costs import bus_factor
from calculators.formulas.kernels.attention import AttentionShape, fused_attention_s
from calculators.formulas.kernels.gemm import gemm_time_s
from calculators.formulas.kernels.memory_bound import memory_time_s
from calculators.inputs.machine import fabric_for, gemm_rate

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from calculators.catalogues.kernel_speeds import FusedAttention
    from calculators.formulas.collectives.achieved import LinkCurve
    from calculators.formulas.kernels.gemm import GemmRate

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "calibration"
KINDS = ("gemm", "attention", "collectives", "hbm")
Point = dict[str, Any]
Values = dict[str, float]

#: Search bounds per parameter (lower, upper, searched on a log scale).
BOUNDS: dict[str, tuple[float, float, bool]] = {
    "max_efficiency": (0.2, 1.0, False), "k_half": (0.0, 4096.0, False),
    "overhead_s": (0.0, 60e-6, False), "wave_exponent": (0.0, 1.0, False),
    "scale": (0.5, 1.5, False), "forward": (0.1, 1.0, False), "backward": (0.1, 1.0, False),
    "half_seq": (0.0, 2000.0, False), "half_seq_causal": (0.0, 4000.0, False),
    "head_64": (0.3, 1.2, False), "head_64_forward": (0.3, 1.2, False),
    "head_64_backward": (0.3, 1.2, False), "causal_plateau": (0.5, 1.2, False),
    "ring_efficiency": (0.3, 1.0, False), "alltoall_efficiency": (0.2, 1.0, False),
    "half_bytes": (2.0**17, 2.0**31, True), "steepness": (0.3, 1.5, False),
    "floor_s": (1e-6, 2e-4, True), "in_network_allreduce": (1.0, 2.0, False),
    "half_growth": (0.0, 1.0, False),
    "hbm_efficiency": (0.3, 1.0, False), "kernel_overhead_s": (0.0, 60e-6, False),
}


def load(kind: str) -> dict[str, Any]:
    """One measurement file: sources, groups and points (calibration/README.md)."""
    with (DATA / f"{kind}.json").open(encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def measurements_sha256() -> str:
    """A digest of every measurement file, to tie a result to the data it came from."""
    digest = hashlib.sha256()
    for kind in KINDS:
        digest.update((DATA / f"{kind}.json").read_bytes())
    return digest.hexdigest()


#: The modules whose code turns parameters into predictions.
MODEL_MODULES = ("calculators/formulas/kernels/gemm.py",
                 "calculators/formulas/kernels/attention.py",
                 "calculators/formulas/kernels/memory_bound.py",
                 "calculators/formulas/collectives/achieved.py",
                 "calculators/formulas/collectives/costs.py", "calculators/inputs/machine.py")


def model_sha256() -> str:
    """A digest of the model's code, to tie a result to the formulas that computed it."""
    digest = hashlib.sha256()
    for path in MODEL_MODULES:
        digest.update((ROOT / path).read_bytes())
    return digest.hexdigest()


# --- the model, per kind: the catalogue's parameters and a predictor of the points ------

def _gemm_catalogue(target: dict[str, str]) -> Values:
    speed = kernel_speed(target["accelerator"])
    fit = speed.gemm_fp8 if target["dtype"] == "fp8" else speed.gemm
    assert fit is not None, target
    return {"max_efficiency": fit.max_efficiency, "k_half": fit.k_half,
            "overhead_s": fit.overhead_s, "wave_exponent": fit.wave_exponent}


def _gemm(values: Values) -> Callable[[Point], float | None]:
    """FLOP/s (2 m n k batch / time) or seconds of a point's GEMMs, summed."""
    rates: dict[tuple[str, bool, float | None], GemmRate] = {}

    def predict(point: Point) -> float:
        fp8, peak = point["dtype"] == "fp8", point.get("peak_flops")
        key = (point["accelerator"], fp8, peak)
        if key not in rates:
            rates[key] = replace(
                gemm_rate(key[0], fp8=fp8, peak_bf16=peak),
                max_efficiency=values["max_efficiency"], k_half=values["k_half"],
                overhead_s=values["overhead_s"], wave_exponent=values["wave_exponent"])
        shapes = point.get("gemms") or [[point["m"], point["n"], point["k"]]]
        batch = point.get("batch", 1)
        seconds = sum(gemm_time_s(m, n, k, rates[key], operand_bytes=1.0 if fp8 else 2.0,
                                  batch=batch) for m, n, k in shapes)
        if point["quantity"] == "time":
            return float(seconds)
        return float(sum(2.0 * m * n * k * batch for m, n, k in shapes) / seconds)

    return predict


def _attention_kernel(target: dict[str, str]) -> FusedAttention:
    accelerator = target["accelerator"]
    if target["kernel"] == "flash2":
        return FLASH2[accelerator]
    return kernel_speed(accelerator).attention


def _attention_catalogue(target: dict[str, str]) -> Values:
    k = _attention_kernel(target)
    return {"forward": k.forward, "backward": k.backward, "half_seq": k.half_seq,
            "half_seq_causal": k.half_seq_causal, "head_64_forward": k.head_64[0],
            "head_64_backward": k.head_64[1], "causal_plateau": k.causal_plateau,
            "scale": 1.0, "head_64": (k.head_64[0] + k.head_64[1]) / 2}


def _attention(values: Values, target: dict[str, str],
               free: Sequence[str]) -> Callable[[Point], float | None]:
    """FLOP/s of one pass as the FlashAttention papers time it; ``scale`` multiplies both
    plateaus and ``head_64`` sets both head factors when they are fitted as one."""
    tied = "head_64" in free
    kernel = replace(
        _attention_kernel(target), forward=values["forward"] * values["scale"],
        backward=values["backward"] * values["scale"], half_seq=values["half_seq"],
        half_seq_causal=values["half_seq_causal"], causal_plateau=values["causal_plateau"],
        head_64=((values["head_64"],) * 2 if tied
                 else (values["head_64_forward"], values["head_64_backward"])))

    def predict(point: Point) -> float:
        hd, seq = point["head_dim"], point["seq"]
        shape = AttentionShape(point["batch"], point["heads"], seq, seq, hd, hd,
                               0.5 if point["causal"] else 1.0)
        peak = hardware.get(point["accelerator"]).peak_bf16_flops
        forward_s, backward_s = fused_attention_s(shape, kernel, peak)
        flops = shape.forward_flops
        return {"forward": flops / forward_s, "backward": 2.5 * flops / backward_s,
                "forward_backward": 3.5 * flops / (forward_s + backward_s)}[point["pass"]]

    return predict


_CURVE_FIELDS = ("ring_efficiency", "alltoall_efficiency", "half_bytes", "steepness",
                 "floor_s", "in_network_allreduce", "half_growth")


def _link_catalogue(target: dict[str, str]) -> Values:
    curve = LINK_SPEEDS[target["link"]].curve
    return {name: float(getattr(curve, name)) for name in _CURVE_FIELDS}


@functools.cache
def _node_fabric(accelerator: str, per_domain: int, nic: str | None,
                 nics_per_node: int | None) -> Fabric:
    """The catalogue's fabric for a node: its scale-up links and NICs (fewer NICs than
    GPUs: their share per GPU)."""
    inter = None
    if nic is not None and nics_per_node is not None:
        inter = hardware.LINKS[nic].bandwidth * nics_per_node / per_domain
    return fabric_for(accelerator, domain=per_domain, nic=nic, inter_bandwidth=inter)


def _collective(values: Values, target: dict[str, str]) -> Callable[[Point], float | None]:
    """nccl-tests' busbw (B/s) or time (s) of a point, on its node's fabric with the
    group's curve (with ``values``) as the scale-up or the network curve."""
    curve: LinkCurve = replace(
        LINK_SPEEDS[target["link"]].curve, ring_efficiency=values["ring_efficiency"],
        alltoall_efficiency=values["alltoall_efficiency"], half_bytes=values["half_bytes"],
        steepness=values["steepness"], floor_s=values["floor_s"],
        in_network_allreduce=values["in_network_allreduce"],
        half_growth=values["half_growth"])
    ring = replace(curve, in_network_allreduce=1.0)

    def predict(point: Point) -> float | None:
        per_domain = point["per_domain"]
        ranks = point["ranks"] or 2 * per_domain  # several nodes, count not given: a plateau
        base = _node_fabric(point["accelerator"], per_domain, point.get("nic"),
                            point.get("nics_per_node"))
        if SCALE_UP_LINK[point["accelerator"]] == target["link"] and ranks <= per_domain:
            intra = ring if point["algorithm"] == "ring" else curve
            fabric = Fabric(base.domain, base.intra_bandwidth, base.inter_bandwidth, intra,
                            base.inter)
        else:
            fabric = Fabric(base.domain, base.intra_bandwidth, base.inter_bandwidth,
                            base.intra, curve)
        kind, size = point["collective"], point["message_bytes"]
        if kind == "link":  # one link's measured one-way rate: its ring plateau
            if ranks > per_domain:
                return fabric.inter_bandwidth * fabric.inter.ring_efficiency
            return fabric.intra_bandwidth * fabric.intra.ring_efficiency
        if kind == "sendrecv":
            return float(size / send_time_s(size, ranks > per_domain, fabric))
        if kind not in ("allreduce", "reduce_scatter", "allgather", "alltoall"):
            return None  # not an NCCL collective (context only)
        if size is None:
            return plateau_bus_bandwidth(kind, ranks, per_domain, fabric)[0]
        seconds = collective_time_s(kind, size, ranks, per_domain, fabric)
        if point["quantity"] == "time":
            return seconds
        return float(bus_factor(kind, ranks) * size / seconds)

    return predict


def _hbm_catalogue(target: dict[str, str]) -> Values:
    speed = kernel_speed(target["accelerator"])
    return {"hbm_efficiency": speed.hbm_efficiency,
            "kernel_overhead_s": speed.kernel_overhead_s}


def _hbm(values: Values) -> Callable[[Point], float | None]:
    """B/s one memory-bound kernel moving the point's bytes reaches."""

    def predict(point: Point) -> float:
        bandwidth = hardware.get(point["accelerator"]).memory_bandwidth
        seconds = memory_time_s(point["bytes"], bandwidth * values["hbm_efficiency"], 1,
                                values["kernel_overhead_s"])
        return float(point["bytes"] / seconds)

    return predict


@dataclass(frozen=True)
class Group:
    """The points that calibrate one catalogue entry, and how the model predicts them."""

    kind: str
    name: str
    spec: dict[str, Any]
    points: tuple[Point, ...]

    @property
    def fitted(self) -> tuple[Point, ...]:
        return tuple(p for p in self.points if p["use"] == "fit")

    @property
    def free(self) -> tuple[str, ...]:
        return tuple(self.spec["free"])

    def catalogue(self) -> Values:
        """The catalogue's current values of every parameter of the group's entry."""
        getter = {"gemm": _gemm_catalogue, "attention": _attention_catalogue,
                  "collectives": _link_catalogue, "hbm": _hbm_catalogue}[self.kind]
        return getter(self.spec["target"])

    def predictor(self, values: Values) -> Callable[[Point], float | None]:
        """The model with these parameter values, as a function of a point."""
        target = self.spec["target"]
        if self.kind == "gemm":
            return _gemm(values)
        if self.kind == "attention":
            return _attention(values, target, self.free)
        if self.kind == "collectives":
            return _collective(values, target)
        return _hbm(values)


def groups(kinds: Sequence[str] = KINDS) -> list[Group]:
    """Every group of every measurement file, in file order."""
    found = []
    for kind in kinds:
        doc = load(kind)
        for name, spec in doc["groups"].items():
            members = tuple(p for p in doc["points"] if p["group"] == name)
            found.append(Group(kind, name, spec, members))
    return found


# --- the fit: Nelder-Mead on the bounded parameters, scaled to [0, 1] ---------------------

def _to_unit(name: str, value: float) -> float:
    lower, upper, log = BOUNDS[name]
    if log:
        return math.log(value / lower) / math.log(upper / lower)
    return (value - lower) / (upper - lower)


def _from_unit(name: str, u: float) -> float:
    lower, upper, log = BOUNDS[name]
    u = min(1.0, max(0.0, u))
    return lower * math.pow(upper / lower, u) if log else lower + u * (upper - lower)


def nelder_mead(f: Callable[[list[float]], float], x0: Sequence[float], *, step: float = 0.05,
                iterations: int = 600, tolerance: float = 1e-12) -> list[float]:
    """The minimum of ``f`` near ``x0`` (Nelder and Mead 1965, the standard coefficients:
    reflect 1, expand 2, contract 1/2, shrink 1/2)."""
    n = len(x0)
    # Step towards the middle of [0, 1], so that no vertex starts beyond a bound.
    simplex = [list(x0)] + [[x + ((step if x < 0.5 else -step) if i == j else 0.0)
                             for j, x in enumerate(x0)] for i in range(n)]
    values = [f(x) for x in simplex]
    for _ in range(iterations):
        order = sorted(range(n + 1), key=values.__getitem__)
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        if values[-1] - values[0] <= tolerance * (1.0 + abs(values[0])):
            break
        centre = [sum(x[j] for x in simplex[:-1]) / n for j in range(n)]
        worst = simplex[-1]

        def along(t: float, centre: list[float] = centre, worst: list[float] = worst
                  ) -> list[float]:
            return [c + t * (c - w) for c, w in zip(centre, worst, strict=True)]

        reflected = along(1.0)
        fr = f(reflected)
        if fr < values[0]:
            expanded = along(2.0)
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = along(0.5 if fr < values[-1] else -0.5)
            fc = f(contracted)
            if fc < min(fr, values[-1]):
                simplex[-1], values[-1] = contracted, fc
            else:
                best = simplex[0]
                simplex = [best] + [[b + 0.5 * (x - b) for x, b in zip(p, best, strict=True)]
                                    for p in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
    return simplex[min(range(n + 1), key=values.__getitem__)]


def _solve(matrix: list[list[float]]) -> list[list[float]] | None:
    """The inverse of a small symmetric matrix (Gauss-Jordan), None when singular."""
    n = len(matrix)
    a = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(matrix)]
    scale = max((abs(v) for row in matrix for v in row), default=0.0)
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) <= 1e-12 * max(scale, 1e-300):
            return None
        a[col], a[pivot] = a[pivot], a[col]
        head = a[col][col]
        a[col] = [v / head for v in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0.0:
                factor = a[r][col]
                a[r] = [v - factor * w for v, w in zip(a[r], a[col], strict=True)]
    return [row[n:] for row in a]


@dataclass(frozen=True)
class Fit:
    """A group's fitted parameters (all of them: the free ones refitted) and spreads."""

    values: Values
    spread: dict[str, float | None]  # the linearised standard error; None: not defined

    @staticmethod
    def of(group: Group) -> Fit:
        base, free, points = group.catalogue(), group.free, group.fitted

        def values_at(u: Sequence[float]) -> Values:
            return {**base, **{n: _from_unit(n, x) for n, x in zip(free, u, strict=True)}}

        def residuals(u: Sequence[float]) -> list[float]:
            predict = group.predictor(values_at(u))
            return [math.log(_positive(predict(p)) / p["value"]) for p in points]

        def cost(u: list[float]) -> float:
            return sum(r * r for r in residuals(u))

        u = [min(1.0, max(0.0, _to_unit(n, base[n]))) for n in free]
        for _ in range(2):  # a restart: a fresh simplex around the last best
            u = [min(1.0, max(0.0, x)) for x in nelder_mead(cost, u)]
        return Fit(values_at(u), _spread(free, u, residuals))


def _positive(value: float | None) -> float:
    return value if value is not None and value > 0 else 1e-300


def _spread(free: Sequence[str], u: Sequence[float],
            residuals: Callable[[Sequence[float]], list[float]]) -> dict[str, float | None]:
    """Standard errors from the Jacobian at the optimum: s^2 (J^T J)^-1, s^2 = RSS/(n-p)."""
    at = residuals(u)
    n, p = len(at), len(free)
    if n <= p:
        return dict.fromkeys(free)
    h = 1e-4
    columns = []
    for j in range(p):
        up = [x + h if i == j else x for i, x in enumerate(u)]
        down = [x - h if i == j else x for i, x in enumerate(u)]
        columns.append([(a - b) / (2 * h) for a, b in
                        zip(residuals(up), residuals(down), strict=True)])
    normal = [[sum(a * b for a, b in zip(ci, cj, strict=True)) for cj in columns]
              for ci in columns]
    inverse = _solve(normal)
    if inverse is None:
        return dict.fromkeys(free)
    variance = sum(r * r for r in at) / (n - p)
    spread: dict[str, float | None] = {}
    for j, name in enumerate(free):
        sigma_u = math.sqrt(max(0.0, variance * inverse[j][j]))
        lower, upper, log = BOUNDS[name]
        value = _from_unit(name, u[j])
        spread[name] = value * sigma_u * math.log(upper / lower) if log else sigma_u * (
            upper - lower)
    return spread


# --- results: the catalogue's and the fit's errors, the table, the cache -----------------

CACHE = DATA / "fitted.json"


@dataclass(frozen=True)
class Result:
    """One group: its catalogue values, its fit and both models' predictions."""

    group: Group
    catalogue: Values
    fit: Fit
    predicted: dict[str, tuple[float | None, float | None]]  # id: (catalogue, fitted)

    @staticmethod
    def of(group: Group) -> Result:
        catalogue, fit = group.catalogue(), Fit.of(group)
        at_catalogue, at_fit = group.predictor(catalogue), group.predictor(fit.values)
        return Result(group, catalogue, fit,
                      {p["id"]: (at_catalogue(p), at_fit(p)) for p in group.points})

    def errors(self, which: int) -> list[float]:
        """Relative errors (predicted / measured - 1) of the fitted points: 0 the
        catalogue's, 1 the fit's."""
        return [_error(self.predicted[p["id"]][which], p["value"]) for p in self.group.fitted]

    def summary(self, which: int) -> dict[str, float]:
        return _summary(self.errors(which))

    def alone(self, name: str) -> dict[str, float]:
        """The catalogue's errors with this one parameter at its fitted value."""
        predict = self.group.predictor({**self.catalogue, name: self.fit.values[name]})
        return _summary([_error(predict(p), p["value"]) for p in self.group.fitted])

    def disagreements(self) -> list[str]:
        """Free parameters whose catalogue value the data contradict: more than two
        spreads from the fit, and material (the fitted value alone takes a point or more
        off the rms error). A group of one point has no spread: there, a catalogue value
        that misses it by more than 6% (the published checks' tolerance of one GEMM)."""
        rms = self.summary(0)["rms"]
        out = []
        for name in self.group.free:
            spread, delta = self.fit.spread[name], abs(self.catalogue[name] - self.fit.values[name])
            if spread is None:
                contradicted = len(self.group.fitted) == 1 and rms > 0.06
            else:
                contradicted = delta > 2 * spread and self.alone(name)["rms"] <= rms - 0.01
            if contradicted:
                out.append(name)
        return out


def _summary(errors: Sequence[float]) -> dict[str, float]:
    return {"rms": math.sqrt(sum(e * e for e in errors) / len(errors)),
            "max": max(abs(e) for e in errors)}


def _error(predicted: float | None, measured: float) -> float:
    return math.nan if predicted is None else predicted / measured - 1.0


def _sig(x: float | None, digits: int = 6) -> float | None:
    return None if x is None or not math.isfinite(x) else float(f"{x:.{digits}g}")


def catalogue_sha256(found: Sequence[Group]) -> str:
    """A digest of the catalogue values the fits start from and are compared with."""
    values = {f"{g.kind}/{g.name}": {k: _sig(v) for k, v in sorted(g.catalogue().items())}
              for g in found}
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()


def as_json(results: Sequence[Result]) -> dict[str, Any]:
    """Everything, machine-readable (``--json``; calibration/fitted.json is its summary)."""
    out: dict[str, Any] = {"measurements_sha256": measurements_sha256(),
                           "model_sha256": model_sha256(),
                           "catalogue_sha256": catalogue_sha256([r.group for r in results]),
                           "groups": {}}
    for r in results:
        points = []
        for p in r.group.points:
            cat, fit = r.predicted[p["id"]]
            points.append({"id": p["id"], "use": p["use"], "unit": p["unit"],
                           "measured": p["value"], "catalogue": _sig(cat),
                           "catalogue_error": _sig(_error(cat, p["value"]), 4),
                           "fitted": _sig(fit), "fitted_error": _sig(_error(fit, p["value"]), 4)})
        out["groups"][f"{r.group.kind}/{r.group.name}"] = {
            "target": r.group.spec["target"], "points_fitted": len(r.group.fitted),
            "parameters": {name: {"fitted": _sig(r.fit.values[name]),
                                  "spread": _sig(r.fit.spread[name], 3),
                                  "catalogue": _sig(r.catalogue[name]),
                                  "catalogue_rms_with_this_fitted": _sig(r.alone(name)["rms"], 4)}
                           for name in r.group.free},
            "catalogue_error": {k: _sig(v, 4) for k, v in r.summary(0).items()},
            "fitted_error": {k: _sig(v, 4) for k, v in r.summary(1).items()},
            "disagree": r.disagreements(), "points": points}
    return out


def cache_of(full: dict[str, Any]) -> dict[str, Any]:
    """The part of the results the unit tests read: fits, spreads and error summaries."""
    return {**{k: full[k] for k in ("measurements_sha256", "model_sha256", "catalogue_sha256")},
            "groups": {name: {k: g[k] for k in ("parameters", "catalogue_error",
                                                 "fitted_error", "points_fitted", "disagree")}
                       for name, g in full["groups"].items()}}


_SCALE = {"FLOP/s": (1e12, "TFLOP/s"), "B/s": (1e9, "GB/s")}


def _show(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value * 1e3:.4g} ms" if value >= 1e-3 else f"{value * 1e6:.4g} us"
    factor, name = _SCALE[unit]
    return f"{value / factor:.4g} {name}"


def _param(name: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    if name == "half_bytes":
        return f"{value / 2**20:.4g} MiB"
    if name.endswith("_s"):
        return f"{value * 1e6:.3g} us"
    return f"{value:.4g}"


def table(results: Sequence[Result]) -> str:
    """The calibration table: per group its parameters (fitted, spread, catalogue), then
    per point the measured value, both predictions and their errors."""
    lines = []
    for r in results:
        g = r.group
        lines += ["", f"== {g.kind}/{g.name}  ({g.spec['catalogue']}; {len(g.fitted)} points "
                  f"fitted, {len(g.points) - len(g.fitted)} context)",
                  f"   {'parameter':22}{'fitted':>12}{'spread':>12}{'catalogue':>12}"
                  f"   catalogue rms with this one fitted"]
        for name in g.free:
            mark = "  <- disagrees" if name in r.disagreements() else ""
            lines.append(f"   {name:22}{_param(name, r.fit.values[name]):>12}"
                         f"{_param(name, r.fit.spread[name]):>12}"
                         f"{_param(name, r.catalogue[name]):>12}"
                         f"   {r.alone(name)['rms']:.1%}{mark}")
        lines.append(f"   {'point':46}{'measured':>15}{'catalogue':>15}{'err':>8}"
                     f"{'fitted':>15}{'err':>8}")
        for p in sorted(g.points, key=lambda p: p["use"] != "fit"):
            cat, fit = r.predicted[p["id"]]
            tag = "" if p["use"] == "fit" else "(ctx) "
            lines.append(f"   {tag + p['id']:46}{_show(p['value'], p['unit']):>15}"
                         f"{_show(cat, p['unit']):>15}{_error(cat, p['value']):>+8.1%}"
                         f"{_show(fit, p['unit']):>15}{_error(fit, p['value']):>+8.1%}")
        c, f = r.summary(0), r.summary(1)
        lines.append(f"   rms / max |err| over the fitted points: catalogue {c['rms']:.1%} / "
                     f"{c['max']:.1%}, fit {f['rms']:.1%} / {f['max']:.1%}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--kind", choices=KINDS, action="append",
                        help="only this kind of measurement (repeatable)")
    args = parser.parse_args(argv)
    results = [Result.of(g) for g in groups(args.kind or KINDS)]
    full = as_json(results)
    if not args.kind:
        CACHE.write_text(json.dumps(cache_of(full), indent=1, sort_keys=True) + "\n",
                         encoding="utf-8")
    if args.json:
        print(json.dumps(full, indent=1))
    else:
        print(table(results))
        off = [f"{r.group.kind}/{r.group.name}: {', '.join(r.disagreements())}"
               for r in results if r.disagreements()]
        print("\nCatalogue values the data contradict (more than two spreads from the fit and "
              "a point or more of rms error; a group of one point: missed by more than 6%):"
              + "".join(f"\n   {line}" for line in off) if off else "\nNo disagreements.")
        print(f"(fits cached in {CACHE.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
