"""The call loop: run one implementation exercise against one submission, check by check.

Every call of the exercise's plan (``engine.plan``) goes to the learner
process with the import, in one round trip; cases are ordered simplest
first, so the first failing case found is the smallest. A learner process
that dies is replaced for the calls still needed; one that times out twice
has the rest of its checks marked without running them, so an endless loop
costs seconds, not minutes. Each check's result is made from its answered
cases in ``engine.check_results`` (each case judged in ``engine.findings``);
a failure is matched with a known mistake in ``engine.diagnosis``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from grader.checks.base import Check
from grader.engine.check_results import check_result, judge_run
from grader.engine.credit import GuardCases, apply_credit, guard_cases
from grader.engine.disk_cache import keep_held
from grader.engine.findings import STOPPED, STOPPED_AS, CheckRun
from grader.engine.instructor_runs import fill_answer_calls, given_source, reference_failure, reference_outcomes
from grader.engine.memory import GradingMemo
from grader.engine.plan import Plan, checks_to_run
from grader.engine.premises import KnownMistakes
from grader.engine.printed import CallOutput
from grader.engine.reasons import describe_start_failure
from grader.results import CheckResult, CheckStatus, ExerciseResult, ExerciseStatus
from grader.sandbox.contracts import LearnerProcessLike, ProcessFactory
from grader.sandbox.outcomes import CallOutcome, StartOutcome
from grader.sandbox.replies import ReplyBudget

if TYPE_CHECKING:
    from grader.spec.models import ImplementationExercise

__all__ = ["LearnerProcessLike", "ProcessFactory", "SourceModule", "grade_implementation"]

BUDGET_SECONDS = 30.0
# Code that hangs on every input must not hold a learner or a CI job for the whole budget: once this many
# calls ran out of time, each later process answers with a short wall clock (a check whose calls finish at
# once, such as one that expects an exception, still keeps its verdict), and past MAX_HANGS the rest is not run.
HANGS_BEFORE_SHORT = 2
SHORT_CALL_SECONDS = 0.25
MAX_HANGS = 8


class SourceModule(Struct):
    """The learner's files and which one defines the entry functions."""

    files: dict[str, bytes]
    module: str
    failed_start: StartOutcome | None = None


