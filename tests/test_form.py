"""The returns-form property (grader.checks.form), judged on hand-made outcomes: no processes."""

from __future__ import annotations

import numpy as np
import pytest

from grader.checks.cases import Case
from grader.checks.form import ReturnsForm
from grader.checks.properties import ShapeAndDtype
from grader.sandbox.outcomes import CallOutcome

VECTOR = ReturnsForm(id="f", property="returns-form", items=["float-vector"])
TRIPLE = ReturnsForm(id="f", property="returns-form", items=["float-vector", "index", "index"], names=["z", "i", "j"])


def _outcome(*items: tuple[object, str]) -> CallOutcome:
    values = [np.asarray(value) for value, _ in items]
    kind = "tuple" if len(items) > 1 else "single"
    return CallOutcome(status="ok", values=values, kind=kind, types=[name for _, name in items])


@pytest.mark.parametrize(
    "outcome",
    [
        _outcome((np.array([1.0, -2.0]), "ndarray")),
        _outcome((np.array([1.0, -2.0], dtype=np.float32), "ndarray")),
    ],
    ids=["float64", "float32"],
)
def test_returns_form_accepts_float_vectors(outcome: CallOutcome) -> None:
    assert VECTOR.judge(Case({}), [outcome]) is None


@pytest.mark.parametrize(
    "outcome, words",
    [
        (_outcome(([1.0, -2.0], "list")), "a list [1.0, -2.0]"),
        (_outcome((np.array([1, -2]), "ndarray")), "dtype int64"),
        (_outcome((np.array([[1.0, -2.0]]), "ndarray")), "shape (1, 2)"),
        (_outcome((np.array([], dtype=float), "ndarray")), "shape (0,)"),
        (_outcome((np.array([1.0]), "ndarray"), (0, "int")), "a tuple of 2 values"),
    ],
    ids=["list", "integers", "two-d", "empty", "tuple"],
)
def test_returns_form_names_what_came_back(outcome: CallOutcome, words: str) -> None:
    finding = VECTOR.judge(Case({}), [outcome])
    assert finding is not None and words in finding.got


def test_returns_form_accepts_a_witness_triple() -> None:
    outcome = _outcome((np.array([2.0, -4.0]), "ndarray"), (0, "int"), (np.int64(1), "int64"))
    assert TRIPLE.judge(Case({}), [outcome]) is None
    assert TRIPLE.describe("order_counterexample()").startswith("order_counterexample() returns a tuple (z, i, j)")


@pytest.mark.parametrize(
    "outcome, words",
    [
        (_outcome((np.array([2.0, -4.0]), "ndarray"), (0.0, "float"), (1, "int")), "i: a float 0"),
        (_outcome((np.array([2.0, -4.0]), "ndarray"), (0, "int")), "a tuple of 2 values"),
        (_outcome((np.array([2.0, -4.0, 0.0, 1.0]), "list")), "a list"),
    ],
    ids=["float-index", "two-items", "single-list"],
)
def test_returns_form_explains_a_malformed_triple(outcome: CallOutcome, words: str) -> None:
    finding = TRIPLE.judge(Case({}), [outcome])
    assert finding is not None and words in finding.got


SHAPE_AND_DTYPE = ShapeAndDtype(id="shape-and-dtype", property="shape-and-dtype")
CROSS_ENTROPY_FORM = ShapeAndDtype(id="returns-a-number", property="shape-and-dtype")
# What the reference solution answers to the twin call: weights of shape (2,), and a single loss.
SOFTMAX_REFERENCE = CallOutcome(status="ok", values=[np.array([0.5, 0.5])], types=["ndarray"])
LOSS_REFERENCE = CallOutcome(status="ok", values=[np.array(0.31)], types=["float64"])


@pytest.mark.parametrize(
    ("type_name", "shown"),
    [("list", "a list [0.5, 0.5]"), ("matrix", "a matrix [0.5, 0.5]")],
    ids=["list", "ndarray-subclass"],
)
def test_shape_and_dtype_costs_the_form_point_for_an_array_that_is_not_an_ndarray(type_name: str, shown: str) -> None:
    finding = SHAPE_AND_DTYPE.judge(
        Case({"z": np.array([0.0, 0.0])}), [_outcome(([0.5, 0.5], type_name)), SOFTMAX_REFERENCE]
    )
    assert finding is not None
    assert finding.got == shown and finding.expected == "a numpy.ndarray of shape (2,)"
    assert f"returned a {type_name}" in finding.note and "np.asarray" in finding.note


def test_shape_and_dtype_accepts_an_ndarray_and_reports_a_wrong_shape_before_the_container() -> None:
    case = Case({"z": np.array([0.0, 0.0])})
    assert SHAPE_AND_DTYPE.judge(case, [_outcome((np.array([0.5, 0.5]), "ndarray")), SOFTMAX_REFERENCE]) is None
    finding = SHAPE_AND_DTYPE.judge(case, [_outcome(([[0.5, 0.5]], "list")), SOFTMAX_REFERENCE])
    assert finding is not None and finding.got == "shape (1, 2)"


@pytest.mark.parametrize("type_name", ["float", "float64", "ndarray"], ids=["float", "numpy-scalar", "0-d-array"])
def test_shape_and_dtype_accepts_any_number_where_the_reference_returns_one(type_name: str) -> None:
    case = Case({"logits": np.array([[1.0, 2.0]]), "targets": np.array([1])})
    assert CROSS_ENTROPY_FORM.judge(case, [_outcome((0.31, type_name)), LOSS_REFERENCE]) is None
