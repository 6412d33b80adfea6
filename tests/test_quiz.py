"""Quiz grading: every pick gets the reason of the option picked; malformed answers get a way out."""

from __future__ import annotations

import re

import pytest

from grader.engine.quiz import grade_quiz, read_choice
from grader.spec.models import QuizExercise

RIGHT = {
    "divide-by-sum-fails": "A",
    "argmax-fails": "c",
    "square-fails": "D",
    "exp-first": ["C", "A", "B"],
    "argmax-gradient": "A",
}


@pytest.fixture()
def quiz(catalog):
    return catalog.exercise("why-softmax-quiz")


@pytest.fixture()
def bridge(catalog):
    return catalog.exercise("softmax-bridge-quiz")


def _check(result, question_id):
    return next(c for c in result.checks if c.id == question_id)


def _reason(quiz, question_id: str, answer) -> str:
    return _check(grade_quiz(quiz, {question_id: answer}), question_id).reason


def _with_question(quiz, question_id: str, **update):
    questions = [q.model_copy(update=update) if q.id == question_id else q for q in quiz.questions]
    return quiz.model_copy(update={"questions": questions})


def _with_correct(quiz, question_id: str, correct: str):
    """``quiz`` with the options of ``question_id`` marked correct exactly at the letters in ``correct``."""
    question = next(q for q in quiz.questions if q.id == question_id)
    options = [
        option.model_copy(update={"correct": chr(ord("A") + index) in correct})
        for index, option in enumerate(question.options)
    ]
    return _with_question(quiz, question_id, options=options)


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
    [
        (["A", "B"], "1 more option also applies."),
        (["A"], "2 more options also apply."),
        (["A", "B", "C", "D"], "Does not belong: D (it is bounded)"),
        (["A", "B", "C", "E"], "Does not belong: E (it is linear)"),
    ],
    ids=["missing-one", "missing-two", "extra-bounded", "extra-linear"],
)
def test_grade_quiz_multiple_choice_counts_missing_and_names_extra(quiz, answer, expected) -> None:
    check = _check(grade_quiz(quiz, dict(RIGHT, **{"exp-first": answer})), "exp-first")
    assert check.status == "failed" and check.score == 0
    assert expected in check.reason


def test_grade_quiz_multiple_choice_shows_the_reason_of_every_pick(quiz) -> None:
    question = next(q for q in quiz.questions if q.id == "exp-first")
    reason = _reason(quiz, "exp-first", ["A", "D"])
    assert "Belongs: A (it maps every real number to a positive real number)" in reason
    assert "Does not belong: D (it is bounded)" in reason
    assert question.options[0].reason in reason and question.options[3].reason in reason
    assert question.options[1].text not in reason and question.options[2].text not in reason


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (None, "Not answered"),
        ("F", "F is not an option"),
        (3, "is not an answer here"),
        ("A, B", "One option only"),
        ("A B", "One option only"),
        ("AB", "AB is not an option"),
        ("ca", "ca is not an option"),
        ("A or C", "or is not an option"),
        ("", "is not an answer here"),
    ],
    ids=[
        "unanswered",
        "no-such-option",
        "number",
        "two-for-single",
        "two-spaced-for-single",
        "run-for-single",
        "lowercase-run-for-single",
        "either-or",
        "empty",
    ],
)
def test_grade_quiz_malformed_single_answers_are_failed_with_reason(quiz, answer, expected) -> None:
    answers = dict(RIGHT)
    answers["argmax-fails"] = answer
    check = _check(grade_quiz(quiz, answers), "argmax-fails")
    assert check.status == "failed"
    assert expected in check.reason


@pytest.mark.parametrize(
    ("answer", "picks"),
    [("c", "C"), ("(c)", "C"), ("C)", "C"), ("c.", "C"), (" C ", "C"), ("[C]", "C"), (["c"], "C")],
    ids=["lower", "parenthesised", "closing-paren", "dotted", "spaced", "bracketed-string", "list"],
)
def test_grade_quiz_single_letter_forms(quiz, answer, picks) -> None:
    check = _check(grade_quiz(quiz, dict(RIGHT, **{"argmax-fails": answer})), "argmax-fails")
    assert check.status == "passed", check.reason
    assert read_choice(answer, "ABCD", multiple=False).picks == list(picks)


