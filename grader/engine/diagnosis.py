"""Diagnosis: which known mistake a failing submission made, by comparing it with known-wrong solutions.

A known-wrong solution answers every learner call of the exercise's plan once
per session (and once on disk between runs: ``engine.instructor_runs``), so
later learners, whatever input they fail on, are diagnosed by comparing
outputs, without starting a process. Agreeing on the inputs a check failed
on can be a coincidence, so the learner must also agree on the plan's
separating calls (``engine.separation``), chosen once a session (and kept on
disk) from the reference's and every known-wrong solution's answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from grader.checks.base import Check, Finding
from grader.checks.cases import Case
from grader.engine.disk_cache import stored_separation
from grader.engine.failure_modes import Failure, fitting_hint
from grader.engine.findings import CheckRun, judge_case
from grader.engine.instructor_runs import fill_answer_calls, given_source, solution_answers
from grader.engine.plan import Plan
from grader.engine.reasons import failure_reason
from grader.engine.separation import Separation, find_separation, shape_parts
from grader.results import CheckResult
from grader.sandbox.outcomes import CallOutcome

if TYPE_CHECKING:
    from grader.engine.memory import GradingMemo
    from grader.sandbox.contracts import ProcessFactory
    from grader.spec.models import ExpectedException, ImplementationExercise, KnownWrong

__all__ = ["agrees_with", "apply_diagnosis", "diagnose", "separation"]

_FINAL = ("ok", "raised", "bad_value")


def diagnose(
    exercise: ImplementationExercise,
    runs: list[CheckRun],
    factory: ProcessFactory,
    root: Path,
    memo: GradingMemo,
    plan: Plan,
    references: dict[int, CallOutcome] | None = None,
) -> dict[str, str]:
    """For each failed check, the misconception of the known mistake the learner's answers are shown to make.

    A known-wrong solution explains a failed check only when (a) its answers
    agree with the learner's, within the check's own tolerance, on every case
    that either of them fails, (b) on at least one of those the solution
    itself fails, and the check is one it is known to fail (``must_fail``),
    and (c) they agree as well on the separating calls of the check's
    entries (``separation``), where a coincidence on (a) shows.
    A solution is ruled out when the learner passed a check it is known to
    fail. When several explain a check, the one explaining most of the
    learner's failed checks is named; two that explain them equally well
    are told apart by nothing the learner did, so neither is named.

    ``references``: the reference solution's answers to the plan's reference
    calls, which a known-wrong solution's cases are judged with.
    """
    references = references or {}
    failed = [run for run in runs if run.failing]
    if not failed or not exercise.known_wrong:
        return {}
    failed_ids = {run.check.id for run in failed}
    passed_ids = {run.check.id for run in runs if run.held}
    explained: list[tuple[KnownWrong, set[str]]] = []
    separating: Separation | None = None
    for wrong in exercise.known_wrong:
        if not failed_ids.intersection(wrong.must_fail) or passed_ids.intersection(wrong.must_fail):
            continue  # it explains none of these failures, or the learner does not make this mistake
        table = _known_wrong_table(exercise, root / wrong.path, factory, memo, plan, references, root)
        separating = separating or separation(exercise, plan, factory, memo, root)
        answers = _by_case(table)
        agreeing = {
            run.check.id
            for run in failed
            if _agrees(run, answers, wrong) and _agrees_where_mistakes_differ(run, plan, table, wrong, separating)
        }
        if agreeing.intersection(wrong.must_fail):
            explained.append((wrong, agreeing))
    found: dict[str, str] = {}
    for run in failed:
        fitting = [(len(agreeing), wrong) for wrong, agreeing in explained if run.check.id in agreeing]
        fitting = [(count, wrong) for count, wrong in fitting if run.check.id in wrong.must_fail]
        if not fitting:
            continue
        most = max(count for count, _ in fitting)
        named = {wrong.misconception for count, wrong in fitting if count == most}
        if len(named) == 1:
            found[run.check.id] = named.pop()
    return found


def _agrees(run: CheckRun, answers: Callable[[CheckRun, int], list[CallOutcome]], wrong: KnownWrong) -> bool:
    """Whether a known-wrong solution's answers match the learner's on every case of ``run`` either fails.

    The learner's failing cases are compared first (most solutions differ on
    the first); on the cases the learner passes, the solution must pass too,
    which is judged once per session for every learner.
    """
    shown_failing = False
    for index in run.failing:
        mine, theirs = run.answered(index), answers(run, index)
        if mine is None or not _same_case(run, index, mine, theirs, wrong):
            return False
        shown_failing = shown_failing or _known_wrong_fails(run, index, theirs, wrong)
    if not shown_failing:
        return False
    failing = set(run.failing)
    for index in range(len(run.cases)):
        if index in failing or run.answered(index) is None:
            continue  # compared above, or never answered (the time budget ran out): nothing to compare
        if _known_wrong_fails(run, index, answers(run, index), wrong):
            return False  # it fails where the learner does not
    return True


def _agrees_where_mistakes_differ(
    run: CheckRun, plan: Plan, table: dict[int, CallOutcome], wrong: KnownWrong, separating: Separation
) -> bool:
    """Whether the learner answered the separating calls of the check's entries as the known-wrong solution did.

    Each is compared within its own tolerance or the check's, the looser
    (the check judges values that close alike, wherever they are asked),
    and must raise the same kinds of floating-point error.

    A call the solution itself did not answer in full tells nothing; one the
    learner left unanswered (the time budget ran out) shows nothing either,
    so the mistake is not named.
    """
    entries = {call.function for calls in run.planned.calls for call in calls if call.on == "learner"}
    for key in separating.of(entries):
        theirs, mine = table.get(key), run.answers.get(key)
        if theirs is None or theirs.status not in _FINAL:
            continue
        if mine is None:
            return False
        if mine.digest is not None and mine.digest == theirs.digest:
            continue
        arrays = [*mine.values, *theirs.values, *_arrays(plan.table.calls[key].args)]
        (call_rtol, call_atol), (own_rtol, own_atol) = separating.tolerance[key], _stated(run.check)
        tolerance = _widened((max(call_rtol, own_rtol), max(call_atol, own_atol)), arrays)
        if _float_kinds(mine) != _float_kinds(theirs):
            return False
        if not _same(mine, theirs, tolerance, wrong.raises, messages=False):
            return False
    return True


def _float_kinds(outcome: CallOutcome) -> set[str]:
    """The kinds of floating-point error a call raised (overflow, invalid, divide)."""
    return {str(event.get("kind")) for event in outcome.float_errors}


def separation(
    exercise: ImplementationExercise, plan: Plan, factory: ProcessFactory, memo: GradingMemo, root: Path
) -> Separation:
    """The plan's separating calls: chosen from every instructor solution's answers once a session, kept on disk.

    The reference and each known-wrong solution answer the plan's learner
    calls (``instructor_runs.solution_answers``, itself once a session and on
    disk). A call's tolerance is the tightest any check planning it states;
    two answers differ when further apart than twice it (so a learner within
    it of one solution is not within it of the other), or when they raise
    floating-point errors of other kinds.
    """
    key = (exercise.id, plan.check_ids())
    kept = memo.separations.get(key)
    if kept is not None and kept[0] is plan:
        return kept[1]
    paths = {wrong.id: root / wrong.path for wrong in exercise.known_wrong}
    if exercise.reference_solution is not None:
        paths["reference"] = root / exercise.reference_solution
    given = given_source(exercise, root)
    source = b"\0".join(
        [label.encode() + b"\0" + path.read_bytes() for label, path in sorted(paths.items())] + [given.encode()]
    )

    def choose() -> Separation:
        keys, calls = plan.whole()
        answers = {
            label: dict(zip(keys, solution_answers(exercise, path, plan, calls, factory, memo, given), strict=True))
            for label, path in sorted(paths.items())
        }
        candidates: dict[str, list[int]] = {}
        for number in keys:
            candidates.setdefault(plan.table.calls[number].function, []).append(number)
        tolerance = _tightest(plan)

        def differ(number: int, a: CallOutcome, b: CallOutcome) -> bool:
            rtol, atol = _widened(tolerance[number], [*a.values, *b.values, *_arrays(plan.table.calls[number].args)])
            return not _same(a, b, (2 * rtol, 2 * atol), None, messages=False) or _float_kinds(a) != _float_kinds(b)

        return find_separation(
            candidates, answers, tolerance, differ, lambda number: shape_parts(plan.table.calls[number].args)
        )

    found = stored_separation(exercise, plan.check_ids(), source, choose)
    memo.separations[key] = (plan, found)
    return found


def _tightest(plan: Plan) -> dict[int, tuple[float, float]]:
    """Each call's tolerance: the smallest rtol and atol the checks planning it state (tight when none does).

    The tightest check is the one that tells its answers apart; a check
    stating a wide atol for its own purpose (a range, a sum) must not blur them.
    """
    tightest: dict[int, tuple[float, float]] = {}
    for planned in plan.checks:
        rtol, atol = _stated(planned.check)
        for keys in planned.keys:
            for key in keys:
                before = tightest.get(key, (rtol, atol))
                tightest[key] = (min(before[0], rtol), min(before[1], atol))
    return tightest


def _known_wrong_fails(run: CheckRun, index: int, theirs: list[CallOutcome], wrong: KnownWrong) -> bool:
    """Whether the known-wrong solution fails case ``index`` of the check (judged once per session)."""
    key = (wrong.path, index)
    memory = run.memo.known_wrong_fails if run.memo is not None else {}
    if key not in memory:
        memory[key] = judge_case(run.check, run.entry, run.cases[index], theirs) is not None
    return memory[key]


def _same_case(
    run: CheckRun, index: int, mine: list[CallOutcome], theirs: list[CallOutcome], wrong: KnownWrong
) -> bool:
    """Whether the learner's calls of a case answered as the known-wrong solution's did (the reference's are shared)."""
    calls = run.planned.calls[index]
    if len(mine) != len(theirs) or len(mine) != len(calls):
        return False
    case = run.cases[index]
    return all(
        (a.digest is not None and a.digest == b.digest)  # the very same bytes returned, inputs left alike
        or _same(a, b, _tolerance(run.check, case, a, b), wrong.raises)
        for call, a, b in zip(calls, mine, theirs, strict=True)
        if call.on == "learner"
    )


# For a check that states no tolerance: values agree when they differ by rounding only.
_TIGHT = (1e-9, 1e-12)


def _tolerance(check: Check, case: Case, a: CallOutcome, b: CallOutcome) -> tuple[float, float]:
    """The check's own (rtol, atol), widened for float32 as the properties widen it; tight when it states none."""
    return _widened(_stated(check), [*a.values, *b.values, *_arrays(case.args)])


def _stated(check: Check) -> tuple[float, float]:
    """The (rtol, atol) a check states; tight when it states neither."""
    stated = [getattr(check, name, None) for name in ("rtol", "atol")]
    numbers = [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in stated]
    return _TIGHT if numbers == [None, None] else (numbers[0] or 0.0, numbers[1] or 0.0)


def _widened(tolerance: tuple[float, float], arrays: list[np.ndarray]) -> tuple[float, float]:
    """``tolerance`` widened for float32 values, as the properties widen theirs."""
    rtol, atol = tolerance
    if any(v.dtype == np.float32 for v in arrays):
        return max(rtol, 1e-5), max(atol, 1e-6)
    return rtol, atol


def _arrays(args: Mapping[str, object]) -> list[np.ndarray]:
    """The array arguments of a call."""
    return [v for v in args.values() if isinstance(v, np.ndarray)]


def _known_wrong_table(
    exercise: ImplementationExercise,
    path: Path,
    factory: ProcessFactory,
    memo: GradingMemo,
    plan: Plan,
    references: dict[int, CallOutcome],
    root: Path,
) -> dict[int, CallOutcome]:
    """One known-wrong solution's outcomes of the plan's calls, by call number.

    It answers the plan's learner calls (``instructor_runs.solution_answers``:
    once per session and on disk); the reference calls take the reference's
    answers, as a learner's do.
    """
    keys, calls = plan.whole()  # every learner call, encoded once for the learners
    answers = solution_answers(exercise, path, plan, calls, factory, memo, given_source(exercise, root))
    table = {**references, **dict(zip(keys, answers, strict=True))}
    fill_answer_calls(exercise, plan, table, factory, memo, root)
    return table


def _by_case(table: dict[int, CallOutcome]) -> Callable[[CheckRun, int], list[CallOutcome]]:
    """A function ``(run, case index) -> outcomes`` of a solution's table on that case's calls."""
    return lambda run, index: [table[key] for key in run.keys[index] if key in table]


def _same(
    a: CallOutcome,
    b: CallOutcome,
    tolerance: tuple[float, float],
    raises: ExpectedException | None,
    *,
    messages: bool = True,
) -> bool:
    """Whether the learner's outcome ``a`` is the known-wrong solution's ``b``: same values within ``tolerance``,
    or the same exception (type and message; or type and the spec's message pattern, ``raises``; or, with
    ``messages=False``, type alone: a message spells the arguments its own way, a separating call asks for values)."""
    if a.status != b.status:
        return False
    if a.status == "raised":
        mine, theirs = a.error or {}, b.error or {}
        if not messages and raises is None:
            return bool(mine and theirs) and mine.get("type") == theirs.get("type")
        if raises is not None:
            return (
                mine.get("type") == theirs.get("type") == raises.type
                and re.search(raises.message, str(mine.get("message", ""))) is not None
            )
        same = (mine.get("type"), mine.get("message")) == (theirs.get("type"), theirs.get("message"))
        return bool(mine and theirs and same)
    if a.status != "ok" or a.kind != b.kind or len(a.values) != len(b.values) or a.types != b.types:
        return False
    if a.inputs_after and b.inputs_after:  # what was done to the inputs must match exactly, when both report it
        if len(a.inputs_after) != len(b.inputs_after) or not all(
            x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind == "f" and y.dtype.kind == "f")
            for x, y in zip(a.inputs_after, b.inputs_after, strict=True)
        ):
            return False
    rtol, atol = tolerance
    for x, y in zip(a.values, b.values, strict=True):
        if x.shape != y.shape or x.dtype.kind != y.dtype.kind:
            return False
        if x.dtype.kind in "biuf" and y.dtype.kind in "biuf":
            with np.errstate(all="ignore"):
                if not np.allclose(x.astype(float), y.astype(float), rtol=rtol, atol=atol, equal_nan=True):
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
    failure = run.failure or Failure("wrong-value")
    result.reason = failure_reason(
        result.property or run.check.describe(run.entry),
        result.input,
        finding,
        diagnosis=misconception,
        hint=fitting_hint(run.check, failure),
        more=result.more_failures,
        reveal=True,
        cause=failure.cause,
    )


def agrees_with(
    exercise: ImplementationExercise,
    wrong: KnownWrong,
    run: CheckRun,
    factory: ProcessFactory,
    root: Path,
    memo: GradingMemo,
    plan: Plan,
    references: dict[int, CallOutcome],
) -> bool:
    """Whether ``run``'s answers agree with known-wrong ``wrong``'s as a diagnosis asks ((a) to (c) of
    ``diagnose``) on this one check: the premise of a hint written for that mistake (``engine.premises``),
    whatever the other checks show."""
    table = _known_wrong_table(exercise, root / wrong.path, factory, memo, plan, references, root)
    if not _agrees(run, _by_case(table), wrong):
        return False
    return _agrees_where_mistakes_differ(run, plan, table, wrong, separation(exercise, plan, factory, memo, root))
