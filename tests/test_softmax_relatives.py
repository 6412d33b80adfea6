"""The softmax-relatives assignment (sigmoid, logsumexp, a quiz), written in YAML only, graded for real.

The references get full marks; every known-wrong solution fails the checks
its spec names, and one of them tells its misconception; correct solutions
in other styles (logaddexp, tanh on the half where it is exact, loops,
float32 kept) get full marks; single-bug files that are not known-wrong
solutions lose the points of the checks their bug breaks, each with a reason
showing the failing input and the check's hint; the quiz's answers example
gets full marks and each wrong option loses its question with its reason.
One grading session serves the whole module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from grader.grading import GradingSession
from grader.spec.loader import load_catalog
from grader.spec.models import ImplementationExercise
from tests.grading_helpers import failures, grade_one

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "relatives"
IMPLEMENTATIONS = ["sigmoid", "logsumexp"]
QUIZ = "softmax-relatives-quiz"
CATALOG = load_catalog(ROOT / "exercises")

SINGLE_BUG = ROOT / "tests" / "single_bug"
# Single-bug files (tests/single_bug/<exercise-id>/, graded for credit by test_single_bug_credit.py too)
# that no known-wrong solution stands for: the checks each must lose.
BUGS = [
    ("sigmoid", "naive_errstate.py", ["matches-reference-on-extremes", "is-softmax-of-two-scores"]),
    ("sigmoid", "clips_at_709.py", ["matches-reference-on-extremes", "is-softmax-of-two-scores"]),
    ("sigmoid", "abs_instead_of_branch.py", ["matches-reference", "symmetric-about-one-half", "increasing"]),
    ("logsumexp", "sums_everything.py", ["matches-reference", "shape-and-dtype"]),
    ("logsumexp", "forgets_the_max.py", ["computes-the-right-values", "matches-reference", "at-least-the-max"]),
    # A finite value where the reference gives +-inf: the inf checks and the bounds see it.
    ("logsumexp", "nan_to_num.py", ["neg-inf-slice-gives-neg-inf", "at-least-the-max", "at-most-the-max-plus-log-n"]),
    ("logsumexp", "squeeze_all.py", ["matches-reference", "shape-and-dtype"]),
    ("logsumexp", "max_only.py", ["computes-the-right-values", "matches-reference", "matches-reference-on-extremes"]),
]


def _exercise(exercise_id: str) -> ImplementationExercise:
    exercise = CATALOG.exercises[exercise_id]
    assert isinstance(exercise, ImplementationExercise)
    return exercise


WRONG = [(exercise_id, wrong) for exercise_id in IMPLEMENTATIONS for wrong in _exercise(exercise_id).known_wrong]
CORRECT = [
    (exercise_id, path) for exercise_id in IMPLEMENTATIONS for path in sorted((FIXTURES / exercise_id).glob("*.py"))
]


@pytest.fixture(scope="module")
def grading() -> Any:
    with GradingSession(exercises_dir=ROOT / "exercises") as session:
        yield session


def test_relatives_assignment_lists_the_quiz_then_both_exercises() -> None:
    assert CATALOG.assignments["softmax-relatives"].exercises == [QUIZ, "sigmoid", "logsumexp"]
    everything = [exercise.id for exercise in CATALOG.assignment("all")]
    assert {QUIZ, "sigmoid", "logsumexp"} <= set(everything)


@pytest.mark.parametrize("exercise_id", IMPLEMENTATIONS, ids=IMPLEMENTATIONS)
def test_relatives_every_check_is_proven_by_a_known_wrong(exercise_id: str) -> None:
    exercise = _exercise(exercise_id)
    caught = {check_id for wrong in exercise.known_wrong for check_id in wrong.must_fail}
    assert caught == {check.id for check in exercise.checks}
    assert all(check.hint_list() for check in exercise.checks)
    assert any(check.visibility == "public" for check in exercise.checks)


def test_relatives_use_the_general_properties() -> None:
    # The point of the assignment: these exercises need no property written for them.
    used = {check.property for exercise_id in IMPLEMENTATIONS for check in _exercise(exercise_id).checks}
    assert {"in-range", "identity", "monotone", "no-float-warnings"} <= used


def test_relatives_alternatives_cover_both_exercises() -> None:
    for exercise_id in IMPLEMENTATIONS:
        assert len(list((FIXTURES / exercise_id).glob("*.py"))) >= 3, exercise_id


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", IMPLEMENTATIONS, ids=IMPLEMENTATIONS)
def test_relatives_reference_gets_full_marks(grading: GradingSession, exercise_id: str) -> None:
    exercise = _exercise(exercise_id)
    assert exercise.reference_solution is not None
    result = grade_one(grading, ROOT / exercise.reference_solution, exercise_id)
    assert result.status == "passed", failures(result)
    assert result.score == result.max_score == exercise.max_score


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "wrong"), WRONG, ids=[f"{e}/{w.id}" for e, w in WRONG])
def test_relatives_known_wrong_fails_its_checks(grading: GradingSession, exercise_id: str, wrong: Any) -> None:
    result = grade_one(grading, ROOT / wrong.path, exercise_id)
    statuses = {check.id: check.status for check in result.checks}
    assert [check_id for check_id in wrong.must_fail if statuses[check_id] not in ("failed", "error")] == []
    assert result.score < result.max_score
    named = [c.id for c in result.checks if c.id in wrong.must_fail and c.diagnosis == wrong.misconception]
    assert named, {c.id: c.diagnosis for c in result.checks if c.status != "passed"}


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "path"), CORRECT, ids=[f"{e}/{p.stem}" for e, p in CORRECT])
def test_relatives_other_correct_styles_get_full_marks(grading: GradingSession, exercise_id: str, path: Path) -> None:
    result = grade_one(grading, path, exercise_id)
    assert result.status == "passed", failures(result)
    assert result.score == result.max_score


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "name", "lost"), BUGS, ids=[f"{e}/{n[:-3]}" for e, n, _ in BUGS])
def test_relatives_single_bug_loses_the_checks_it_breaks(
    grading: GradingSession, exercise_id: str, name: str, lost: list[str]
) -> None:
    exercise = _exercise(exercise_id)
    result = grade_one(grading, SINGLE_BUG / exercise_id / name, exercise_id)
    checks = {check.id: check for check in result.checks}
    hints = {check.id: " ".join(check.hint.split()) for check in exercise.checks}
    explained = []
    for check_id in lost:
        check = checks[check_id]
        assert check.status == "failed", f"{check_id}: {check.reason}"
        assert check.input and check.input.startswith(f"{exercise_id}(")
        assert check.expected and check.got
        reason = " ".join(check.reason.split())
        if hints[check_id] in reason or (check.diagnosis and " ".join(check.diagnosis.split()) in reason):
            explained.append(check_id)
    assert explained, {check_id: checks[check_id].reason for check_id in lost}
    assert result.score < result.max_score


@pytest.mark.slow
def test_relatives_quiz_answers_example_gets_full_marks(grading: GradingSession) -> None:
    result = grade_one(grading, ROOT / "solutions" / "softmax-relatives-answers.yaml", QUIZ)
    assert result.score == result.max_score == 5
    assert [c.status for c in result.checks] == ["passed"] * 5


def _wrong_options() -> list[tuple[str, str, str]]:
    """(question id, letter, reason) for every wrong option of every single-choice question."""
    spec = yaml.safe_load((ROOT / "exercises" / f"{QUIZ}.yaml").read_text(encoding="utf-8"))
    return [
        (question["id"], chr(ord("A") + number), option["reason"])
        for question in spec["questions"]
        if question["type"] == "single"
        for number, option in enumerate(question["options"])
        if not option.get("correct")
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("question", "letter", "reason"), _wrong_options(), ids=[f"{q}-{x}" for q, x, _ in _wrong_options()]
)
def test_relatives_quiz_wrong_option_loses_its_question_with_its_reason(
    grading: GradingSession, tmp_path: Path, question: str, letter: str, reason: str
) -> None:
    answers = yaml.safe_load((ROOT / "solutions" / "softmax-relatives-answers.yaml").read_text(encoding="utf-8"))
    answers[QUIZ][question] = letter
    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump(answers), encoding="utf-8")
    result = grade_one(grading, path, QUIZ)
    failed = [c for c in result.checks if c.status != "passed"]
    assert [c.id for c in failed] == [question]
    assert " ".join(reason.split()) in " ".join(failed[0].reason.split())
    assert result.score == result.max_score - 1
