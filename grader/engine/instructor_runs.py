"""Instructor solutions run like learners: a reference or known-wrong solution answers a plan's calls.

The grader holds no implementation of any exercise's answer. Expected values
come from the exercise's own reference solution, run outside the grader's
process in a learner process with the learner's limits, on the calls a plan
marks ``on="reference"``; a known-wrong solution answers the learner's calls
for diagnosis. Either file answers a batch of calls once per session
(``GradingMemo.instructor``) and once between runs (``disk_cache.stored_answers``,
keyed by the file's bytes, the spec, the checks and the batch), so a second
grading session starts no instructor process.

A released handout has no reference solution: its spec names
``reference_answers``, a data file of the reference's answers to the public
checks' reference calls (``answers_file``), read instead.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.checks.base import Call
from grader.checks.display import format_call
from grader.checks.given import compiled_source
from grader.engine.disk_cache import stored_answers
from grader.engine.plan import Plan, PlannedCheck
from grader.sandbox.calls import CallBatch, encode_calls
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.protocol import ProtocolError, decode_array, encode_array
from grader.sandbox.replies import ReplyBudget

if TYPE_CHECKING:
    from grader.engine.memory import GradingMemo
    from grader.sandbox.contracts import ProcessFactory
    from grader.spec.models import ImplementationExercise

__all__ = [
    "SKIPPED",
    "answers_file",
    "ask_kept",
    "ask_solution",
    "fill_answer_calls",
    "given_source",
    "read_answers_file",
    "reference_failure",
    "reference_outcomes",
    "solution_answers",
]

# The outcome of an ``on_answer`` call that was not asked (the learner's answer gave nothing to verify).
SKIPPED = CallOutcome(status="ok", kind="skipped", digest=bytes(16))
_NO_REFERENCE = "was not available (the exercise names no reference solution or answers for it)"


def given_source(exercise: ImplementationExercise, root: Path | None) -> str:
    """The source of the exercise's given functions (its public ``functions:`` file, then its
    ``given_functions:`` compiled by ``grader.checks.given``), or ``""`` without any."""
    written = compiled_source(exercise.given_functions)
    if exercise.functions is None or root is None:
        return written
    source = (root / exercise.functions).read_text(encoding="utf-8")
    return f"{source.rstrip()}\n\n{written}" if written else source


def solution_answers(
    exercise: ImplementationExercise,
    path: Path,
    plan: Plan,
    calls: CallBatch,
    factory: ProcessFactory,
    memo: GradingMemo,
    given: str = "",
    *,
    kept: bool = False,
) -> list[CallOutcome]:
    """An instructor file's answers to ``calls``: asked once per session, and kept on disk between runs.

    ``given``: the source of the exercise's given functions (``given_source``),
    sent with the calls that hand one over. ``kept``: ask a process the
    session keeps for this file (``GradingMemo.kept``), for the few calls
    made from each learner's answer, rather than start one per learner.
    """
    calls = calls.with_given(given)

    def stored() -> list[CallOutcome]:
        files = {path.name: path.read_bytes()}
        ask = ask_kept if kept else ask_solution
        return stored_answers(
            exercise,
            plan.check_ids(),
            files[path.name] + b"\0" + calls.key.encode(),  # the key covers the given source
            lambda: ask(factory, files, path.name, exercise, calls, memo),
        )

    return memo.instructor.setdefault_with((str(path), calls.key), stored)


def ask_kept(
    factory: ProcessFactory,
    files: dict[str, bytes],
    module: str,
    exercise: ImplementationExercise,
    calls: CallBatch,
    memo: GradingMemo,
) -> list[CallOutcome]:
    """An instructor file's answers to ``calls`` from the process the session keeps for it (started once).

    A process that ends, or answers a call with anything but a value or an
    exception, is closed and the calls asked again of a fresh one-off process
    (``ask_solution``), so a kept process never decides a failure alone.
    """
    key = (module, hashlib.blake2b(b"\0".join(files.values()), digest_size=16).hexdigest(), exercise.time_limit)
    process = memo.kept.get(key)
    if process is None or not process.alive:
        process = factory.open(files, module, list(exercise.entries), exercise.time_limit)
        if process.start().status != "ok":
            process.close()
            return ask_solution(factory, files, module, exercise, calls, memo)
        memo.keep(key, process)
    process.replies = ReplyBudget()  # each batch of answers is charged afresh: the session asks many
    answers = process.call_many(calls, batch=True)
    if all(answer.status in ("ok", "raised") for answer in answers):
        return answers
    memo.kept.pop(key, None)
    process.close()
    return ask_solution(factory, files, module, exercise, calls, memo)


def ask_solution(
    factory: ProcessFactory,
    files: dict[str, bytes],
    module: str,
    exercise: ImplementationExercise,
    calls: CallBatch,
    memo: GradingMemo | None = None,
) -> list[CallOutcome]:
    """An instructor file's answers to ``calls`` in a learner process; calls cut short are asked again once."""
    outcomes = [CallOutcome(status="not_run", detail="the file could not be imported")] * len(calls)
    for batch in (True, False):
        missing = [i for i, outcome in enumerate(outcomes) if outcome.status == "not_run"]
        if not missing:
            break
        process = factory.open(files, module, list(exercise.entries), exercise.time_limit)
        try:
            if process.start().status != "ok":
                break
            answers = process.call_many(calls if batch else calls.only(missing), batch=batch)
        finally:
            process.close()
        for i, outcome in zip(range(len(calls)) if batch else missing, answers, strict=True):
            outcomes[i] = outcome
    return outcomes


