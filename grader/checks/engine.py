"""Run one implementation exercise against one submission, check by check.

All cases of a check go to the learner process in one round trip. Cases are
ordered simplest first, so the first failing case found is the smallest.
A learner process that dies is replaced for the next check; one that times
out twice has the rest of its checks marked without running them, so an
endless loop costs seconds, not minutes.
"""

from __future__ import annotations

import hashlib as digests  # TODO(issue 20): say hashlib at the call sites once the engine is split
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from grader.checks.base import Call, Check, Finding, TrustedFunction
from grader.checks.cases import Case, build_cases
from grader.checks.display import format_call, values_not_shown
from grader.checks.plan_cache import stored_answers, stored_held, stored_plan, store_held
from grader.reasons import describe_error, describe_start_failure, failure_reason, passed_reason
from grader.results import CheckResult, ExerciseResult
from grader.sandbox.outcomes import CallOutcome, StartOutcome
from grader.sandbox.protocol import encode_array
from grader.sandbox.replies import ReplyBudget
from grader.spec.models import ImplementationExercise

__all__ = ["LearnerProcessLike", "ProcessFactory", "SourceModule", "grade_implementation", "warm_plans"]

MAX_TIMEOUTS = 2
BUDGET_SECONDS = 30.0


class LearnerProcessLike(Protocol):
    output: Any

    def start(self, then: tuple[list[dict[str, Any]], list[bytes], bool] | None = None) -> StartOutcome: ...
    def call_many(self, calls: list[dict[str, Any]], blobs: list[bytes],
                  deadline: float | None = None, *, batch: bool = False) -> list[CallOutcome]: ...
    def close(self) -> None: ...


class ProcessFactory(Protocol):
    """Opens learner processes; the sandbox in production, a fake in unit tests."""

    def open(self, files: dict[str, bytes], module: str, entries: list[str], call_seconds: float) -> LearnerProcessLike: ...


@dataclass
class SourceModule:
    """The learner's files and which one defines the entry functions."""

    files: dict[str, bytes]
    module: str
    failed_start: StartOutcome | None = None


@dataclass
class _CheckRun:
    check: Check
    entry: str
    cases: list[Case]
    failing: list[tuple[int, list[Call], list[CallOutcome]]] = field(default_factory=list)
    finding: Finding | None = None
    plans: list[list[Call]] = field(default_factory=list)
    keys: list[list[int]] = field(default_factory=list)
    findings: dict[int, Finding | None] = field(default_factory=dict)
    memo: "_Findings | None" = None
    held_before: bool | None = None  # once every call is answered: whether these very outputs held before

    def known_to_hold(self, table: "_CallTable") -> bool:
        """Whether every case held on exactly these outputs for an earlier submission (looked up once)."""
        if self.held_before is None and self.memo is not None:
            signature = _signature(self, table)
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
                        _judge(self.check, self.entry, self.cases[index], outcomes) if self.memo is None
                        else self.memo.judge(self, index, outcomes, shown=False))
            elif self.memo is None:
                self.findings[index] = _judge(self.check, self.entry, self.cases[index], outcomes)
            else:
                self.findings[index] = self.memo.judge(self, index, outcomes)
            for outcome in outcomes:  # judged: a large answer's arrays are not kept decoded while the others are judged
                release = getattr(outcome, "release", None)
                if release is not None:
                    release()
        return self.findings[index]


