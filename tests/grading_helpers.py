"""Grading one catalog solution on one exercise, and the failures of a result in one line, for catalog tests."""

from __future__ import annotations

from pathlib import Path

from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.memory import GradingMemo
from grader.grading import GradingSession
from grader.results import CheckResult, ExerciseResult
from grader.spec.loader import load_catalog
from tests.fakes import InProcessFactory


def grade_one(grading: GradingSession, path: Path, exercise_id: str) -> ExerciseResult:
    """The result of ``path`` on the exercise ``exercise_id`` alone."""
    report = grading.grade(path, exercise_ids=[exercise_id])
    (result,) = report.exercises
    return result


def failures(result: ExerciseResult) -> str:
    """Each check that did not pass, with its reason: an assertion's message."""
    return "; ".join(f"{c.id}: {c.reason}" for c in result.checks if c.status != "passed")


def grade_in_process(root: Path, exercise_id: str, source: str) -> dict[str, CheckResult]:
    """Each check's result of ``source`` on an exercise of the catalog under ``root`` (its ``exercises/`` and
    solutions), answered in this process by the fake factory: for fixture exercises outside the catalog."""
    exercise = load_catalog(root / "exercises").exercise(exercise_id)
    result = grade_implementation(
        exercise,  # type: ignore[arg-type]
        SourceModule({"mine.py": source.encode()}, "mine.py"),
        InProcessFactory(),
        root=root,
        memo=GradingMemo(),
    )
    return {check.id: check for check in result.checks}
