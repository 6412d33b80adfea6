"""Findings: what a check concludes on each case from what the learner's calls returned.

A finding depends only on the check, the case and the bytes the calls
returned, so it is remembered per plan (``PlanFindings``): a class mostly
returns the same bytes, and a second submission whose calls returned the
very same bytes (same digests) gets the same finding without judging again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from msgspec import Struct, field

from grader.checks.base import Call, Check, Finding
from grader.checks.cases import Case
from grader.checks.display import format_call, format_steps, values_not_shown
from grader.engine.failure_modes import Failure
from grader.engine.plan import CallTable, Plan, PlannedCheck
from grader.engine.reasons import describe_error, outcome_detail, ragged, returned_value
from grader.memo import BoundedMemo
from grader.sandbox.answers import numbers_only
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.scripts import Script

__all__ = ["STOPPED", "STOPPED_AS", "CheckRun", "Findings", "PlanFindings", "judge_case", "signature_of", "stop_key"]

_KEPT_PER_CASE = 4


class CheckRun(Struct):
    """One check on one submission: its planned calls, what they returned, and what was found.

    Once judged (``record_outcome``): whether every case held, the indices of
    every failing case, and the mode of the first (the one the reason shows);
    diagnosis compares the learner's answers on all of them with a known
    mistake's.
    """

    planned: PlannedCheck
    memo: Findings | None = None
    finding: Finding | None = None
    findings: dict[int, Finding | None] = field(default_factory=dict)
    held_before: bool | None = None  # once every call is answered: whether these very outputs held before
    held: bool = False
    failing: list[int] = field(default_factory=list)
    failure: Failure | None = None
    answers: dict[int, CallOutcome] = field(default_factory=dict)

    @property
    def check(self) -> Check:
        return self.planned.check

    @property
    def entry(self) -> str:
        return self.planned.entry

    @property
    def cases(self) -> list[Case]:
        return self.planned.cases

    @property
    def keys(self) -> list[list[int]]:
        return self.planned.keys

    def known_to_hold(self, table: CallTable) -> bool:
        """Whether every case held on exactly these outputs for an earlier submission (looked up once)."""
        if self.held_before is None and self.memo is not None:
            signature = signature_of(self, table)
            if signature is None:
                return False  # not every call is answered yet: look again later
            self.held_before = signature in self.memo.held
        return bool(self.held_before)

    def find(self, index: int, outcomes: list[CallOutcome], *, shown: bool = True) -> Finding | None:
        """The finding of case ``index`` (``None``: the property holds), judged once per distinct output.

        ``shown=False``: only whether it holds will be used (a failure after
        the one the reason shows), so its values are not written out
        (``display.values_not_shown``).
        """
        if index not in self.findings:
            if not shown:
                with values_not_shown():
                    self.findings[index] = (
                        judge_case(self.check, self.entry, self.cases[index], outcomes, self.planned.calls[index])
                        if self.memo is None
                        else self.memo.judge(self, index, outcomes, shown=False)
                    )
            elif self.memo is None:
                self.findings[index] = judge_case(
                    self.check, self.entry, self.cases[index], outcomes, self.planned.calls[index]
                )
            else:
                self.findings[index] = self.memo.judge(self, index, outcomes)
            for outcome in outcomes:  # judged: a large answer's arrays are not kept decoded while the others are judged
                outcome.release()
        return self.findings[index]

    def answered(self, index: int) -> list[CallOutcome] | None:
        """The learner's outcomes of case ``index`` (every call of it), or ``None`` when one went unanswered."""
        keys = self.keys[index]
        if any(key not in self.answers for key in keys):
            return None
        return [self.answers[key] for key in keys]

    def decided(self, table: CallTable) -> bool:
        """Whether the check's outcome is known: every case answered, or a failure before any gap."""
        if self.known_to_hold(table):
            return True
        for index, keys in enumerate(self.keys):
            if any(key not in table.outcomes for key in keys):
                return False
            if self.find(index, [table.outcomes[key] for key in keys]) is not None:
                return True
        return True


