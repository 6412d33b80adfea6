"""Which passing checks earn their points: the credit rule of an exercise's guard.

An exercise may name one check as its guard (``gate:`` in the spec),
usually ``responds-to-input`` on hidden inputs (``grader.checks.guard``):
it holds for code that computes its result from its input, right or
wrong, and fails for constant, uniform or tabulated outputs. The rule:

- the guard holds, or did not run (``--public`` when it is hidden): every
  check that held earns its points, whatever else failed;
- the guard failed, or the entry raised on its inputs (ordinary ones, so
  code that raises there computes nothing the guard can see): the other
  checks of the same entry earn nothing, each marked ``skipped`` with a
  reason starting "Not credited:" that says why;
- the guard ran out of time: nothing is withheld, because slow code is not
  evidence of code that computes nothing (the time spent costs the checks
  that did not run).

So one real bug costs the checks it breaks, and code that computes
nothing earns nothing for the properties it holds by accident.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from grader.results import CheckResult, CheckStatus

if TYPE_CHECKING:
    from grader.spec.models import ImplementationExercise

__all__ = ["WITHHOLDING", "apply_credit"]

# The guard's statuses that withhold the other checks' points.
WITHHOLDING: frozenset[CheckStatus] = frozenset({"failed", "error"})


def apply_credit(exercise: ImplementationExercise, results: list[CheckResult]) -> None:
    """Withhold the points of the guarded entry's passing checks when the exercise's guard did not hold."""
    guard = next((r for r in results if r.id == exercise.gate), None)
    if guard is None or guard.status not in WITHHOLDING:
        return
    check = next(c for c in exercise.checks if c.id == guard.id)
    entry = exercise.entry_of(check)
    same_entry = {c.id for c in exercise.checks if exercise.entry_of(c) == entry}
    seen = "found" if guard.status == "failed" else "got"
    why = f"check {guard.id} {seen} {guard.got.rstrip('.')}" if guard.got else f"check {guard.id} did not pass"
    for result in results:
        if result.status == "passed" and result.id != guard.id and result.id in same_entry:
            result.status = "skipped"
            result.score = 0.0
            result.reason = (
                f"Not credited: this property held, but {why}, and properties that hold without computing "
                f"anything do not count. {result.reason}"
            )
