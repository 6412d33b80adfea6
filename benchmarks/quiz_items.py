"""Time of the quiz item statistics over a large synthetic class.

Run from the repository root:  python benchmarks/quiz_items.py [--learners 5000]

Grades ``why-softmax-quiz`` for generated learners (random answers, drawn with a fixed seed), then
times ``quiz_items``, ``format_items_csv`` and the summary's markdown over them. Nothing is
asserted: the figures are printed for a person to compare.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from grader.batch.items import format_items_csv, quiz_items
from grader.batch.summary import class_stats, format_summary_markdown
from grader.engine.quiz import grade_quiz
from grader.results import Report
from grader.spec.loader import load_catalog
from grader.spec.models import QuizExercise

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=5000)
    args = parser.parse_args()
    quiz = load_catalog(ROOT / "exercises").exercises["why-softmax-quiz"]
    assert isinstance(quiz, QuizExercise)
    draw = random.Random(0)
    reports = {}
    for index in range(args.learners):
        answers = {}
        for question in quiz.questions:
            if question.type == "single":
                answers[question.id] = draw.choice("ABCD")
            elif question.type == "multiple":
                answers[question.id] = draw.sample("ABCDE", draw.randint(1, 3))
        exercise = grade_quiz(quiz, answers)
        name = f"learner{index:05d}"
        reports[name] = Report(
            grader_version="b",
            submission=name,
            score=exercise.score,
            max_score=exercise.max_score,
            exercises=[exercise],
        )
    started = time.perf_counter()
    items = quiz_items(reports, [quiz])
    computed = time.perf_counter()
    format_items_csv(items or [])
    written = time.perf_counter()
    stats = class_stats(reports, [(quiz.id, q.id) for q in quiz.questions], quiz.max_score)
    stats.quiz_items = items
    summary_started = time.perf_counter()
    format_summary_markdown(stats, title="benchmark")
    done = time.perf_counter()
    print(
        f"{args.learners} learners: quiz_items {computed - started:.3f} s, quiz-items.csv {written - computed:.3f} s, "
        f"summary.md {done - summary_started:.3f} s"
    )


if __name__ == "__main__":
    main()
