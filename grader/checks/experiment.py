"""Checks that a random estimate behaves like a sampling experiment, not like numbers made up to look right.

``grader.checks.statistics`` judges each estimate of ``Var(q . k) = d_k`` on
its own: it must lie within the sampling error of its sample size. Numbers
that were never drawn (``(d_k, 1.0)``, or that plus a wobble computed from a
hash of the arguments) pass that on every input. What they cannot fake
cheaply is how a real experiment's estimates vary from call to call:

* ``scatters-like-sampling-error``: over many seeds at small sample sizes,
  the estimates differ by about one sampling error: not 0, not far more.
* ``spread-shrinks-with-samples``: that scatter shrinks like
  ``1/sqrt(n_samples)``: over many seeds at a large sample size, the
  estimates scatter several times less.

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
has about that standard deviation. Simulated (10^5 repetitions each, of
estimates with ``ddof`` 0 and 1 and of the uncentred mean of squares, at
``d = 4``), the standard deviation of ``log v`` is 0.93 to 1.06 times
``relative_error`` at ``n = 4`` and within 1% of it from ``n = 16`` on.

The bounds
----------
Both checks share 48 calls at small sample sizes (4 to 11, each six times,
every call with its own seed, so that a solution that ignores the seed
still draws anew when ``n_samples`` changes); the shrinking check adds 16
calls at 256 samples.

With ``K`` estimates, the scatter statistic (a sample standard deviation
of ``log v``, around the mean weighted by ``1 / relative_error^2``, in units
of each call's ``relative_error``) is about ``sqrt(chi^2_{K-1} / (K-1))``.
For ``K = 48`` its lower 1e-11 quantile is 0.40 and its upper one 1.75; the
default bounds, ``[0.2, 3]``, are half the first and well above the second:
``log v`` has heavier tails than a normal at 4 samples, and a solution that
returns standard deviations (whose ``log`` scatters half as much) is left to
the checks of the values. Over 10^5 simulated sets of these calls at
``d_k = 4`` for each of the three estimates, the statistic averaged 0.95 to
1.03 (standard deviation 0.11 to 0.12) and ranged from 0.52 to 1.93. A
seed that is ignored leaves 8 distinct estimates: it fell below 0.2 in 8 of
10^5 simulated sets.

For the shrinking, the ratio of the small sizes' scatter to the large
size's (each in units of its own expected error) is about
``sqrt(F(47, 15))``, whose lower 1e-11 quantile is 0.282; the default
``fraction`` 0.22 also covers the uncentred estimate, which scatters 0.93
times the expected amount at the smallest sizes. Over 2 x 10^4 simulated
sets for each estimate the ratio averaged 1.01 to 1.08 and was never below
0.41. A wobble of fixed size gives about ``relative_error(256) /
relative_error(small)``, 0.15 at ``d_k = 4``: its spread shrinks by a factor
near 1 where about 6.5 is expected.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from msgspec.structs import replace

from grader.checks.base import FOLLOWS_INPUT, Call, Check, Finding
from grader.checks.cases import Case
from grader.checks.display import format_number, format_value
from grader.record import Field
from grader.sandbox.outcomes import CallOutcome

__all__ = ["ScattersLikeSamplingError", "SpreadShrinks", "relative_error"]


def relative_error(n: int, d: int) -> float:
    """The standard deviation of a sample variance of ``n`` dot products in ``d`` dimensions, over its mean."""
    kappa = 3 + 6 / d
    return math.sqrt((kappa - (n - 3) / (n - 1)) / n)


def _estimate(outcome: CallOutcome) -> tuple[float | None, Finding | None]:
    """The first number a call returned (the unscaled variance), read leniently: the form is judged elsewhere."""
    value = outcome.values[0] if outcome.values else np.array([])
    if value.dtype.kind not in "iuf" or value.size == 0:
        return None, Finding(
            got=format_value(outcome.value), expected="a tuple (var_unscaled, var_scaled) of two floats"
        )
    return float(value.reshape(-1)[0]), None


def _logs(outcomes: list[CallOutcome]) -> tuple[np.ndarray | None, Finding | None]:
    """``log`` of each call's estimate, or why there is none (a variance of random draws is positive).

    An estimate that is not a positive number (``inf`` from ``ddof`` at least ``n_samples``, say) has no
    ``log``: it is ``nan`` here, for ``_judged`` to leave out, and the finding says which call gave it.
    """
    estimates = []
    for outcome in outcomes:
        number, problem = _estimate(outcome)
        if problem:
            return None, problem
        assert number is not None
        estimates.append(number)
    values = np.array(estimates)
    good = np.isfinite(values) & (values > 0)
    logs = np.full(len(values), np.nan)
    logs[good] = np.log(values[good])
    if not np.all(good):
        bad = values[~good]
        count = f"{len(bad)} of the {len(values)} calls" if len(bad) > 1 else "one of the calls"
        return logs, Finding(
            got=f"var_unscaled = {format_number(float(bad[0]))} on {count}",
            expected="a positive variance from every call",
        )
    return logs, None


# A guard that found some estimates not positive still shows an experiment when the others, at least this share
# of its calls, scatter as one does: a real bug of the values (``ddof`` too large), not numbers made up.
_JUDGED_SHARE = 0.75


def _judged(logs: np.ndarray) -> np.ndarray | None:
    """Which calls gave a positive estimate, when they are enough to judge the scatter on (else ``None``)."""
    good = np.isfinite(logs)
    return good if good.sum() >= max(_JUDGED_SHARE * len(logs), 3) else None


def _values_wrong(problem: Finding, judged: int) -> Finding:
    """``problem`` (estimates that are not positive), for a guard whose other ``judged`` calls scatter like
    sampling error."""
    return replace(
        problem,
        note=f"On the other {judged} calls the estimates scatter as a sampling experiment's do.",
        extra={**problem.extra, FOLLOWS_INPUT: True},
    )


def _small_calls(sizes: list[int], rounds: int, first_seed: int) -> list[tuple[int, int]]:
    """``(n_samples, seed)`` of each call: every size ``rounds`` times, a new seed each call."""
    pairs = [n for _ in range(rounds) for n in sizes]
    return [(n, first_seed + index) for index, n in enumerate(pairs)]


def _scatter(logs: np.ndarray, errors: np.ndarray) -> float:
    """The spread of ``logs`` around their weighted mean, in units of each one's expected error."""
    weights = 1 / errors**2
    centre = float(np.sum(weights * logs) / np.sum(weights))
    return float(np.sqrt(np.sum(((logs - centre) / errors) ** 2) / (len(logs) - 1)))


