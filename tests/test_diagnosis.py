"""Diagnosis: a known mistake is named only when the learner's answers are shown to make it.

Learner files here are small, trusted fixtures run by the in-process fake
runner; the known-wrong solutions of the real catalog answer beside them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.memory import GradingMemo
from grader.results import CheckResult, ExerciseResult
from grader.spec.models import ExpectedException
from tests.fakes import InProcessFactory

ROOT = Path(__file__).resolve().parents[1]


def _grade(catalog, exercise_id: str, source: str, exercise=None) -> ExerciseResult:
    return grade_implementation(
        exercise or catalog.exercise(exercise_id),
        SourceModule({"mine.py": source.encode()}, "mine.py"),
        InProcessFactory(),
        root=ROOT,
        memo=GradingMemo(),
    )


def _check(result: ExerciseResult, check_id: str) -> CheckResult:
    return next(c for c in result.checks if c.id == check_id)


def _named(result: ExerciseResult) -> dict[str, str]:
    return {c.id: c.diagnosis for c in result.checks if c.diagnosis}


IF_MASK = """
import numpy as np

def attention_weights(Q, K, mask=None):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask:
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)
"""


def test_diagnose_an_exception_of_the_same_type_but_another_message_is_no_known_mistake(catalog) -> None:
    # `if mask:` raises ValueError on a boolean array; K @ Q.T raises a ValueError too, about shapes.
    result = _grade(catalog, "attention-weights", IF_MASK)
    shape = _check(result, "shape-and-dtype")
    assert shape.status == "error" and "stopped by the same error (ValueError) as " in shape.reason
    first = next(c for c in result.checks if c.status == "error" and c.input is not None)  # where it is said once
    assert "truth value of an array" in first.reason
    assert _named(result) == {}
    assert "known mistake" not in shape.reason + first.reason
    assert "np.where" in first.reason  # the exception's own message suggests the fix


KEYS_TIMES_QUERIES = (ROOT / "solutions/attention-weights/wrong_keys_times_queries.py").read_text()


def test_diagnose_an_exception_matches_by_the_pattern_the_spec_gives(catalog) -> None:
    # The same mistake, masked the other way round: the broadcast error lists the shapes in another order.
    mine = KEYS_TIMES_QUERIES.replace("np.where(mask, scores, -np.inf)", "np.where(~mask, -np.inf, scores)")
    assert mine != KEYS_TIMES_QUERIES
    exercise = catalog.exercise("attention-weights")
    misconception = next(w for w in exercise.known_wrong if w.id == "keys-times-queries").misconception
    plain = _grade(catalog, "attention-weights", mine)
    assert _check(plain, "shape-and-dtype").status == "failed"  # its masked inputs raise, the others are (n_k, n_q)
    assert _named(plain).get("matches-reference") == misconception  # no mask: the very answers of the mistake
    assert "shape-and-dtype" not in _named(plain)  # the exception's message is not the mistake's
    pattern = ExpectedException(type="ValueError", message=r"^operands could not be broadcast together")
    known_wrong = [
        w.model_copy(update={"raises": pattern}) if w.id == "keys-times-queries" else w for w in exercise.known_wrong
    ]
    patterned = exercise.model_copy(update={"known_wrong": known_wrong})
    assert _named(_grade(catalog, "attention-weights", mine, patterned)).get("shape-and-dtype") == misconception


DEFAULT_STEP_1E_2 = """
import numpy as np

def numerical_jacobian(f, z, h=1e-2):
    z = np.asarray(z, dtype=float)
    columns = []
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = h
        columns.append((np.asarray(f(z + step)) - np.asarray(f(z - step))) / (2 * h))
    return np.stack(columns, axis=1)
"""


def test_diagnose_a_mistake_is_not_named_when_a_check_it_fails_passed(catalog) -> None:
    # The default step is too coarse, but h is honoured (honours-step-size passes): not "a fixed step".
    result = _grade(catalog, "argmax-zero-gradient", DEFAULT_STEP_1E_2)
    assert _check(result, "honours-step-size").status == "passed"
    assert _check(result, "matches-softmax-jacobian").status == "passed"  # h given: only the default is wrong
    assert _check(result, "default-step-is-small").status == "failed"
    assert _named(result) == {}
    reason = _check(result, "default-step-is-small").reason
    assert "known mistake" not in reason and "use the h argument" not in reason  # no h was passed: it was not ignored
    assert "your default for h is 0.01; the signature asks for 1e-5." in reason


NEAR_NO_MAX_SHIFT = """
import numpy as np

def softmax(z, axis=-1):
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True) * (1 + 1e-4)
"""


def test_diagnose_compares_every_failing_case_not_only_the_first(catalog) -> None:
    # The first failing input gives nan, as the mistake does; the others are off by 1e-4, which it is not.
    result = _grade(catalog, "stable-softmax", NEAR_NO_MAX_SHIFT)
    finite = _check(result, "finite-for-large-inputs")
    assert finite.status == "failed" and finite.got == "array([nan, nan])"
    assert _named(result) == {}


def test_diagnose_names_the_mistake_its_answers_make(catalog) -> None:
    mine = (ROOT / "solutions/stable-softmax/wrong_no_max_shift.py").read_text()
    result = _grade(catalog, "stable-softmax", mine + "\n# written by a learner\n")
    no_max_shift = next(w for w in catalog.exercise("stable-softmax").known_wrong if w.id == "no-max-shift")
    assert set(_named(result)) == set(no_max_shift.must_fail)
    assert no_max_shift.misconception in _check(result, "finite-for-large-inputs").reason


@pytest.mark.parametrize(
    ("scale", "named"),
    [(1 + 1e-10, True), (1 + 1e-7, False)],
    ids=["within-the-check-tolerance", "outside-the-check-tolerance"],
)
def test_diagnose_compares_within_the_check_own_tolerance(catalog, scale: float, named: bool) -> None:
    # exact-for-linear-maps states rtol 1e-8: answers 1e-7 away from the mistake's are not the mistake's there,
    # while matches-softmax-jacobian (rtol 1e-6) still sees them as the same.
    mine = (ROOT / "solutions/argmax-zero-gradient/wrong_divides_by_h.py").read_text()
    mine = mine.replace(") / h", f") / h * {scale!r}")
    result = _grade(catalog, "argmax-zero-gradient", mine)
    diagnoses = _named(result)
    assert ("exact-for-linear-maps" in diagnoses) is named
    assert "matches-softmax-jacobian" in diagnoses