class _Findings:
    """What a check concluded on each case for each exact output seen: a class mostly returns the same bytes.

    A finding depends only on the check, the case and what the calls
    returned, so a second submission whose calls returned the very same
    bytes (same digests) gets the same finding without judging again.
    Only answered calls are remembered, and only a few outputs per case.
    """

    def __init__(self, cases: int, held: Iterable[bytes] = ()) -> None:
        self.limit = _MEMO_PER_CASE * max(cases, 1)
        self.seen: dict[tuple[int, tuple[bytes, ...]], Finding | None] = {}
        self.unshown: dict[tuple[int, tuple[bytes, ...]], Finding | None] = {}  # judged with values not written out
        # Whole outputs (the digest of every call of every case) on which every case held; kept on disk
        # between runs beside the plan (``plan_cache.stored_held``), so a run's first learner is not judged either.
        self.held: set[bytes] = set(held)
        self.changed = False

    def remember_held(self, run: "_CheckRun", table: "_CallTable") -> None:
        signature = _signature(run, table)
        if signature is not None and signature not in self.held and len(self.held) < _MEMO_PER_CASE:
            self.held.add(signature)
            self.changed = True

    def judge(self, run: "_CheckRun", index: int, outcomes: list[CallOutcome], shown: bool = True) -> Finding | None:
        """The finding, from memory when these exact outputs were judged before.

        A finding judged with its values not written out (``shown=False``)
        is remembered apart, and serves only where it will not be shown either.
        """
        digests = tuple(outcome.digest for outcome in outcomes)
        if not digests or None in digests:
            return _judge(run.check, run.entry, run.cases[index], outcomes)
        key = (index, digests)  # type: ignore[arg-type]
        if key in self.seen:
            return self.seen[key]
        memory = self.seen if shown else self.unshown
        if not shown and key in memory:
            return memory[key]
        finding = _judge(run.check, run.entry, run.cases[index], outcomes)
        if len(memory) < self.limit:
            memory[key] = finding
        return finding


_MEMO_PER_CASE = 4


def _signature(run: _CheckRun, table: "_CallTable") -> bytes | None:
    """A digest of what every call of the check returned, in order; ``None`` while one is unanswered or has none."""
    outcomes = table.outcomes
    parts = []
    for keys in run.keys:
        for key in keys:
            outcome = outcomes.get(key)
            if outcome is None or outcome.digest is None:
                return None
            parts.append(outcome.digest)  # each 16 bytes: joined, they cannot run into each other
    return digests.blake2b(b"".join(parts), digest_size=16).digest()


def encode_calls(
    calls: list[Call], signatures: dict[str, list[str]] | None = None
) -> tuple[list[dict[str, Any]], list[bytes]]:
    """Calls as JSON plus array payloads: arrays by index, numbers inline, functions by name.

    Arguments go by position, in signature order, up to the first argument a
    case leaves out; the ones after that gap go by keyword, so leaving out a
    middle default never shifts the others.
    """
    blobs: list[bytes] = []
    encoded = []

    def value(item: Any) -> dict[str, Any]:
        if isinstance(item, np.ndarray):
            blobs.append(encode_array(item))
            return {"t": "array", "i": len(blobs) - 1}
        if isinstance(item, TrustedFunction):
            indices = []
            for array in item.arrays:
                blobs.append(encode_array(array))
                indices.append(len(blobs) - 1)
            return {"t": "callable", "name": item.name, "arrays": indices}
        if isinstance(item, np.generic):
            return {"t": "value", "v": item.item()}
        return {"t": "value", "v": item}

    for call in calls:
        order = (signatures or {}).get(call.function) or list(call.args)
        positional: list[dict[str, Any]] = []
        keywords: dict[str, dict[str, Any]] = {}
        gap = False
        for name in order:
            if name not in call.args:
                gap = True
            elif gap:
                keywords[name] = value(call.args[name])
            else:
                positional.append(value(call.args[name]))
        for name in call.args:
            if name not in order:
                keywords[name] = value(call.args[name])
        item: dict[str, Any] = {"fn": call.function, "args": positional, "return_inputs": call.return_inputs}
        if keywords:
            item["kwargs"] = keywords
        encoded.append(item)
    return encoded, blobs


class _Cases:
    """Cases per (exercise, case set), built once per process: specs are immutable."""

    cache: dict[tuple[int, str], tuple[ImplementationExercise, list[Case]]] = {}

    @classmethod
    def get(cls, exercise: ImplementationExercise, entry: str, names: list[str]) -> list[Case]:
        cases: list[Case] = []
        kinds = dict(exercise.entries[entry].args)
        for name in names:
            key = (id(exercise), name)
            hit = cls.cache.get(key)
            if hit is None or hit[0] is not exercise:  # keyed by identity: two catalogs never share cases
                hit = cls.cache[key] = (exercise, build_cases(list(exercise.cases[name]), kinds, (exercise.id, name)))
            cases.extend(hit[1])
        return cases or [Case(args={})]


