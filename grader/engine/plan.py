"""An exercise's plan: its cases turned into calls, the unique calls in a table, and their encodings.

A plan depends only on the spec, the checks asked for and the grader's code,
so it is built once per grading session (``GradingMemo.plan``) and kept on
disk between runs (``engine.disk_cache``). Every submission then gets a
fresh view of the plan's call table (``CallTable.fresh``) to fill with its
own answers.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field
from msgspec.structs import replace

from grader.checks.base import Call, Check
from grader.checks.cases import Case, build_cases
from grader.checks.display import format_call
from grader.memo import BoundedMemo
from grader.sandbox.calls import CallBatch, encode_calls, shift_payloads
from grader.sandbox.outcomes import CallOutcome

if TYPE_CHECKING:
    from grader.spec.models import ImplementationExercise

__all__ = ["CallTable", "Plan", "PlannedCheck", "build_plan", "checks_to_run"]

_BATCHES_KEPT = 8


class PlannedCheck(Struct):
    """One check of a plan: its entry, its cases, each case's calls and those calls' numbers in the table."""

    check: Check
    entry: str
    cases: list[Case]
    calls: list[list[Call]]
    keys: list[list[int]]


class Plan(Struct):
    """What an exercise asks of every submission: its cases, calls and their encodings, built once.

    Besides the calls, a plan keeps what is worked out on them once for
    every submission: each call's encoding, the batches asked for, call
    texts and pass reasons. What checks concluded on learners' answers is
    not the plan's: ``findings.PlanFindings`` keeps it.
    """

    exercise: ImplementationExercise
    table: CallTable
    checks: list[PlannedCheck]
    signatures: dict[str, list[str]]
    whole_keys: list[int]
    encoded: dict[int, tuple[dict[str, Any], list[bytes]]] = field(default_factory=dict)
    batches: BoundedMemo[tuple[int, ...], CallBatch] = field(default_factory=lambda: BoundedMemo(_BATCHES_KEPT))
    call_texts: dict[tuple[str, int], str] = field(default_factory=dict)
    verified: dict[str, str] = field(default_factory=dict)
    # The reference's answers to the plan's reference calls and, by check id, the first case it failed on:
    # asked once per session (``instructor_runs.reference_outcomes``), used for every submission.
    expected: dict[int, CallOutcome] | None = None
    expected_failures: dict[str, tuple[int, str]] = field(default_factory=dict)
    limits: dict[float, dict[int, float]] = field(default_factory=dict)

    def whole(self) -> tuple[list[int], CallBatch]:
        """Every call of the plan, in the order a submission's first request asks for them, and that request."""
        return self.whole_keys, self.encode(self.whole_keys)

    def check_ids(self) -> tuple[str, ...]:
        """The ids of the plan's checks, in order: with the spec, what its entries on disk are filed under."""
        return tuple(planned.check.id for planned in self.checks)

    def encode(self, keys: list[int]) -> CallBatch:
        """The calls numbered ``keys`` as one batch, reusing each call's encoding (and the batch, when asked before)."""
        return self.batches.setdefault_with(tuple(keys), lambda: self._encode(keys))

    def call_limits(self, default: float) -> dict[int, float]:
        """The calls whose time limit is not ``default`` (the exercise's): the largest ``time_limit`` of the
        checks asking for each (a check without one asks for ``default``). Worked out once: every submission
        asks, and the plan names thousands of calls."""
        limits = self.limits.get(default)
        if limits is None:
            wanted: dict[int, float] = {}
            for planned in self.checks:
                limit = planned.check.time_limit or default
                for keys in planned.keys:
                    for key in keys:
                        if limit > wanted.get(key, 0.0):
                            wanted[key] = limit
            limits = self.limits[default] = {key: limit for key, limit in wanted.items() if limit != default}
        return limits

    def call_text(self, planned: PlannedCheck, index: int) -> str:
        """``format_call`` of the first call of case ``index`` of a planned check.

        Written once, because arrays print slowly.
        """
        key = (planned.check.id, index)
        text = self.call_texts.get(key)
        if text is None:
            call, item = planned.calls[index][0], getattr(planned.check, "item", None)
            upto = item if isinstance(item, str) else None  # a script is shown up to the value the check judges
            text = self.call_texts[key] = format_call(call.function, call.args, upto)
        return text

    def verified_text(self, planned: PlannedCheck) -> str:
        """``check.verified(cases)`` of a planned check, written once."""
        text = self.verified.get(planned.check.id)
        if text is None:
            text = self.verified[planned.check.id] = planned.check.verified(planned.cases)
        return text

    def _encode(self, keys: list[int]) -> CallBatch:
        items: list[dict[str, Any]] = []
        blobs: list[bytes] = []
        for key in keys:
            if key not in self.encoded:
                single = encode_calls([self.table.calls[key]], self.signatures)
                self.encoded[key] = (single.calls[0], single.blobs)
            item, payload = self.encoded[key]
            items.append(shift_payloads(item, len(blobs)))
            blobs.extend(payload)
        return CallBatch.of(items, blobs)


