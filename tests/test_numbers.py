"""Comparing a learner's numbers with expected ones: an infinity only equals itself, float32 may round
but not lose a value to its range."""

from __future__ import annotations

import numpy as np

from grader.checks.cases import Case
from grader.checks.numbers import close
from grader.checks.properties import beyond_float32


def test_an_infinite_expected_value_is_matched_only_by_itself() -> None:
    expected = np.array([-np.inf, np.inf, 1.0])
    assert close(np.array([-np.inf, np.inf, 1.0]), expected, 1e-6, 1e-9)
    assert not close(np.array([0.0, np.inf, 1.0]), expected, 1e-6, 1e-9)
    assert not close(np.array([-np.inf, 1e308, 1.0]), expected, 1e-6, 1e-9)


def test_a_float32_result_may_round_but_not_lose_what_float32_cannot_hold() -> None:
    case = Case(args={"x": np.array([-700.0, 0.0])})
    expected = np.array([9.86e-305, 0.5])
    rounded = np.array([0.0, 0.50000006], dtype=np.float32)
    atol = beyond_float32(rounded, case, expected, 1e-6, 0.0)
    assert not close(rounded.astype(float), expected, 1e-5, atol)  # sigmoid(-700) became 0: lost to float32
    assert close(np.array([9.86e-305, 0.50000006]), expected, 1e-5, atol)  # rounding alone is allowed
    float32_inputs = Case(args={"x": np.array([-700.0, 0.0], dtype=np.float32)})
    assert beyond_float32(rounded, float32_inputs, expected, 1e-6, 0.0) == 1e-6  # float32 asked, float32 judged