def grade_implementation(
    exercise: ImplementationExercise,
    source: SourceModule,
    factory: ProcessFactory,
    *,
    public_only: bool = False,
    root: Path | None = None,
    memo: GradingMemo | None = None,
    replies: ReplyBudget | None = None,
    references: Path | None = None,
    keep_failing: bool = False,
) -> ExerciseResult:
    """Grade every check of ``exercise`` on ``source``; never raises for anything the learner did.

    ``keep_failing``: give each failed check's result the instructor's record of its first failing case
    (``CheckResult.failing``, hidden checks too), for ``grader batch``.

    The calls of every check are pooled, duplicates sent once, and the whole
    pool goes to the learner process in one round trip. When the process
    dies or hangs on a call, a new one answers the calls still needed, so
    one bad input costs one check, not the exercise. ``memo``: what the
    grading session remembers between submissions (plans, findings,
    known-wrong answers); by default nothing is remembered. ``replies``: what
    the submission's processes may still send (one budget per submission;
    by default this exercise's own). ``root`` is where known-wrong solutions
    are found (none: no diagnosis); ``references`` where the reference
    solution (or a handout's answers file) is found, by default ``root``.
    The reference answers the plan's ``on="reference"`` calls in a process
    of its own (``engine.instructor_runs``); a check it fails on is an error
    of the exercise, never the learner's.
    """
    references = references if references is not None else root
    entries = list(exercise.entries)
    checks = checks_to_run(exercise, public_only)
    hidden_not_run = len(exercise.checks) - len(checks)
    if source.failed_start is not None:
        return _unimportable(exercise, checks, source.failed_start, hidden_not_run)
    replies = replies if replies is not None else ReplyBudget()
    replies.start_exercise()
    if replies.spent is not None:  # the submission's processes have sent all they may: another would be refused
        return _unimportable(
            exercise, checks, StartOutcome(status="protocol", error=replies.spent_error()), hidden_not_run
        )
    memo = memo if memo is not None else GradingMemo()
    given = given_source(exercise, references)  # sent with the calls that hand over a given function
    process = _opened(factory, source, entries, exercise.time_limit, replies)
    outputs: list[str] = []
    printed = CallOutput()  # the same output, cut by call
    plan = memo.plan(exercise, checks)
    limits = plan.call_limits(exercise.time_limit)
    # Every call of the plan goes with the import: the process answers them without waiting to be asked
    # (unless some check has a time limit of its own: its calls then go to a process with that limit).
    ahead = (plan.whole_keys, plan.whole()[1].with_given(given)) if plan.checks and not limits else None
    try:
        start = process.start(ahead[1]) if ahead else process.start()
        if start.status != "ok":
            source.failed_start = start
            return _unimportable(exercise, checks, start, hidden_not_run, process.output.excerpt())
        if not any(start.entries.get(name) for name in entries):
            names = ", ".join(f"{name}()" for name in entries)
            return _whole(
                exercise,
                checks,
                "missing",
                "skipped",
                f"Not run: your file does not define {names} (see above).",
                hidden_not_run,
                f"Not attempted: your file does not define {names}.",
            )
        settled: dict[str, CheckResult] = {}  # results known without judging a case
        runs: list[CheckRun] = []
        table = plan.table.fresh()
        found = memo.findings(plan)
        # Asked while the learner's process answers what was sent with the import (once per session, kept on disk).
        expected = reference_outcomes(exercise, plan, factory, memo, references)
        table.outcomes.update(expected)
        for planned in plan.checks:
            check, entry = planned.check, planned.entry
            if not start.entries.get(entry):
                settled[check.id] = check_result(
                    check,
                    "error",
                    f"{check.describe(entry)}: not checked, because your file does not define {entry}().",
                )
                continue
            runs.append(CheckRun(planned, memo=found.of(planned)))
        timeouts = 0
        batch = True
        deadline = time.monotonic() + BUDGET_SECONDS
        limit = exercise.time_limit  # the wall clock per call of the current process
        while True:
            needed = table.needed([run.keys for run in runs if not run.decided(table)])
            needed = [key for key in needed if table.calls[key].on == "learner"]
            if needed and limits:  # a process answers only the calls of its own time limit
                now = [key for key in needed if limits.get(key, exercise.time_limit) == limit]
                if not now:  # a process of the next limit needed answers the rest
                    limit = limits.get(needed[0], exercise.time_limit)
                    process.close()
                    continue
                needed = now
            if not needed:
                break
            if time.monotonic() >= deadline or timeouts >= MAX_HANGS:
                why = (
                    f"{run_entry_name(runs)} already ran out of time or memory {timeouts} times"
                    if timeouts >= MAX_HANGS
                    else f"the exercise's time budget of {BUDGET_SECONDS:g} s ran out"
                )
                if timeouts and timeouts < MAX_HANGS:
                    why += f" after {run_entry_name(runs)} ran out of time or memory {timeouts} times"
                for run in runs:
                    if not run.decided(table):
                        settled[run.check.id] = check_result(
                            run.check, "timeout", f"{run.check.describe(run.entry)}: not run, because {why}."
                        )
                break
            if replies.spent is not None:  # a new process would be refused as soon as it answered
                table.resolve_all(needed, CallOutcome(status="bad_value", error=replies.spent_error()))
                continue
            if not process.alive:
                process.close()  # closing drains what it printed before it ended
                outputs.append(process.output.excerpt())
                printed.collect(process.output)
                short = timeouts >= HANGS_BEFORE_SHORT
                process = _opened(factory, source, entries, min(limit, SHORT_CALL_SECONDS) if short else limit, replies)
                restart = process.start()
                if restart.status != "ok":
                    table.resolve_all(needed, CallOutcome(status="crashed", detail=describe_start_failure(restart)))
                    continue
            if ahead is not None:  # the first round: the calls sent with the import (a superset of those needed)
                needed, calls = ahead
                ahead = None
            else:
                calls = plan.encode(needed).with_given(given)
            printed.sent(needed)
            # Answers come in batches until something goes wrong; then one by one, to know which call it was.
            for key, outcome in zip(needed, process.call_many(calls, deadline, batch=batch), strict=True):
                if outcome.status != "not_run":
                    table.outcomes[key] = outcome
                    timeouts += outcome.status == "timeout" or _out_of_memory(outcome)
            batch = batch and process.alive
        # Asked while this learner's process still holds the sandbox's shared slot, so the reference's
        # process (kept by the session for these calls) is a one-off that never takes it.
        fill_answer_calls(exercise, plan, table.outcomes, factory, memo, references, kept=True)
    finally:
        process.close()
    outputs.append(process.output.excerpt())
    printed.collect(process.output)
    for run in runs:
        failed = reference_failure(plan, run.planned, table.outcomes) if run.check.id not in settled else None
        if failed is not None:
            settled[run.check.id] = _reference_failed(run, plan, *failed)
    mistakes = KnownMistakes(exercise, factory, root, memo, plan, expected) if root else None
    judged = {
        run.check.id: judge_run(run, table, plan, start.defaults, mistakes, keep_failing)
        for run in runs
        if run.check.id not in settled
    }
    keep_held(found)
    results = [settled[c.id] if c.id in settled else judged[c.id] for c in checks]
    diagnoses: dict[str, str] = {}
    if root and any(run.failing for run in runs):  # only a failed check has a mistake to name
        from grader.engine.diagnosis import apply_diagnosis, diagnose  # a correct grade never loads it

        diagnoses = diagnose(exercise, runs, factory, root, memo, plan, expected)
    for run in runs:
        if run.check.id in diagnoses:
            result = next(r for r in results if r.id == run.check.id)
            apply_diagnosis(result, run, diagnoses[run.check.id])
            if result.failing is not None:  # the instructor is told even where the learner is not
                result.failing.known = diagnoses[run.check.id]
    output = "\n".join(text for text in outputs if text)
    stops = {
        run.check.id: (str(run.finding.extra.get(STOPPED, "")), str(run.finding.extra.get(STOPPED_AS, "")))
        for run in runs
        if run.finding is not None
    }
    graded = _summarise(exercise, results, hidden_not_run, output or None, stops, guard_cases(runs, exercise.gate))
    graded.printed = printed.by_check(plan) if output else None  # nothing printed: nothing to cut
    return graded


