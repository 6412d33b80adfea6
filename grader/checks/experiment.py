"""Checks that a random estimate behaves like a sampling experiment, not like numbers made up to look right.

``grader.checks.statistics`` judges each estimate of ``Var(q . k) = d_k`` on
its own: it must lie within the sampling error of its sample size. Numbers
that were never drawn (``(d_k, 1.0)``, or that plus a wobble computed from a
hash of the arguments) pass that on every input. What they cannot fake
cheaply is how a real experiment's estimates vary from call to call:

* ``scatters-like-sampling-error``: over many seeds (and small sample sizes,
  so that a seed that is ignored still gives new draws when ``n_samples``
  changes), the estimates differ by about one sampling error: not 0, not
  far more.
* ``spread-shrinks-with-samples``: that scatter shrinks like
  ``1/sqrt(n_samples)``: over many seeds at a small and at a large sample
  size, the large one's estimates scatter several times less.

Both look at ``log`` of the estimates, so they are blind to the scale: a
solution that draws from the wrong distribution, returns the standard
deviation, or divides by ``d_k`` still draws at random, and is judged on
that by the checks of the values, not here.

The expected scatter
--------------------
For ``X = q . k`` with ``q, k`` independent standard normal in ``d``
dimensions, ``E X^4 = 3d^2 + 6d``, so the sample variance ``v`` of ``n``
draws has ``Var(v) / E(v)^2 = (kappa - (n - 3) / (n - 1)) / n`` with
``kappa = 3 + 6 / d`` (``relative_error``); by the delta method, ``log v``
has about that standard deviation. Simulated over 10^5 repetitions each
(estimates with ``ddof`` 0 and 1, and the uncentred mean of squares, for
``d = 4``; see the tests), the standard deviation of ``log v`` is 0.93 to
1.06 times ``relative_error`` for ``n = 4`` and within 1% of it from
``n = 16`` on.

The bounds
----------
With ``K`` estimates, the scatter statistic (a sample standard deviation in
units of the expected one) is about ``sqrt(chi^2_{K-1} / (K-1))``. For
``K = 16`` its lower 1e-11 quantile is 0.128 and its upper one 2.37; the
default bounds, ``[0.064, 6]``, are half and two and a half times those,
because ``log v`` has heavier tails than a normal for the smallest ``n``
(the largest value seen in 10^5 simulated sets was 2.5, the smallest 0.25).
Half the lower quantile also lets a solution that returns standard deviations
(whose ``log`` scatters half as much) through with the same margin.

For the shrinking, the ratio of the two scatters, divided by its expected
value ``relative_error(small) / relative_error(large)``, is about
``sqrt(F(K_small - 1, K_large - 1))``: with 48 and 16 seeds its lower 1e-11
quantile is 0.282. The default ``fraction`` 0.23 also covers the
uncentred estimate, whose ``log`` scatters 0.93 times the expected amount at
``n = 4``: with sizes 4 and 256 at ``d_k = 4`` the scatter must shrink at
least 2.0-fold where 8.7-fold is expected (the smallest of 4 x 10^4
simulated ratios was 3.8). A wobble of fixed size, however large, shrinks
by a factor near 1.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from grader.checks.base import Call, Check, Finding
from grader.checks.cases import Case
from grader.checks.display import format_number, format_value
from grader.sandbox.outcomes import CallOutcome
from grader.spec.record import Field

__all__ = ["ScattersLikeSamplingError", "SpreadShrinks", "relative_error"]


def relative_error(n: int, d: int) -> float:
    """The standard deviation of a sample variance of ``n`` dot products in ``d`` dimensions, over its mean."""
    kappa = 3 + 6 / d
    return math.sqrt((kappa - (n - 3) / (n - 1)) / n)


def _estimate(outcome: CallOutcome) -> tuple[float | None, Finding | None]:
    """The first number a call returned (the unscaled variance), read leniently: the form is judged elsewhere."""
    value = outcome.values[0] if outcome.values else np.array([])
    if value.dtype.kind not in "iuf" or value.size == 0:
        return None, Finding(got=format_value(outcome.value), expected="a tuple (var_unscaled, var_scaled) of two floats")
    return float(value.reshape(-1)[0]), None


def _logs(outcomes: list[CallOutcome]) -> tuple[np.ndarray | None, Finding | None]:
    """``log`` of each call's estimate, or why there is none (a variance of random draws is positive)."""
    estimates = []
    for outcome in outcomes:
        number, problem = _estimate(outcome)
        if problem:
            return None, problem
        assert number is not None
        estimates.append(number)
    values = np.array(estimates)
    if not np.all(np.isfinite(values) & (values > 0)):
        bad = values[~(np.isfinite(values) & (values > 0))]
        return None, Finding(got=f"var_unscaled = {format_number(float(bad[0]))} on one of the calls",
                             expected="a positive variance from every call")
    return np.log(values), None


def _seeds(first: int, count: int) -> list[int]:
    return list(range(first, first + count))


def _with(case: Case, d_arg: str, n_arg: str, seed_arg: str, n: int, seed: int) -> dict[str, object]:
    """The case's ``d_k`` with the given sample size and seed, in signature order (calls pass them by position)."""
    return {d_arg: case.args[d_arg], n_arg: n, seed_arg: seed}


