"""Properties of derivatives: numerical Jacobians of the grader's functions, and Jacobian matrices.

``matches-jacobian`` and ``jacobian-shape`` judge a higher-order entry such as
``numerical_jacobian(f, z, h)``: the learner's code is handed a function of
the exercise's given file (a ``TrustedFunction``), and the expected matrix
is what the exercise's reference solution returns on the same arguments
(a twin call ``on="reference"``). The slips a mismatch is explained by are
the reference's answers on nearby arguments: other steps, and for the
forward difference, central differences of half the step taken half a step
along each axis. ``sums-to-zero`` and ``symmetric``
are the two structural facts of the softmax Jacobian ``diag(s) - outer(s, s)``.

As in ``grader.checks.properties``, a float32 result is judged with
tolerances fit for float32.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from grader.checks.base import ArrayCheck, Call, Finding
from grader.checks.cases import Case
from grader.checks.display import format_number, format_pair, format_value
from grader.checks.form import not_an_ndarray
from grader.record import Field
from grader.sandbox.outcomes import CallOutcome

__all__ = ["JacobianShape", "MatchesJacobian", "SumsToZero", "Symmetric"]

# Steps a learner might have fixed in place of the ``h`` argument; used only to explain a mismatch.
_LIKELY_FIXED_STEPS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


def _low_precision(value: np.ndarray, case: Case) -> bool:
    return value.dtype == np.float32 or any(
        isinstance(v, np.ndarray) and v.dtype == np.float32 for v in case.args.values()
    )


def _tolerances(value: np.ndarray, case: Case, rtol: float, atol: float) -> tuple[float, float]:
    if _low_precision(value, case):
        return max(rtol, 1e-5), max(atol, 1e-6)
    return rtol, atol


def _worst(got: np.ndarray, expected: np.ndarray) -> tuple[int, ...]:
    """Index of the entry farthest from what was expected (NaN counts as farthest)."""
    with np.errstate(all="ignore"):
        gap = np.abs(got - expected)
    gap = np.where(np.isnan(gap), np.inf, gap)
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(gap)), gap.shape))


class MatchesJacobian(ArrayCheck):
    """A numerical Jacobian of a given function equals the reference solution's on the same arguments.

    ``expect: exact`` says the reference's answer is the true Jacobian within
    the tolerances (the step is small: softmax's ``diag(s) - outer(s, s)``,
    hard argmax's 0 away from ties, a linear map's matrix);
    ``expect: central-difference`` says it is ``(f(z + h e_j) - f(z - h e_j)) / 2h``
    at the case's own ``h``, which is how a large ``h`` shows that the
    argument was used. Only the wording differs. When the result is off, the
    finding says which common slip it matches (transposed, forward
    difference, dividing by h, a fixed step).
    """

    property: Literal["matches-jacobian"]
    uses_reference = True
    expect: Literal["exact", "central-difference"] = Field(
        default="exact", description="compare with the analytic Jacobian, or with central differences at the case's h"
    )
    function_arg: str = Field(default="f", description="argument holding the grader's function")
    point_arg: str = Field(default="z", description="argument holding the point")
    step_arg: str = Field(default="h", description="argument holding the step")
    default_step: float = Field(default=1e-5, gt=0, description="the entry's default step, for cases that give none")
    rtol: float = Field(default=1e-6, ge=0, description="relative tolerance")
    atol: float = Field(default=1e-8, ge=0, description="absolute tolerance")

    def default_description(self, entry: str) -> str:
        if self.expect == "exact":
            return f"{entry}(f, z) equals the true Jacobian of f at z"
        return (
            f"{entry}(f, z, h) equals the central differences (f(z + h e_j) - f(z - h e_j)) / 2h "
            "for the step h it is given"
        )

    def plan(self, case: Case, entry: str) -> list[Call]:
        """The learner's call, the reference's twin, and the reference on the arguments of common slips."""
        _, z, h = self._arguments(case)
        calls = [Call(entry, case.args), Call(entry, case.args, on="reference")]
        for step in _other_steps(h):
            calls.append(Call(entry, {**case.args, self.step_arg: step}, on="reference"))
        for j in range(z.size):  # column j of the forward difference at z, as a central one of half the step
            moved = z.copy()
            moved[j] += h / 2
            calls.append(Call(entry, {**case.args, self.point_arg: moved, self.step_arg: h / 2}, on="reference"))
        return calls

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        fn, z, h = self._arguments(case)
        expected = np.asarray(outcomes[1].values[0], dtype=float)
        if got.shape != expected.shape:
            return _shape_finding(got.shape, expected.shape)
        rtol, atol = _tolerances(outcomes[0].values[0], case, self.rtol, self.atol)
        if np.allclose(got, expected, rtol=rtol, atol=atol):
            return None
        pair = format_pair(got, expected, rtol=rtol, atol=atol)
        return Finding(
            got=pair.got_with_where(),
            expected=f"{pair.expected} (rtol {format_number(rtol)}, atol {format_number(atol)})",
            note=self._explain(
                got, expected, fn, h, outcomes[2:], rtol, atol, given=case.args.get(self.step_arg) is not None
            ),
        )

    def _arguments(self, case: Case) -> tuple[Any, np.ndarray, float]:
        step = case.args.get(self.step_arg)
        return (
            case.args[self.function_arg],
            np.asarray(case.args[self.point_arg], dtype=float),
            float(step) if step is not None else self.default_step,
        )

    def _explain(
        self,
        got: np.ndarray,
        expected: np.ndarray,
        fn: Any,
        h: float,
        slips: list[CallOutcome],
        rtol: float,
        atol: float,
        *,
        given: bool = True,
    ) -> str:
        """Name the slip the result matches, if it matches a common one (``slips``: the reference's other answers)."""
        steps = _other_steps(h)
        at_steps = [np.asarray(outcome.values[0], dtype=float) for outcome in slips[: len(steps)]]
        halves = [np.asarray(outcome.values[0], dtype=float) for outcome in slips[len(steps) :]]

        def close(candidate: np.ndarray) -> bool:
            with np.errstate(all="ignore"):
                return candidate.shape == got.shape and bool(np.allclose(got, candidate, rtol=rtol, atol=atol))

        if fn.name == "hard_argmax" and self.expect == "exact":
            return (
                "Away from ties, moving one score by h does not change which score is largest, so every "
                "difference is exactly 0: hard argmax passes no gradient back."
            )
        if expected.ndim == 2 and close(expected.T) and not np.allclose(expected, expected.T):
            return (
                "This is the transpose: row i must hold the derivatives of output i of f, and column j "
                "the derivatives with respect to z[j]."
            )
        if halves and all(half.shape == expected.shape for half in halves) and close(_columns(halves)):
            return (
                "This is the forward difference (f(z + h e_j) - f(z)) / h; step both ways and divide by 2h: "
                "(f(z + h e_j) - f(z - h e_j)) / 2h."
            )
        if close(2 * expected):
            return (
                "Every entry is twice what it should be: z + h e_j and z - h e_j are 2h apart, so divide by 2h, "
                "not by h."
            )
        candidates = list(zip(steps, at_steps, strict=True))
        fitting = [(float(np.max(np.abs(got - candidate))), step) for step, candidate in candidates if close(candidate)]
        if fitting:
            step = min(fitting)[1]
            if not given:  # the call gave no h: the step came from the learner's default, or from ignoring h
                return (
                    f"This is what a step of {format_number(step)} gives; called without h, the step should be "
                    f"the signature's default h={format_number(h)}."
                )
            return (
                f"This is what a step of {format_number(step)} gives, not the h={format_number(h)} "
                "passed in: use the h argument."
            )
        return ""


def _other_steps(h: float) -> list[float]:
    """The likely fixed steps other than ``h``."""
    return [step for step in _LIKELY_FIXED_STEPS if abs(step - h) > 1e-9 * h]


def _columns(halves: list[np.ndarray]) -> np.ndarray:
    """Column ``j`` of the ``j``-th matrix: the forward difference assembled from shifted central ones."""
    return np.stack([half[:, j] for j, half in enumerate(halves)], axis=1)


def _shape_finding(got: tuple[int, ...], expected: tuple[int, ...]) -> Finding:
    note = ""
    if len(expected) == 2 and got == expected[::-1]:
        note = (
            "The rows and columns are swapped: the Jacobian of f: R^n -> R^m has one row per output of f "
            "and one column per entry of z."
        )
    return Finding(got=f"an array of shape {got}", expected=f"shape {expected}", note=note)


class JacobianShape(ArrayCheck):
    """The Jacobian of a function from R^n to R^m is an (m, n) float array."""

    property: Literal["jacobian-shape"]
    uses_reference = True
    function_arg: str = Field(default="f", description="argument holding the grader's function")
    point_arg: str = Field(default="z", description="argument holding the point")

    def default_description(self, entry: str) -> str:
        return f"{entry}(f, z) returns a float array with one row per output of f and one column per entry of z"

    def plan(self, case: Case, entry: str) -> list[Call]:
        return [Call(entry, case.args), Call(entry, case.args, on="reference")]

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        z = np.asarray(case.args[self.point_arg], dtype=float)
        reference = outcomes[1].values[0]
        outputs = reference.shape[0] if reference.ndim == 2 else reference.size
        if got.shape != (outputs, z.size):
            finding = _shape_finding(got.shape, (outputs, z.size))
            finding.expected += (
                f" (f has {outputs} output{'s' if outputs != 1 else ''}, "
                f"z has {z.size} entr{'ies' if z.size != 1 else 'y'})"
            )
            if got.shape == (z.size, z.size):
                finding.note = "The result is square, but f here has a different number of outputs than inputs."
            return finding
        container = not_an_ndarray(outcomes[0], f" of shape {(outputs, z.size)}")
        if container:  # the form point only: the values checks judge the numbers a list holds
            return container
        if outcomes[0].values[0].dtype.kind != "f":
            return Finding(got=f"an array of dtype {outcomes[0].values[0].dtype}", expected="a floating-point dtype")
        return None


class SumsToZero(ArrayCheck):
    """Every row (and column) of the result sums to zero, as for the Jacobian of weights that always sum to one."""

    property: Literal["sums-to-zero"]
    axes: list[int] = Field(default=[1, 0], min_length=1, description="axes summed: 1 gives row sums, 0 column sums")
    atol: float = Field(default=1e-9, ge=0, description="absolute tolerance")

    def default_description(self, entry: str) -> str:
        names = {1: "row", 0: "column"}
        parts = " and every ".join(names.get(axis, f"slice along axis {axis}") for axis in self.axes)
        return f"every {parts} of the matrix {entry} returns sums to 0"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        if got.ndim != 2:
            return Finding(got=f"an array of shape {got.shape}", expected="a 2-D matrix")
        _, atol = _tolerances(outcomes[0].values[0], case, 0.0, self.atol)
        for axis in self.axes:
            with np.errstate(all="ignore"):
                sums = got.sum(axis=axis)
            if not np.all(np.abs(sums) <= atol):
                what = "row" if axis == 1 else "column"
                pair = format_pair(sums, np.zeros_like(sums), atol=atol)
                return Finding(
                    got=f"{what} sums {pair.got_with_where()}, of {format_value(got)}",
                    expected=f"{what} sums {pair.expected} (atol {format_number(atol)})",
                    note="The weights always sum to 1, so nudging any score moves them by amounts that cancel.",
                )
        return None


class Symmetric(ArrayCheck):
    """The result is a square matrix equal to its own transpose."""

    property: Literal["symmetric"]
    rtol: float = Field(default=1e-9, ge=0, description="relative tolerance")
    atol: float = Field(default=1e-12, ge=0, description="absolute tolerance")

    def default_description(self, entry: str) -> str:
        return f"the matrix {entry} returns is symmetric"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        if got.ndim != 2 or got.shape[0] != got.shape[1]:
            return Finding(got=f"an array of shape {got.shape}", expected="a square matrix")
        rtol, atol = _tolerances(outcomes[0].values[0], case, self.rtol, self.atol)
        if np.allclose(got, got.T, rtol=rtol, atol=atol):
            return None
        index = _worst(got, got.T)
        i, j = index
        pair = format_pair(np.float64(got[i, j]), np.float64(got[j, i]))
        return Finding(
            got=f"{format_value(got)}, with [{i}, {j}] = {pair.got} but [{j}, {i}] = {pair.expected}",
            expected=f"a matrix equal to its transpose (rtol {format_number(rtol)}, atol {format_number(atol)})",
        )
