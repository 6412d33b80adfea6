"""Quiz grading: every pick gets the reason of the option picked; malformed answers get a way out."""

from __future__ import annotations

import pytest

from grader.checks.quiz import grade_quiz

RIGHT = {"divide-by-sum-fails": "A", "argmax-fails": "c", "square-fails": "D", "exp-first": ["C", "A", "B"],
         "argmax-gradient": "A"}


@pytest.fixture()
def quiz(catalog):
    return catalog.exercise("why-softmax-quiz")


def _check(result, question_id):
    return next(c for c in result.checks if c.id == question_id)


def test_grade_quiz_all_right_scores_full_marks_in_any_letter_case_and_order(quiz) -> None:
    result = grade_quiz(quiz, RIGHT)
    assert result.status == "passed"
    assert result.score == result.max_score == 5


def test_grade_quiz_wrong_pick_gives_that_options_reason(quiz) -> None:
    result = grade_quiz(quiz, dict(RIGHT, **{"divide-by-sum-fails": "B"}))
    check = _check(result, "divide-by-sum-fails")
    assert check.status == "failed" and check.score == 0
    assert "you picked B (sums to one)" in check.reason
    assert quiz.questions[0].options[1].reason in check.reason


@pytest.mark.parametrize(
    ("answer", "expected"),
    [(["A", "B"], "Missing 1 option that also applies: C"), (["A", "B", "C", "D"], "Does not belong: D (it is bounded)"),
     (["A", "B", "C", "E"], "Does not belong: E (it is linear)")],
    ids=["missing-one", "extra-bounded", "extra-linear"],
)
def test_grade_quiz_multiple_choice_names_missing_and_extra(quiz, answer, expected) -> None:
    check = _check(grade_quiz(quiz, dict(RIGHT, **{"exp-first": answer})), "exp-first")
    assert check.status == "failed" and check.score == 0
    assert expected in check.reason


@pytest.mark.parametrize(
    ("answer", "expected"),
    [(None, "Not answered"), ("F", "F is not an option"), (3, "is not an answer here"), ("A, B", "One option only")],
    ids=["unanswered", "no-such-option", "number", "two-for-single"],
)
def test_grade_quiz_malformed_single_answers_are_failed_with_reason(quiz, answer, expected) -> None:
    answers = dict(RIGHT)
    answers["argmax-fails"] = answer
    check = _check(grade_quiz(quiz, answers), "argmax-fails")
    assert check.status == "failed"
    assert expected in check.reason


def test_grade_quiz_unknown_question_is_named(quiz) -> None:
    result = grade_quiz(quiz, dict(RIGHT, bogus="A"))
    assert "'bogus'" in result.reason and result.score == 5


def test_grade_quiz_without_answers_is_missing(quiz) -> None:
    result = grade_quiz(quiz, None)
    assert result.status == "missing" and result.score == 0
    assert all(check.reason for check in result.checks)


def test_grade_quiz_section_not_a_mapping_is_an_error(quiz) -> None:
    result = grade_quiz(quiz, ["A", "B"])
    assert result.status == "error" and "must map question ids" in result.reason
