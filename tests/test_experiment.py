"""The experiment checks (grader.checks.experiment) on estimates computed in this process: no learner processes.

A correct experiment, in every usual style, passes for many seeds; numbers
that were never drawn fail, each with a reason naming the property broken.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable

import numpy as np
import pytest

from grader.checks.base import FOLLOWS_INPUT, Check, Finding
from grader.checks.cases import Case
from grader.checks.experiment import ScattersLikeSamplingError, SpreadShrinks, relative_error
from grader.sandbox.outcomes import CallOutcome

Estimator = Callable[[int, int, int], tuple[float, float]]

SCATTER = ScattersLikeSamplingError(id="varies-like-sampling-error", property="scatters-like-sampling-error")
SHRINK = SpreadShrinks(id="spread-shrinks-with-samples", property="spread-shrinks-with-samples")
CASE = Case(args={"d_k": 4})


def _dots(d_k: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.einsum("ij,ij->i", rng.standard_normal((n, d_k)), rng.standard_normal((n, d_k)))


def _ddof0(d_k: int, n: int, seed: int) -> tuple[float, float]:
    dots = _dots(d_k, n, seed)
    return float(np.var(dots)), float(np.var(dots / np.sqrt(d_k)))


def _ddof1(d_k: int, n: int, seed: int) -> tuple[float, float]:
    dots = _dots(d_k, n, seed)
    return float(np.var(dots, ddof=1)), float(np.var(dots, ddof=1) / d_k)


def _uncentred(d_k: int, n: int, seed: int) -> tuple[float, float]:
    dots = _dots(d_k, n, seed)
    return float(np.mean(dots**2)), float(np.mean(dots**2) / d_k)


def _standard_deviation(d_k: int, n: int, seed: int) -> tuple[float, float]:
    dots = _dots(d_k, n, seed)
    return float(np.std(dots)), float(np.std(dots / np.sqrt(d_k)))


def _uniform_draws(d_k: int, n: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    dots = (rng.random((n, d_k)) * rng.random((n, d_k))).sum(axis=1)
    return float(np.var(dots)), float(np.var(dots / np.sqrt(d_k)))


def _wobble(size: Callable[[int, int], float]) -> Estimator:
    def fabricated(d_k: int, n: int, seed: int) -> tuple[float, float]:
        digest = hashlib.sha256(f"{d_k},{n},{seed}".encode()).digest()
        u = digest[0] / 255 * 2 - 1
        return d_k * (1 + size(d_k, n) * u), 1 + size(d_k, n) * u

    return fabricated


def _exact(d_k: int, n: int, seed: int) -> tuple[float, float]:
    return float(d_k), 1.0


def _ignores_seed(d_k: int, n: int, seed: int) -> tuple[float, float]:
    return _ddof0(d_k, n, 42)


def _judge(check: Check, estimator: Estimator, shift: int = 0) -> Finding | None:
    """The check's verdict on ``estimator``, its seeds moved by ``shift`` (another run of the same experiment)."""
    outcomes = []
    for call in check.plan(CASE, "dot_product_variance"):
        args = call.args
        pair = estimator(int(args["d_k"]), int(args["n_samples"]), int(args["seed"]) + shift)
        outcomes.append(
            CallOutcome(
                status="ok", values=[np.array(pair[0]), np.array(pair[1])], kind="tuple", types=["float", "float"]
            )
        )
    return check.judge(CASE, outcomes)


CORRECT = [_ddof0, _ddof1, _uncentred]


@pytest.mark.parametrize("estimator", CORRECT, ids=["ddof0", "ddof1", "uncentred"])
@pytest.mark.parametrize("check", [SCATTER, SHRINK], ids=["scatter", "shrink"])
def test_experiment_checks_pass_a_real_experiment_on_many_seeds(check: Check, estimator: Estimator) -> None:
    for shift in range(0, 60000, 2000):
        assert _judge(check, estimator, shift) is None, shift


@pytest.mark.parametrize("estimator", [_standard_deviation, _uniform_draws], ids=["std", "uniform-draws"])
def test_experiment_checks_leave_random_draws_to_the_value_checks(estimator: Estimator) -> None:
    # Drawn at random but with another bug: the checks of the values catch those, these do not.
    for shift in range(0, 20000, 2000):
        assert _judge(SCATTER, estimator, shift) is None
        assert _judge(SHRINK, estimator, shift) is None


