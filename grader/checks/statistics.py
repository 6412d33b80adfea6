"""Checks for entries that return random estimates: a sampling error bound (reproducibility: ``reproducible``).

``dot_product_variance(d_k, n_samples, seed)`` returns the sample variance of
``q . k`` (and of ``q . k / sqrt(d_k)``) over ``n_samples`` draws of vectors
with independent standard normal entries. The grader cannot replay the
learner's draws (the order of the calls to the generator is the learner's
choice), so it judges the estimate statistically: the interval below holds a
correct estimate with probability at least ``1 - delta``.

The bound (``variance_interval``)
---------------------------------
Let ``X_j = q_j . k_j`` for ``j = 1..n`` and ``A_j = |k_j|^2 ~ chi^2_d``.
Given ``k_j``, ``X_j`` is normal with variance ``A_j``, so ``X_j^2 = A_j G_j^2``
with ``G_j ~ N(0, 1)`` independent of ``A_j`` and ``E[exp(l X_j^2) | A_j] =
(1 - 2 l A_j)^(-1/2)``. (So ``Var X = d`` and ``E X^4 = 3d^2 + 6d``: the
sample variance has standard error about ``d sqrt((2 + 6/d) / n)``, and a
heavy upper tail for small ``d``, which is why a normal approximation is
not trusted here.) With ``T = sum X_j^2`` and ``U = sum X_j``, every usual
estimate (``ddof`` 0 or 1, centred or not) lies between
``(T - U^2/n) / n`` and ``T / (n - 1)``.

* Upper tail (Chernoff, truncated). Choose ``a`` with
  ``P(chi^2_d > a) <= delta / (4n)`` (Laurent and Massart:
  ``a = d + 2 sqrt(d y) + 2y``, ``y = ln(4n / delta)``). For ``0 < l < 1/(2a)``,
  ``P(T >= tau) <= n P(A > a) + exp(-l tau) phi(l)^n`` with
  ``phi(l) = E[(1 - 2 l A)^(-1/2); A <= a]``. Setting the second term to
  ``delta / 4`` gives ``tau(l) = (n ln phi(l) + ln(4/delta)) / l``, minimised over ``l``.
* Lower tail (Chernoff). ``P(T <= tau) <= exp(l tau) psi(l)^n`` with
  ``psi(l) = E[(1 + 2 l A)^(-1/2)]``, set to ``delta / 4``. And ``U^2 / n``
  is at most ``eps = 2x (nd + 2 sqrt(ndx) + 2x) / n`` except with probability
  ``3 e^(-x)``, ``x = ln(12 / delta)`` (``U`` is normal with variance
  ``sum A_j ~ chi^2_{nd}`` given the keys).

Together: a correct estimate of ``Var(q . k) = d`` falls outside
``[(tau_low - eps) / n, tau_up / (n - 1)]`` with probability at most
``delta``; the scaled estimate is the same divided by ``d``. The
expectations ``phi`` and ``psi`` are one-dimensional integrals against the
chi-square density, computed by the trapezoid rule after substituting
``A = u^2`` (smooth for every ``d >= 1``); the interval is then widened by
0.5% to cover quadrature error. ``delta`` defaults to ``1e-11`` per
estimate, so a submission judged on up to 100 estimates is failed by
chance with probability below ``1e-9``. For example, with ``n = 10000``:
``d = 1`` gives ``[0.80, 1.49] d``, ``d = 16`` gives ``[0.88, 1.12] d``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import pairwise
from typing import Any, Literal

import numpy as np

from grader.checks.base import Call, Check, Finding
from grader.checks.cases import Case
from grader.checks.display import count_of, format_number, format_value
from grader.checks.reproducible import args_with
from grader.record import Field, field_validator
from grader.sandbox.outcomes import CallOutcome

__all__ = [
    "FloatTuple",
    "VarianceNear",
    "VarianceTracksDimension",
    "variance_interval",
]

_QUADRATURE_MARGIN = 0.005


def _chi2_grid(d: int, upper: float, points: int = 1201) -> tuple[np.ndarray, np.ndarray, float]:
    """Values ``A`` on ``[0, upper]`` and the chi-square(d) density in ``u = sqrt(A)``, for the trapezoid rule."""
    u = np.linspace(0.0, math.sqrt(upper), points)
    log_c = math.log(2.0) - (d / 2) * math.log(2.0) - math.lgamma(d / 2)
    density = np.empty_like(u)
    density[1:] = np.exp(log_c + (d - 1) * np.log(u[1:]) - u[1:] ** 2 / 2)
    density[0] = math.exp(log_c) if d == 1 else 0.0
    return u**2, density, float(u[1] - u[0])


def _trapezoid(values: np.ndarray, step: float) -> np.ndarray:
    return step * (values.sum(axis=-1) - 0.5 * (values[..., 0] + values[..., -1]))


@lru_cache(maxsize=256)
def variance_interval(d: int, n: int, delta: float = 1e-11) -> tuple[float, float]:
    """Bounds ``(low, high)`` on ``estimate / d`` that a correct sample variance of ``q . k`` leaves
    with probability ``<= delta``.

    Computing one is slow next to reading two numbers, so each is also kept
    in the grader's cache folder (keyed by the check library's code): a cold
    run reads it back.
    """
    if d < 1 or n < 2:
        raise ValueError("the bound needs d >= 1 and n >= 2")
    from grader import cache

    key = cache.spec_key(f"variance-interval\0{d}\0{n}\0{delta!r}".encode()) if cache.enabled() else None
    stored = cache.load(key, _interval, kind="interval") if key else None
    if stored is not None:
        return stored
    interval = _variance_interval(d, n, delta)
    if key:
        cache.store(key, list(interval), kind="interval")
    return interval


def _interval(data: Any) -> tuple[float, float]:
    """A kept interval: two floats, the lower first; ``ValueError`` for anything else."""
    if type(data) is not list or len(data) != 2 or not all(type(x) is float for x in data) or not data[0] <= data[1]:
        raise ValueError("an interval is two floats, the lower first")
    return data[0], data[1]


def _variance_interval(d: int, n: int, delta: float) -> tuple[float, float]:
    y = math.log(4 * n / delta)
    cut = d + 2 * math.sqrt(d * y) + 2 * y
    values, density, step = _chi2_grid(d, cut)
    lam = (np.linspace(0.002, 0.998, 300) / (2 * cut))[:, None]
    phi = _trapezoid(density * (1 - 2 * lam * values) ** -0.5, step)
    tau_up = float(np.min((n * np.log(phi) + math.log(4 / delta)) / lam[:, 0]))

    values, density, step = _chi2_grid(d, d + 2 * math.sqrt(60 * d) + 120)
    lam = (np.geomspace(1e-4, 10.0, 300) / d)[:, None]
    psi = _trapezoid(density * (1 + 2 * lam * values) ** -0.5, step)
    tau_low = float(np.max((-n * np.log(psi) - math.log(4 / delta)) / lam[:, 0]))
    x = math.log(12 / delta)
    eps = 2 * x * (n * d + 2 * math.sqrt(n * d * x) + 2 * x) / n
    low = max((tau_low - eps) / n / d, 0.0) * (1 - _QUADRATURE_MARGIN)
    high = tau_up / (n - 1) / d * (1 + _QUADRATURE_MARGIN)
    return low, high


def _pair(outcome: CallOutcome) -> tuple[tuple[float, float] | None, Finding | None]:
    """The two numbers a ``(var_unscaled, var_scaled)`` entry returned, or why there are not two."""
    if outcome.kind != "tuple" or len(outcome.values) != 2:
        shown = (
            f"a tuple of {count_of(len(outcome.values), 'value')}"
            if outcome.kind == "tuple"
            else format_value(outcome.values[0])
        )
        return None, Finding(got=shown, expected="a tuple (var_unscaled, var_scaled) of two floats")
    numbers = []
    for value in outcome.values:
        if value.ndim != 0 or value.dtype.kind not in "iuf":
            return None, Finding(got=format_value(outcome.value), expected="two plain numbers, not arrays")
        numbers.append(float(value))
    return (numbers[0], numbers[1]), None


class FloatTuple(Check):
    """The entry returns a tuple of ``count`` finite real numbers (Python or NumPy scalars)."""

    property: Literal["returns-float-tuple"]
    count: int = Field(default=2, ge=1, description="how many numbers the tuple holds")
    names: list[str] = Field(default_factory=list, description="the items' names, as the prompt writes them")

    def default_description(self, entry: str) -> str:
        names = f" ({', '.join(self.names)})" if len(self.names) == self.count else ""
        return f"{entry} returns a tuple{names} of {self.count} finite numbers"

    def wanted(self) -> str:
        return f"a tuple of {count_of(self.count, 'number')}"

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        outcome = outcomes[0]
        expected = self.wanted()
        if outcome.kind != "tuple":
            names = ", ".join(self.names) if len(self.names) == self.count else "a, b"
            return Finding(
                got=f"a single value {format_value(outcome.values[0])}",
                expected=expected,
                note=f"Writing return {names} returns a tuple of the {'two' if self.count == 2 else 'values'}.",
            )
        if len(outcome.values) != self.count:
            return Finding(got=f"a tuple of {count_of(len(outcome.values), 'value')}", expected=expected)
        for value in outcome.values:
            if value.ndim != 0 or value.dtype.kind not in "iuf":
                return Finding(
                    got=format_value(outcome.value),
                    expected=f"{expected}, each a single float",
                    note="Turn a one-element array into a number with float(...).",
                )
            if not math.isfinite(float(value)):
                return Finding(got=format_value(outcome.value), expected="finite numbers")
        return None


READINGS = ("swapped", "not-scaled", "divided-by-d")


class _ReadsScaling(Check):
    """A check of the experiment's two variances that may say which scaling they show, in the spec's words."""

    readings: dict[str, str] = Field(
        default_factory=dict,
        description="what to tell the learner when both values of a call show one scaling: for 'swapped' (the "
        "two values in the other order), 'not-scaled' (the second as large as the first) and 'divided-by-d' (the "
        "second about 1/d); a reading without a sentence is not said",
    )

    @field_validator("readings")
    @classmethod
    def _known_readings(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(value) - set(READINGS))
        if unknown:
            raise ValueError(f"unknown readings {unknown}; the readings are {list(READINGS)}")
        return value


class VarianceNear(_ReadsScaling):
    """One estimate of ``(var_unscaled, var_scaled)`` lies within the sampling error of its true value.

    The true value is ``d_k`` (unscaled) or 1 (scaled); the accepted interval is
    ``variance_interval(d_k, n_samples, delta)``, derived in this module's docstring.
    """

    property: Literal["variance-near"]
    which: Literal["unscaled", "scaled"] = Field(
        description="the estimate judged: unscaled (its true value is the dimension) or scaled (true value 1)"
    )
    d_arg: str = Field(default="d_k", description="the entry's argument that gives the vectors' dimension")
    n_arg: str = Field(default="n_samples", description="the argument giving the number of samples")
    default_n: int = Field(default=10000, ge=2, description="n_samples when a case leaves it to its default")
    delta: float = Field(default=1e-11, gt=0, lt=1, description="chance that a correct estimate is failed")

    def default_description(self, entry: str) -> str:
        if self.which == "unscaled":
            return f"the first value {entry} returns, the variance of q . k, is close to d_k"
        return f"the second value {entry} returns, the variance of q . k / sqrt(d_k), is close to 1"

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        pair, problem = _pair(outcomes[0])
        if problem:
            return problem
        assert pair is not None
        d = int(case.args[self.d_arg])
        n = int(case.args.get(self.n_arg) or self.default_n)
        return _variance_finding(pair, d, n, self.which, self.delta, self.readings)

    def verified(self, cases: list[Case]) -> str:
        return f"on {len(cases)} input{'s' if len(cases) != 1 else ''}, within the sampling error of each sample size"


def _variance_finding(
    pair: tuple[float, float], d: int, n: int, which: str, delta: float, readings: dict[str, str]
) -> Finding | None:
    low, high = variance_interval(d, n, delta)
    target = float(d) if which == "unscaled" else 1.0
    scale = float(d) if which == "unscaled" else 1.0
    value = pair[0] if which == "unscaled" else pair[1]
    if math.isfinite(value) and low * scale <= value <= high * scale:
        return None
    name = "var_unscaled" if which == "unscaled" else "var_scaled"
    return Finding(
        got=f"{name} = {format_number(value)}",
        expected=f"{format_number(target)}, give or take sampling error: between {format_number(low * scale)} and "
        f"{format_number(high * scale)} for {n} samples (a correct estimate falls outside with probability "
        f"below {format_number(delta)})",
        note=readings.get(scaling_reading(pair, d, (low, high), which) or "", ""),
    )


def scaling_reading(pair: tuple[float, float], d: int, interval: tuple[float, float], which: str) -> str | None:
    """Which scaling the two values show (one of ``READINGS``), only when both values rule out every other one.

    Each value is read against the interval a correct estimate of each
    candidate (about ``d``, about 1, about ``1/d``) falls in; the readings are
    told apart only where those intervals do not overlap. A second value
    about ``d`` means "not scaled" only when the first is about ``d`` as well:
    with a first value about 1, the two come back in the other order.
    """
    low, high = interval
    unscaled, scaled = pair
    if d <= 1 or not (math.isfinite(unscaled) and math.isfinite(scaled)):
        return None
    exact = _exact_reading(unscaled, scaled, d, which)
    if exact is not None:
        return exact
    if high >= low * d:
        return None  # sampling error this large: no reading is ruled out

    def about(value: float, target: float) -> bool:
        return low * target <= value <= high * target

    if about(unscaled, 1.0) and about(scaled, d):
        return "swapped"
    if which != "scaled" or not about(unscaled, d):
        return None
    if about(scaled, d):
        return "not-scaled"
    if about(scaled, 1 / d):
        return "divided-by-d"
    return None


def _exact_reading(unscaled: float, scaled: float, d: int, which: str) -> str | None:
    """The scaling read from the two values of one call drawn from the same dot products, free of sampling error.

    From the same draws, the correct second value is the first over ``d``;
    over 1 (the same number twice), it was not divided; over ``d**2``, divided
    by ``d``; ``d`` times the first, the two are in the other order. ``None``
    when the ratio is none of these (the two came from different draws).
    """
    if unscaled <= 0 or scaled <= 0:
        return None
    ratio = scaled / unscaled
    if math.isclose(ratio, d, rel_tol=1e-6):
        return "swapped"
    if which != "scaled":
        return None
    if scaled == unscaled:
        return "not-scaled"
    if math.isclose(ratio, 1 / d**2, rel_tol=1e-6):
        return "divided-by-d"
    return None


class VarianceTracksDimension(_ReadsScaling):
    """Across several ``d_k``, the unscaled variance grows (about ``d_k``) while the scaled one stays near 1."""

    property: Literal["variance-tracks-dimension"]
    dims: list[int] = Field(min_length=2, description="increasing dimensions to call the entry with")
    d_arg: str = Field(default="d_k", description="the entry's argument that gives the vectors' dimension")
    n_arg: str = Field(default="n_samples", description="the argument giving the number of samples")
    default_n: int = Field(default=10000, ge=2, description="n_samples when a case leaves it to its default")
    delta: float = Field(default=1e-11, gt=0, lt=1, description="chance that a correct estimate is failed")

    def default_description(self, entry: str) -> str:
        return f"as d_k grows, the first value {entry} returns grows like d_k while the second stays near 1"

    def plan(self, case: Case, entry: str) -> list[Call]:
        return [Call(entry, args_with(case, self.d_arg, d)) for d in self.dims]

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        n = int(case.args.get(self.n_arg) or self.default_n)
        pairs = []
        for outcome in outcomes:
            pair, problem = _pair(outcome)
            if problem:
                return problem
            assert pair is not None
            pairs.append(pair)
        shown = ", ".join(
            f"d_k={d}: ({format_number(a)}, {format_number(b)})" for d, (a, b) in zip(self.dims, pairs, strict=True)
        )
        unscaled = [a for a, _ in pairs]
        if not all(later > earlier for earlier, later in pairwise(unscaled)):
            return Finding(got=shown, expected="the first value to grow with d_k")
        for d, (a, b) in zip(self.dims, pairs, strict=True):
            for which in ("unscaled", "scaled"):
                finding = _variance_finding((a, b), d, n, which, self.delta, self.readings)
                if finding:
                    return Finding(got=shown, expected=f"at d_k={d}, {finding.expected}", note=finding.note)
        return None
