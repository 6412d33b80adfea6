"""The roster: one row per learner (score, how each exercise ended, where their feedback is) for ``report.html``.

The gradebook holds the same numbers for a spreadsheet; the roster is for
an instructor reading the class page, who wants to sort it and open one
learner's feedback from it. A learner the grader failed on has no score:
their row says so rather than show a 0 they did not earn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from grader.batch.status import exercise_status
from grader.results import Report

__all__ = ["GRADER_FAILED", "RosterRow", "class_roster"]

GRADER_FAILED = "grader error"


@dataclass(frozen=True)
class RosterRow:
    """One learner: name, total score (``None`` when the grader failed on them), one status per exercise, and the
    feedback file's path relative to the output folder."""

    learner: str
    score: float | None
    max_score: float
    statuses: tuple[str, ...]
    feedback: str


def class_roster(
    entries: Iterable[tuple[str, str, Report]],
    exercise_ids: Sequence[str],
    *,
    grader_errors: Iterable[str] = (),
) -> list[RosterRow]:
    """A row for each ``(learner, file stem, report)``, sorted by learner name, statuses in ``exercise_ids`` order.

    The stem names the learner's files in the output folder (``feedback/STEM.md``), as the batch wrote them.
    """
    failed = set(grader_errors)
    rows = []
    for name, stem, report in entries:
        by_id = {exercise.id: exercise for exercise in report.exercises}
        if name in failed:
            statuses = tuple(GRADER_FAILED for _ in exercise_ids)
        else:
            statuses = tuple(
                exercise_status(by_id[exercise_id]) if exercise_id in by_id else "missing"
                for exercise_id in exercise_ids
            )
        rows.append(
            RosterRow(
                learner=name,
                score=None if name in failed else report.score,
                max_score=report.max_score,
                statuses=statuses,
                feedback=f"feedback/{stem}.md",
            )
        )
    return sorted(rows, key=lambda row: row.learner)
