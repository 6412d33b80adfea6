"""in-range and monotone, judged on hand-made outcomes."""

from __future__ import annotations

import numpy as np
import pytest

from grader.checks.cases import Case
from grader.checks.general import InRange, Monotone
from grader.checks.registry import CheckSpec
from grader.record.validation import adapter
from grader.sandbox.outcomes import CallOutcome


def _ok(value: object, dtype: object = float) -> CallOutcome:
    return CallOutcome(status="ok", values=[np.asarray(value, dtype=dtype)], kind="single", types=["ndarray"])


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


@pytest.mark.parametrize(
    ("bounds", "values", "holds"),
    [
        ("[]", [0.0, 0.5, 1.0], True),
        ("()", [0.0, 0.5], False),
        ("()", [1e-300, 0.5], True),
        ("[)", [0.0, 1.0], False),
        ("(]", [0.5, 1.0], True),
        ("[]", [0.5, np.nan], False),
        ("[]", [0.5, 1.0000001], False),
    ],
    ids=["closed", "open-low", "open-inside", "half-open-high", "half-open-low", "nan", "just-above"],
)
def test_in_range_respects_each_kind_of_bound(bounds: str, values: list[float], holds: bool) -> None:
    check = InRange(id="r", property="in-range", low=0.0, high=1.0, bounds=bounds)
    finding = check.judge(Case(args={"x": np.zeros(len(values))}), [_ok(values)])
    assert (finding is None) is holds


def test_in_range_reason_names_the_first_offending_entry_with_every_digit() -> None:
    check = InRange(id="r", property="in-range", low=0.0, high=1.0, noun="the probabilities")
    finding = check.judge(Case(args={}), [_ok([[0.5, 1.0000001], [2.0, 0.1]])])
    assert finding is not None
    assert finding.got == "1.0000001 at entry [0, 1], and 1 other entry outside it"
    assert finding.expected == "every entry of the probabilities in [0, 1]"


def test_in_range_one_sided_and_float32_entries_keep_their_own_digits() -> None:
    check = InRange(id="r", property="in-range", low=0.0, bounds="(]")
    assert check.describe("softplus") == "every entry softplus returns lies in (0, inf]"
    finding = check.judge(Case(args={}), [_ok([1.0, -1.1], dtype=np.float32)])
    assert finding is not None and "-1.1 at entry [1]" in finding.got


def test_in_range_needs_a_bound_and_an_ordered_interval() -> None:
    with pytest.raises(ValueError, match="low, high or both"):
        adapter(CheckSpec).validate_python({"id": "r", "property": "in-range"})
    with pytest.raises(ValueError, match="above high"):
        adapter(CheckSpec).validate_python({"id": "r", "property": "in-range", "low": 2.0, "high": 1.0})
    with pytest.raises(ValueError):
        adapter(CheckSpec).validate_python({"id": "r", "property": "in-range", "low": 0.0, "bounds": "[["})


def test_monotone_sorts_the_flattened_input_and_catches_a_reversal() -> None:
    check = Monotone(id="m", property="monotone")
    x = np.array([[2.0, -1.0], [0.0, 5.0]])
    assert check.judge(Case(args={"x": x}), [_ok(_sigmoid(x))]) is None
    finding = check.judge(Case(args={"x": x}), [_ok(_sigmoid(-x))])
    assert finding is not None
    assert finding.got == "0.731059 at x=-1 and 0.5 at x=0, less for the larger x"
    assert finding.expected == "the result increasing in x"


def test_monotone_decreasing_and_named_argument() -> None:
    check = Monotone(id="m", property="monotone", arg="t", direction="decreasing")
    case = Case(args={"z": np.array([1.0]), "t": np.array([1.0, 2.0, 3.0])})
    assert check.judge(case, [_ok([3.0, 2.0, 2.0])]) is None
    assert check.judge(case, [_ok([3.0, 2.0, 2.5])]) is not None
    assert check.describe("f") == "f is decreasing in t"


def test_monotone_nan_output_is_a_failure_and_nan_input_is_left_out() -> None:
    check = Monotone(id="m", property="monotone")
    assert check.judge(Case(args={"x": np.array([0.0, 1.0])}), [_ok([0.1, np.nan])]) is not None
    assert check.judge(Case(args={"x": np.array([0.0, np.nan, 1.0])}), [_ok([0.1, -5.0, 0.2])]) is None


@pytest.mark.parametrize(
    ("x", "y", "holds"),
    [
        ([710.0, 745.0], [1.0, 1.0], True),
        ([1.0, 2.0], [0.7, 0.7], False),
        ([36.0, 36.04], [1 - 2.220446049250313e-16] * 2, True),
        ([-800.0, -900.0], [0.0, 0.0], True),
        ([1.0, 1.0 + 1e-14], [0.5, 0.5], True),
        ([1e308, 1.5e308], [np.inf, np.inf], True),
        ([-744.0, -744.4], [5e-324, 5e-324], True),
        ([1.0, 2.0], [0.0, 0.0], True),
        ([1.0, 2.0], [0.5, 0.5], False),
    ],
    ids=[
        "saturated-at-one",
        "tie-not-saturated",
        "near-one",
        "underflow-to-listed-zero",
        "indistinguishable-inputs",
        "infinite",
        "subnormal",
        "zero-listed",
        "half-not-listed",
    ],
)
def test_monotone_strict_allows_ties_only_where_float64_cannot_differ(
    x: list[float], y: list[float], holds: bool
) -> None:
    check = Monotone(id="m", property="monotone", strict=True, saturates_at=[0.0, 1.0])
    finding = check.judge(Case(args={"x": np.array(x)}), [_ok(y)])
    assert (finding is None) is holds


def test_monotone_strict_by_default_allows_a_tie_at_one_as_sigmoid_saturates() -> None:
    check = Monotone(id="m", property="monotone", strict=True)
    assert check.judge(Case(args={"x": np.array([1.0, 710.0, 745.0])}), [_ok([0.73, 1.0, 1.0])]) is None
    assert check.judge(Case(args={"x": np.array([1.0, 2.0])}), [_ok([0.7, 0.7])]) is not None


def test_monotone_strict_with_no_saturation_values_refuses_a_tie_at_one_or_zero() -> None:
    check = Monotone(id="m", property="monotone", strict=True, saturates_at=[])
    finding = check.judge(Case(args={"x": np.array([710.0, 745.0])}), [_ok([1.0, 1.0])])
    assert finding is not None and finding.got == "the same value, 1.0, at x=710 and at x=745"
    assert finding.expected == "the result strictly increasing in x"
    assert check.judge(Case(args={"x": np.array([-800.0, -900.0])}), [_ok([0.0, 0.0])]) is not None


def test_monotone_refuses_a_result_of_another_shape() -> None:
    check = Monotone(id="m", property="monotone")
    finding = check.judge(Case(args={"x": np.array([1.0, 2.0])}), [_ok([1.0])])
    assert finding is not None and "shape (2,)" in finding.expected