class Findings:
    """What a check concluded on each case for each exact output seen (a few outputs per case).

    Only answered calls are remembered. ``held`` are whole outputs (the
    digest of every call of every case) on which every case held; they are
    kept on disk between runs beside the plan (``disk_cache.stored_held``),
    so a run's first learner is not judged either.
    """

    def __init__(self, cases: int, held: Iterable[bytes] = ()) -> None:
        kept = _KEPT_PER_CASE * max(cases, 1)
        self.seen: BoundedMemo[tuple[int, tuple[bytes, ...]], Finding | None] = BoundedMemo(kept)
        # Values not written yet.
        self.unshown: BoundedMemo[tuple[int, tuple[bytes, ...]], Finding | None] = BoundedMemo(kept)
        self.held: set[bytes] = set(held)
        self.changed = False
        # Whether a known-wrong solution (by path) fails a case (by index): the same for every submission.
        self.known_wrong_fails: dict[tuple[str, int], bool] = {}

    def remember_held(self, run: CheckRun, table: CallTable) -> None:
        """Remember that every case held on this run's outputs (a few such outputs per check)."""
        signature = signature_of(run, table)
        if signature is not None and signature not in self.held and len(self.held) < _KEPT_PER_CASE:
            self.held.add(signature)
            self.changed = True

    def judge(self, run: CheckRun, index: int, outcomes: list[CallOutcome], shown: bool = True) -> Finding | None:
        """The finding, from memory when these exact outputs were judged before.

        A finding judged with its values not written out (``shown=False``)
        is remembered apart, and serves only where it will not be shown either.
        """
        kept = tuple(outcome.digest for outcome in outcomes if outcome.digest is not None)
        if not kept or len(kept) != len(outcomes):
            return judge_case(run.check, run.entry, run.cases[index], outcomes, run.planned.calls[index])
        key = (index, kept)
        if key in self.seen:
            return self.seen[key]
        memory = self.seen if shown else self.unshown
        if not shown and key in memory:
            return memory[key]
        finding = memory[key] = judge_case(run.check, run.entry, run.cases[index], outcomes, run.planned.calls[index])
        return finding


def signature_of(run: CheckRun, table: CallTable) -> bytes | None:
    """A digest of what every call of the check returned, in order; ``None`` while one is unanswered or has none."""
    outcomes = table.outcomes
    parts = []
    for keys in run.keys:
        for key in keys:
            outcome = outcomes.get(key)
            if outcome is None or outcome.digest is None:
                return None
            parts.append(outcome.digest)  # each 16 bytes: joined, they cannot run into each other
    return hashlib.blake2b(b"".join(parts), digest_size=16).digest()


# A Finding's extra keys for a call that gave no value: what stopped it, for saying it once per exercise,
# and the exception's name, for the one line that points to where it is said.
STOPPED = "stopped"
STOPPED_AS = "stopped_as"


def stop_key(outcome: CallOutcome) -> str:
    """What stopped a call, the same for every call stopped the same way: the status, the exception's type and
    the learner's line it was raised at (not its message, which names each input's shapes), or the limit hit."""
    error = outcome.error or {}
    frames = error.get("frames") or []
    last = frames[-1] if frames and isinstance(frames[-1], dict) else {}
    where = f"{last.get('file')}:{last.get('line')}" if last else ""
    if outcome.status == "bad_value":
        return f"{outcome.status}|{returned_value(error) if error else outcome.detail}"
    if outcome.status == "raised":
        return f"{outcome.status}|{error.get('type', '')}|{error.get('kind', '')}|{where}"
    return f"{outcome.status}|{outcome_detail(outcome)}"


def _raised(outcome: CallOutcome) -> str:
    """The name of the exception a call raised, or empty (a value that could not be read was not raised)."""
    return str((outcome.error or {}).get("type", "")) if outcome.status == "raised" else ""