def run_entry_name(runs: list[CheckRun]) -> str:
    """The entry functions of ``runs``, for a reason (``softmax and log_softmax``)."""
    names = sorted({run.entry for run in runs})
    return " and ".join(names) if names else "your code"


def _reference_failed(run: CheckRun, plan: Plan, index: int, what: str) -> CheckResult:
    """A check the exercise's own reference solution could not answer: an error of the exercise, not the learner's."""
    check = run.check
    shown = check.visibility == "public" or check.reveal == "full"
    where = f" on {plan.call_text(run.planned, index)}" if shown else ""
    return check_result(
        check,
        "error",
        f"{check.describe(run.entry)}: not checked, because the exercise's reference solution {what}{where}. "
        "This is a fault of the exercise, not of your code; please tell your instructor.",
    )


def _opened(
    factory: ProcessFactory, source: SourceModule, entries: list[str], call_seconds: float, replies: ReplyBudget
) -> LearnerProcessLike:
    """A new learner process for ``source``, charging what it sends to the submission's ``replies``."""
    process = factory.open(source.files, source.module, entries, call_seconds)
    process.replies = replies
    return process


def _out_of_memory(outcome: CallOutcome) -> bool:
    return outcome.status == "raised" and bool(outcome.error) and outcome.error.get("type") == "MemoryError"  # type: ignore[union-attr]


