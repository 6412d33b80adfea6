"""Quiz item statistics (grader.batch.items): a class computed by hand, degenerate classes, a large class."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from grader.batch.html import format_report_html
from grader.batch.items import NEVER_CHOSEN, STRONG_CHOSEN, QuestionStat, format_items_csv, quiz_items
from grader.batch.summary import class_stats, format_summary_markdown, format_summary_text
from grader.engine.quiz import grade_quiz
from grader.results import Report, report_from_json, report_to_json
from grader.spec.models import QuizExercise


def _option(text: str, correct: bool = False) -> dict[str, Any]:
    return {"text": text, "correct": correct, "reason": f"why {text}"}


QUIZ = QuizExercise.model_validate(
    {
        "id": "q",
        "kind": "quiz",
        "title": "A quiz",
        "questions": [
            {"id": "q1", "prompt": "?", "type": "single", "options": [_option("a", True), *map(_option, "bcd")]},
            {"id": "q2", "prompt": "?", "type": "single", "options": [_option("a"), _option("b", True), _option("c")]},
            {"id": "q3", "prompt": "?", "type": "single", "options": [_option("a", True), *map(_option, "bcd")]},
            {
                "id": "q4",
                "prompt": "?",
                "type": "numeric",
                "answer": 1.0,
                "tolerance": 0.0,
                "reason_correct": "yes",
                "reason_wrong": "no",
            },
        ],
    }
)

# Six learners; q4 (numeric) is right for everyone, so it adds 1 to every total and changes no rest-score's spread.
HAND_CLASS = {
    "l1": {"q1": "A", "q2": "B", "q3": "C", "q4": 1},
    "l2": {"q1": "A", "q2": "B", "q3": "C", "q4": 1},
    "l3": {"q1": "A", "q2": "B", "q3": "A", "q4": 1},
    "l4": {"q1": "A", "q2": "C", "q3": "A", "q4": 1},
    "l5": {"q1": "B", "q2": "C", "q3": "A", "q4": 1},
    "l6": {"q1": "B", "q2": "C", "q3": "B", "q4": 1},
}


def _reports(answers: dict[str, Any], quiz: QuizExercise = QUIZ) -> dict[str, Report]:
    reports = {}
    for name, given in answers.items():
        exercise = grade_quiz(quiz, given)
        reports[name] = Report(
            grader_version="t",
            submission=name,
            score=exercise.score,
            max_score=exercise.max_score,
            exercises=[exercise],
        )
    return reports


def _by_id(stats: list[QuestionStat] | None) -> dict[str, QuestionStat]:
    assert stats is not None
    return {stat.question: stat for stat in stats}


@pytest.mark.parametrize(
    ("given", "picked"),
    [
        ({"q1": "b", "q4": 2}, {"q1": ["B"], "q2": None, "q4": []}),
        ({"q1": "(c)", "q2": "Z", "q3": ["A", "C"]}, {"q1": ["C"], "q2": [], "q3": ["A", "C"], "q4": None}),
    ],
    ids=["letter-and-number", "unreadable-and-several"],
)
def test_quiz_result_records_the_options_picked(given: dict[str, Any], picked: dict[str, Any]) -> None:
    report = _reports({"x": given})["x"]
    recorded = {check.id: check.picked for check in report.exercises[0].checks}
    assert {key: recorded[key] for key in picked} == picked
    again = report_from_json(report_to_json(report))
    assert [check.picked for check in again.exercises[0].checks] == [
        check.picked for check in report.exercises[0].checks
    ]
    written = json.loads(report_to_json(report))["exercises"][0]["checks"]
    assert [check["id"] for check in written if "picked" not in check] == [k for k, v in recorded.items() if v is None]


def test_quiz_items_match_a_hand_computation() -> None:
    """Worked by hand (q4 adds 1 to every total, so rest-scores below drop it):

    totals without q4: l1 2, l2 2, l3 3, l4 2, l5 1, l6 0.
    q1: x = 1,1,1,1,0,0; rest = 1,1,2,1,1,0; sxy = 1, sxx = 4/3, syy = 2; r = 1/sqrt(8/3) = 0.6124.
        top third: ceil(6/3) = 2, the 2nd highest rest is 1, ties in: l1..l5; A 4 of 5, B 1 of 5.
    q2: x = 1,1,1,0,0,0; rest = 1,1,2,2,1,0; sxy = 0.5, sxx = 1.5, syy = 17/6; r = 0.5/sqrt(4.25) = 0.2425.
        top third: rest >= 2: l3 (B), l4 (C); C ties the correct B at 1/2: flagged.
    q3: x = 0,0,1,1,1,0; rest = 2,2,2,1,0,0; sxy = -0.5, sxx = 1.5, syy = 29/6; r = -0.5/sqrt(7.25) = -0.1857.
        top third: rest >= 2: l1 (C), l2 (C), l3 (A); C 2/3 of them: flagged; D never chosen.
    """
    items = _by_id(quiz_items(_reports(HAND_CLASS), [QUIZ]))
    q1, q2, q3, q4 = items["q1"], items["q2"], items["q3"], items["q4"]
    assert (q1.answered, q1.right, q2.right, q3.right) == (6, 4, 3, 3)
    assert q1.facility == pytest.approx(4 / 6)
    assert q2.facility == q3.facility == 0.5
    assert q1.discrimination == pytest.approx(0.61237, abs=1e-5)
    assert q2.discrimination == pytest.approx(0.24254, abs=1e-5)
    assert q3.discrimination == pytest.approx(-0.18570, abs=1e-5)
    assert [(o.letter, o.chosen, o.top_chosen) for o in q1.options] == [
        ("A", 4, 4),
        ("B", 2, 1),
        ("C", 0, 0),
        ("D", 0, 0),
    ]
    assert q1.top == 5
    assert [o.flags for o in q1.options] == [[], [], [NEVER_CHOSEN], [NEVER_CHOSEN]]
    assert q2.top == 2 and [(o.chosen, o.top_chosen, o.flags) for o in q2.options] == [
        (0, 0, [NEVER_CHOSEN]),
        (3, 1, []),
        (3, 1, [STRONG_CHOSEN]),
    ]
    assert q3.top == 3 and [(o.chosen, o.top_chosen, o.flags) for o in q3.options] == [
        (3, 1, []),
        (1, 0, []),
        (2, 2, [STRONG_CHOSEN]),
        (0, 0, [NEVER_CHOSEN]),
    ]
    assert q3.share(q3.options[2]) == pytest.approx(1 / 3)
    # Everyone right on q4: facility 1, discrimination not defined, no options.
    assert (q4.facility, q4.discrimination, q4.options) == (1.0, None, [])


def test_quiz_items_leave_out_learners_without_answers_and_grader_failures() -> None:
    answers: dict[str, Any] = dict(HAND_CLASS, nofile=None, broken={"q1": "D", "q2": "A", "q3": "D", "q4": 0})
    items = _by_id(quiz_items(_reports(answers), [QUIZ], left_out=["broken"]))
    expected = _by_id(quiz_items(_reports(HAND_CLASS), [QUIZ]))
    assert items == expected


def test_quiz_items_count_only_those_who_answered_the_question() -> None:
    answers = dict(HAND_CLASS, l7={"q1": "A", "q2": "B", "q4": 1})
    items = _by_id(quiz_items(_reports(answers), [QUIZ]))
    assert (items["q3"].answered, items["q1"].answered) == (6, 7)


def test_quiz_items_multiple_choice_counts_every_option_picked() -> None:
    quiz = QuizExercise.model_validate(
        {
            "id": "m",
            "kind": "quiz",
            "title": "M",
            "questions": [
                {
                    "id": "m1",
                    "prompt": "?",
                    "type": "multiple",
                    "options": [_option("a", True), _option("b", True), _option("c")],
                }
            ],
        }
    )
    items = _by_id(quiz_items(_reports({"x": {"m1": ["A", "B"]}, "y": {"m1": "a, c"}, "z": {"m1": "Q"}}, quiz), [quiz]))
    m1 = items["m1"]
    assert (m1.answered, m1.right) == (3, 1)
    assert [o.chosen for o in m1.options] == [2, 1, 1]  # "Q" is not an option: answered, no option


def test_quiz_items_class_of_one() -> None:
    items = _by_id(quiz_items(_reports({"only": HAND_CLASS["l3"]}), [QUIZ]))
    assert items["q3"].facility == 1.0
    assert items["q3"].discrimination is None
    assert items["q3"].top == 0
    assert all(STRONG_CHOSEN not in o.flags for item in items.values() for o in item.options)


def test_quiz_items_everyone_right() -> None:
    right = {"q1": "A", "q2": "B", "q3": "A", "q4": 1}
    items = _by_id(quiz_items(_reports({f"l{i}": right for i in range(5)}), [QUIZ]))
    assert all(item.facility == 1.0 and item.discrimination is None for item in items.values())
    assert items["q1"].options[1].flags == [NEVER_CHOSEN]


def test_quiz_items_nobody_answered_says_so() -> None:
    reports = _reports({"a": None, "b": None})
    items = quiz_items(reports, [QUIZ])
    assert items is not None and all(item.answered == 0 and item.facility is None for item in items)
    assert not any(option.flags for item in items for option in item.options)
    stats = class_stats(reports, [("q", q.id) for q in QUIZ.questions], QUIZ.max_score)
    stats.quiz_items = items
    assert "no item statistics to report" in format_summary_markdown(stats, title="t")
    assert 'id="quiz-items-none"' in format_report_html(stats, title="t")
    rows = list(csv.DictReader(io.StringIO(format_items_csv(items))))
    assert rows[0]["facility"] == "" and rows[0]["discrimination"] == ""


def test_quiz_items_none_without_a_quiz() -> None:
    assert quiz_items({}, []) is None


def test_quiz_items_shown_in_summary_html_and_csv() -> None:
    reports = _reports(HAND_CLASS)
    stats = class_stats(reports, [("q", q.id) for q in QUIZ.questions], QUIZ.max_score)
    stats.quiz_items = quiz_items(reports, [QUIZ])
    markdown = format_summary_markdown(stats, title="t")
    assert "## Quiz questions" in markdown
    section = markdown.split("## Quiz questions", 1)[1]
    q3_line = next(line for line in section.splitlines() if line.startswith("| q | q3 |"))
    assert "| 6 | 50% | -0.19 |" in q3_line
    assert "C 33%, top third 67%; chosen by strong learners" in q3_line
    assert "D 0%, top third 0%; never chosen" in q3_line
    assert "top third: 3 learners<br>" in q3_line
    assert "Quiz options chosen by strong learners (quiz-items.csv): q/q2 C, q/q3 C" in format_summary_text(stats)
    assert 'id="quiz-items"' in format_report_html(stats, title="t")
    rows = list(csv.DictReader(io.StringIO(format_items_csv(stats.quiz_items or []))))
    q3c = next(r for r in rows if r["question"] == "q3" and r["option"] == "C")
    assert (q3c["facility"], q3c["discrimination"], q3c["share"], q3c["top_share"]) == (
        "0.5",
        "-0.1857",
        "0.3333",
        "0.6667",
    )
    assert q3c["flags"] == STRONG_CHOSEN
    assert next(r for r in rows if r["question"] == "q4")["option"] == ""


def test_quiz_items_csv_cells_never_start_a_formula() -> None:
    quiz = QuizExercise.model_validate(
        {
            "id": "f",
            "kind": "quiz",
            "title": "F",
            "questions": [
                {"id": "f1", "prompt": "?", "type": "single", "options": [_option("=1+1", True), _option("-x")]}
            ],
        }
    )
    text = format_items_csv(quiz_items(_reports({"a": {"f1": "A"}}), [quiz]) or [])
    texts = [row["option_text"] for row in csv.DictReader(io.StringIO(text))]
    assert texts == ["'=1+1", "'-x"]


def test_quiz_items_large_class_is_one_pass() -> None:
    """About 5,000 learners, each a copy of a hand-class learner: the shares are the hand class's."""
    names = list(HAND_CLASS)
    answers = {f"s{i:05d}": HAND_CLASS[names[i % 6]] for i in range(4998)}
    items = _by_id(quiz_items(_reports(answers), [QUIZ]))
    assert items["q3"].answered == 4998
    assert items["q3"].discrimination == pytest.approx(-0.18570, abs=1e-5)
    assert items["q3"].options[2].flags == [STRONG_CHOSEN]


@pytest.mark.slow
def test_batch_writes_quiz_items_csv(tmp_path) -> None:
    """Through ``run_batch``: three answers files, one learner with none; divide-by-sum-fails is right for two."""
    from batch_helpers import ASSIGNMENT, RIGHT_ANSWERS, WRONG_ANSWERS, make_exercises

    from grader.batch import run_batch

    exercises = make_exercises(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "a.yaml").write_text(RIGHT_ANSWERS)
    (folder / "b.yaml").write_text(RIGHT_ANSWERS)
    (folder / "c.yaml").write_text(WRONG_ANSWERS)
    (folder / "d").mkdir()
    run_batch(folder, assignment=ASSIGNMENT, out=tmp_path / "out", jobs=1, exercises_dir=exercises)
    with (tmp_path / "out" / "quiz-items.csv").open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    first = [row for row in rows if row["question"] == "divide-by-sum-fails"]
    assert [(row["option"], row["chosen"], row["correct"]) for row in first] == [
        ("A", "2", "yes"),
        ("B", "1", "no"),
        ("C", "0", "no"),
        ("D", "0", "no"),
    ]
    assert {row["answered"] for row in first} == {"3"} and first[0]["facility"] == "0.6667"
    assert "## Quiz questions" in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
