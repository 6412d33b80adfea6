"""One check's result from its answered cases: passed, or its smallest failing case judged and phrased.

``engine.call_loop`` runs the calls; this module turns what one check's
cases answered into its ``CheckResult``. A check that held on exactly these
outputs before passes at once (``findings.CheckRun.known_to_hold``); else
each case is judged (``engine.findings``), and the first failing one, the
smallest, is classified (``engine.failure_modes``), checked for a wrong
default (``engine.defaults``), explained as one relation between the values
where the input is shown (``engine.explanations``, imported only then), and
phrased (``engine.reasons``) with the hint whose premise it shows.
"""

from __future__ import annotations

from msgspec.structs import replace

from grader.checks.base import Check, Finding
from grader.engine.defaults import DefaultsVerdict, judge_defaults
from grader.engine.failing import failing_output
from grader.engine.failure_modes import classify_failure, fitting_hint
from grader.engine.findings import CheckRun
from grader.engine.plan import CallTable, Plan
from grader.engine.premises import KnownMistakes
from grader.engine.reasons import failure_reason, passed_reason
from grader.results import CheckResult, CheckStatus
from grader.sandbox.outcomes import CallOutcome

__all__ = ["check_result", "judge_run"]


def judge_run(
    run: CheckRun,
    table: CallTable,
    plan: Plan,
    defaults: dict[str, dict[str, str | None]] | None = None,
    mistakes: KnownMistakes | None = None,
    keep_failing: bool = False,
) -> CheckResult:
    """The check's result from its answered cases: the first failing one is the smallest.

    ``defaults``: each entry's parameters and defaults as the learner process reported them. ``mistakes``:
    the exercise's known-wrong solutions, asked which of them the failing answers agree with when a hint's
    premise names one (none: no such hint is shown).
    """
    check, entry = run.check, run.entry
    description = check.describe(entry)
    if run.known_to_hold(table):
        run.held = True
        return check_result(check, "passed", passed_reason(description, plan.verified_text(run.planned)))
    first: tuple[int, Finding, list[CallOutcome]] | None = None
    run.answers = table.outcomes  # diagnosis compares them, case by case, with a known mistake's
    for index, keys in enumerate(run.keys):
        if any(key not in table.outcomes for key in keys):
            continue
        mine = [table.outcomes[key] for key in keys]
        finding = run.find(index, mine, shown=first is None)  # only the first failure is written out
        if finding is None:
            continue
        run.failing.append(index)
        if first is None:
            first = (index, finding, mine)
    failures = len(run.failing)
    if first is None:
        run.held = True
        if run.memo is not None:
            run.memo.remember_held(run, table)
        return check_result(check, "passed", passed_reason(description, plan.verified_text(run.planned)))
    first_index, finding, mine = first
    verdict = _explain_defaults(run, table, plan, first_index, finding, defaults)
    finding = verdict.finding
    run.finding = finding
    run.failure = classify_failure(check, run.cases[first_index], run.planned.calls[first_index], mine, finding)
    if mistakes is not None:
        run.failure = replace(run.failure, like=mistakes.shown(run))
    call_text = plan.call_text(run.planned, first_index)
    failing = failing_output(run, first_index, call_text, finding, mine) if keep_failing else None
    for outcome in mine:  # classified: a large answer's arrays are not kept decoded
        outcome.release()
    reveal = check.visibility == "public" or check.reveal == "full"
    explained = _explanation(run, table) if reveal else ""
    if explained:
        run.failure = replace(run.failure, cause=" ".join(filter(None, (run.failure.cause, explained))), explained=True)
    hint = fitting_hint(check, run.failure) if verdict.keep_hint else ""
    reason = failure_reason(
        description,
        call_text,
        finding,
        diagnosis=None,
        hint=hint,
        more=failures - 1,
        reveal=reveal,
        cause=run.failure.cause,
    )
    if verdict.said and not reveal:  # the signature is public: a wrong default is said even for a hidden input
        reason += " " + verdict.said[0].upper() + verdict.said[1:]
    return CheckResult(
        id=check.id,
        status=finding.status,
        score=0.0,
        max_score=check.points,
        visibility=check.visibility,
        task=check.task,
        reason=reason,
        property=description,
        input=call_text if reveal else None,
        expected=finding.expected if reveal else None,
        got=finding.got if reveal else None,
        hint=(hint or None) if reveal else None,
        more_failures=failures - 1,
        note=(" ".join(part for part in (finding.note, run.failure.cause) if part) or None) if reveal else None,
        failing=failing,
    )


def _explanation(run: CheckRun, table: CallTable) -> str:
    """The one relation between the learner's values and the expected ones on every failing case, or empty."""
    from grader.engine.explanations import explain, named_values  # only a failed check is explained

    compared, named = [], []
    for index in run.failing:
        seen = run.check.compared(run.cases[index], [table.outcomes[key] for key in run.keys[index]])
        if seen is None:
            return ""  # a failing case whose values were not compared: no relation holds on every one
        compared.append(seen)
        named.append(named_values(run.cases[index].args))
    found = explain(
        [(c.got, c.expected) for c in compared],
        rtol=max(c.rtol for c in compared),
        atol=max(c.atol for c in compared),
        named=named,
        output=run.check.noun,
    )
    return found.sentence if found else ""


def _explain_defaults(
    run: CheckRun,
    table: CallTable,
    plan: Plan,
    index: int,
    finding: Finding,
    defaults: dict[str, dict[str, str | None]] | None,
) -> DefaultsVerdict:
    """``engine.defaults.judge_defaults`` on the failing case ``index`` of ``run``."""
    entry = run.entry
    return judge_defaults(
        finding,
        entry=entry,
        signature=plan.exercise.entries[entry].signature,
        learner=(defaults or {}).get(entry),
        calls=run.planned.calls[index],
        outcomes=[table.outcomes[key] for key in run.keys[index]],
        hint=" ".join(hint.text for hint in run.check.hint_list()),  # any hint spelling out a default
    )


def check_result(check: Check, status: CheckStatus, reason: str) -> CheckResult:
    """A check's result with nothing shown but its reason: passed (full points), or settled without judging."""
    return CheckResult(
        id=check.id,
        status=status,
        score=check.points if status == "passed" else 0.0,
        max_score=check.points,
        visibility=check.visibility,
        task=check.task,
        reason=reason,
    )
