"""Which passing checks earn their points: the credit rule of an exercise's guard.

An exercise may name one check as its guard (``gate:`` in the spec),
usually ``responds-to-input`` on hidden inputs (``grader.checks.guard``):
it holds for code whose output follows its input, right or wrong, and
fails for constant, uniform, rank-based, tabulated or noisy outputs. The
guard fails closed:

- the guard holds, or did not run at all (``--public`` when it is hidden):
  every check that held earns its points, whatever else failed;
- the guard found an output that does not follow its input: the other
  checks of the same entry earn nothing, each marked ``skipped`` with a
  reason starting "Not credited:" that says why;
- the guard found only wrong values, and saw the output follow the input
  on the rest of what it judged (its finding says so: ``FOLLOWS_INPUT``):
  the checks that held keep their points, as after any other real bug;
- the guard could not judge (the entry raised, ran out of time or memory
  on its inputs): what it could not judge unlocks nothing. Where it judged
  some of its drawn inputs and the output followed the input on every one
  of them, the checks that held keep their points (each check judged its
  own inputs, which the entry answered), and the guard's reason says on
  which inputs it could judge; where it judged none, nothing is credited.

So one real bug costs the checks it breaks, and code that computes
nothing earns nothing for the properties it holds by accident, however
it behaves on the guard's inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from msgspec import Struct

from grader.checks.base import FOLLOWS_INPUT
from grader.results import CheckResult, CheckStatus

if TYPE_CHECKING:
    from grader.checks.cases import Case
    from grader.engine.findings import CheckRun
    from grader.spec.models import ImplementationExercise

__all__ = ["WITHHOLDING", "GuardCases", "apply_credit", "guard_cases"]

# The guard's statuses that withhold the other checks' points unless it judged some drawn inputs (``GuardCases``).
WITHHOLDING: frozenset[CheckStatus] = frozenset({"failed", "error", "timeout"})


class GuardCases(Struct, frozen=True):
    """What the guard saw case by case: drawn inputs it judged and found following, and those it could not judge.

    ``refused``: some case showed an output that does not follow its input
    (the guard's own finding, not a crash or a timeout). ``values_only``:
    every case it failed found a wrong value while the output followed the
    input (``FOLLOWS_INPUT``), so nothing refused.
    """

    held: tuple[str, ...]
    unjudged: tuple[str, ...]
    refused: bool
    values_only: bool = False


def guard_cases(runs: Sequence[CheckRun], gate: str | None) -> GuardCases | None:
    """The guard's ``GuardCases`` from its run among ``runs`` (``None``: it did not run, or held outright)."""
    run = next((r for r in runs if r.check.id == gate), None)
    if run is None or run.held:
        return None
    held: list[str] = []
    unjudged: list[str] = []
    refused = values = False
    for index, case in enumerate(run.cases):
        if index not in run.findings:
            unjudged.append(_inputs(case))
            continue
        finding = run.findings[index]
        if finding is None:
            if case.origin == "random":
                held.append(_inputs(case))
        elif finding.status in ("error", "timeout"):
            unjudged.append(_inputs(case))
        elif finding.extra.get(FOLLOWS_INPUT):
            values = True
        else:
            refused = True
    return GuardCases(tuple(held), tuple(unjudged), refused, values and not refused and not unjudged)


def apply_credit(exercise: ImplementationExercise, results: list[CheckResult], seen: GuardCases | None = None) -> None:
    """Withhold the points of the guarded entry's passing checks when the exercise's guard did not hold.

    ``seen``: the guard's cases (``guard_cases``); without it, a guard that
    did not hold is taken to have judged nothing.
    """
    guard = next((r for r in results if r.id == exercise.gate), None)
    if guard is None or guard.status not in WITHHOLDING:
        return
    if guard.status == "failed" and seen is not None and seen.values_only:
        guard.reason = (
            f"{guard.reason.rstrip()} What it found is a wrong value, and on the rest of its calls the output "
            "follows the input, so the checks that held keep their points."
        )
        return
    if guard.status != "failed" and seen is not None and seen.held and not seen.refused:
        guard.reason = (
            f"{guard.reason.rstrip()} It could judge {_count(seen.held)} of its "
            f"{_count(seen.held + seen.unjudged)} inputs ({_listed(seen.held)}), and the output follows the "
            f"input on each, so the checks that held keep their points; on the others "
            f"({_listed(seen.unjudged)}) it could not judge it."
        )
        return
    check = next(c for c in exercise.checks if c.id == guard.id)
    entry = exercise.entry_of(check)
    same_entry = {c.id for c in exercise.checks if exercise.entry_of(c) == entry}
    got = guard.got.rstrip(".") if guard.got else ""
    if guard.status == "failed":
        why = f"check {guard.id} found {got}" if got else f"check {guard.id} did not pass"
    else:
        why = f"check {guard.id} could not judge any of its inputs" + (f" ({got})" if got else "")
    for result in results:
        if result.status == "passed" and result.id != guard.id and result.id in same_entry:
            result.status = "skipped"
            result.score = 0.0
            result.reason = (
                f"Not credited: this property held, but {why}, and a property counts only once the output "
                f"is seen to follow the input. {result.reason}"
            )


def _inputs(case: Case) -> str:
    """A drawn input by the shapes of its arrays (``z of shape (4,)``), or by its label."""
    shapes = [
        f"{name} of shape {tuple(int(n) for n in value.shape)}"
        for name, value in case.args.items()
        if isinstance(value, np.ndarray) and value.ndim > 0
    ]
    return ", ".join(shapes) if shapes else (case.label or "a scalar input")


def _listed(items: tuple[str, ...]) -> str:
    unique = list(dict.fromkeys(items))
    return "; ".join(unique)


def _count(items: tuple[str, ...]) -> str:
    return str(len(items))