def reference_outcomes(
    exercise: ImplementationExercise, plan: Plan, factory: ProcessFactory, memo: GradingMemo, root: Path | None
) -> dict[int, CallOutcome]:
    """The reference solution's answers to the plan's reference calls, by call number (kept on the plan).

    From the reference solution run in a learner process, or, in a handout,
    from its answers file. Without either, every reference call fails with
    a note saying so (the checks that need one report an error). The first
    case each check's reference calls failed on is kept in
    ``plan.expected_failures`` (``reference_failure``).
    """
    if root is None:  # nothing to ask: not kept, so a later call that names a root asks the reference
        return _reference_outcomes(exercise, plan, factory, memo, root)
    if plan.expected is None:
        plan.expected = _reference_outcomes(exercise, plan, factory, memo, root)
        for planned in plan.checks:
            failed = _first_failure(planned, plan.expected, on_answer=False)
            if failed is not None:
                plan.expected_failures[planned.check.id] = failed
    return plan.expected


def _reference_outcomes(
    exercise: ImplementationExercise, plan: Plan, factory: ProcessFactory, memo: GradingMemo, root: Path | None
) -> dict[int, CallOutcome]:
    keys = plan.table.numbers("reference")
    if not keys:
        return {}
    if root is not None and exercise.reference_answers is not None:
        held = read_answers_file(root / exercise.reference_answers, memo)
        missing = CallOutcome(status="not_run", detail="the handout's reference answers do not cover this call")
        by_key = {number: key for key, number in plan.table.index.items()}
        return {number: held.get(by_key[number], missing) for number in keys}
    if root is None or exercise.reference_solution is None:
        return dict.fromkeys(keys, CallOutcome(status="not_run", detail=_NO_REFERENCE))
    path = root / exercise.reference_solution
    answers = solution_answers(exercise, path, plan, plan.encode(keys), factory, memo, given_source(exercise, root))
    return dict(zip(keys, answers, strict=True))


def fill_answer_calls(
    exercise: ImplementationExercise,
    plan: Plan,
    outcomes: dict[int, CallOutcome],
    factory: ProcessFactory,
    memo: GradingMemo,
    root: Path | None,
    *,
    kept: bool = False,
) -> None:
    """Answer the plan's ``on_answer`` calls from the learner answers in ``outcomes`` (which they join).

    Each is the reference solution's function applied to what a learner
    call returned (``Check.answer_args``); an answer with nothing to show
    the reference is ``SKIPPED``. ``kept``: ask the reference process the
    session keeps (only while a learner's process holds the sandbox's
    shared slot, so the kept one never takes it).
    """
    asked: dict[int, Call] = {}
    for planned in plan.checks:
        if not planned.check.plans_answer_calls:
            continue
        for index, (calls, keys) in enumerate(zip(planned.calls, planned.keys, strict=True)):
            for call, key in zip(calls, keys, strict=True):
                if not call.on_answer or key in outcomes:
                    continue
                answer = outcomes.get(keys[0])
                args = None
                if answer is not None and answer.status == "ok":
                    args = planned.check.answer_args(planned.cases[index], answer)
                if args is None:
                    outcomes[key] = SKIPPED
                else:
                    asked[key] = Call(call.function, args, on="reference")
    if not asked:
        return
    if root is None or exercise.reference_solution is None:
        for key in asked:
            outcomes[key] = CallOutcome(status="not_run", detail=_NO_REFERENCE)
        return
    path = root / exercise.reference_solution
    batch = encode_calls(list(asked.values()), plan.signatures)
    answers = solution_answers(exercise, path, plan, batch, factory, memo, given_source(exercise, root), kept=kept)
    outcomes.update(zip(asked, answers, strict=True))


