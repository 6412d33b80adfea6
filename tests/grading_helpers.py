"""Grading one catalog solution on one exercise, and the failures of a result in one line, for catalog tests."""

from __future__ import annotations

from pathlib import Path

from grader.grading import GradingSession
from grader.results import ExerciseResult


def grade_one(grading: GradingSession, path: Path, exercise_id: str) -> ExerciseResult:
    """The result of ``path`` on the exercise ``exercise_id`` alone."""
    report = grading.grade(path, exercise_ids=[exercise_id])
    (result,) = report.exercises
    return result


def failures(result: ExerciseResult) -> str:
    """Each check that did not pass, with its reason: an assertion's message."""
    return "; ".join(f"{c.id}: {c.reason}" for c in result.checks if c.status != "passed")
