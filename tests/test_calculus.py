"""The derivative properties (grader.checks.calculus), judged on hand-made outcomes: no processes.

The reference's answers to a check's reference calls come from the course's
own files (the exercise's reference solution and given functions), run here
as test fixtures, as a reference process would run them.
"""

from __future__ import annotations

import functools
import runpy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.checks.base import Check, Finding, TrustedFunction
from grader.checks.calculus import JacobianShape, MatchesJacobian, SumsToZero, Symmetric
from grader.checks.cases import Case
from grader.sandbox.outcomes import CallOutcome

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions" / "argmax-zero-gradient"
GIVEN = runpy.run_path(str(SOLUTIONS / "given.py"))
REFERENCE = runpy.run_path(str(SOLUTIONS / "reference.py"))

SOFTMAX = TrustedFunction("softmax")
WIDE = TrustedFunction("linear", (("A", np.array([[1.0, -2.0, 0.5], [3.0, 0.0, 1.0]])), ("b", np.array([0.5, -1.0]))))


def _function(fn: TrustedFunction) -> Any:
    return functools.partial(GIVEN[fn.name], **dict(fn.bound))


def _numerical_jacobian(fn: TrustedFunction, z: np.ndarray, h: float = 1e-5) -> np.ndarray:
    return REFERENCE["numerical_jacobian"](_function(fn), z, h)


def softmax_jacobian(z: np.ndarray) -> np.ndarray:
    s = GIVEN["softmax"](z)
    return np.diag(s) - np.outer(s, s)


def _returned(value: np.ndarray) -> list[CallOutcome]:
    return [CallOutcome(status="ok", values=[np.asarray(value)], types=["ndarray"])]


def _judge(check: Check, case: Case, got: np.ndarray) -> Finding | None:
    """The check's finding on ``got``, its reference calls answered by the reference solution."""
    calls = check.plan(case, "numerical_jacobian")
    outcomes = _returned(got)
    for call in calls[1:]:
        assert call.on == "reference"
        args = {name: _function(v) if isinstance(v, TrustedFunction) else v for name, v in call.args.items()}
        outcomes += _returned(REFERENCE[call.function](**args))
    return check.judge(case, outcomes)


def _forward(fn: TrustedFunction, z: np.ndarray, h: float) -> np.ndarray:
    f = _function(fn)
    base = f(z)
    return np.stack([(f(z + h * e) - base) / h for e in np.eye(z.size)], axis=1)


def test_matches_jacobian_passes_central_differences_of_softmax() -> None:
    z = np.array([0.3, -1.2, 2.0])
    check = MatchesJacobian(id="j", property="matches-jacobian", expect="exact")
    assert _judge(check, Case({"f": SOFTMAX, "z": z}), _numerical_jacobian(SOFTMAX, z)) is None


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda z, h: _numerical_jacobian(SOFTMAX, z, h).T * np.array([[1.0], [1.1], [0.9]]), None),
        (lambda z, h: _forward(SOFTMAX, z, h), "forward difference"),
        (lambda z, h: 2 * _numerical_jacobian(SOFTMAX, z, h), "divide by 2h"),
        (lambda z, h: _numerical_jacobian(SOFTMAX, z, 1e-5), "step of 1e-05"),
    ],
    ids=["unexplained", "forward-difference", "twice", "ignores-h"],
)
def test_matches_jacobian_names_the_slip_it_sees(make, words) -> None:
    z, h = np.array([0.0, 1.0, -0.5]), 0.5
    check = MatchesJacobian(id="j", property="matches-jacobian", expect="central-difference", atol=1e-9, rtol=1e-7)
    finding = _judge(check, Case({"f": SOFTMAX, "z": z, "h": h}), make(z, h))
    assert finding is not None
    if words is None:
        assert finding.note == ""
    else:
        assert words in finding.note


def test_matches_jacobian_names_a_transpose_of_a_non_symmetric_map() -> None:
    square = TrustedFunction("linear", (("A", np.array([[2.0, 1.0], [-1.0, 3.0]])),))
    check = MatchesJacobian(id="j", property="matches-jacobian")
    finding = _judge(check, Case({"f": square, "z": np.array([0.5, 0.25])}), np.array([[2.0, -1.0], [1.0, 3.0]]))
    assert finding is not None and "transpose" in finding.note


def test_matches_jacobian_reports_swapped_shape_for_non_square_maps() -> None:
    check = MatchesJacobian(id="j", property="matches-jacobian")
    finding = _judge(check, Case({"f": WIDE, "z": np.zeros(3)}), np.zeros((3, 2)))
    assert finding is not None
    assert finding.expected == "shape (2, 3)" and "swapped" in finding.note


def test_matches_jacobian_hard_argmax_is_exactly_zero() -> None:
    argmax = TrustedFunction("hard_argmax")
    check = MatchesJacobian(id="j", property="matches-jacobian", atol=0.0, rtol=0.0)
    case = Case({"f": argmax, "z": np.array([1.0, 3.0])})
    assert _judge(check, case, np.zeros((2, 2))) is None
    finding = _judge(check, case, softmax_jacobian(np.array([1.0, 3.0])))
    assert finding is not None and "no gradient" in finding.note


def test_jacobian_shape_counts_outputs_of_f() -> None:
    check = JacobianShape(id="s", property="jacobian-shape")
    case = Case({"f": WIDE, "z": np.zeros(3)})
    assert _judge(check, case, np.zeros((2, 3))) is None
    finding = _judge(check, case, np.zeros((3, 3)))
    assert finding is not None and "f has 2 outputs, z has 3 entries" in finding.expected


def test_jacobian_shape_refuses_integer_arrays() -> None:
    check = JacobianShape(id="s", property="jacobian-shape")
    finding = _judge(check, Case({"f": WIDE, "z": np.zeros(3)}), np.zeros((2, 3), dtype=np.int64))
    assert finding is not None and "dtype int64" in finding.got


def test_sums_to_zero_reports_row_sums() -> None:
    check = SumsToZero(id="z", property="sums-to-zero")
    z = np.array([1.0, 2.0, 3.0])
    assert _judge(check, Case({"z": z}), softmax_jacobian(z)) is None
    finding = _judge(check, Case({"z": z}), np.diag([0.1, 0.2, 0.3]))
    assert finding is not None and finding.got.startswith("row sums array([0.1, 0.2, 0.3]), of ")


def test_sums_to_zero_loosens_for_float32_results() -> None:
    check = SumsToZero(id="z", property="sums-to-zero")
    z = np.array([1.0, 2.0, 3.0])
    nearly = softmax_jacobian(z).astype(np.float32) + np.float32(1e-7) * np.eye(3, dtype=np.float32)
    assert _judge(check, Case({"z": z}), nearly) is None


def test_symmetric_names_the_mismatched_pair() -> None:
    check = Symmetric(id="s", property="symmetric")
    finding = _judge(check, Case({"z": np.zeros(2)}), np.array([[1.0, 2.0], [0.5, 1.0]]))
    assert finding is not None and "[0, 1] = 2 but [1, 0] = 0.5" in finding.got
    assert _judge(check, Case({"z": np.zeros(2)}), np.ones(3)) is not None