def grade_implementation(
    exercise: ImplementationExercise,
    source: SourceModule,
    factory: ProcessFactory,
    *,
    public_only: bool = False,
    root: Path | None = None,
    diagnosis_cache: dict[str, list[CallOutcome]] | None = None,
    replies: ReplyBudget | None = None,
) -> ExerciseResult:
    """Grade every check of ``exercise`` on ``source``; never raises for anything the learner did.

    The calls of every check are pooled, duplicates sent once, and the whole
    pool goes to the learner process in one round trip. When the process
    dies or hangs on a call, a new one answers the calls still needed, so
    one bad input costs one check, not the exercise. ``replies``: what the
    submission's processes may still send (one budget per submission; by
    default this exercise's own).
    """
    entries = list(exercise.entries)
    checks = _checks_to_run(exercise, public_only)
    hidden_not_run = len(exercise.checks) - len(checks)
    if source.failed_start is not None:
        return _unimportable(exercise, checks, source.failed_start, hidden_not_run)
    replies = replies if replies is not None else ReplyBudget()
    replies.start_exercise()
    if replies.spent is not None:  # the submission's processes have sent all they may: another would be refused
        return _unimportable(exercise, checks, StartOutcome(status="protocol", error=replies.spent_error()),
                             hidden_not_run)
    process = _replying(factory.open(source.files, source.module, entries, exercise.time_limit), replies)
    outputs: list[str] = []
    plan = _plan_for(exercise, checks)
    # Every call of the plan goes with the import: the process answers them without waiting to be asked.
    ahead: tuple[list[int], tuple[list[dict[str, Any]], list[bytes]]] | None = plan.whole() if plan.checks else None
    try:
        start = process.start((*ahead[1], True)) if ahead else process.start()
        if start.status != "ok":
            source.failed_start = start
            return _unimportable(exercise, checks, start, hidden_not_run, process.output.excerpt())
        if not any(start.entries.get(name) for name in entries):
            names = ", ".join(f"{name}()" for name in entries)
            return _whole(exercise, checks, "missing", "skipped", f"Not attempted: your file does not define {names}.",
                          hidden_not_run)
        fixed: dict[str, CheckResult] = {}
        runs: list[_CheckRun] = []
        table = plan.table.fresh()
        for check, entry, cases, plans, keys in plan.checks:
            if not start.entries.get(entry):
                fixed[check.id] = _result(check, "error", f"{check.describe(entry)}: not checked, because your file "
                                                          f"does not define {entry}().")
                continue
            runs.append(_CheckRun(check, entry, cases, plans=plans, keys=keys, memo=plan.memo(check, len(cases))))
        timeouts = 0
        batch = True
        deadline = time.monotonic() + BUDGET_SECONDS
        while True:
            needed = table.needed([run for run in runs if not _decided(run, table)])
            if not needed:
                break
            if timeouts >= MAX_TIMEOUTS or time.monotonic() >= deadline:
                why = (f"{run_entry_name(runs)} already ran out of time or memory {timeouts} times"
                       if timeouts >= MAX_TIMEOUTS else f"the exercise's time budget of {BUDGET_SECONDS:g} s ran out")
                for run in runs:
                    if not _decided(run, table):
                        fixed[run.check.id] = _result(run.check, "timeout", f"{run.check.describe(run.entry)}: not "
                                                      f"run, because {why}.")
                break
            if replies.spent is not None:  # a new process would be refused as soon as it answered
                table.resolve_all(needed, CallOutcome(status="bad_value", error=replies.spent_error()))
                continue
            if not process_alive(process):
                process.close()  # closing drains what it printed before it ended
                outputs.append(process.output.excerpt())
                process = _replying(factory.open(source.files, source.module, entries, exercise.time_limit), replies)
                restart = process.start()
                if restart.status != "ok":
                    table.resolve_all(needed, CallOutcome(status="crashed", detail=describe_start_failure(restart)))
                    continue
            if ahead is not None:  # the first round: the calls sent with the import (a superset of those needed)
                needed, (encoded, blobs) = ahead
                ahead = None
            else:
                encoded, blobs = plan.encode(needed)
            # Answers come in batches until something goes wrong; then one by one, to know which call it was.
            for key, outcome in zip(needed, process.call_many(encoded, blobs, deadline, batch=batch)):
                if outcome.status != "not_run":
                    table.outcomes[key] = outcome
                    timeouts += outcome.status == "timeout" or _out_of_memory(outcome)
            batch = batch and process_alive(process)
    finally:
        process.close()
    outputs.append(process.output.excerpt())
    results = [fixed.get(check.id) for check in checks]
    by_run = {run.check.id: _judge_run(run, table) for run in runs if run.check.id not in fixed}
    plan.keep_held()
    results = [r if r is not None else by_run[c.id] for r, c in zip(results, checks)]
    diagnoses = _diagnose(exercise, runs, factory, root, diagnosis_cache, plan) if root else {}
    for run in runs:
        if run.check.id in diagnoses:
            result = next(r for r in results if r.id == run.check.id)
            _apply_diagnosis(result, run, diagnoses[run.check.id])
    output = "\n".join(text for text in outputs if text)
    return _summarise(exercise, results, hidden_not_run, output or None)