# exp-first: options A to E, correct A, B and C. (answer, letters read or None when it is not an option, status)
MULTIPLE_FORMS = [
    ("ABC", "ABC", "passed"),
    ("cab", "CAB", "passed"),
    ("aBc", "ABC", "passed"),
    ("A B C", "ABC", "passed"),
    ("a, b, c", "ABC", "passed"),
    ("A,B,C", "ABC", "passed"),
    ("A;B;C", "ABC", "passed"),
    ("A; B; C", "ABC", "passed"),
    ("A & B & C", "ABC", "passed"),
    ("A, B and C", "ABC", "passed"),
    ("A and B and C", "ABC", "passed"),
    ("A) B) C)", "ABC", "passed"),
    ("(a) (b) (c)", "ABC", "passed"),
    ("[a, b, c]", "ABC", "passed"),
    ("(A, B, C)", "ABC", "passed"),
    ("A, A, B, C", "ABC", "passed"),
    ("AB, C", "ABC", "passed"),
    (["a", "b", "c"], "ABC", "passed"),
    (["AB", "C"], "ABC", "passed"),
    (["A B", "c"], "ABC", "passed"),
    ("[a, c]", "AC", "failed"),
    ("AC", "AC", "failed"),
    ("ABCD", "ABCD", "failed"),
    ("A", "A", "failed"),
    ("AAB", None, "failed"),
    ("ABF", None, "failed"),
    ("ABC F", None, "failed"),
    ("A or C", None, "failed"),
    ("A/C", None, "failed"),
    ("A-C", None, "failed"),
    ("all", None, "failed"),
    ("abc?", None, "failed"),
    (["ABZ"], None, "failed"),
]


@pytest.mark.parametrize(
    ("answer", "picks", "status"), MULTIPLE_FORMS, ids=[repr(answer) for answer, _, _ in MULTIPLE_FORMS]
)
def test_grade_quiz_multiple_choice_forms(quiz, answer, picks, status) -> None:
    reading = read_choice(answer, "ABCDE", multiple=True)
    assert reading is not None
    if picks is None:
        assert reading.not_options
    else:
        assert not reading.not_options and reading.picks == list(picks)
    check = _check(grade_quiz(quiz, dict(RIGHT, **{"exp-first": answer})), "exp-first")
    assert check.status == status, check.reason
    if picks is None:
        assert "not an option" in check.reason and "the options are A, B, C, D, E" in check.reason


# Answers whose reason must not depend on the answer key: unanswered, or in a form that cannot be read.
UNREADABLE_CHOICE = [
    None,
    "",
    "   ",
    3,
    0.5,
    True,
    {"a": 1},
    [["A"]],
    ["A", 1],
    "ABF",
    "AAB",
    "A or C",
    "A/C",
    "F",
    "ABC F",
    "x" * 5000,
    ["Z"] * 900,
]
# Other keys for exp-first (A to E) and for argmax-fails (A to D).
KEYS = {"exp-first": ["ABC", "DE", "A", "ABCDE", "CE"], "argmax-fails": ["A", "B", "C", "D"]}


@pytest.mark.parametrize("reveal", ["picked", "full"])
@pytest.mark.parametrize("question_id", sorted(KEYS))
@pytest.mark.parametrize("answer", UNREADABLE_CHOICE, ids=[repr(a)[:20] for a in UNREADABLE_CHOICE])
def test_unreadable_choice_answer_says_nothing_of_the_key(quiz, answer, question_id, reveal) -> None:
    """The same words whichever options are correct, even where the quiz reveals answers."""
    quiz = quiz.model_copy(update={"reveal": reveal})
    reasons = {_reason(_with_correct(quiz, question_id, key), question_id, answer) for key in KEYS[question_id]}
    assert len(reasons) == 1, reasons
    (reason,) = reasons
    assert "also appl" not in reason and "answer is" not in reason


# (picks, two answer keys with the same verdict on every pick and the same number of correct options left out)
SAME_VERDICT = [
    (["A"], "ABC", "ADE"),
    (["A", "B"], "ABC", "ABD"),
    (["A", "D"], "ABC", "ACE"),
    (["D"], "ABC", "ABE"),
    (["D", "E"], "AB", "BC"),
    ("AB", "ABC", "ABE"),
    ("A B", "ABCD", "ABCE"),
]


@pytest.mark.parametrize(("answer", "key", "other"), SAME_VERDICT, ids=[f"{a}-{k}-{o}" for a, k, o in SAME_VERDICT])
def test_wrong_multiple_choice_answer_does_not_name_missing_options_by_default(quiz, answer, key, other) -> None:
    """Without ``reveal: full`` a learner learns the verdict on each pick and how many are missing, nothing more."""
    first = _reason(_with_correct(quiz, "exp-first", key), "exp-first", answer)
    second = _reason(_with_correct(quiz, "exp-first", other), "exp-first", answer)
    assert first == second
    assert "more option" in first and "Missing" not in first


