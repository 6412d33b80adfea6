"""What happened to one exercise of one learner, in one word, for the gradebook and the class summary.

The word is the exercise result's ``outcome`` (``grader.results.exercise_outcome`` gives the rules), the
same one the JSON result and the feedback show, so that a 0 in the gradebook says whether the file was
absent, did not parse, did not import, hung, or ran and raised, in the words the learner read.
"""

from __future__ import annotations

from grader.results import OUTCOMES, ExerciseResult, Outcome, exercise_outcome

__all__ = ["DID_NOT_RUN", "STATUSES", "ExerciseStatus", "exercise_status", "stopped_before_checks"]

ExerciseStatus = Outcome
STATUSES: tuple[ExerciseStatus, ...] = OUTCOMES
# Outcomes that can mean the learner's code never reached a verdict on any property (``stopped_before_checks``).
DID_NOT_RUN: tuple[ExerciseStatus, ...] = ("syntax-error", "import-error", "timeout")


def exercise_status(exercise: ExerciseResult) -> ExerciseStatus:
    """The class view's status of ``exercise``: its ``outcome``, one of ``STATUSES``."""
    return exercise.outcome or exercise_outcome(exercise)


def stopped_before_checks(exercise: ExerciseResult, status: str | None = None) -> bool:
    """Whether the learner's work for ``exercise`` stopped before any check reached a verdict: a file that did
    not parse, did not import or hung on import, or a quiz whose answers could not be read.

    A ``timeout`` after some checks passed or failed reached a verdict: it is not counted here.
    """
    status = status or exercise_status(exercise)
    if status == "error" and exercise.kind == "quiz":
        return True
    return status in DID_NOT_RUN and not any(check.status in ("passed", "failed") for check in exercise.checks)