@dataclass
class _Plan:
    """What an exercise asks of every submission: its cases, calls and their encodings, built once."""

    exercise: ImplementationExercise
    table: "_CallTable"
    checks: list[tuple[Check, str, list[Case], list[list[Call]], list[list[int]]]]
    signatures: dict[str, list[str]]
    encoded: dict[int, tuple[dict[str, Any], list[bytes]]] = field(default_factory=dict)
    findings: dict[str, _Findings] = field(default_factory=dict)
    batches: dict[tuple[int, ...], tuple[list[dict[str, Any]], list[bytes]]] = field(default_factory=dict)

    def whole(self) -> tuple[list[int], tuple[list[dict[str, Any]], list[bytes]]]:
        """Every call of the plan, in the order a submission's first request asks for them, and that request."""
        keys = self.__dict__.get("_whole")
        if keys is None:  # (not a field: plans stored on disk by earlier versions load without it)
            keys = self.__dict__["_whole"] = list(dict.fromkeys(
                key for *_, case_keys in self.checks for keys_of_case in case_keys for key in keys_of_case))
        return keys, self.encode(keys)

    def memo(self, check: Check, cases: int) -> _Findings:
        """The check's remembered findings, shared by every submission this process grades."""
        if check.id not in self.findings:
            self.findings[check.id] = _Findings(cases, self.__dict__.get("_stored_held", {}).get(check.id, ()))
        return self.findings[check.id]

    def keep_held(self) -> None:
        """Save the outputs every case held on, when a submission added some (``plan_cache.store_held``)."""
        if any(memo.changed for memo in self.findings.values()):
            store_held(self.exercise, self.check_ids(), {name: memo.held for name, memo in self.findings.items()})
            for memo in self.findings.values():
                memo.changed = False

    def check_ids(self) -> tuple[str, ...]:
        """The ids of the plan's checks, in order: with the spec, what its entries on disk are filed under."""
        return tuple(check.id for check, *_ in self.checks)

    def encode(self, keys: list[int]) -> tuple[list[dict[str, Any]], list[bytes]]:
        """The calls numbered ``keys`` as one message, reusing each call's encoding.

        The same keys give the very same lists (every submission's first request
        is the whole plan), so the sandbox can reuse that request's bytes too.
        """
        wanted = tuple(keys)
        hit = self.batches.get(wanted)
        if hit is None:
            hit = self._encode(keys)
            if len(self.batches) < _MAX_BATCHES:
                self.batches[wanted] = hit
        return hit

    def _encode(self, keys: list[int]) -> tuple[list[dict[str, Any]], list[bytes]]:
        items: list[dict[str, Any]] = []
        blobs: list[bytes] = []
        for key in keys:
            if key not in self.encoded:
                encoded, payload = encode_calls([self.table.calls[key]], self.signatures)
                self.encoded[key] = (encoded[0], payload)
            item, payload = self.encoded[key]
            items.append(_shift(item, len(blobs)))
            blobs.extend(payload)
        return items, blobs