def _with(case: Case, names: tuple[str, str, str], n: int, seed: int) -> dict[str, object]:
    """The case's ``d_k`` with the given sample size and seed, in signature order (calls pass them by position)."""
    d_arg, n_arg, seed_arg = names
    return {d_arg: case.args[d_arg], n_arg: n, seed_arg: seed}


class _SmallSamples(Check):
    """Calls at small sample sizes, each with its own seed (shared by both checks, so they are sent once)."""

    sizes: list[int] = Field(
        default=[4, 5, 6, 7, 8, 9, 10, 11],
        min_length=1,
        description="small values of n_samples; a large scatter is expected",
    )
    rounds: int = Field(default=6, ge=1, description="how many times each size is called, with a new seed each time")
    first_seed: int = Field(default=1000, ge=0, description="the seed of the first call; each next call adds 1")
    d_arg: str = Field(default="d_k", description="the entry's argument that gives the vectors' dimension")
    n_arg: str = Field(default="n_samples", description="the argument giving the number of samples")
    seed_arg: str = Field(default="seed", description="the argument giving the seed")

    def _names(self) -> tuple[str, str, str]:
        return self.d_arg, self.n_arg, self.seed_arg

    def _small_plan(self, case: Case, entry: str) -> list[Call]:
        return [
            Call(entry, _with(case, self._names(), n, seed))
            for n, seed in _small_calls(self.sizes, self.rounds, self.first_seed)
        ]

    def _small_scatter(self, logs: np.ndarray, d: int, judged: np.ndarray | None = None) -> tuple[float, np.ndarray]:
        errors = np.array([relative_error(n, d) for n, _ in _small_calls(self.sizes, self.rounds, self.first_seed)])
        if judged is not None:
            logs, errors = logs[judged], errors[judged]
        return _scatter(logs, errors), errors

    def _where(self) -> str:
        calls = len(self.sizes) * self.rounds
        return f"{calls} seeds with n_samples from {min(self.sizes)} to {max(self.sizes)}"