@pytest.mark.parametrize(
    "estimator",
    [
        _exact,
        _wobble(lambda d, n: 0.02),
        _wobble(lambda d, n: float(np.sqrt((2 + 6 / d) / 10000))),
        _wobble(lambda d, n: 0.05),
    ],
    ids=["exact", "wobble-2-percent", "wobble-one-error-at-10000", "wobble-5-percent"],
)
def test_scatter_fails_numbers_that_were_never_drawn(estimator: Estimator) -> None:
    finding = _judge(SCATTER, estimator)
    assert finding is not None
    assert "sampling errors" in finding.got and "hardly change from seed to seed" in finding.note


@pytest.mark.parametrize(
    "estimator",
    [_exact, _wobble(lambda d, n: 0.02), _wobble(lambda d, n: 0.2), _wobble(lambda d, n: 0.02 * np.sqrt(n / 100))],
    ids=["exact", "fixed-2-percent", "fixed-20-percent", "growing"],
)
def test_shrink_fails_a_spread_that_does_not_shrink_with_n_samples(estimator: Estimator) -> None:
    finding = _judge(SHRINK, estimator)
    assert finding is not None
    assert "n_samples from 4 to 11" in finding.got and "n_samples=256" in finding.got


def test_shrink_names_identical_estimates_as_no_spread_at_all() -> None:
    finding = _judge(SHRINK, _exact)
    assert finding is not None and "exactly the same estimate" in finding.note


def test_experiment_checks_let_an_ignored_seed_through_when_n_samples_changes() -> None:
    # The small calls differ in n_samples, so a constant seed still draws anew; different-seeds-differ catches it.
    assert _judge(SCATTER, _ignores_seed) is None
    assert _judge(SHRINK, _ignores_seed) is None


def test_scatter_refuses_a_non_positive_variance() -> None:
    finding = _judge(SCATTER, lambda d, n, s: (0.0, 0.0))
    assert finding is not None and "positive variance" in finding.expected


def _ddof_dk(d_k: int, n: int, seed: int) -> tuple[float, float]:
    """A real experiment with one bug: ``ddof=d_k``, infinite where n_samples <= d_k."""
    dots = _dots(d_k, n, seed)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "Degrees of freedom <= 0", as the learner would see it
        return float(np.var(dots, ddof=d_k)), float(np.var(dots / np.sqrt(d_k), ddof=d_k))


@pytest.mark.parametrize("check", [SCATTER, SHRINK], ids=["scatter", "shrink"])
def test_a_real_experiment_with_some_infinite_estimates_fails_on_its_values_only(check: Check) -> None:
    """The guard says what is wrong (inf on some calls) and that the rest scatter as draws do: no credit lost."""
    finding = _judge(check, _ddof_dk)
    assert finding is not None and finding.extra.get(FOLLOWS_INPUT) is True
    assert finding.got == f"var_unscaled = inf on 6 of the {len(check.plan(CASE, 'f'))} calls"
    assert "scatter as a sampling experiment's do" in finding.note


@pytest.mark.parametrize("check", [SCATTER, SHRINK], ids=["scatter", "shrink"])
def test_made_up_numbers_with_some_infinite_estimates_still_refuse(check: Check) -> None:
    """Infinite estimates cannot hide fabricated ones: the rest must scatter as draws do, and enough of them."""

    def exact_or_inf(d_k: int, n: int, seed: int) -> tuple[float, float]:
        return (float("inf"), float("inf")) if n == 4 else _exact(d_k, n, seed)

    def mostly_inf(d_k: int, n: int, seed: int) -> tuple[float, float]:
        return (float("inf"), float("inf")) if n < 9 else _ddof0(d_k, n, seed)

    for estimator in (exact_or_inf, mostly_inf):
        finding = _judge(check, estimator)
        assert finding is not None and FOLLOWS_INPUT not in finding.extra, estimator.__name__


def test_relative_error_matches_the_scatter_of_simulated_estimates() -> None:
    rng = np.random.default_rng(5)
    d, n = 4, 64
    x = (rng.chisquare(d, (20000, n)) - rng.chisquare(d, (20000, n))) / 2  # q . k as a difference of chi-squares
    estimates = x.var(axis=1, ddof=1)
    assert abs(estimates.std() / estimates.mean() / relative_error(n, d) - 1) < 0.05