_MAX_BATCHES = 8


def _shift(item: dict[str, Any], offset: int) -> dict[str, Any]:
    """A call's encoding with its payload indices moved by ``offset``."""
    if not offset:
        return item

    def move(spec: dict[str, Any]) -> dict[str, Any]:
        if spec["t"] == "array":
            return {"t": "array", "i": spec["i"] + offset}
        if spec["t"] == "callable":
            return dict(spec, arrays=[i + offset for i in spec["arrays"]])
        return spec

    moved = dict(item, args=[move(spec) for spec in item["args"]])
    if "kwargs" in item:
        moved["kwargs"] = {name: move(spec) for name, spec in item["kwargs"].items()}
    return moved


_PLANS: dict[tuple[int, tuple[str, ...]], _Plan] = {}


def warm_plans(exercises: list[Any], *, public_only: bool = False) -> None:
    """Build (or load) the plan of every implementation exercise among ``exercises`` now, as grading it would."""
    for exercise in exercises:
        if isinstance(exercise, ImplementationExercise):
            _plan_for(exercise, _checks_to_run(exercise, public_only))


def _checks_to_run(exercise: ImplementationExercise, public_only: bool) -> list[Check]:
    return [c for c in exercise.checks if not public_only or c.visibility == "public"]


def _plan_for(exercise: ImplementationExercise, checks: list[Check]) -> _Plan:
    """The exercise's plan for these checks, from the per-process cache (specs are immutable)."""
    key = (id(exercise), tuple(check.id for check in checks))
    plan = _PLANS.get(key)
    if plan is None or plan.exercise is not exercise:
        plan = _PLANS[key] = stored_plan(exercise, checks, _build_plan)  # on disk between runs: plan_cache
        plan.__dict__["_stored_held"] = stored_held(exercise, plan.check_ids())
    return plan


def _build_plan(exercise: ImplementationExercise, checks: list[Check]) -> _Plan:
    table = _CallTable()
    planned = []
    for check in checks:
        entry = exercise.entry_of(check)
        cases = _Cases.get(exercise, entry, check.cases)
        plans = [check.plan(case, entry) for case in cases]
        keys = [[table.add(call, merge=check.merge_calls) for call in calls] for calls in plans]
        planned.append((check, entry, cases, plans, keys))
    signatures = {name: list(spec.args) for name, spec in exercise.entries.items()}
    return _Plan(exercise, table, planned, signatures)


class _CallTable:
    """Unique calls across an exercise's checks, and what each returned once answered."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.calls: list[Call] = []
        self.outcomes: dict[int, CallOutcome] = {}

    def fresh(self) -> "_CallTable":
        """The same calls with no answers yet: one submission's view of a shared plan."""
        view = _CallTable()
        view.index, view.calls = self.index, self.calls
        return view

    def add(self, call: Call, merge: bool = True) -> int:
        """The call's number; an identical earlier call's number when ``merge``."""
        encoded, blobs = encode_calls([Call(call.function, call.args)])
        key = digests.sha256(json.dumps(encoded, sort_keys=True).encode() + b"".join(blobs)).hexdigest()
        if not merge:
            key += f"#{len(self.calls)}"
        if key not in self.index:
            self.index[key] = len(self.calls)
            self.calls.append(Call(call.function, call.args, call.return_inputs))
        number = self.index[key]
        if call.return_inputs and not self.calls[number].return_inputs:
            self.calls[number] = Call(call.function, call.args, True)
        return number

    def needed(self, runs: list[_CheckRun]) -> list[int]:
        """Unanswered calls of the undecided checks, in check order then case order."""
        seen: dict[int, None] = {}
        for run in runs:
            for keys in run.keys:
                for key in keys:
                    if key not in self.outcomes:
                        seen.setdefault(key)
        return list(seen)

    def resolve_all(self, keys: list[int], outcome: CallOutcome) -> None:
        for key in keys:
            self.outcomes[key] = outcome


def _out_of_memory(outcome: CallOutcome) -> bool:
    return outcome.status == "raised" and bool(outcome.error) and outcome.error.get("type") == "MemoryError"  # type: ignore[union-attr]


