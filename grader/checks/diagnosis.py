"""Diagnosis: which known mistake a failing submission made, by comparing it with known-wrong solutions.

A known-wrong solution answers every learner call of the exercise's plan once
per session (and once on disk between runs: ``checks.instructor_runs``), so
later learners, whatever input they fail on, are diagnosed by comparing
outputs, without starting a process.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from grader.checks.base import Finding
from grader.checks.findings import CheckRun, judge_case
from grader.checks.instructor_runs import fill_answer_calls, given_source, solution_answers
from grader.checks.plan import Plan
from grader.reasons import failure_reason
from grader.results import CheckResult
from grader.sandbox.outcomes import CallOutcome

if TYPE_CHECKING:
    from grader.checks.engine import ProcessFactory
    from grader.checks.memory import GradingMemo
    from grader.spec.models import ImplementationExercise

__all__ = ["apply_diagnosis", "diagnose"]


def diagnose(
    exercise: ImplementationExercise,
    runs: list[CheckRun],
    factory: ProcessFactory,
    root: Path,
    memo: GradingMemo,
    plan: Plan,
    references: dict[int, CallOutcome] | None = None,
) -> dict[str, str]:
    """For each failed check, the misconception of the first known-wrong solution whose output matches.

    ``references``: the reference solution's answers to the plan's reference
    calls, which a known-wrong solution's cases are judged with.
    """
    references = references or {}
    wanted = [(run, run.failing[0]) for run in runs if run.failing]
    if not wanted or not exercise.known_wrong:
        return {}
    found: dict[str, str] = {}
    failing = {run.check.id for run, _ in wanted}
    for wrong in exercise.known_wrong:
        if not failing.intersection(wrong.must_fail):
            continue  # a known-wrong solution only explains failures of the checks it is known to fail
        answers = _known_wrong_answers(exercise, root / wrong.path, factory, memo, plan, references, root)
        for run, (index, _, mine) in wanted:
            theirs = answers(run, index)
            if (
                run.check.id not in found
                and run.check.id in wrong.must_fail
                and len(theirs) == len(mine)
                and all(map(_same, mine, theirs))
                and judge_case(run.check, run.entry, run.cases[index], theirs) is not None
            ):
                found[run.check.id] = wrong.misconception
    return found


def _known_wrong_answers(
    exercise: ImplementationExercise,
    path: Path,
    factory: ProcessFactory,
    memo: GradingMemo,
    plan: Plan,
    references: dict[int, CallOutcome],
    root: Path,
) -> Callable[[CheckRun, int], list[CallOutcome]]:
    """A function ``(run, case index) -> outcomes`` of one known-wrong solution on that case's calls.

    It answers the plan's learner calls (``instructor_runs.solution_answers``:
    once per session and on disk); the reference calls take the reference's
    answers, as a learner's do.
    """
    keys, calls = plan.whole()  # every learner call, encoded once for the learners
    answers = solution_answers(exercise, path, plan, calls, factory, memo, given_source(exercise, root))
    table = {**references, **dict(zip(keys, answers, strict=True))}
    fill_answer_calls(exercise, plan, table, factory, memo, root)
    return lambda run, index: [table[key] for key in run.keys[index] if key in table]


def _same(a: CallOutcome, b: CallOutcome) -> bool:
    if a.status != b.status:
        return False
    if a.status == "raised":
        return bool(a.error and b.error and a.error.get("type") == b.error.get("type"))
    if a.status != "ok" or a.kind != b.kind or len(a.values) != len(b.values) or a.types != b.types:
        return False
    if a.inputs_after and b.inputs_after:  # what was done to the inputs must match exactly, when both report it
        if len(a.inputs_after) != len(b.inputs_after) or not all(
            x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind == "f" and y.dtype.kind == "f")
            for x, y in zip(a.inputs_after, b.inputs_after, strict=True)
        ):
            return False
    for x, y in zip(a.values, b.values, strict=True):
        if x.shape != y.shape or x.dtype.kind != y.dtype.kind:
            return False
        if x.dtype.kind in "biuf" and y.dtype.kind in "biuf":
            if not np.allclose(x.astype(float), y.astype(float), rtol=1e-6, atol=1e-9, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def apply_diagnosis(result: CheckResult, run: CheckRun, misconception: str) -> None:
    """Name the misconception in a failed check's result (only where its input and values are shown)."""
    if result.status not in ("failed", "error") or not (result.visibility == "public" or run.check.reveal == "full"):
        return
    result.diagnosis = misconception
    finding = run.finding or Finding(got=result.got or "", expected=result.expected or "")
    result.reason = failure_reason(
        result.property or run.check.describe(run.entry),
        result.input,
        finding,
        diagnosis=misconception,
        hint=run.check.hint,
        more=result.more_failures,
        reveal=True,
    )