class ScattersLikeSamplingError(_SmallSamples):
    """Estimates over many seeds and small sample sizes differ from each other by about one sampling error.

    The scatter of ``log`` of the estimates around their weighted mean, in
    units of ``relative_error(n, d_k)`` of each call, must lie within
    ``[low, high]`` (derivation in this module's docstring).
    """

    property: Literal["scatters-like-sampling-error"]
    low: float = Field(default=0.2, gt=0, description="smallest scatter accepted, in sampling errors")
    high: float = Field(default=3.0, gt=1, description="largest scatter accepted, in sampling errors")

    def default_description(self, entry: str) -> str:
        return (
            f"{entry} behaves like a sampling experiment: over {len(self.sizes) * self.rounds} seeds, its "
            "estimates differ from each other by about one sampling error"
        )

    def plan(self, case: Case, entry: str) -> list[Call]:
        return self._small_plan(case, entry)

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        logs, problem = _logs(outcomes)
        if problem:
            judged = _judged(logs) if logs is not None else None
            if logs is None or judged is None:
                return problem
            scatter, _ = self._small_scatter(logs, int(case.args[self.d_arg]), judged)
            return _values_wrong(problem, int(judged.sum())) if self.low <= scatter <= self.high else problem
        assert logs is not None
        d = int(case.args[self.d_arg])
        scatter, _ = self._small_scatter(logs, d)
        if self.low <= scatter <= self.high:
            return None
        shown = ", ".join(format_number(float(v)) for v in np.exp(logs[:4]))
        if scatter < self.low:
            note = (
                "The estimates hardly change from seed to seed, far less than a variance of so few samples "
                "does: numbers that do not come from random draws (or from draws that ignore n_samples) "
                "look like this. Compute the variance of n_samples dot products drawn with default_rng(seed)."
            )
            if scatter == 0:
                note = "Every call returned the same number. " + note
        else:
            note = "The estimates scatter far more than a sample variance of n_samples draws does."
        return Finding(
            got=f"over {self._where()}, var_unscaled = {shown}, ... scatter by {format_number(scatter)} "
            "sampling errors",
            expected=f"about 1 sampling error (between {format_number(self.low)} and {format_number(self.high)}); "
            f"a variance of n dot products in d_k={d} dimensions varies by about "
            f"{format_number(relative_error(10, d))} of itself at n=10, shrinking like 1/sqrt(n)",
            note=note,
        )

    def verified(self, cases: list[Case]) -> str:
        return f"over {self._where()}"


class SpreadShrinks(_SmallSamples):
    """The scatter of the estimates across seeds shrinks like ``1/sqrt(n_samples)``.

    The small-sample calls (the same as ``scatters-like-sampling-error``'s
    with the same fields, so they run once) against ``large_seeds`` calls at
    ``large`` samples: the scatter at the small sizes, in units of their
    expected errors, over that at the large size, in units of its own, must
    be at least ``fraction`` (derivation in this module's docstring).
    """

    property: Literal["spread-shrinks-with-samples"]
    large: int = Field(default=256, ge=3, description="the large value of n_samples the scatter is compared with")
    large_seeds: int = Field(default=16, ge=4, description="how many seeds are called at the large n_samples")
    fraction: float = Field(default=0.22, gt=0, lt=1, description="share of the expected shrinking that must show")

    def default_description(self, entry: str) -> str:
        return (
            f"the scatter of {entry}'s estimates across seeds shrinks like 1/sqrt(n_samples), "
            f"from at most {max(self.sizes)} samples to {self.large}"
        )

    def plan(self, case: Case, entry: str) -> list[Call]:
        large = [
            Call(entry, _with(case, self._names(), self.large, self.first_seed + k)) for k in range(self.large_seeds)
        ]
        return self._small_plan(case, entry) + large

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        logs, problem = _logs(outcomes)
        count = len(self.sizes) * self.rounds
        if problem:
            small_judged = _judged(logs[:count]) if logs is not None else None
            large_judged = _judged(logs[count:]) if logs is not None else None
            if logs is None or small_judged is None or large_judged is None:
                return problem
            d = int(case.args[self.d_arg])
            small, _ = self._small_scatter(logs[:count], d, small_judged)
            large = float(np.std(logs[count:][large_judged], ddof=1)) / relative_error(self.large, d)
            shrinks = small > 0 and small >= self.fraction * large
            return _values_wrong(problem, int(small_judged.sum() + large_judged.sum())) if shrinks else problem
        assert logs is not None
        d = int(case.args[self.d_arg])
        small, errors = self._small_scatter(logs[:count], d)
        large_error = relative_error(self.large, d)
        large = float(np.std(logs[count:], ddof=1)) / large_error
        if small > 0 and small >= self.fraction * large:
            return None
        typical = float(np.sqrt(np.mean(errors**2)))  # the small calls' error, as one number
        expected = typical / large_error
        got = (
            f"a relative spread (standard deviation of log var_unscaled) of about {format_number(small * typical)} "
            f"over {self._where()} and {format_number(large * large_error)} over {self.large_seeds} seeds at "
            f"n_samples={self.large}"
        )
        if small == 0:
            note = "Different seeds gave exactly the same estimate, so there is no spread to shrink."
        else:
            note = (
                "Sampling error shrinks like 1/sqrt(n_samples); a spread that stays the same whatever "
                "n_samples is does not come from n_samples random draws."
            )
        return Finding(
            got=got,
            expected=f"about {format_number(expected)} times less spread at n_samples={self.large} "
            f"(at least {format_number(self.fraction * expected)} times less)",
            note=note,
        )

    def verified(self, cases: list[Case]) -> str:
        return f"over {self._where()} and {self.large_seeds} seeds at n_samples={self.large}"