class ScattersLikeSamplingError(Check):
    """Estimates over many seeds and small sample sizes differ from each other by about one sampling error.

    The calls pair ``sizes[i]`` with seed ``first_seed + i``; the scatter of
    ``log`` of the estimates around their weighted mean, in units of
    ``relative_error(n, d_k)`` of each call, must lie within ``[low, high]``
    (derivation in this module's docstring).
    """

    property: Literal["scatters-like-sampling-error"]
    sizes: list[int] = Field(min_length=8, description="n_samples of each call (small: a large scatter is expected)")
    first_seed: int = Field(default=100, ge=0, description="the seed of the first call; each next call adds 1")
    low: float = Field(default=0.064, gt=0, description="smallest scatter accepted, in sampling errors")
    high: float = Field(default=6.0, gt=1, description="largest scatter accepted, in sampling errors")
    d_arg: str = "d_k"
    n_arg: str = "n_samples"
    seed_arg: str = "seed"

    def default_description(self, entry: str) -> str:
        return (f"{entry} behaves like a sampling experiment: over {len(self.sizes)} seeds, its estimates differ "
                "from each other by about one sampling error")

    def plan(self, case: Case, entry: str) -> list[Call]:
        seeds = _seeds(self.first_seed, len(self.sizes))
        return [Call(entry, _with(case, self.d_arg, self.n_arg, self.seed_arg, n, seed))
                for n, seed in zip(self.sizes, seeds)]

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        logs, problem = _logs(outcomes)
        if problem:
            return problem
        assert logs is not None
        d = int(case.args[self.d_arg])
        errors = np.array([relative_error(n, d) for n in self.sizes])
        weights = 1 / errors**2
        centre = float(np.sum(weights * logs) / np.sum(weights))
        scatter = float(np.sqrt(np.sum(((logs - centre) / errors) ** 2) / (len(logs) - 1)))
        if self.low <= scatter <= self.high:
            return None
        shown = ", ".join(format_number(float(v)) for v in np.exp(logs[:4]))
        seeds = _seeds(self.first_seed, len(self.sizes))
        where = (f"over seeds {seeds[0]} to {seeds[-1]} with n_samples from {min(self.sizes)} to {max(self.sizes)}, "
                 f"var_unscaled = {shown}, ...")
        if scatter < self.low:
            note = ("The estimates hardly change from seed to seed, far less than draws of so few samples would: "
                    "numbers that do not come from random draws (or draws that ignore n_samples) look like this. "
                    "Compute the variance of n_samples dot products drawn with default_rng(seed).")
            if scatter == 0:
                note = "Every call returned the same number. " + note
        else:
            note = "The estimates scatter far more than a sample variance of n_samples draws does."
        return Finding(
            got=f"{where}: they scatter by {format_number(scatter)} sampling errors",
            expected=f"about 1 sampling error (between {format_number(self.low)} and {format_number(self.high)}); "
                     f"the sampling error of a variance of n dot products is about "
                     f"{format_number(relative_error(10, d))} of d_k at n=10, shrinking like 1/sqrt(n)",
            note=note,
        )

    def verified(self, cases: list[Case]) -> str:
        return f"on {len(self.sizes)} seeds with n_samples from {min(self.sizes)} to {max(self.sizes)}"


class SpreadShrinks(Check):
    """The scatter of the estimates across seeds shrinks like ``1/sqrt(n_samples)``.

    ``small_seeds`` calls at ``small`` samples and ``large_seeds`` calls at
    ``large`` samples (seeds counted up from ``first_seed``); the standard
    deviation of ``log`` of the estimates must be at least
    ``fraction * relative_error(small) / relative_error(large)`` times larger
    at the small size (derivation in this module's docstring).
    """

    property: Literal["spread-shrinks-with-samples"]
    small: int = Field(default=4, ge=2)
    large: int = Field(default=256, ge=3)
    small_seeds: int = Field(default=48, ge=4)
    large_seeds: int = Field(default=16, ge=4)
    first_seed: int = Field(default=1000, ge=0)
    fraction: float = Field(default=0.23, gt=0, lt=1, description="share of the expected shrinking that must show")
    d_arg: str = "d_k"
    n_arg: str = "n_samples"
    seed_arg: str = "seed"

    def default_description(self, entry: str) -> str:
        return (f"the scatter of {entry}'s estimates across seeds shrinks like 1/sqrt(n_samples), "
                f"from {self.small} to {self.large} samples")

    def plan(self, case: Case, entry: str) -> list[Call]:
        small = [(self.small, seed) for seed in _seeds(self.first_seed, self.small_seeds)]
        large = [(self.large, seed) for seed in _seeds(self.first_seed, self.large_seeds)]
        return [Call(entry, _with(case, self.d_arg, self.n_arg, self.seed_arg, n, seed)) for n, seed in small + large]

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        logs, problem = _logs(outcomes)
        if problem:
            return problem
        assert logs is not None
        d = int(case.args[self.d_arg])
        small, large = logs[: self.small_seeds], logs[self.small_seeds:]
        spread_small, spread_large = float(np.std(small, ddof=1)), float(np.std(large, ddof=1))
        expected = relative_error(self.small, d) / relative_error(self.large, d)
        least = self.fraction * expected
        if spread_small >= least * spread_large and spread_small > 0:
            return None
        got = (f"a relative spread (standard deviation of log var_unscaled) of {format_number(spread_small)} over "
               f"{self.small_seeds} seeds at n_samples={self.small} and {format_number(spread_large)} over "
               f"{self.large_seeds} seeds at n_samples={self.large}")
        if spread_small == 0:
            note = "Different seeds gave exactly the same estimate, so there is no spread to shrink."
        else:
            note = ("Sampling error shrinks like 1/sqrt(n_samples); a spread that stays the same whatever "
                    "n_samples is does not come from n_samples random draws.")
        return Finding(
            got=got,
            expected=f"about {format_number(expected)} times less spread at n_samples={self.large} "
                     f"(at least {format_number(least)} times less)",
            note=note,
        )

    def verified(self, cases: list[Case]) -> str:
        return (f"over {self.small_seeds} seeds at n_samples={self.small} and {self.large_seeds} seeds at "
                f"n_samples={self.large}")
