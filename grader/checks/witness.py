"""Witness checks: the learner returns a counterexample, the grader verifies it.

The broken normalisation (``method``, a function of the exercise's reference
solution) is applied to the learner's scores by the reference solution's
process, once the learner's answer is in (an ``on_answer`` call), so a
witness is judged on what it shows, never on what the learner's own code
claims about it, and the grader holds no implementation of the method. The
grader judges the weights that come back; a wrong witness gets a reason
saying why it shows nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from grader.checks.base import Call, Check, Finding
from grader.checks.cases import Case
from grader.checks.display import count_of, format_value
from grader.record import Field
from grader.sandbox.outcomes import CallOutcome

__all__ = ["Witness", "VERIFIERS"]


def _as_scores(value: np.ndarray) -> tuple[np.ndarray | None, Finding | None]:
    z = np.asarray(value)
    if z.dtype.kind not in "iuf":
        return None, Finding(got=f"an array of dtype {z.dtype}", expected="an array of real numbers")
    z = z.astype(float)
    if z.ndim != 1 or z.size == 0:
        return None, Finding(got=f"an array of shape {z.shape}", expected="a non-empty 1-D array of scores")
    if not np.all(np.isfinite(z)):
        return None, Finding(
            got=format_value(z),
            expected="finite scores",
            note="A counterexample must break the method on ordinary, finite scores.",
        )
    return z, None


def _weights(method: CallOutcome) -> np.ndarray:
    """The reference's method applied to the scores, as floats."""
    return np.asarray(method.values[0], dtype=float)


def verify_divide_by_sum(outcome: CallOutcome, method: CallOutcome) -> Finding | None:
    """``z / z.sum()`` (``method``: its result) must give a negative weight, a weight above 1, or a non-finite one."""
    if outcome.kind == "tuple":
        return Finding(got=f"a tuple of {count_of(len(outcome.values), 'value')}", expected="one 1-D array")
    z, problem = _as_scores(outcome.values[0])
    if problem:
        return problem
    assert z is not None
    weights = _weights(method)
    if np.any(~np.isfinite(weights)) or np.any(weights < 0) or np.any(weights > 1):
        return None
    if np.all(z >= 0):
        note = (
            "Every score is non-negative, so dividing by their sum gives valid weights. "
            "The method breaks when a score is negative (a dot product often is), or when the scores sum to 0."
        )
    else:
        note = (
            "Every score is at most 0, so the sum is negative too and the signs cancel in each ratio: the "
            "weights come out valid. Mix signs, e.g. a negative score next to a larger positive one."
        )
    return Finding(
        got=f"z={format_value(z)}, whose weights z / z.sum() are {format_value(weights)}",
        expected="a z whose weights include a negative value, a value above 1, or inf/nan",
        note=note,
    )


def verify_square_order(outcome: CallOutcome, method: CallOutcome) -> Finding | None:
    """``(z, i, j)`` with ``z[i] > z[j]`` and square-normalised weight ``i`` (``method``) not above weight ``j``."""
    if outcome.kind != "tuple" or len(outcome.values) != 3:
        return Finding(
            got=f"a tuple of {count_of(len(outcome.values), 'value')}" if outcome.kind == "tuple" else "a single value",
            expected="a tuple (z, i, j)",
        )
    z, problem = _as_scores(outcome.values[0])
    if problem:
        return problem
    assert z is not None
    index = []
    for item in outcome.values[1:]:
        if item.ndim != 0 or item.dtype.kind not in "iu" and not (item.dtype.kind == "f" and float(item) == int(item)):
            return Finding(got=f"index {format_value(item)}", expected="integer indices i and j")
        index.append(int(item))
    i, j = index
    if not (-z.size <= i < z.size and -z.size <= j < z.size):
        return Finding(got=f"indices i={i}, j={j}", expected=f"indices between 0 and {z.size - 1}")
    i, j = i % z.size, j % z.size  # z[-1] is as good an index as z[n - 1]
    weights = _weights(method)
    if weights.shape != z.shape:
        weights = np.full(z.shape, np.nan)
    if not np.all(np.isfinite(weights)):
        if np.all(z == 0):
            return Finding(
                got=f"z={format_value(z)}",
                expected="scores that are not all zero",
                note="With every score 0 the squares sum to 0 and nothing is defined.",
            )
        return Finding(
            got=f"z={format_value(z)}, whose squares overflow",
            expected="scores of ordinary size",
            note="A square above about 1e308 is inf in float64; scores like 2 and -3 show the same thing.",
        )
    if i == j:
        return Finding(
            got=f"i = j = {i}",
            expected="two different entries with z[i] > z[j]",
            note="A score cannot be compared with itself; name two different entries.",
        )
    if not z[i] > z[j]:
        return Finding(
            got=f"z[i]={z[i]:g} and z[j]={z[j]:g}",
            expected="z[i] > z[j]",
            note="Order the pair so that i has the higher score.",
        )
    if weights[i] <= weights[j]:
        return None
    if z[j] >= 0:
        note = (
            "Both scores are non-negative, so squaring keeps their order; the failure needs a negative score "
            "whose magnitude is at least the positive one's."
        )
    else:
        note = (
            "The lower score is negative but smaller in magnitude, so its square is still smaller; "
            "make it more negative."
        )
    return Finding(
        got=f"weights {weights[i]:.6g} for z[i]={z[i]:g} and {weights[j]:.6g} for z[j]={z[j]:g}",
        expected="weight i not above weight j",
        note=note,
    )


VERIFIERS: dict[str, Callable[[CallOutcome, CallOutcome], Finding | None]] = {
    "divide-by-sum": verify_divide_by_sum,
    "square-order": verify_square_order,
}


_DEFAULT_METHODS = {"divide-by-sum": "divide_by_sum", "square-order": "square_normalise"}


class Witness(Check):
    """The learner's counterexample, returned by a no-argument entry, really breaks the method."""

    property: Literal["witness"]
    uses_reference = True
    plans_answer_calls = True
    verifier: str = Field(description=f"what the witness must show, one of: {', '.join(sorted(VERIFIERS))}")
    method: str | None = Field(
        default=None,
        description="the broken method: a function of the exercise's reference solution, applied to the "
        "witness's scores (a 1-D array) in the reference's process; default: divide_by_sum for divide-by-sum, "
        "square_normalise for square-order",
    )

    def method_name(self) -> str:
        """The reference solution's function the witness is verified with."""
        return self.method or _DEFAULT_METHODS.get(self.verifier, "")

    def default_description(self, entry: str) -> str:
        return f"{entry}() returns an input on which the method really breaks"

    def plan(self, case: Case, entry: str) -> list[Call]:
        return [Call(entry, {}), Call(self.method_name(), {}, on="reference", on_answer=True)]

    def answer_args(self, case: Case, answer: CallOutcome) -> dict[str, Any] | None:
        """The witness's scores, when they are scores at all (the verifier explains anything else)."""
        if not answer.values:
            return None
        z, problem = _as_scores(answer.values[0])
        return None if problem or z is None else {"z": z}

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        return VERIFIERS[self.verifier](outcomes[0], outcomes[1])

    def verified(self, cases: list[Case]) -> str:
        return f"with the reference solution's {self.method_name()}()"
