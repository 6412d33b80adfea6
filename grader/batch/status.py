"""What happened to one exercise of one learner, in one word, for the gradebook and the class summary.

An exercise result says ``passed``, ``failed``, ``error`` or ``missing``.
The class view splits ``error`` by what stopped the learner's code, so that
a 0 in the gradebook says whether the file was absent, did not parse, did
not import, hung, or ran and raised:

- ``passed``, ``failed``, ``missing``: the result's own status.
- When the result says ``error`` and none of the exercise's checks ran (no
  check passed or failed, and none carries an input or a value it got), the
  file never got as far as the checks:

  - ``timeout``: its checks timed out (the import did not finish in time);
  - ``syntax-error``: the reason names ``SyntaxError``, ``IndentationError``
    or ``TabError``;
  - ``import-error``: anything else that stopped the import (an exception,
    ``SystemExit``, a refused module, a crash).
- When the result says ``error`` and the checks ran: ``timeout`` when every
  check that did not pass (held back ones aside) ran out of time, else
  ``error`` (it raised, crashed or returned something unreadable).
- A quiz's ``error`` (an answers file that could not be read) stays ``error``.

The exercise result has no field naming the kind of failure, so it is
derived from the check statuses and fields, and from the exercise's reason
for the syntax error alone.
"""

from __future__ import annotations

import re
from typing import Literal

from grader.results import ExerciseResult

__all__ = ["DID_NOT_RUN", "STATUSES", "ExerciseStatus", "exercise_status"]

ExerciseStatus = Literal["passed", "failed", "missing", "syntax-error", "import-error", "timeout", "error"]
STATUSES: tuple[ExerciseStatus, ...] = (
    "passed",
    "failed",
    "missing",
    "syntax-error",
    "import-error",
    "timeout",
    "error",
)
# The learner's code for the exercise never reached a verdict on any property: one failure for the whole exercise.
DID_NOT_RUN: tuple[ExerciseStatus, ...] = ("syntax-error", "import-error", "timeout")

_SYNTAX = re.compile(r"\b(?:SyntaxError|IndentationError|TabError)\b")


def exercise_status(exercise: ExerciseResult) -> ExerciseStatus:
    """The class view's status of ``exercise``: one of ``STATUSES`` (the rules are in the module docstring)."""
    if exercise.status != "error":
        return exercise.status
    if exercise.kind == "quiz":
        return "error"
    checks = exercise.checks
    if checks and not any(c.status in ("passed", "failed") or c.input is not None or c.got is not None for c in checks):
        if any(c.status == "timeout" for c in checks):
            return "timeout"
        return "syntax-error" if _SYNTAX.search(exercise.reason) else "import-error"
    judged = [c for c in checks if c.status not in ("passed", "skipped")]
    if judged and all(c.status == "timeout" for c in judged):
        return "timeout"
    return "error"
