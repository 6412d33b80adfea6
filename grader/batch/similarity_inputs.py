"""What the similarity page compares, read from a graded class: each learner's code and wrong outputs.

Kept apart from ``similarity.py`` so that where a wrong output is read from
(a result's fields) can change in one function, ``wrong_outputs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.results import Report

__all__ = ["WrongOutput", "learner_code", "wrong_outputs"]


@dataclass(frozen=True, order=True)
class WrongOutput:
    """A wrong value a learner's code gave: the check, the input it failed on, and what came back."""

    exercise: str
    check: str
    input: str
    got: str


def wrong_outputs(report: Report) -> frozenset[WrongOutput]:
    """Every wrong value the result records at a hidden input: the one place results are read for this signal.

    A failed check that is not public, with its failing input and what came
    back: from the check's ``failing`` record where the batch keeps one for
    the instructor (hidden checks whose reason shows no input included), else
    from the input and value its reason shows. Public examples are left out:
    a learner can see them, so a shared wrong answer there says little.
    """
    found = set()
    for exercise in report.exercises:
        for check in exercise.checks:
            if check.status != "failed" or check.visibility == "public":
                continue
            kept = getattr(check, "failing", None)  # results that predate the record have none
            shown, got = (kept.input, kept.got) if kept is not None else (check.input, check.got)
            if shown and got:
                found.add(WrongOutput(exercise.id, check.id, shown, got))
    return frozenset(found)


def learner_code(path: Path) -> dict[str, str]:
    """The learner's Python (files and notebooks' code cells, as the grader reads them); empty when there is none."""
    from grader.errors import GraderError
    from grader.submission.files import read_submission

    try:
        submission = read_submission(path)
    except (GraderError, OSError, ValueError):
        return {}
    return {name: data.decode("utf-8", errors="replace") for name, data in submission.python.items()}