def judge_case(
    check: Check, entry: str, case: Case, outcomes: list[CallOutcome], calls: Sequence[Call] = ()
) -> Finding | None:
    """The finding of one case: the engine judges calls that gave no value, the check judges the values.

    ``calls``: the case's planned calls, in the order of ``outcomes``. A call
    that gave no value is named as it was made when it is not the case's
    first (the input the reason shows): ``f(n=8)`` made for a relation on
    ``f(n=4)``.
    """
    if not check.reads_structure():
        outcomes = [numbers_only(outcome) for outcome in outcomes]
    if check.expects_exception and all(o.status in ("ok", "raised") for o in outcomes):
        return check.judge(case, outcomes)
    for position, outcome in enumerate(outcomes):
        if outcome.status == "timeout":
            made, detail = _made(calls, position), outcome_detail(outcome)
            return Finding(
                got=f"{made}: {detail}" if made else detail,
                expected="an answer within the time limit",
                status="timeout",
                extra={STOPPED: stop_key(outcome), STOPPED_AS: ""},
            )
        failed_step = script_failure(case, entry, outcome)
        if failed_step is not None:
            got, expected = failed_step
            return Finding(
                got=got,
                expected=expected,
                status="error",
                extra={STOPPED: stop_key(outcome), STOPPED_AS: _raised(outcome)},
            )
        if outcome.status != "ok":
            wanted = check.wanted()
            note = ""
            if ragged(outcome.error) and wanted.startswith("a tuple"):
                note = "A list is read as one array, whose items must share a shape; return a, b makes a tuple."
            return Finding(
                got=describe_error(outcome, _made(calls, position) or entry),
                expected=wanted,
                note=note,
                status="error",
                extra={STOPPED: stop_key(outcome), STOPPED_AS: _raised(outcome)},
            )
    try:
        return check.judge(case, outcomes)
    except Exception as exc:  # a value so odd the property cannot even be computed on it
        return Finding(
            got=f"{entry} returned a value this property cannot be computed on ({exc.__class__.__name__}: {exc})",
            expected="a value of the documented form",
        )


def script_failure(case: Case, entry: str, outcome: CallOutcome) -> tuple[str, str] | None:
    """What a class entry's script showed at the step that failed, and what was expected there; ``None`` for a
    call that is no script, or one that did not stop at a step."""
    script, error = case.args.get("script"), outcome.error or {}
    if not isinstance(script, Script) or outcome.status not in ("raised", "bad_value"):
        return None
    if type(error.get("step")) is not int:
        return None
    number = min(error["step"], len(script.steps) - 1)
    steps, step = format_steps(entry, script, number + 1), script.steps[number]
    if outcome.status == "bad_value":  # the value this step kept cannot be sent back
        return describe_error(outcome, steps), "a value of numbers or a string to keep"
    due = f"{step.name} to raise {step.raises}" if step.raises else "each step to run"
    if error.get("kind") == "not-raised":
        return f"{steps}: raised nothing", due
    return describe_error(outcome, steps), due


def _made(calls: Sequence[Call], position: int) -> str:
    """The call at ``position`` as written out, when it is not the case's first call; else empty."""
    if position == 0 or position >= len(calls):
        return ""
    call = calls[position]
    return format_call(f"reference.{call.function}" if call.on == "reference" else call.function, call.args)


class PlanFindings(Struct):
    """What every check of one plan concluded, shared by every submission a grading session grades.

    ``held_on_disk``: for each check, the outputs on which every case held
    in earlier runs (``disk_cache.stored_held``), read when these findings
    were first asked for.
    """

    plan: Plan
    held_on_disk: dict[str, set[bytes]] = field(default_factory=dict)
    by_check: dict[str, Findings] = field(default_factory=dict)

    def of(self, planned: PlannedCheck) -> Findings:
        """The remembered findings of one planned check (made on first use)."""
        found = self.by_check.get(planned.check.id)
        if found is None:
            found = self.by_check[planned.check.id] = Findings(
                len(planned.cases), self.held_on_disk.get(planned.check.id, ())
            )
        return found

    def new_held(self) -> dict[str, set[bytes]] | None:
        """Every check's held outputs when a submission added some since last asked, else ``None``."""
        if not any(found.changed for found in self.by_check.values()):
            return None
        for found in self.by_check.values():
            found.changed = False
        return {name: found.held for name, found in self.by_check.items()}
