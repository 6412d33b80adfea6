"""The sampling-error bound and the checks of random estimates, judged on hand-made outcomes."""

from __future__ import annotations

import numpy as np
import pytest

from grader.checks.cases import Case
from grader.checks.reproducible import ChangesWithArgument, Reproducible
from grader.checks.statistics import FloatTuple, VarianceNear, VarianceTracksDimension, variance_interval
from grader.sandbox.outcomes import CallOutcome


def _pair(a: float, b: float) -> CallOutcome:
    return CallOutcome(status="ok", values=[np.array(a), np.array(b)], kind="tuple", types=["float", "float"])


@pytest.mark.parametrize(("d", "n"), [(1, 1000), (4, 2000), (64, 10000)], ids=["d1", "d4", "d64"])
def test_variance_interval_holds_the_truth_and_is_wider_than_six_standard_errors(d: int, n: int) -> None:
    low, high = variance_interval(d, n)
    error = np.sqrt((2 + 6 / d) / n)
    assert low < 1 - 6 * error and high > 1 + 6 * error
    assert 0 < low < 1 < high


def test_variance_interval_narrows_with_more_samples() -> None:
    wide, narrow = variance_interval(16, 1000), variance_interval(16, 10000)
    assert narrow[0] > wide[0] and narrow[1] < wide[1]


def test_variance_interval_is_never_left_by_the_reference_on_a_few_seeds() -> None:
    d, n = 8, 2000
    low, high = variance_interval(d, n)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        dots = (rng.standard_normal((n, d)) * rng.standard_normal((n, d))).sum(axis=1)
        assert low <= np.var(dots) / d <= high


def test_variance_near_fails_a_variance_of_one_over_dk_and_names_the_cause() -> None:
    check = VarianceNear(id="v", property="variance-near", which="scaled", readings=_READINGS)
    case = Case(args={"d_k": 16, "n_samples": 2000, "seed": 0})
    assert check.judge(case, [_pair(16.2, 1.01)]) is None
    finding = check.judge(case, [_pair(16.2, 1 / 16)])
    assert finding is not None and "divided by d_k" in finding.note


def test_variance_near_uses_the_default_sample_size_when_the_case_leaves_it_out() -> None:
    check = VarianceNear(id="v", property="variance-near", which="unscaled", default_n=10000)
    assert check.judge(Case(args={"d_k": 16}), [_pair(17.5, 1.0)]) is None
    assert check.judge(Case(args={"d_k": 16}), [_pair(19.0, 1.0)]) is not None


def test_float_tuple_refuses_one_array() -> None:
    check = FloatTuple(id="f", property="returns-float-tuple", count=2)
    single = CallOutcome(status="ok", values=[np.array([1.0, 2.0])], kind="single", types=["ndarray"])
    assert check.judge(Case(args={}), [single]) is not None
    assert check.judge(Case(args={}), [_pair(1.0, 2.0)]) is None


def test_reproducible_spells_the_repeat_differently() -> None:
    check = Reproducible(id="r", property="reproducible", defaults={"n_samples": 10000, "seed": 0})
    calls = check.plan(Case(args={"d_k": 4, "n_samples": 500, "seed": 0}), "f")
    assert [call.args for call in calls] == [
        {"d_k": 4, "n_samples": 500, "seed": 0},
        {"d_k": 4, "n_samples": 500},
    ]
    calls = check.plan(Case(args={"d_k": 16}), "f")
    assert calls[1].args == {"d_k": 16, "n_samples": 10000, "seed": 0}
    assert check.judge(Case(args={}), [_pair(1.0, 2.0), _pair(1.0, 2.0)]) is None
    assert check.judge(Case(args={}), [_pair(1.0, 2.0), _pair(1.5, 2.0)]) is not None


def test_changes_with_argument_fails_only_when_every_result_is_the_same() -> None:
    check = ChangesWithArgument(id="c", property="changes-with-argument", arg="seed", values=[0, 1])
    case = Case(args={"d_k": 4, "n_samples": 500, "seed": 0})
    assert [call.args["seed"] for call in check.plan(case, "f")] == [0, 1]
    assert check.judge(case, [_pair(1.0, 2.0), _pair(1.0, 2.0)]) is not None
    assert check.judge(case, [_pair(1.0, 2.0), _pair(1.1, 2.0)]) is None


def test_variance_tracks_dimension_wants_growth() -> None:
    check = VarianceTracksDimension(id="t", property="variance-tracks-dimension", dims=[1, 16])
    case = Case(args={"d_k": 1, "n_samples": 3000, "seed": 0})
    assert check.judge(case, [_pair(1.0, 1.0), _pair(16.3, 1.02)]) is None
    assert check.judge(case, [_pair(1.0, 1.0), _pair(4.0, 1.0)]) is not None


