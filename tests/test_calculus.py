"""The derivative properties (grader.checks.calculus), judged on hand-made outcomes: no processes."""

from __future__ import annotations

import numpy as np
import pytest

from grader.checks.base import TrustedFunction
from grader.checks.calculus import JacobianShape, MatchesJacobian, SumsToZero, Symmetric
from grader.checks.cases import Case
from grader.checks.references import numerical_jacobian, softmax_jacobian, trusted_function_value
from grader.sandbox import trusted
from grader.sandbox.outcomes import CallOutcome

SOFTMAX = TrustedFunction("softmax")
WIDE = TrustedFunction("linear", (np.array([[1.0, -2.0, 0.5], [3.0, 0.0, 1.0]]), np.array([0.5, -1.0])))


def _returned(value: np.ndarray) -> list[CallOutcome]:
    return [CallOutcome(status="ok", values=[np.asarray(value)], types=["ndarray"])]


def _forward(fn: TrustedFunction, z: np.ndarray, h: float) -> np.ndarray:
    base = trusted_function_value(fn, z)
    return np.stack([(trusted_function_value(fn, z + h * e) - base) / h for e in np.eye(z.size)], axis=1)


@pytest.mark.parametrize(
    "fn, z",
    [
        (TrustedFunction("softmax"), np.array([1000.0, -2.0, 3.5])),
        (TrustedFunction("hard_argmax"), np.array([0.2, 1.5, -1.0])),
        (WIDE, np.array([0.3, -0.7, 1.1])),
        (TrustedFunction("linear", (np.array([[2.0, 1.0], [0.0, -1.0]]),)), np.array([0.5, 0.25])),
    ],
    ids=["softmax", "hard-argmax", "linear-with-offset", "linear"],
)
def test_trusted_function_value_matches_the_learner_process_copy(fn: TrustedFunction, z: np.ndarray) -> None:
    inside = trusted.build(fn.name, list(fn.arrays))(z)
    assert np.array_equal(trusted_function_value(fn, z), inside)


def test_matches_jacobian_passes_central_differences_of_softmax() -> None:
    z = np.array([0.3, -1.2, 2.0])
    check = MatchesJacobian(id="j", property="matches-jacobian", expect="exact")
    assert check.judge(Case({"f": SOFTMAX, "z": z}), _returned(numerical_jacobian(SOFTMAX, z))) is None


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda z, h: numerical_jacobian(SOFTMAX, z, h).T * np.array([[1.0], [1.1], [0.9]]), None),
        (lambda z, h: _forward(SOFTMAX, z, h), "forward difference"),
        (lambda z, h: 2 * numerical_jacobian(SOFTMAX, z, h), "divide by 2h"),
        (lambda z, h: numerical_jacobian(SOFTMAX, z, 1e-5), "step of 1e-05"),
    ],
    ids=["unexplained", "forward-difference", "twice", "ignores-h"],
)
def test_matches_jacobian_names_the_slip_it_sees(make, words) -> None:
    z, h = np.array([0.0, 1.0, -0.5]), 0.5
    check = MatchesJacobian(id="j", property="matches-jacobian", expect="central-difference", atol=1e-9, rtol=1e-7)
    finding = check.judge(Case({"f": SOFTMAX, "z": z, "h": h}), _returned(make(z, h)))
    assert finding is not None
    if words is None:
        assert finding.note == ""
    else:
        assert words in finding.note


def test_matches_jacobian_names_a_transpose_of_a_non_symmetric_map() -> None:
    square = TrustedFunction("linear", (np.array([[2.0, 1.0], [-1.0, 3.0]]),))
    check = MatchesJacobian(id="j", property="matches-jacobian")
    finding = check.judge(
        Case({"f": square, "z": np.array([0.5, 0.25])}), _returned(np.array([[2.0, -1.0], [1.0, 3.0]]))
    )
    assert finding is not None and "transpose" in finding.note


def test_matches_jacobian_reports_swapped_shape_for_non_square_maps() -> None:
    check = MatchesJacobian(id="j", property="matches-jacobian")
    finding = check.judge(Case({"f": WIDE, "z": np.zeros(3)}), _returned(np.zeros((3, 2))))
    assert finding is not None
    assert finding.expected == "shape (2, 3)" and "swapped" in finding.note


def test_matches_jacobian_hard_argmax_is_exactly_zero() -> None:
    argmax = TrustedFunction("hard_argmax")
    check = MatchesJacobian(id="j", property="matches-jacobian", atol=0.0, rtol=0.0)
    case = Case({"f": argmax, "z": np.array([1.0, 3.0])})
    assert check.judge(case, _returned(np.zeros((2, 2)))) is None
    finding = check.judge(case, _returned(softmax_jacobian(np.array([1.0, 3.0]))))
    assert finding is not None and "no gradient" in finding.note


def test_jacobian_shape_counts_outputs_of_f() -> None:
    check = JacobianShape(id="s", property="jacobian-shape")
    case = Case({"f": WIDE, "z": np.zeros(3)})
    assert check.judge(case, _returned(np.zeros((2, 3)))) is None
    finding = check.judge(case, _returned(np.zeros((3, 3))))
    assert finding is not None and "f has 2 outputs, z has 3 entries" in finding.expected


def test_jacobian_shape_refuses_integer_arrays() -> None:
    check = JacobianShape(id="s", property="jacobian-shape")
    finding = check.judge(Case({"f": WIDE, "z": np.zeros(3)}), _returned(np.zeros((2, 3), dtype=np.int64)))
    assert finding is not None and "dtype int64" in finding.got


def test_sums_to_zero_reports_row_sums() -> None:
    check = SumsToZero(id="z", property="sums-to-zero")
    z = np.array([1.0, 2.0, 3.0])
    assert check.judge(Case({"z": z}), _returned(softmax_jacobian(z))) is None
    finding = check.judge(Case({"z": z}), _returned(np.diag([0.1, 0.2, 0.3])))
    assert finding is not None and "row sums are array([0.1, 0.2, 0.3])" in finding.got


def test_sums_to_zero_loosens_for_float32_results() -> None:
    check = SumsToZero(id="z", property="sums-to-zero")
    z = np.array([1.0, 2.0, 3.0])
    nearly = softmax_jacobian(z).astype(np.float32) + np.float32(1e-7) * np.eye(3, dtype=np.float32)
    assert check.judge(Case({"z": z}), _returned(nearly)) is None


def test_symmetric_names_the_mismatched_pair() -> None:
    check = Symmetric(id="s", property="symmetric")
    finding = check.judge(Case({"z": np.zeros(2)}), _returned(np.array([[1.0, 2.0], [0.5, 1.0]])))
    assert finding is not None and "[0, 1] = 2 but [1, 0] = 0.5" in finding.got
    assert check.judge(Case({"z": np.zeros(2)}), _returned(np.ones(3))) is not None
