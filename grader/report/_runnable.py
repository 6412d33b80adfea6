"""Whether any check ran on the learner's work: Exercism and PrairieLearn tell "could not be run" from "failed".

Exercism's ``status: error`` and PrairieLearn's ``gradable: false`` mean the
submission could not be run at all (a syntax error, nothing that attempts the
exercise), as opposed to run and found wrong. On PrairieLearn it also means
the attempt is not counted, so it is kept to causes that stop every check at
once, never a wrong value.
"""

from __future__ import annotations

from grader.results import ExerciseResult, Report

__all__ = ["nothing_ran", "why_nothing_ran"]


def nothing_ran(report: Report) -> bool:
    """True when no check ran: nothing was graded, or each exercise is missing or was stopped by one cause."""
    return not report.exercises or all(_stopped_whole(exercise) for exercise in report.exercises)


def why_nothing_ran(report: Report) -> list[str]:
    """The sentences that say why: the notes about the submission, then each exercise's reason."""
    return [*report.problems, *(f"{exercise.id}: {exercise.reason}" for exercise in report.exercises)] or [
        "Nothing was graded."
    ]


def _stopped_whole(exercise: ExerciseResult) -> bool:
    """Not attempted, or every check stopped for the same reason before it could judge a value.

    That is how the engine reports a file that does not import or ran out of
    time while importing, and a quiz whose answers could not be read: one
    reason, copied to every check. Checks that ran and raised each say what
    input they were given, so their reasons differ.
    """
    if exercise.status == "missing":
        return True
    if exercise.status != "error" or not exercise.checks:
        return False
    return (
        all(check.status in ("error", "timeout") for check in exercise.checks)
        and len({check.reason for check in exercise.checks}) == 1
    )