# What the spec says for each reading (exercises/scaling-experiment.yaml words them so).
_READINGS = {
    "swapped": "the two come back in the other order",
    "not-scaled": "the dot products were not divided by sqrt(d_k)",
    "divided-by-d": "the dot products were divided by d_k, not by sqrt(d_k)",
}
# Each (unscaled, scaled) pair below is one call at d_k=16 that drew the same dot products for both values.
_NOT_SCALED = (16.2, 16.2)
_SWAPPED = (16.2 / 16, 16.2)
_DIVIDED_BY_DK = (16.2, 16.2 / 256)


@pytest.mark.parametrize(
    ("pair", "said", "unsaid"),
    [
        (_NOT_SCALED, "not divided by sqrt(d_k)", "other order"),
        (_SWAPPED, "other order", "not divided"),
        (_DIVIDED_BY_DK, "divided by d_k, not by sqrt(d_k)", "other order"),
    ],
    ids=["not-scaled", "swapped", "divided-by-dk"],
)
def test_variance_near_states_a_scaling_only_when_the_first_value_rules_out_the_others(
    pair: tuple[float, float], said: str, unsaid: str
) -> None:
    check = VarianceNear(id="v", property="variance-near", which="scaled", readings=_READINGS)
    finding = check.judge(Case(args={"d_k": 16, "n_samples": 2000, "seed": 0}), [_pair(*pair)])
    assert finding is not None and said in finding.note and unsaid not in finding.note


def test_variance_near_says_nothing_of_the_scaling_when_sampling_error_blurs_the_readings() -> None:
    # From different draws at d_k=2 and 300 samples, "about 2" and "about 1" overlap: nothing is ruled out.
    check = VarianceNear(id="v", property="variance-near", which="scaled", readings=_READINGS)
    low, high = variance_interval(2, 300)
    assert high >= 2 * low
    finding = check.judge(Case(args={"d_k": 2, "n_samples": 300, "seed": 0}), [_pair(2.1, 2.0 * high * 0.99)])
    assert finding is not None and finding.note == ""


def test_variance_near_tells_a_swapped_pair_on_the_first_value_too() -> None:
    check = VarianceNear(id="v", property="variance-near", which="unscaled", readings=_READINGS)
    finding = check.judge(Case(args={"d_k": 16, "n_samples": 2000, "seed": 0}), [_pair(*_SWAPPED)])
    assert finding is not None and "other order" in finding.note


def test_changes_with_argument_says_an_argument_is_ignored_only_when_the_control_changes_the_result() -> None:
    check = ChangesWithArgument(
        id="c", property="changes-with-argument", arg="n_samples", values=[300, 600], control={"seed": 7}
    )
    case = Case(args={"d_k": 4, "n_samples": 500, "seed": 0})
    calls = check.plan(case, "f")
    assert [call.args for call in calls][-1] == {"d_k": 4, "n_samples": 300, "seed": 7}
    ignores = check.judge(case, [_pair(4.1, 1.02), _pair(4.1, 1.02), _pair(3.9, 0.97)])
    assert ignores is not None and "seems to be ignored" in ignores.note
    # Identical pairs: a variance of 0 (or of rounding) whatever the arguments; nothing shows n_samples unused.
    constant = check.judge(case, [_pair(0.0, 1.2e-32), _pair(0.0, 1.2e-32), _pair(1.1e-31, 2.8e-32)])
    assert constant is not None and "ignored" not in constant.note and "do not show" in constant.note
    assert check.judge(case, [_pair(4.1, 1.02), _pair(4.0, 1.0), _pair(3.9, 0.97)]) is None


def test_changes_with_argument_without_a_control_never_says_the_argument_is_ignored() -> None:
    check = ChangesWithArgument(id="c", property="changes-with-argument", arg="seed", values=[0, 1])
    finding = check.judge(Case(args={"d_k": 4}), [_pair(1.0, 2.0), _pair(1.0, 2.0)])
    assert finding is not None and finding.note == ""


def test_variance_near_says_no_reading_the_spec_does_not_word() -> None:
    check = VarianceNear(id="v", property="variance-near", which="scaled")
    finding = check.judge(Case(args={"d_k": 16, "n_samples": 2000, "seed": 0}), [_pair(*_NOT_SCALED)])
    assert finding is not None and finding.note == ""


def test_variance_near_refuses_a_reading_it_does_not_know() -> None:
    with pytest.raises(ValueError, match="unknown readings"):
        VarianceNear(id="v", property="variance-near", which="scaled", readings={"halved": "x"})