def run_entry_name(runs: list[_CheckRun]) -> str:
    names = sorted({run.entry for run in runs})
    return " and ".join(names) if names else "your code"


def process_alive(process: LearnerProcessLike) -> bool:
    return bool(getattr(process, "alive", True))


def _replying(process: LearnerProcessLike, replies: ReplyBudget) -> LearnerProcessLike:
    """``process``, charging what it sends to ``replies`` (test doubles that read no bytes have no budget)."""
    if hasattr(process, "replies"):
        process.replies = replies
    return process


def _decided(run: _CheckRun, table: _CallTable) -> bool:
    """Whether the check's outcome is known: every case answered, or a failure before any gap."""
    if run.known_to_hold(table):
        return True
    for index, keys in enumerate(run.keys):
        if any(key not in table.outcomes for key in keys):
            return False
        if run.find(index, [table.outcomes[key] for key in keys]) is not None:
            return True
    return True


_CALL_TEXTS: dict[int, tuple[Call, str]] = {}


def _call_text(call: Call) -> str:
    """``format_call`` of a planned call, once per process: plans are shared, and printing arrays is slow."""
    hit = _CALL_TEXTS.get(id(call))
    if hit is None or hit[0] is not call:
        hit = _CALL_TEXTS[id(call)] = (call, format_call(call.function, call.args))
    return hit[1]


_VERIFIED: dict[tuple[int, int], tuple[Check, list[Case], str]] = {}


def _verified(check: Check, cases: list[Case]) -> str:
    """``check.verified(cases)``, once per process: plans share their case lists between submissions."""
    key = (id(check), id(cases))
    hit = _VERIFIED.get(key)
    if hit is None or hit[0] is not check or hit[1] is not cases:
        hit = _VERIFIED[key] = (check, cases, check.verified(cases))
    return hit[2]


def _judge_run(run: _CheckRun, table: _CallTable) -> CheckResult:
    """The check's result from its answered cases: the first failing one is the smallest."""
    check, entry = run.check, run.entry
    description = check.describe(entry)
    if run.known_to_hold(table):
        return _result(check, "passed", passed_reason(description, _verified(check, run.cases)))
    first: tuple[list[Call], Finding] | None = None
    failures = 0
    for index, (case, plan, keys) in enumerate(zip(run.cases, run.plans, run.keys)):
        if any(key not in table.outcomes for key in keys):
            continue
        mine = [table.outcomes[key] for key in keys]
        finding = run.find(index, mine, shown=first is None)  # only the first failure is written out
        if finding is None:
            continue
        failures += 1
        if first is None:
            first = (plan, finding)
        if not run.failing and (finding.status == "failed" or all(o.status in ("ok", "raised") for o in mine)):
            run.failing.append((index, plan, mine))  # diagnosis compares the first (the others' answers are let go)
    if first is None:
        if run.memo is not None:
            run.memo.remember_held(run, table)
        return _result(check, "passed", passed_reason(description, _verified(check, run.cases)))
    plan, finding = first
    run.finding = finding
    call_text = _call_text(plan[0])
    reveal = check.visibility == "public" or check.reveal == "full"
    reason = failure_reason(description, call_text, finding, diagnosis=None, hint=check.hint,
                            more=failures - 1, reveal=reveal)
    return CheckResult(
        id=check.id, status=finding.status, score=0.0, max_score=check.points, visibility=check.visibility,
        reason=reason, property=description, input=call_text if reveal else None,
        expected=finding.expected if reveal else None, got=finding.got if reveal else None,
        hint=(check.hint or None) if reveal else None, more_failures=failures - 1,
        note=(finding.note or None) if reveal else None,
    )


