"""The why-softmax exercises graded for real: references pass, known-wrong solutions are caught, other styles pass.

Covers divide-by-sum-breaks, square-breaks-order, argmax-zero-gradient and
softmax-jacobian (stable-softmax and the quiz have their own tests). One
grading session serves the whole module, so the sandbox parent starts once
and known-wrong outputs are cached between tests.
"""

from __future__ import annotations

import functools
import runpy
from pathlib import Path

import numpy as np
import pytest

from grader.checks.cases import build_cases
from grader.grading import GradingSession
from grader.spec.loader import load_catalog
from grader.spec.models import ImplementationExercise

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ["divide-by-sum-breaks", "square-breaks-order", "argmax-zero-gradient", "softmax-jacobian"]
CATALOG = load_catalog(ROOT / "exercises")

# A known-wrong solution whose output the engine cannot compare (the learner
# process refuses a list holding an array), so no diagnosis can name it.
UNDIAGNOSABLE = {"square-breaks-order/witness-list"}


def _exercise(exercise_id: str) -> ImplementationExercise:
    exercise = CATALOG.exercises[exercise_id]
    assert isinstance(exercise, ImplementationExercise)
    return exercise


WRONG = [(exercise_id, wrong) for exercise_id in EXERCISES for wrong in _exercise(exercise_id).known_wrong]
CORRECT = sorted(
    (ROOT / "tests" / "fixtures" / "correct" / exercise_id / path.name, exercise_id)
    for exercise_id in EXERCISES
    for path in (ROOT / "tests" / "fixtures" / "correct" / exercise_id).glob("*.py")
)


@pytest.fixture(scope="module")
def grading():
    with GradingSession(exercises_dir=ROOT / "exercises") as session:
        yield session


def _grade(grading: GradingSession, path: Path | str, exercise_id: str):
    report = grading.grade(ROOT / path, exercise_ids=[exercise_id])
    (result,) = report.exercises
    return result


def test_catalog_why_softmax_assignment_lists_the_lesson_in_order() -> None:
    assert CATALOG.assignments["why-softmax"].exercises == [
        "why-softmax-quiz",
        "divide-by-sum-breaks",
        "square-breaks-order",
        "argmax-zero-gradient",
        "stable-softmax",
        "softmax-jacobian",
    ]


@pytest.mark.parametrize("exercise_id", EXERCISES, ids=EXERCISES)
def test_catalog_why_softmax_every_check_catches_a_known_wrong(exercise_id: str) -> None:
    exercise = _exercise(exercise_id)
    caught = {check_id for wrong in exercise.known_wrong for check_id in wrong.must_fail}
    assert len(exercise.known_wrong) >= 4
    assert caught == {check.id for check in exercise.checks}
    assert any(check.visibility == "public" for check in exercise.checks)
    assert all(check.hint_list() for check in exercise.checks)


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", EXERCISES, ids=EXERCISES)
def test_catalog_why_softmax_reference_gets_full_marks(grading: GradingSession, exercise_id: str) -> None:
    exercise = _exercise(exercise_id)
    assert exercise.reference_solution is not None
    result = _grade(grading, exercise.reference_solution, exercise_id)
    assert result.status == "passed", [c.reason for c in result.checks if c.status != "passed"]
    assert result.score == result.max_score == exercise.max_score


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id, wrong", WRONG, ids=[f"{exercise_id}/{wrong.id}" for exercise_id, wrong in WRONG])
def test_catalog_why_softmax_known_wrong_fails_its_checks(grading: GradingSession, exercise_id: str, wrong) -> None:
    result = _grade(grading, wrong.path, exercise_id)
    statuses = {check.id: check.status for check in result.checks}
    assert {check_id for check_id in wrong.must_fail if statuses[check_id] == "passed"} == set()
    assert result.score < result.max_score
    named = [
        check.id for check in result.checks if check.id in wrong.must_fail and check.diagnosis == wrong.misconception
    ]
    if f"{exercise_id}/{wrong.id}" in UNDIAGNOSABLE:
        assert named == []
    else:
        assert named, {check.id: check.diagnosis for check in result.checks if check.status != "passed"}
    for check in result.checks:
        if check.status == "skipped":  # held, but withheld by the exercise's guard
            assert check.reason.startswith("Not credited:")
        elif check.status != "passed":
            assert check.reason and check.expected and check.got


@pytest.mark.slow
@pytest.mark.parametrize(
    "path, exercise_id", CORRECT, ids=[f"{exercise_id}/{path.stem}" for path, exercise_id in CORRECT]
)
def test_catalog_why_softmax_other_correct_styles_get_full_marks(
    grading: GradingSession, path: Path, exercise_id: str
) -> None:
    result = _grade(grading, path, exercise_id)
    assert result.status == "passed", [c.reason for c in result.checks if c.status != "passed"]
    assert result.score == result.max_score


def _cases(exercise_id: str, case_set: str):
    exercise = _exercise(exercise_id)
    entry = next(iter(exercise.entries))
    return build_cases(list(exercise.cases[case_set]), dict(exercise.entries[entry].args), (exercise_id, case_set))


def test_catalog_why_softmax_hard_argmax_cases_stay_away_from_ties() -> None:
    for case in _cases("argmax-zero-gradient", "hard-argmax"):
        top, second = np.sort(case.args["z"])[::-1][:2]
        assert top - second > 2 * case.args.get("h", 1e-5), case.args["z"]


def test_catalog_why_softmax_large_steps_are_told_apart_from_the_default() -> None:
    # Each large-step case must separate "used h" from "ignored h" by far more than the check's tolerance.
    folder = ROOT / "solutions" / "argmax-zero-gradient"
    given, reference = runpy.run_path(str(folder / "given.py")), runpy.run_path(str(folder / "reference.py"))
    for case in _cases("argmax-zero-gradient", "large-step"):
        fn, z, h = case.args["f"], case.args["z"], case.args["h"]
        f = functools.partial(given[fn.name], **dict(fn.bound))
        gap = np.max(np.abs(reference["numerical_jacobian"](f, z, h) - reference["numerical_jacobian"](f, z)))
        assert gap > 1e-4, (z, h)