def _unimportable(
    exercise: ImplementationExercise, checks: list[Check], start: StartOutcome, hidden: int, output: str | None = None
) -> ExerciseResult:
    """The result of an exercise whose file could not be imported: said once, in the exercise's reason."""
    why = describe_start_failure(start)
    status: CheckStatus = "timeout" if start.status == "timeout" else "error"
    result = _whole(exercise, checks, "error", status, "Not run: your file could not be imported (see above).", hidden)
    result.reason = f"{why[0].upper()}{why[1:]}; none of its checks could run."
    result.output = output or None
    return result


def _whole(
    exercise: ImplementationExercise,
    checks: list[Check],
    status: ExerciseStatus,
    check_status: CheckStatus,
    reason: str,
    hidden: int,
    exercise_reason: str | None = None,
) -> ExerciseResult:
    """An exercise none of whose checks ran: each check's short ``reason`` points to the exercise's, which says why."""
    return ExerciseResult(
        id=exercise.id,
        title=exercise.title,
        kind=exercise.kind,
        status=status,
        score=0.0,
        max_score=exercise.max_score,
        reason=exercise_reason or reason,
        hidden_not_run=hidden,
        checks=[check_result(check, check_status, reason) for check in checks],
    )


def _said_once(results: list[CheckResult], stops: dict[str, tuple[str, str]]) -> None:
    """A call stopped the same way on several checks (one exception at one line, one limit): the first check
    whose input is shown keeps the whole story, input and hint; each other says so in one line, pointing to it.

    ``stops``: for each check stopped by a call that gave no value, what stopped it (``findings.stop_key``)
    and the exception's name, if it raised one.
    """
    first: dict[str, CheckResult] = {}
    for result in results:
        key = stops.get(result.id, ("", ""))[0]
        if key and result.status in ("error", "timeout") and result.input is not None:
            first.setdefault(key, result)
    for result in results:
        key, name = stops.get(result.id, ("", ""))
        shown = first.get(key) if key and result.status in ("error", "timeout") else None
        if shown is None or shown is result:
            continue
        what = "the same time limit" if result.status == "timeout" else "the same error"
        what += f" ({name})" if name and result.status != "timeout" else ""
        where = f", here on {result.input}" if result.input is not None else ", on a hidden input"
        result.reason = _sentence_of(f"{result.property or result.id}: stopped by {what} as {shown.id}{where}")
        # Without an input the formats write the one line; expected, got and a diagnosis stay as data.
        result.input = result.hint = result.note = None


def _sentence_of(text: str) -> str:
    return text if text.endswith(".") else text + "."


def _summarise(
    exercise: ImplementationExercise,
    results: list[CheckResult],
    hidden: int,
    output: str | None,
    stops: dict[str, tuple[str, str]] | None = None,
    guard: GuardCases | None = None,
) -> ExerciseResult:
    """The exercise's result from its checks' results: credit applied, an error said once, the reason in one line."""
    _said_once(results, stops or {})  # first, so what credit adds to the guard's reason stays
    apply_credit(exercise, results, guard)
    passed = [r for r in results if r.status == "passed"]
    score = float(sum(r.score for r in results))
    if len(passed) == len(results):
        status = "passed"
        reason = f"All {len(results)} checks passed."
        if hidden:
            reason = (
                f"All {len(results)} public checks passed; {hidden} hidden check{'s' if hidden != 1 else ''} "
                "will run when your work is graded."
            )
    else:
        status = "failed" if any(r.status == "failed" for r in results) else "error"
        failing = ", ".join(r.id for r in results if r.status != "passed")
        reason = f"{len(passed)} of {len(results)} checks passed; not passing: {failing}."
        if status == "error":  # no value was wrong: say what stopped the code (a limit, a refusal, a crash)
            first = next((r.got for r in results if r.status != "passed" and r.got), None)
            if first:
                reason += f" What stopped it: {first}{'' if first.endswith('.') else '.'}"
        if hidden:
            reason += f" {hidden} hidden check{'s' if hidden != 1 else ''} will also run when your work is graded."
    return ExerciseResult(
        id=exercise.id,
        title=exercise.title,
        kind=exercise.kind,
        status=status,  # type: ignore[arg-type]
        score=score,
        max_score=exercise.max_score,
        reason=reason,
        checks=results,
        output=output,
        hidden_not_run=hidden,
    )