def reference_failure(plan: Plan, planned: PlannedCheck, outcomes: dict[int, CallOutcome]) -> tuple[int, str] | None:
    """The first case on which the reference solution gave no usable number, with what it did; else ``None``.

    ``outcomes``: a submission's, with its ``on_answer`` calls answered
    (``fill_answer_calls``); the plan's own reference calls were judged once
    (``plan.expected_failures``).
    """
    if plan.expected is None:
        return _first_failure(planned, outcomes, on_answer=False)
    static = plan.expected_failures.get(planned.check.id)
    dynamic = _first_failure(planned, outcomes, on_answer=True) if planned.check.plans_answer_calls else None
    found = [failure for failure in (static, dynamic) if failure is not None]
    return min(found) if found else None


def _first_failure(
    planned: PlannedCheck, outcomes: dict[int, CallOutcome], *, on_answer: bool
) -> tuple[int, str] | None:
    """The first case whose reference calls (made from an answer, or not) gave no usable number."""
    for index, (calls, keys) in enumerate(zip(planned.calls, planned.keys, strict=True)):
        for call, key in zip(calls, keys, strict=True):
            if call.on != "reference" or call.on_answer != on_answer:
                continue
            outcome = outcomes.get(key)
            what = _failure(outcome) if outcome is not None and outcome is not SKIPPED else ""
            if what:
                return index, f"{what} in {_made(call, calls[0])}"
    return None


def _made(call: Call, first: Call) -> str:
    """The reference call as made (``f(n=8)``) when its arguments are not the case's own, else ``f()``."""
    made = format_call(call.function, call.args)
    return made if made != format_call(first.function, first.args) else f"{call.function}()"


def _failure(outcome: CallOutcome) -> str:
    if outcome.status == "raised":
        error = outcome.error or {}
        return f"raised {error.get('type', 'an exception')}: {error.get('message', '')}".rstrip(": ")
    if outcome.status == "timeout":
        return "ran out of time"
    if outcome.status == "bad_value":
        message = (outcome.error or {}).get("message", "")
        return f"returned a value that is not a number{f' ({message})' if message else ''}"
    if outcome.status != "ok":
        return outcome.detail or f"gave no value ({outcome.status})"
    if outcome.kind == "skipped":
        return ""
    odd = [value.dtype for value in outcome.values if value.dtype.kind not in "biuf"]
    return f"returned a value of dtype {odd[0]}, not a number" if odd else ""


def answers_file(plan: Plan, outcomes: dict[int, CallOutcome]) -> str:
    """The reference's answers to a plan's reference calls as JSON (for a handout), by each call's table key.

    Only returned values are written: arrays as the wire's checked array
    encoding (base64), never pickle.
    """
    by_number = {number: key for key, number in plan.table.index.items()}
    written: dict[str, Any] = {}
    for number in plan.table.numbers("reference"):
        outcome = outcomes.get(number)
        if outcome is None or outcome.status != "ok":
            continue
        written[by_number[number]] = {
            "kind": outcome.kind,
            "types": list(outcome.types),
            "values": [base64.b64encode(encode_array(value)).decode("ascii") for value in outcome.values],
        }
        if outcome.keys:  # a dict's field names (a class's kept values): the values alone name no field
            written[by_number[number]]["keys"] = list(outcome.keys)
    return json.dumps({"format": 1, "answers": written}, sort_keys=True, indent=1) + "\n"


def read_answers_file(path: Path, memo: GradingMemo) -> dict[str, CallOutcome]:
    """A handout's reference answers (``answers_file``), read once per session; an unreadable file holds none."""
    return memo.answer_files.setdefault_with(str(path), lambda: _read_answers(path))


def _read_answers(path: Path) -> dict[str, CallOutcome]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        answers = data["answers"]
        held: dict[str, CallOutcome] = {}
        for key, item in answers.items():
            values = [decode_array(base64.b64decode(text)) for text in item["values"]]
            keys = item.get("keys", [])
            if (item["kind"] == "mapping") != bool(keys) or (keys and len(keys) != len(values)):
                raise ValueError("a mapping's field names do not match its values")
            digest = hashlib.blake2b(json.dumps(item, sort_keys=True).encode(), digest_size=16).digest()
            held[str(key)] = CallOutcome(
                status="ok",
                values=values,
                kind=str(item["kind"]),
                types=[str(t) for t in item["types"]],
                digest=digest,
                keys=[str(name) for name in keys],
            )
        return held
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ProtocolError):
        return {}
