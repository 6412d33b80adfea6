"""General properties of functions that turn scores into weights, probabilities or other outputs.

Each class is one reusable property, configured from a spec by its fields.
Learner results arrive as plain arrays; a result of lower precision
(float32) is judged with tolerances fit for that precision, so a correct
float32 solution is not failed for rounding.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from grader.checks.base import ArrayCheck, Call, Check, Finding, Item, array_result, picked, structure_finding
from grader.checks.cases import Case
from grader.checks.display import count_of, format_number, format_pair, format_value, positions
from grader.checks.form import not_an_ndarray
from grader.checks.numbers import close, nothing_judged
from grader.record import Field
from grader.sandbox.outcomes import CallOutcome

__all__ = [
    "NAMES_FIELD",
    "REFERENCE_FIELD",
    "Finite",
    "LeavesInputUnchanged",
    "NegInfGetsZero",
    "NonNegative",
    "OrderPreserving",
    "Raises",
    "ShapeAndDtype",
    "SumsToOne",
    "TranslationInvariant",
    "beyond_float32",
    "reference_value",
    "shape_finding",
    "sums_finding",
    "tolerances",
    "zero_where",
]


def tolerances(value: np.ndarray, case: Case, rtol: float, atol: float) -> tuple[float, float]:
    """The spec's tolerances, widened to float32's where the inputs or the result ``value`` are float32."""
    low_precision = value.dtype == np.float32 or any(
        isinstance(v, np.ndarray) and v.dtype == np.float32 for v in case.args.values()
    )
    if low_precision:
        return max(rtol, 1e-5), max(atol, 1e-6)
    return rtol, atol


def beyond_float32(result: np.ndarray, case: Case, expected: Any, widened: float, own: float) -> Any:
    """The ``atol`` to judge ``result`` with: ``widened`` (float32's) except where float32 had no room.

    A float32 result of float64 inputs may round, but an expected value below
    float32's range (sigmoid(-700) is about 1e-304; float32 holds 0) was lost
    to the dtype: there the spec's ``own`` atol applies, so the loss shows.
    """
    if result.dtype != np.float32 or any(
        isinstance(v, np.ndarray) and v.dtype == np.float32 for v in case.args.values()
    ):
        return widened
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(np.asarray(expected, dtype=float)) < np.finfo(np.float32).tiny, own, widened)


def _axis(case: Case, axis_arg: str | None, default: int) -> int:
    if axis_arg and case.args.get(axis_arg) is not None:
        return int(case.args[axis_arg])
    return default


def shape_finding(got: np.ndarray, expected_shape: tuple[int, ...]) -> Finding | None:
    if got.shape != expected_shape:
        return Finding(got=f"an array of shape {got.shape}", expected=f"shape {expected_shape}")
    return None


REFERENCE_FIELD = "a function of the exercise's reference solution, called on the same arguments; default: the entry"


def reference_value(outcome: CallOutcome) -> np.ndarray:
    """The reference solution's answer to a twin call, as floats (``engine`` has checked it is numeric)."""
    return np.asarray(outcome.values[0], dtype=float)


NAMES_FIELD = "names of a returned tuple's items, as the prompt writes them (root, iterations), for reasons"


class SumsToOne(ArrayCheck):
    """Every slice along the normalised axis sums to one."""

    property: Literal["sums-to-one"]
    axis_arg: str | None = Field(default="axis", description="argument naming the axis; None to use `axis`")
    axis: int = Field(default=-1, description="the normalised axis where the case gives no `axis_arg` argument")
    atol: float = Field(default=1e-9, ge=0, description="absolute tolerance")

    def default_description(self, entry: str) -> str:
        return f"each slice of {self.output()} {entry} returns sums to 1 along the normalised axis"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        axis = _axis(case, self.axis_arg, self.axis)
        if got.ndim == 0 or not -got.ndim <= axis < got.ndim:
            return Finding(got=f"an array of shape {got.shape}", expected=f"an array with an axis {axis}")
        sums = got.sum(axis=axis)
        _, atol = tolerances(outcomes[0].values[0], case, 0, self.atol)
        if np.all(np.abs(sums - 1) <= atol):
            return None
        return sums_finding(sums, 1.0, axis, atol)


class NonNegative(ArrayCheck):
    """No entry of the output is negative (and none is NaN)."""

    property: Literal["non-negative"]

    def default_description(self, entry: str) -> str:
        return f"no entry of {self.output()} {entry} returns is negative"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        if np.all(got >= 0):  # ``ArrayCheck`` has refused an empty result
            return None
        bad = ~(got >= 0)
        if got.size == 1:
            return Finding(got=format_value(got), expected="a value of 0 or more")
        return Finding(
            got=f"{format_value(got)}, negative or NaN at {positions(bad)}",
            expected=f"every entry of {self.output()} 0 or more",
        )


class Finite(Check):
    """Every entry of the result is a finite number: no overflow to inf, no NaN."""

    property: Literal["finite"]

    def default_description(self, entry: str) -> str:
        return f"{entry} returns finite numbers, even for very large or very small inputs"

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        values = outcomes[0].values
        if nothing_judged(values, case.args):  # every number of nothing is finite: that shows nothing
            empty = "an empty tuple" if not values else f"an empty array of shape {values[0].shape}"
            return Finding(
                got=empty if len(values) < 2 else f"a tuple of {len(values)} empty arrays", expected="finite numbers"
            )
        for value in values:
            if value.dtype.kind in "fc" and not np.all(np.isfinite(value)):
                shown = outcomes[0].value if outcomes[0].kind == "tuple" else value
                return Finding(got=format_value(shown), expected="finite numbers only")
        return None


class OrderPreserving(ArrayCheck):
    """A larger score never gets a smaller weight, and distinct weights keep their order."""

    property: Literal["order-preserving"]
    arg: str = Field(default="z", description="the argument holding the scores")
    axis_arg: str | None = Field(default="axis", description="argument naming the axis; None to use `axis`")
    axis: int = Field(default=-1, description="the normalised axis where the case gives no `axis_arg` argument")

    def default_description(self, entry: str) -> str:
        return f"a higher score never gets a lower value in {self.output()} {entry} returns"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        scores = np.asarray(case.args[self.arg], dtype=float)
        if got.shape != scores.shape:
            return shape_finding(got, scores.shape)
        axis = _axis(case, self.axis_arg, self.axis)
        z = np.moveaxis(scores, axis, -1).reshape(-1, scores.shape[axis])
        w = np.moveaxis(got, axis, -1).reshape(-1, scores.shape[axis])
        for zr, wr in zip(z, w, strict=True):
            for i in range(len(zr)):
                for j in range(len(zr)):
                    reversed_ = zr[i] > zr[j] and not wr[i] >= wr[j]
                    tied = zr[i] > zr[j] and wr[i] == wr[j] and wr[i] > 1e-200 and _distinct(zr[i], zr[j])
                    if reversed_ or tied:
                        return _order_finding(zr[i], zr[j], wr[i], wr[j])
        return None


def _order_finding(high: float, low: float, w_high: float, w_low: float) -> Finding:
    """The values a higher and a lower score got, written with the digits that tell each pair apart."""
    scores = format_pair(np.float64(high), np.float64(low))
    values = format_pair(np.float64(w_high), np.float64(w_low))
    how = "the same value" if w_high == w_low else "a lower value" if w_high < w_low else "no higher value"
    return Finding(
        got=f"{values.got} for score {scores.got} and {values.expected} for score {scores.expected}: "
        f"{how} for the higher score",
        expected=f"a higher value for score {scores.got} than for score {scores.expected}",
    )


def _distinct(a: float, b: float) -> bool:
    """Scores far enough apart that softmax weights must differ in float64."""
    return bool(abs(a - b) > 1e-12 * max(1.0, abs(a), abs(b)))


class TranslationInvariant(Check):
    """Adding the same constant to every score changes nothing: f(z + c) = f(z)."""

    property: Literal["translation-invariant"]
    arg: str = Field(default="z", description="the argument holding the scores")
    shifts: list[float] = Field(
        default=[-100.0, 1000.0], min_length=1, description="constants added to every score, one call each"
    )
    rtol: float = Field(default=1e-6, ge=0, description="relative tolerance")
    atol: float = Field(default=1e-9, ge=0, description="absolute tolerance")

    def default_description(self, entry: str) -> str:
        return f"adding the same constant to every score leaves {entry} unchanged"

    def plan(self, case: Case, entry: str) -> list[Call]:
        calls = [Call(entry, case.args)]
        for shift in self.shifts:
            calls.append(Call(entry, dict(case.args, **{self.arg: case.args[self.arg] + shift})))
        return calls

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        base, problem = array_result(outcomes[0])
        if problem:
            return problem
        assert base is not None
        if nothing_judged([base], case.args):  # an empty result is unchanged by any shift, and shows nothing
            return Finding(
                got=f"an empty array of shape {base.shape}", expected="values to compare with the shifted call's"
            )
        for shift, outcome in zip(self.shifts, outcomes[1:], strict=True):
            moved, problem = array_result(outcome)
            if problem:
                return problem
            assert moved is not None
            rtol, atol = tolerances(outcome.values[0], case, self.rtol, self.atol)
            if rtol > self.rtol:  # low precision: rounding z + shift costs about eps * |z + shift| in the exponent
                scores = np.asarray(case.args[self.arg], dtype=float)
                reach = abs(shift) + float(np.max(np.abs(scores[np.isfinite(scores)]), initial=0.0))
                rtol = max(rtol, 4 * float(np.finfo(np.float32).eps) * reach + 1e-5)
                atol = max(atol, rtol * 1e-3)
            if moved.shape != base.shape or not close(moved, base, rtol, atol):
                pair = format_pair(moved, base, rtol=rtol, atol=atol)
                return Finding(
                    got=f"{pair.got} after adding {format_number(shift)}{pair.which()}",
                    expected=f"{pair.expected}, as without the shift",
                    extra={"shift": shift},
                )
        return None


class LeavesInputUnchanged(Check):
    """The function does not write into the arrays it was given."""

    property: Literal["leaves-input-unchanged"]
    wants_inputs_back = True

    def default_description(self, entry: str) -> str:
        return f"{entry} leaves its input arrays unchanged"

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        sent = [(name, value) for name, value in case.args.items() if isinstance(value, np.ndarray)]
        returned = outcomes[0].inputs_after
        if len(returned) < len(sent):  # nothing to compare is no evidence that the inputs were left alone
            name = sent[len(returned)][0]
            return Finding(got=f"{name} was not reported back after the call", expected=f"{name} to compare")
        for (name, before), after in zip(sent, returned, strict=False):
            if before.shape != after.shape or not np.array_equal(before, after, equal_nan=before.dtype.kind == "f"):
                pair = format_pair(after, before)
                return Finding(
                    got=f"{name} changed to {pair.got_with_where()}",
                    expected=f"{name} still {pair.expected}",
                    note=f"An in-place operation on {name} (an augmented assignment such as {name} -= c, a "
                    f"subscripted assignment, out={name}) writes into the caller's array; {name} = {name} - c, "
                    f"or {name}.copy() first, makes a new one.",
                )
        return None


class ShapeAndDtype(Check):
    """The result is a float array of the expected shape (that of the reference's result).

    Where the reference returns an array (not a single number), the result
    must be a ``numpy.ndarray`` itself: a list or a tuple of the right numbers
    costs this check's point, with a reason that says so, while the checks of
    the values still judge the numbers it holds.
    """

    property: Literal["shape-and-dtype"]
    uses_reference = True
    reference: str | None = Field(default=None, description=REFERENCE_FIELD)
    item: Item | None = Field(
        default=None,
        description="where the reference returns a tuple or dict, the item (an index) or field judged; "
        "the learner's result must be of the same items",
    )
    names: list[str] = Field(default_factory=list, description=NAMES_FIELD)

    def reads_structure(self) -> bool:
        return True

    def default_description(self, entry: str) -> str:
        return f"{entry} returns a float numpy.ndarray of the right shape"

    def plan(self, case: Case, entry: str) -> list[Call]:
        return [Call(entry, case.args), Call(self.reference or entry, case.args, on="reference")]

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        outcome, theirs = outcomes[0], outcomes[1]
        if theirs.kind != "single" or self.item is not None:
            problem = structure_finding(outcome, theirs, self.names)
            if problem is None and self.item is not None:
                got, problem = picked(outcome, self.item)
                reference = picked(theirs, self.item)[0]
                if problem is None and not isinstance(reference, str):
                    position = self.item if isinstance(self.item, int) else outcome.keys.index(self.item)
                    one = CallOutcome(status="ok", values=[got], types=outcome.types[position : position + 1])
                    return self._judge_one(case, one, np.asarray(reference, dtype=float))
            if problem is None and theirs.kind == "single":  # a string where the reference returns one
                return array_result(outcome)[1]
            return problem  # without an item, the form of a tuple or dict is what is judged
        if outcome.kind in ("tuple", "mapping"):
            return Finding(
                got=f"a tuple of {count_of(len(outcome.values), 'value')}"
                if outcome.kind == "tuple"
                else f"a dict with the fields {', '.join(outcome.keys)}",
                expected=f"one float array of shape {reference_value(theirs).shape}",
            )
        if outcome.holds_text_or_fields():
            return array_result(outcome)[1]
        return self._judge_one(case, outcome, reference_value(theirs))

    def _judge_one(self, case: Case, outcome: CallOutcome, expected: np.ndarray) -> Finding | None:
        """The shape and dtype of one returned value (the only item of ``outcome``) against the reference's."""
        got = outcome.values[0]
        if got.shape != expected.shape:
            return Finding(got=f"shape {got.shape}", expected=f"shape {expected.shape}")
        if expected.ndim:
            container = not_an_ndarray(outcome, f" of shape {expected.shape}")
            if container:
                return container
        if got.dtype.kind != "f":
            integers = [
                name for name, value in case.args.items() if isinstance(value, np.ndarray) and value.dtype.kind in "iu"
            ]
            given = (
                f" Here {', '.join(integers)} held integers; the result must still be floating-point."
                if integers
                else ""
            )
            return Finding(
                got=f"dtype {got.dtype}",
                expected="a floating-point dtype",
                note=f"An array of dtype {got.dtype} holds whole numbers only.{given}",
            )
        return None


class Raises(Check):
    """Bad input is refused with the named exception."""

    property: Literal["raises"]
    error: str = Field(description="exception class name, e.g. ValueError")
    accept: list[str] = Field(default_factory=list, description="other exception names that also count")
    expects_exception = True

    def default_description(self, entry: str) -> str:
        return f"{entry} raises {self.error} for invalid input"

    def wanted(self) -> str:
        return f"{self.error} to be raised"

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        outcome = outcomes[0]
        if outcome.status == "raised" and outcome.error:
            name = outcome.error.get("type", "")
            if name == self.error or name in self.accept:
                return None
            message = outcome.error.get("message", "")
            return Finding(got=f"{name}{f': {message}' if message else ''}", expected=f"{self.error} to be raised")
        if outcome.status == "ok":
            return Finding(got=f"nothing raised: it returned {format_value(outcome.value)}", expected=self.wanted())
        return None  # timeouts and crashes are reported by the engine


def sums_finding(sums: np.ndarray, target: float, axis: int, atol: float, of: str = "") -> Finding:
    """Sums along ``axis`` that should each be ``target``, set against as many sums of ``target``.

    ``of``: what was summed, when it is not the values themselves (``the exponentials``).
    """
    sums = np.asarray(sums, dtype=float)
    pair = format_pair(sums, np.full_like(sums, target), atol=atol)
    tolerance = f"(atol {format_number(atol)})"
    if of:
        return Finding(
            got=f"{of} summing to {pair.got} along axis {axis}{pair.which()}",
            expected=f"{of} summing to {pair.expected} {tolerance}",
        )
    noun = "sums" if sums.ndim else "a sum of"
    return Finding(
        got=f"{noun} {pair.got} along axis {axis}{pair.which()}", expected=f"{noun} {pair.expected} {tolerance}"
    )


def zero_where(got: np.ndarray, where: np.ndarray, what: str) -> Finding | None:
    """A finding unless ``got`` is exactly 0 wherever ``where`` is True (``what`` names those places)."""
    if got.shape != where.shape:
        return Finding(got=f"an array of shape {got.shape}", expected=f"shape {where.shape}")
    if np.all(got[where] == 0):
        return None
    return Finding(
        got=f"{format_value(got)}, not 0 at {positions(where & (got != 0))}", expected=f"0 exactly where {what}"
    )


class NegInfGetsZero(ArrayCheck):
    """Entries whose score is -inf get weight exactly 0; the rest still sum to one."""

    property: Literal["neg-inf-gets-zero"]
    arg: str = Field(default="z", description="the argument holding the scores")

    def default_description(self, entry: str) -> str:
        return f"{entry} gives a -inf score a value of exactly 0 in {self.output()}"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        scores = np.asarray(case.args[self.arg], dtype=float)
        problem = zero_where(got, np.isneginf(scores), "the score is -inf")
        if problem:
            return problem
        if not np.all(np.isfinite(got)):
            return Finding(got=f"{format_value(got)}", expected="finite values elsewhere")
        return None
