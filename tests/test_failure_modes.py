"""Failure modes: each failing check is told what its failure shows, and only a hint that fits how it failed.

Learner files are small, trusted fixtures run by the in-process fake runner.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.checks.base import Call, Finding
from grader.checks.cases import Case
from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.failure_modes import Failure, classify_failure, exception_hint, fitting_hint
from grader.engine.memory import GradingMemo
from grader.results import CheckResult, ExerciseResult
from grader.sandbox.outcomes import CallOutcome, Stop
from tests.fakes import InProcessFactory

ROOT = Path(__file__).resolve().parents[1]


def _grade(catalog, exercise_id: str, source: str) -> ExerciseResult:
    return grade_implementation(
        catalog.exercise(exercise_id),
        SourceModule({"mine.py": source.encode()}, "mine.py"),
        InProcessFactory(),
        memo=GradingMemo(),
        references=ROOT,
    )


def _check(result: ExerciseResult, check_id: str) -> CheckResult:
    return next(c for c in result.checks if c.id == check_id)


def _hints_of(catalog, exercise_id: str, check_id: str) -> list[str]:
    return [h.text for h in next(c for c in catalog.exercise(exercise_id).checks if c.id == check_id).hint_list()]


CASTS_TO_FLOAT32 = """
import numpy as np

def softmax(z, axis=-1):
    z = np.asarray(z, dtype=np.float32)
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""


def test_failure_modes_a_float32_cast_is_named_not_a_missing_max_shift(catalog) -> None:
    result = _grade(catalog, "stable-softmax", CASTS_TO_FLOAT32)
    finite = _check(result, "finite-for-large-inputs")
    assert finite.status == "failed" and "dtype=float32" in (finite.got or "")
    cause = "Your result is float32; 1e+300 does not fit in float32 (max 3.4e+38), so it became inf."
    assert cause in finite.reason and cause in (finite.note or "")  # the note is what the formatters show
    assert finite.hint is None and "subtract each slice's maximum" not in finite.reason
    sums = _check(result, "rows-sum-to-one")  # the float32 shows only in the raw result, not in "sums nan"
    assert "dtype" not in (sums.got or "") and cause in (sums.note or "") and sums.hint is None


CLAMPS_TEMPERATURE = """
import numpy as np

def softmax_with_temperature(z, T):
    if T <= 0:
        raise ValueError("T must be positive")
    scaled = np.asarray(z, dtype=float) / max(T, 1e-3)
    e = np.exp(scaled - scaled.max())
    return e / e.sum()
"""


def test_failure_modes_finite_wrong_values_get_no_overflow_hint(catalog) -> None:
    result = _grade(catalog, "temperature", CLAMPS_TEMPERATURE)
    low = _check(result, "matches-reference-at-low-temperature")
    assert low.status == "failed" and "nan" not in (low.got or "") and "inf" not in (low.got or "")
    assert not any(text in low.reason for text in _hints_of(catalog, "temperature", low.id))
    assert low.hint is None  # no premise shown: property, input, got and expected, and no more


NO_MAX_SHIFT = (ROOT / "solutions/stable-softmax/wrong_no_max_shift.py").read_text()


def test_failure_modes_an_overflow_gets_the_overflow_hint(catalog) -> None:
    result = _grade(catalog, "stable-softmax", NO_MAX_SHIFT)
    finite = _check(result, "finite-for-large-inputs")
    assert finite.hint in _hints_of(catalog, "stable-softmax", finite.id) and "overflowed" in finite.hint
    sums = _check(result, "rows-sum-to-one")  # its axis hint needs the whole-array sum; this shows an overflow
    assert sums.hint is not None and "overflowed" in sums.hint and "along `axis`" not in sums.reason


NO_AXIS_PARAMETER = """
import numpy as np

def softmax(z):
    e = np.exp(z - np.max(z))
    return e / e.sum()
"""


def test_failure_modes_a_type_error_gets_the_hint_of_its_own_message_only(catalog) -> None:
    result = _grade(catalog, "stable-softmax", NO_AXIS_PARAMETER)
    check = _check(result, "matches-reference")
    assert check.status == "error" and "TypeError" in check.reason
    assert check.hint is not None and "signature" in check.hint
    assert not any(text in check.reason for text in _hints_of(catalog, "stable-softmax", check.id))


def test_failure_modes_an_exception_without_a_telling_message_gets_no_hint(catalog) -> None:
    result = _grade(catalog, "stable-softmax", "def softmax(z, axis=-1):\n    raise RuntimeError('not yet')\n")
    for check in result.checks:
        assert check.status == "error" and check.hint is None and "Hint:" not in check.reason


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ("The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()", "np.where"),
        ("operands could not be broadcast together with shapes (2,3) (2,) ", "keepdims=True"),
        ("axis 1 is out of bounds for array of dimension 1", "axis=-1"),
        ("unsupported operand type(s) for /: 'NoneType' and 'float'", "return"),
        ("softmax() takes 1 positional argument but 2 were given", "signature"),
        ("division by zero", ""),
    ],
    ids=["ambiguous-truth", "broadcast", "axis", "none", "signature", "no-hint"],
)
def test_failure_modes_exception_hint_comes_from_the_message(message: str, words: str) -> None:
    hint = exception_hint({"type": "ValueError", "message": message})
    assert (words in hint) if words else hint == ""