def test_grade_quiz_reveal_full_names_missing_options(quiz) -> None:
    revealed = quiz.model_copy(update={"reveal": "full"})
    reason = _reason(revealed, "exp-first", "A")
    assert "Missing 2 options that also apply: B (it is smooth everywhere), C (it is strictly increasing)." in reason
    assert "The answer is C (differentiable)." in _reason(revealed, "argmax-fails", "A")
    assert "The answer is" not in _reason(quiz, "argmax-fails", "A")


@pytest.mark.parametrize(
    ("quiz_reveal", "question_reveal", "named"),
    [
        ("picked", None, False),
        ("full", None, True),
        ("full", "picked", False),
        ("picked", "full", True),
    ],
    ids=["quiz-picked", "quiz-full", "question-overrides-to-picked", "question-overrides-to-full"],
)
def test_grade_quiz_question_reveal_replaces_the_quizs(quiz, quiz_reveal, question_reveal, named) -> None:
    changed = _with_question(quiz.model_copy(update={"reveal": quiz_reveal}), "exp-first", reveal=question_reveal)
    reason = _reason(changed, "exp-first", ["A", "B"])
    assert ("Missing 1 option that also applies: C (it is strictly increasing)." in reason) is named
    assert ("1 more option also applies." in reason) is not named


def test_quiz_spec_reveal_is_picked_unless_set_and_refuses_other_words(quiz) -> None:
    data = {
        "id": "q",
        "kind": "quiz",
        "title": "Q",
        "questions": [
            {
                "id": "a",
                "type": "single",
                "prompt": "p",
                "reveal": "full",
                "options": [{"text": "x", "correct": True, "reason": "r"}, {"text": "y", "reason": "r"}],
            }
        ],
    }
    spec = QuizExercise.model_validate(data)
    assert spec.reveal == "picked" and spec.questions[0].reveal == "full"
    assert quiz.reveal == "picked" and all(q.reveal is None for q in quiz.questions)
    with pytest.raises(ValueError, match="reveal"):
        QuizExercise.model_validate(dict(data, reveal="always"))


UNREADABLE_NUMBERS = [None, "", "0,839", "yes", True, float("nan"), float("inf"), [0.839], {"a": 1}, "about 0.8"]


@pytest.mark.parametrize("reveal", ["picked", "full"])
@pytest.mark.parametrize("answer", UNREADABLE_NUMBERS, ids=[repr(a) for a in UNREADABLE_NUMBERS])
def test_unreadable_numeric_answer_says_nothing_of_the_answer(bridge, answer, reveal) -> None:
    bridge = bridge.model_copy(update={"reveal": reveal})
    reasons = {
        _reason(_with_question(bridge, "largest-weight", answer=value, mistakes=[]), "largest-weight", answer)
        for value in (0.83898, 0.25, 1.5e-3, 42.0)
    }
    assert len(reasons) == 1, reasons
    (reason,) = reasons
    form = reason.split("give ", 1)[1]  # what the learner is told to write: no number in it
    assert form == "one finite number, in decimal or scientific notation.", reason


def test_numeric_reveal_full_states_the_answer_only_when_wrong(bridge) -> None:
    revealed = bridge.model_copy(update={"reveal": "full"})
    assert "The answer is 0.83898 (within 0.001)." in _reason(revealed, "largest-weight", 0.5)
    assert "The answer is 0.83898" in _reason(revealed, "largest-weight", 0.25)  # a listed mistake
    assert "The answer is" not in _reason(bridge, "largest-weight", 0.5)
    assert _reason(revealed, "largest-weight", 0.839).startswith("Right: 0.839")


def test_grade_quiz_unknown_question_is_named(quiz) -> None:
    result = grade_quiz(quiz, dict(RIGHT, bogus="A"))
    assert "'bogus'" in result.reason and result.score == 5


def test_grade_quiz_without_answers_is_missing(quiz) -> None:
    result = grade_quiz(quiz, None)
    assert result.status == "missing" and result.score == 0
    assert all(check.reason for check in result.checks)


def test_grade_quiz_section_not_a_mapping_is_an_error_and_shows_no_answer(quiz) -> None:
    result = grade_quiz(quiz, ["A", "B"])
    assert result.status == "error" and "must map question ids" in result.reason
    assert not re.search(r"\b[A-E]\b", result.reason.replace("'why-softmax-quiz'", ""))
