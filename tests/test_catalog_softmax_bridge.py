"""The softmax-bridge assignment end to end on the real sandbox.

Every reference solution gets full marks; every known-wrong solution fails
at least the checks its spec says must catch it, and is told its own
misconception there; alternative correct solutions written in unusual
styles (loops, apply_along_axis, einsum, float32, -1e9 masking) get full
marks; and each wrong quiz answer loses exactly its question, with the
reason of the option (or the numeric mistake) it picked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from grader.grading import GradingSession
from tests.grading_helpers import failures, grade_one

ROOT = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS = [
    "temperature",
    "log-softmax",
    "attention-weights",
    "scaling-experiment",
    "cross-entropy",
]
QUIZ = "softmax-bridge-quiz"
ANSWERS = ROOT / "tests" / "fixtures" / "answers" / QUIZ
CORRECT = ROOT / "tests" / "fixtures" / "correct"

# Solutions whose output is different on every run: a rerun cannot reproduce it, so no diagnosis is expected.
NONDETERMINISTIC = {
    ("scaling-experiment", "global-state"),
    ("scaling-experiment", "unseeded-generator"),
}


def _spec(exercise_id: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "exercises" / f"{exercise_id}.yaml").read_text(encoding="utf-8"))


def _known_wrong() -> list[tuple[str, dict[str, Any]]]:
    return [(exercise_id, wrong) for exercise_id in IMPLEMENTATIONS for wrong in _spec(exercise_id)["known_wrong"]]


def _alternatives() -> list[tuple[str, Path]]:
    return [
        (exercise_id, path) for exercise_id in IMPLEMENTATIONS for path in sorted((CORRECT / exercise_id).glob("*.py"))
    ]


def _quiz_fixtures() -> list[Path]:
    return sorted(ANSWERS.glob("*--*.yaml"))


@pytest.fixture(scope="module")
def grading() -> Any:
    with GradingSession(exercises_dir=ROOT / "exercises") as session:
        yield session


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", IMPLEMENTATIONS, ids=IMPLEMENTATIONS)
def test_bridge_reference_gets_full_marks(grading: GradingSession, exercise_id: str) -> None:
    spec = _spec(exercise_id)
    result = grade_one(grading, ROOT / spec["reference_solution"], exercise_id)
    assert result.score == result.max_score, failures(result)
    assert result.status == "passed"


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "wrong"), _known_wrong(), ids=[f"{e}-{w['id']}" for e, w in _known_wrong()])
def test_bridge_known_wrong_fails_its_checks_with_its_diagnosis(
    grading: GradingSession, exercise_id: str, wrong: dict[str, Any]
) -> None:
    result = grade_one(grading, ROOT / wrong["path"], exercise_id)
    checks = {check.id: check for check in result.checks}
    for check_id in wrong["must_fail"]:
        check = checks[check_id]
        assert check.status in ("failed", "error"), f"{check_id} did not catch {wrong['id']}: {check.reason}"
        if (exercise_id, wrong["id"]) not in NONDETERMINISTIC:
            assert check.diagnosis == wrong["misconception"], f"{check_id}: {check.reason}"
            said = check.reason
            if "stopped by the same" in said:  # said once, on the check this one points to
                said = checks[said.split("stopped by the same", 1)[1].split(" as ", 1)[1].split(",", 1)[0]].reason
            assert wrong["misconception"] in said
    assert result.score < result.max_score


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "path"), _alternatives(), ids=[f"{e}-{p.stem}" for e, p in _alternatives()])
def test_bridge_alternative_correct_solution_gets_full_marks(
    grading: GradingSession, exercise_id: str, path: Path
) -> None:
    result = grade_one(grading, path, exercise_id)
    assert result.score == result.max_score, failures(result)


def test_bridge_alternatives_cover_every_implementation() -> None:
    for exercise_id in IMPLEMENTATIONS:
        assert len(list((CORRECT / exercise_id).glob("*.py"))) >= 3, exercise_id


def test_bridge_every_exercise_has_four_known_wrongs_and_a_reference() -> None:
    for exercise_id in IMPLEMENTATIONS:
        spec = _spec(exercise_id)
        assert (ROOT / spec["reference_solution"]).is_file()
        assert len(spec["known_wrong"]) >= 4, exercise_id


def test_bridge_quiz_full_marks_answers(grading: GradingSession) -> None:
    result = grade_one(grading, ROOT / "solutions" / "softmax-bridge-answers.yaml", QUIZ)
    assert result.score == result.max_score == 5
    assert [c.id for c in result.checks] == [
        "most-probability",
        "temperature-up",
        "why-sqrt-dk",
        "largest-weight",
        "where-softmax",
    ]


def _expected_reasons(question: dict[str, Any], given: Any) -> list[str]:
    """The reasons a learner who answered ``given`` must read: picked wrong options, or the numeric mistake."""
    if question["type"] == "numeric":
        value = float(given)
        for mistake in question.get("mistakes", []):
            if abs(value - mistake["value"]) <= mistake.get("tolerance", 0.001):
                return [mistake["reason"]]
        return [question["reason_wrong"]]
    letters = [given] if isinstance(given, str) else list(given)
    wrong = [question["options"][ord(letter) - ord("A")] for letter in letters]
    reasons = [option["reason"] for option in wrong if not option.get("correct")]
    return reasons or ["more option"]  # the correct options left out are counted, not named


@pytest.mark.parametrize("path", _quiz_fixtures(), ids=[p.stem for p in _quiz_fixtures()])
def test_bridge_quiz_wrong_answer_loses_exactly_that_question(grading: GradingSession, path: Path) -> None:
    question_id = path.stem.split("--")[0]
    given = yaml.safe_load(path.read_text(encoding="utf-8"))[QUIZ][question_id]
    question = next(q for q in _spec(QUIZ)["questions"] if q["id"] == question_id)
    result = grade_one(grading, path, QUIZ)
    failed = [c for c in result.checks if c.status != "passed"]
    assert [c.id for c in failed] == [question_id]
    assert result.score == result.max_score - 1
    for reason in _expected_reasons(question, given):
        assert reason in failed[0].reason


def test_bridge_quiz_fixtures_cover_every_wrong_option() -> None:
    spec = _spec(QUIZ)
    covered: dict[str, set[str]] = {}
    for path in _quiz_fixtures():
        question_id = path.stem.split("--")[0]
        given = yaml.safe_load(path.read_text(encoding="utf-8"))[QUIZ][question_id]
        covered.setdefault(question_id, set()).update(
            [str(given)] if not isinstance(given, list) else [str(g) for g in given]
        )
    for question in spec["questions"]:
        if question["type"] == "numeric":
            values = {float(v) for v in covered[question["id"]]}
            for mistake in question["mistakes"]:
                assert any(abs(v - mistake["value"]) <= mistake["tolerance"] for v in values), mistake["value"]
        else:
            letters = "ABCDEFGHIJ"[: len(question["options"])]
            wrong = {
                letter for letter, option in zip(letters, question["options"], strict=True) if not option.get("correct")
            }
            assert wrong <= covered[question["id"]], question["id"]


def test_bridge_assignment_lists_every_exercise(grading: GradingSession) -> None:
    exercises = [e.id for e in grading.catalog.assignment("softmax-bridge")]
    assert exercises == [QUIZ, *IMPLEMENTATIONS]