def checks_to_run(exercise: ImplementationExercise, public_only: bool) -> list[Check]:
    """The exercise's checks, or only its public ones."""
    return [c for c in exercise.checks if not public_only or c.visibility == "public"]


def build_plan(exercise: ImplementationExercise, checks: list[Check], cases_of: Any = None) -> Plan:
    """The plan of ``checks`` on ``exercise``: each check's cases, their calls, numbered in one table.

    ``cases_of(exercise, name, kinds)``: where a named case set comes from
    (a session's memo shares them between plans); by default it is built.
    """
    table = CallTable()
    signatures = {name: list(spec.args) for name, spec in exercise.entries.items()}
    kinds_of = {name: dict(spec.args) for name, spec in exercise.entries.items()}
    planned = []
    built: dict[str, list[Case]] = {}
    for check in checks:
        entry = exercise.entry_of(check)
        kinds: dict[str, str] = dict(exercise.entries[entry].args)
        cases: list[Case] = []
        for name in check.cases:
            if name not in built:
                built[name] = (
                    cases_of(exercise, name, kinds)
                    if cases_of is not None
                    else build_cases(list(exercise.cases[name]), kinds, (exercise.id, name))
                )
            cases.extend(built[name])
        cases = cases or [Case(args={})]
        calls = [check.plan_in(case, entry, kinds_of) for case in cases]
        keys = [[table.add(call, merge=check.merge_calls) for call in case_calls] for case_calls in calls]
        planned.append(PlannedCheck(check, entry, cases, calls, keys))
    # Only the learner's calls go to the learner's process; the reference solution answers the others.
    whole = list(
        dict.fromkeys(
            key for p in planned for case_keys in p.keys for key in case_keys if table.calls[key].on == "learner"
        )
    )
    guard = {key for p in planned if p.check.id == exercise.gate for case_keys in p.keys for key in case_keys}
    guard -= {key for p in planned if p.check.id != exercise.gate for case_keys in p.keys for key in case_keys}
    return Plan(exercise, table, planned, signatures, _unmarked(whole, guard, table))


def _unmarked(keys: list[int], guard: set[int], table: CallTable) -> list[int]:
    """``keys`` with the guard's own calls spread among the others, each at a place its bytes alone fix.

    The guard's calls (an input, then its near twins) would otherwise come
    together, after every other check's: an order a learner's code could
    read. The other calls keep their order (simplest first, check by check).
    """
    names = {number: name for name, number in table.index.items()}
    others = {key: index for index, key in enumerate(key for key in keys if key not in guard)}

    def place(key: int) -> float:
        if key in others:
            return others[key] + 0.5
        digest = hashlib.blake2b(names[key].encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64 * (len(others) + 1)

    return sorted(keys, key=place)


class CallTable:
    """Unique calls across an exercise's checks, and what each returned once answered."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.calls: list[Call] = []
        self.outcomes: dict[int, CallOutcome] = {}

    def fresh(self) -> CallTable:
        """The same calls with no answers yet: one submission's view of a shared plan."""
        view = CallTable()
        view.index, view.calls = self.index, self.calls
        return view

    def add(self, call: Call, merge: bool = True) -> int:
        """The call's number; an identical earlier call's number when ``merge``."""
        key = encode_calls([Call(call.function, call.args)]).key
        if call.on != "learner":
            key += f"@{call.on}"
        if call.on_answer:
            key += "@answer"
        if not merge:
            key += f"#{len(self.calls)}"
        if key not in self.index:
            self.index[key] = len(self.calls)
            self.calls.append(replace(call))
        number = self.index[key]
        if call.return_inputs and not self.calls[number].return_inputs:
            self.calls[number] = replace(self.calls[number], return_inputs=True)
        return number

    def numbers(self, on: str) -> list[int]:
        """The numbers of the calls answered by ``on`` (``learner`` or ``reference``), in order.

        A reference call made from a learner's answer (``on_answer``) is not
        among them: what it asks is known only once that answer is in.
        """
        return [n for n, call in enumerate(self.calls) if call.on == on and not call.on_answer]

    def needed(self, keys_of_checks: list[list[list[int]]]) -> list[int]:
        """Unanswered calls among ``keys_of_checks`` (each check's keys per case), in check then case order."""
        seen: dict[int, None] = {}
        for keys_of_cases in keys_of_checks:
            for keys in keys_of_cases:
                for key in keys:
                    if key not in self.outcomes:
                        seen.setdefault(key)
        return list(seen)

    def resolve_all(self, keys: list[int], outcome: CallOutcome) -> None:
        """Give every call numbered ``keys`` the same outcome (none of them will be asked)."""
        for key in keys:
            self.outcomes[key] = outcome
