"""The checks' disk cache: built plans, known-wrong answers and held outputs, kept between runs.

An exercise's plan (its cases, every check's calls, the table of unique
calls and their wire encodings) depends only on the spec, the grader's code
and numpy, so a cold ``grader grade`` loads it instead of drawing its cases
and encoding their calls again. It is stored beside the
validated specs (:mod:`grader.cache`: the same private folder, safety
rules and switches), keyed by the spec file's cache key (its bytes and the
fingerprint of ``grader/spec`` and ``grader/checks``), the checks asked
for, numpy's version and the wire format's code (``sandbox/protocol.py``
and ``sandbox/calls.py``): any change to one of them misses, so a plan
stored by other code is never loaded. The exercise and its checks are not stored: the loaded plan refers
to the live objects (pickle persistent ids), exactly as a fresh build does.
Exercises that did not come from a spec file are always built.

A known-wrong solution's answers to a whole plan (what diagnosis compares a
failing learner with) are kept the same way, keyed by the plan's key, the
solution file's bytes and the learner-process code; only answers that every
call gave in full (returned, raised or refused a value: never a time-out or
crash, which could depend on the machine's load) are kept. So are the
outputs on which every case of a check held (``stored_held``).

Every entry here is filed under one key scheme: the plan's key
(:func:`plan_key`), extended by what the entry depends on besides the plan.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader import cache
from grader.checks.plan import Plan
from grader.sandbox.outcomes import CallOutcome

__all__ = ["keep_held", "plan_key", "store_held", "stored_answers", "stored_held", "stored_plan"]

_SANDBOX = Path(__file__).resolve().parents[1] / "sandbox"
_WIRE = (_SANDBOX / "protocol.py", _SANDBOX / "calls.py")
_FINAL = ("ok", "raised", "bad_value")


@functools.lru_cache(maxsize=1)
def _environment() -> bytes:
    """What a plan depends on beyond the spec and ``grader/checks``: numpy's draws, the wire format, Python."""
    import numpy

    digest = hashlib.sha256(f"{numpy.__version__}\0{sys.version_info[:2]}\0".encode())
    for path in _WIRE:
        digest.update(path.read_bytes())
    return digest.digest()


def plan_key(exercise: Any, check_ids: tuple[str, ...]) -> str | None:
    """The cache key of ``exercise``'s plan for these checks, or ``None`` when it came from no spec file."""
    spec = cache.origin(exercise)
    if spec is None:
        return None
    return hashlib.sha256(_environment() + spec.encode() + "\0".join(check_ids).encode()).hexdigest()


def stored_plan(exercise: Any, checks: list[Any], build: Callable[[Any, list[Any]], Plan]) -> Plan:
    """The plan from the cache when present, else ``build(exercise, checks)``, stored for the next run."""
    key = plan_key(exercise, tuple(check.id for check in checks)) if cache.enabled() else None
    if key is None:
        return build(exercise, checks)
    live: dict[Any, Any] = {"exercise": exercise, **{("check", i): check for i, check in enumerate(checks)}}
    plan = cache.load(key, kind="plan", persistent_load=lambda pid: live[pid if isinstance(pid, str) else tuple(pid)])
    if isinstance(plan, Plan) and plan.exercise is exercise:
        return plan
    plan = build(exercise, checks)
    cache.store(key, _encoded(plan), kind="plan", persistent_id=lambda obj: _live_name(obj, exercise, checks))
    return plan


def _live_name(obj: Any, exercise: Any, checks: list[Any]) -> Any:
    """What a live object of the plan is stored as (the exercise, a check), or ``None`` to store it whole."""
    if obj is exercise:
        return "exercise"
    for i, check in enumerate(checks):
        if obj is check:
            return ("check", i)
    return None


def _encoded(plan: Plan) -> Plan:
    """The plan with every call's wire encoding made, so the next run reuses those too."""
    plan.encode(list(range(len(plan.table.calls))))
    return plan


@functools.lru_cache(maxsize=1)
def _sandbox_code() -> bytes:
    """What a learner process runs: the child, its confinement and the protocol."""
    digest = hashlib.sha256()
    for path in sorted([*_SANDBOX.glob("*.py"), *(_SANDBOX / "confine").glob("*.py")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.digest()


def stored_answers(
    exercise: Any, check_ids: tuple[str, ...], source: bytes, ask: Callable[[], list[CallOutcome]]
) -> list[CallOutcome]:
    """A known-wrong solution's answers to the whole plan: from the cache when present, else ``ask()``, kept."""
    plan = plan_key(exercise, check_ids) if cache.enabled() else None
    if plan is None:
        return ask()
    key = hashlib.sha256(plan.encode() + _sandbox_code() + source).hexdigest()
    answers = cache.load(key, kind="known-wrong")
    if isinstance(answers, list):
        return answers
    answers = ask()
    if all(answer.status in _FINAL for answer in answers):
        cache.store(key, answers, kind="known-wrong")
    return answers


def stored_held(exercise: Any, check_ids: tuple[str, ...]) -> dict[str, set[bytes]]:
    """For each check of the plan, the digests of whole outputs on which every case held (empty when none kept).

    A digest covers every call's answer bytes (``findings.signature_of``); the key
    covers the spec, the check code, numpy, Python and the learner-process code
    that computes those digests, so a kept one always means what it meant.
    """
    key = _held_key(exercise, check_ids)
    value = cache.load(key, kind="held") if key is not None else None
    if not isinstance(value, dict):
        return {}
    return {
        str(name): {d for d in kept if type(d) is bytes and len(d) == 16}
        for name, kept in value.items()
        if isinstance(kept, (list, tuple, set))
    }


def store_held(exercise: Any, check_ids: tuple[str, ...], held: dict[str, set[bytes]]) -> None:
    """Keep ``held`` (see :func:`stored_held`) for the next run; a process grading in parallel may overwrite it."""
    key = _held_key(exercise, check_ids)
    if key is not None:
        cache.store(key, {name: sorted(kept) for name, kept in held.items() if kept}, kind="held")


def _held_key(exercise: Any, check_ids: tuple[str, ...]) -> str | None:
    plan = plan_key(exercise, check_ids) if cache.enabled() else None
    return None if plan is None else hashlib.sha256(plan.encode() + _sandbox_code() + b"held").hexdigest()


def keep_held(plan: Plan) -> None:
    """Save the outputs every case of a check held on, when a submission added some (:func:`store_held`)."""
    if any(found.changed for found in plan.findings.values()):
        store_held(plan.exercise, plan.check_ids(), {name: found.held for name, found in plan.findings.items()})
        for found in plan.findings.values():
            found.changed = False