def _judge(check: Check, entry: str, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
    if check.expects_exception and all(o.status in ("ok", "raised") for o in outcomes):
        return check.judge(case, outcomes)
    for outcome in outcomes:
        if outcome.status == "timeout":
            return Finding(got=outcome.detail, expected="an answer within the time limit", status="timeout")
        if outcome.status != "ok":
            return Finding(got=describe_error(outcome, entry), expected="a returned array", status="error")
    try:
        return check.judge(case, outcomes)
    except Exception as exc:  # a value so odd the property cannot even be computed on it
        return Finding(got=f"a value the check could not use ({exc.__class__.__name__}: {exc})",
                       expected="an array of the documented shape")


def _result(check: Check, status: str, reason: str) -> CheckResult:
    return CheckResult(id=check.id, status=status, score=check.points if status == "passed" else 0.0,  # type: ignore[arg-type]
                       max_score=check.points, visibility=check.visibility, reason=reason)


def _unimportable(exercise: ImplementationExercise, checks: list[Check], start: StartOutcome, hidden: int,
                  output: str | None = None) -> ExerciseResult:
    why = describe_start_failure(start)
    status = "timeout" if start.status == "timeout" else "error"
    result = _whole(exercise, checks, "error", status, f"Not run: {why}.", hidden)
    result.reason = f"{why[0].upper()}{why[1:]}; none of its checks could run."
    result.output = output or None
    return result


def _whole(exercise: ImplementationExercise, checks: list[Check], status: str, check_status: str, reason: str,
           hidden: int) -> ExerciseResult:
    return ExerciseResult(
        id=exercise.id, title=exercise.title, kind=exercise.kind, status=status,  # type: ignore[arg-type]
        score=0.0, max_score=exercise.max_score, reason=reason, hidden_not_run=hidden,
        checks=[_result(check, check_status, reason) for check in checks],
    )


def _apply_gate(exercise: ImplementationExercise, results: list[CheckResult]) -> None:
    """Withhold the points of passing checks while the exercise's gate check does not pass."""
    gate = next((r for r in results if r.id == exercise.gate), None)
    if gate is None or gate.status == "passed":
        return
    check = next(c for c in exercise.checks if c.id == gate.id)
    entry = exercise.entry_of(check)
    what = check.describe(entry)
    same_entry = {c.id for c in exercise.checks if exercise.entry_of(c) == entry}
    for result in results:
        if result.status == "passed" and result.id != gate.id and result.id in same_entry:
            result.status = "skipped"
            result.score = 0.0
            result.reason = (f"Not credited yet: this property held, but it counts only once {what} "
                             f"(check {gate.id}). {result.reason}")


def _summarise(exercise: ImplementationExercise, results: list[CheckResult], hidden: int,
               output: str | None) -> ExerciseResult:
    _apply_gate(exercise, results)
    passed = [r for r in results if r.status == "passed"]
    score = float(sum(r.score for r in results))
    if len(passed) == len(results):
        status = "passed"
        reason = f"All {len(results)} checks passed."
        if hidden:
            reason = (f"All {len(results)} public checks passed; {hidden} hidden check{'s' if hidden != 1 else ''} "
                      "will run when your work is graded.")
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
    return ExerciseResult(id=exercise.id, title=exercise.title, kind=exercise.kind, status=status,  # type: ignore[arg-type]
                          score=score, max_score=exercise.max_score, reason=reason, checks=results,
                          output=output, hidden_not_run=hidden)


def _diagnose(
    exercise: ImplementationExercise,
    runs: list[_CheckRun],
    factory: ProcessFactory,
    root: Path,
    cache: dict[str, list[CallOutcome]] | None,
    plan: _Plan | None = None,
) -> dict[str, str]:
    """For each failed check, the misconception of the first known-wrong solution whose output matches.

    A known-wrong solution answers every call of the exercise's plan once per
    session (``cache``), so later learners, whatever input they fail on, are
    diagnosed by comparing outputs, without starting a process.
    """
    wanted = [(run, run.failing[0]) for run in runs if run.failing]
    if not wanted or not exercise.known_wrong:
        return {}
    found: dict[str, str] = {}
    failing = {run.check.id for run, _ in wanted}
    for wrong in exercise.known_wrong:
        if not failing.intersection(wrong.must_fail):
            continue  # a known-wrong solution only explains failures of the checks it is known to fail
        answers = _known_wrong_answers(exercise, wrong.path, runs, wanted, factory, root, cache, plan)
        for run, (index, _, mine) in wanted:
            theirs = answers(run, index)
            if (run.check.id not in found and run.check.id in wrong.must_fail and len(theirs) == len(mine)
                    and all(map(_same, mine, theirs))
                    and _judge(run.check, run.entry, run.cases[index], theirs) is not None):
                found[run.check.id] = wrong.misconception
    return found


def _known_wrong_answers(exercise: ImplementationExercise, relative: str, runs: list[_CheckRun],
                         wanted: list[tuple[_CheckRun, tuple[int, list[Call], list[CallOutcome]]]],
                         factory: ProcessFactory, root: Path, cache: dict[str, list[CallOutcome]] | None,
                         plan: _Plan | None) -> Any:
    """A function ``(run, case index) -> outcomes`` of one known-wrong solution on that case's calls."""
    path = root / relative

    def ask(encoded: list[dict[str, Any]], blobs: list[bytes]) -> list[CallOutcome]:
        return _ask_known_wrong(factory, path, exercise, encoded, blobs)

    if plan is not None:  # every call of the plan, once per session (and on disk between runs)
        key = f"{relative}:plan:{id(plan)}"
        outcomes = cache.get(key) if cache is not None else None
        if outcomes is None:
            outcomes = stored_answers(exercise, plan.check_ids(), path.read_bytes(),
                                      lambda: ask(*plan.encode(list(range(len(plan.table.calls))))))
            if cache is not None:
                cache[key] = outcomes
        table = dict(enumerate(outcomes))
        return lambda run, index: [table[key] for key in run.keys[index] if key in table]
    calls = [call for _, (_, calls, _) in wanted for call in calls]  # no plan: only the failing calls
    encoded, blobs = encode_calls(calls, {name: list(spec.args) for name, spec in exercise.entries.items()})
    digest = digests.sha256(json.dumps(encoded, sort_keys=True).encode() + b"".join(blobs)).hexdigest()
    key = f"{relative}:{digest}"
    outcomes = cache.get(key) if cache is not None else None
    if outcomes is None:
        outcomes = ask(encoded, blobs)
        if cache is not None:
            cache[key] = outcomes
    positions: dict[int, list[CallOutcome]] = {}
    position = 0
    for run, (index, calls, _) in wanted:
        positions[id(run)] = outcomes[position: position + len(calls)]
        position += len(calls)
    return lambda run, index: positions.get(id(run), [])


def _ask_known_wrong(factory: ProcessFactory, path: Path, exercise: ImplementationExercise,
                     encoded: list[dict[str, Any]], blobs: list[bytes]) -> list[CallOutcome]:
    """A known-wrong solution's answers to ``encoded``; calls cut short by a crash or hang are asked again once."""
    outcomes = [CallOutcome(status="not_run")] * len(encoded)
    for batch in (True, False):
        missing = [i for i, outcome in enumerate(outcomes) if outcome.status == "not_run"]
        if not missing:
            break
        process = factory.open({path.name: path.read_bytes()}, path.name, list(exercise.entries), exercise.time_limit)
        try:
            if process.start().status != "ok":
                break
            items = [encoded[i] for i in missing] if batch is False else encoded
            answers = process.call_many(items, blobs, batch=batch)
        finally:
            process.close()
        for i, outcome in zip(missing if batch is False else range(len(encoded)), answers):
            outcomes[i] = outcome
    return outcomes


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
            for x, y in zip(a.inputs_after, b.inputs_after)
        ):
            return False
    for x, y in zip(a.values, b.values):
        if x.shape != y.shape or x.dtype.kind != y.dtype.kind:
            return False
        if x.dtype.kind in "biuf" and y.dtype.kind in "biuf":
            if not np.allclose(x.astype(float), y.astype(float), rtol=1e-6, atol=1e-9, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def _apply_diagnosis(result: CheckResult, run: _CheckRun, misconception: str) -> None:
    if result.status not in ("failed", "error") or not (result.visibility == "public" or run.check.reveal == "full"):
        return
    result.diagnosis = misconception
    finding = run.finding or Finding(got=result.got or "", expected=result.expected or "")
    result.reason = failure_reason(result.property or run.check.describe(run.entry), result.input, finding,
                                   diagnosis=misconception, hint=run.check.hint, more=result.more_failures, reveal=True)