def _classify(
    catalog, check_id: str, outcome: CallOutcome, finding: Finding, expected: CallOutcome | None = None, **args
) -> Failure:
    check = next(c for c in catalog.exercise("stable-softmax").checks if c.id == check_id)
    case = Case(args=args or {"z": np.array([1000.0, 1001.0])})
    calls, outcomes = [Call("softmax", case.args)], [outcome]
    if expected is not None:  # the reference's twin of the call, as matches-reference plans it
        calls, outcomes = [*calls, Call("softmax", case.args, on="reference")], [outcome, expected]
    return classify_failure(check, case, calls, outcomes, finding)


def test_failure_modes_a_timeout_gets_no_hint(catalog) -> None:
    timeout = CallOutcome(status="timeout", stop=Stop(kind="timeout", seconds=2.0))
    failure = _classify(catalog, "matches-reference", timeout, Finding(got="no answer", expected="", status="timeout"))
    check = next(c for c in catalog.exercise("stable-softmax").checks if c.id == "matches-reference")
    assert failure == Failure("timeout") and fitting_hint(check, failure) == ""


@pytest.mark.parametrize(
    ("value", "got", "mode"),
    [
        (np.array([np.nan, np.nan]), "array([nan, nan])", "nan"),
        (np.array([np.inf, 0.0]), "array([inf, 0.])", "inf"),
        (np.array([0.5, 0.5]), "array([0.5, 0.5])", "wrong-value"),
        (np.array([0.5, 0.5, 0.0]), "an array of shape (3,)", "shape"),
        (np.array([0, 1]), "array([0, 1])", "dtype"),
    ],
    ids=["nan", "inf", "wrong-value", "shape", "integer-result"],
)
def test_failure_modes_classify_a_returned_value(catalog, value: np.ndarray, got: str, mode: str) -> None:
    expected = CallOutcome(status="ok", values=[np.array([0.268941, 0.731059])])
    failure = _classify(
        catalog, "matches-reference", CallOutcome(status="ok", values=[value]), Finding(got, "x"), expected
    )
    assert failure.mode == mode
    assert ("int64" in failure.cause) is (mode == "dtype")
    if mode == "dtype":  # compared with the reference's own dtype, and no word of any exercise's values
        assert (
            failure.cause
            == "Your result has dtype int64, which holds whole numbers only; the expected result has dtype float64."
        )


def test_failure_modes_an_integer_result_is_no_dtype_failure_when_the_reference_returns_integers(catalog) -> None:
    count = CallOutcome(status="ok", values=[np.array(3)])
    expected = CallOutcome(status="ok", values=[np.array(4)])
    failure = _classify(catalog, "matches-reference", count, Finding("3", "4"), expected)
    assert failure.mode == "wrong-value" and failure.cause == ""
    alone = _classify(catalog, "matches-reference", count, Finding("3", "4"))  # no reference answer: nothing shows it
    assert alone.mode == "wrong-value" and "0.25" not in alone.cause


def test_failure_modes_a_nan_the_finding_does_not_show_is_not_the_failure(catalog) -> None:
    # The input was changed: the check is about that, whatever the result holds.
    outcome = CallOutcome(status="ok", values=[np.array([np.nan, np.nan])], inputs_after=[np.array([0.0, 1.0])])
    finding = Finding(got="z changed to array([0., 1.])", expected="z still array([1000., 1001.])")
    assert _classify(catalog, "leaves-input-unchanged", outcome, finding).mode == "wrong-value"


def test_failure_modes_hint_for_follows_hint_modes_and_hints(catalog) -> None:
    finite = next(c for c in catalog.exercise("stable-softmax").checks if c.id == "finite-for-large-inputs")
    assert finite.hint_for("nan") == finite.hint_for("inf") == finite.hint
    assert finite.hint_for("wrong-value") == finite.hint_for("exception") == finite.hint_for("dtype") == ""
    custom = finite.model_copy(update={"hints": {"dtype": "compute in float64"}})
    assert custom.hint_for("dtype") == "compute in float64" and custom.hint_for("nan") == finite.hint


def test_failure_modes_an_import_failure_is_said_once(catalog) -> None:
    result = _grade(catalog, "stable-softmax", "def softmax(z, axis=-1):\n    return z +\n")
    assert "SyntaxError" in result.reason
    assert {check.reason for check in result.checks} == {"Not run: your file could not be imported (see above)."}
    assert all(check.hint is None for check in result.checks)


def test_failure_modes_a_missing_function_is_said_once(catalog) -> None:
    result = _grade(catalog, "stable-softmax", "def something_else():\n    return 1\n")
    assert result.status == "missing" and result.reason == "Not attempted: your file does not define softmax()."
    assert {check.reason for check in result.checks} == {"Not run: your file does not define softmax() (see above)."}
