"""Every known-wrong solution of the catalog, graded as a learner's file, is diagnosed as itself and as no other.

A diagnosis says "this matches a known mistake": it must name the mistake
the file makes (on at least one of the checks that mistake is known to
fail) and never another known mistake of the same exercise. One grading
session serves the module, so each known-wrong solution's answers are asked
once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.grading import GradingSession
from grader.spec.loader import load_catalog
from grader.spec.models import ImplementationExercise, KnownWrong

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "exercises")
EXERCISES = sorted(
    exercise_id
    for exercise_id, exercise in CATALOG.exercises.items()
    if isinstance(exercise, ImplementationExercise) and exercise.known_wrong
)
WRONG = [
    (exercise_id, wrong)
    for exercise_id in EXERCISES
    for wrong in CATALOG.exercises[exercise_id].known_wrong  # type: ignore[union-attr]
]

# Solutions that answer differently on every run (unseeded randomness, state kept between calls): a second
# run cannot reproduce the first, so nothing can show that a learner makes their mistake.
IRREPRODUCIBLE = {
    "scaling-experiment/global-state",
    "scaling-experiment/unseeded-generator",
}
# A solution whose answers the learner process cannot hand back (a list holding an array) has nothing to compare.
UNCOMPARABLE = {"square-breaks-order/witness-list"}


@pytest.fixture(scope="module")
def grading():
    with GradingSession(exercises_dir=ROOT / "exercises") as session:
        yield session


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "wrong"), WRONG, ids=[f"{e}/{w.id}" for e, w in WRONG])
def test_known_wrong_is_diagnosed_as_itself_and_never_as_another(
    grading: GradingSession, exercise_id: str, wrong: KnownWrong
) -> None:
    exercise = CATALOG.exercises[exercise_id]
    assert isinstance(exercise, ImplementationExercise)
    (result,) = grading.grade(ROOT / wrong.path, exercise_ids=[exercise_id]).exercises
    others = {other.misconception: other.id for other in exercise.known_wrong if other.id != wrong.id}
    misnamed = {check.id: others[check.diagnosis] for check in result.checks if check.diagnosis in others}
    assert misnamed == {}, f"{wrong.id} diagnosed as another known mistake"
    named = [check.id for check in result.checks if check.diagnosis == wrong.misconception]
    assert set(named) <= set(wrong.must_fail), "a mistake is named only on the checks it is known to fail"
    if f"{exercise_id}/{wrong.id}" in IRREPRODUCIBLE | UNCOMPARABLE:
        return
    assert named, {check.id: check.reason for check in result.checks if check.status != "passed"}
