"""The engine's disk cache: built plans, instructor solutions' answers and held outputs, kept as plain data.

An exercise's plan (its cases, every check's calls, the table of unique
calls) depends only on the spec, the grader's code and numpy, so a cold
``grader grade`` reads it back (``engine.plan_data``) instead of drawing its
cases and planning their calls again; the loaded plan refers to the live
exercise and checks, exactly as a fresh build does.

An instructor solution's answers to a whole plan (a known-wrong solution's,
which diagnosis compares a failing learner with, and the reference's
expected values) are kept in the grader's cache folder (:mod:`grader.cache`:
JSON, a private folder, its safety rules and switches), keyed by the plan's
key, the solution file's bytes and the learner-process code; only answers
that every call gave in full (returned, raised or refused a value: never a
time-out or crash, which could depend on the machine's load) are kept. So
are the outputs on which every case of a check held (``stored_held``), and
the calls chosen to tell the known-wrong solutions apart (``stored_separation``).

Every entry here is filed under one key scheme: the plan's key
(:func:`plan_key`: the spec file's cache key, the checks asked for, numpy's
version, Python's, the wire format's code and the engine's), extended by what the entry
depends on besides the plan. Exercises that did not come from a spec file
have no key, and nothing of theirs is kept.

An entry is rebuilt only from checked data: an answer's arrays are the wire's
checked encoding (``protocol.check_array``, base64 in the JSON), its digest is
worked out again from them, and its error report must be one the learner
process's reader (``sandbox.untrusted``) would have produced; a plan's data
is checked the same way (``plan_data.plan_from_data``).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader import cache
from grader.engine.findings import PlanFindings
from grader.engine.plan import Plan
from grader.engine.plan_data import plan_data, plan_from_data
from grader.engine.separation import Separation, separation_data, separation_from_data
from grader.sandbox.answers import WireOutcome, answer_digest
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.protocol import ProtocolError, check_array, encode_array
from grader.sandbox.untrusted import clean_error, clean_float_errors, clean_type

__all__ = [
    "keep_held",
    "plan_key",
    "store_held",
    "stored_answers",
    "stored_held",
    "stored_plan",
    "stored_separation",
]

_SANDBOX = Path(__file__).resolve().parents[1] / "sandbox"
_WIRE = (_SANDBOX / "protocol.py", _SANDBOX / "calls.py")
_ENGINE = Path(__file__).resolve().parent
_FINAL = ("ok", "raised", "bad_value")
_DIGEST_BYTES = 16


@functools.lru_cache(maxsize=1)
def _environment() -> bytes:
    """What a plan depends on beyond the spec and ``grader/checks``: numpy's draws, the wire format, Python,
    and the engine that builds plans and judges what they are kept with (``grader/engine``)."""
    import numpy

    digest = hashlib.sha256(f"{numpy.__version__}\0{sys.version_info[:2]}\0".encode())
    for path in (*_WIRE, *sorted(_ENGINE.glob("*.py"))):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.digest()


def plan_key(exercise: Any, check_ids: tuple[str, ...]) -> str | None:
    """The cache key of ``exercise``'s plan for these checks, or ``None`` when it came from no spec file."""
    spec = cache.origin(exercise)
    if spec is None:
        return None
    return hashlib.sha256(_environment() + spec.encode() + "\0".join(check_ids).encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def _sandbox_code() -> bytes:
    """What a learner process runs: the child, its confinement and the protocol."""
    digest = hashlib.sha256()
    for path in sorted([*_SANDBOX.glob("*.py"), *(_SANDBOX / "confine").glob("*.py")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.digest()


def stored_plan(exercise: Any, checks: list[Any], build: Callable[[Any, list[Any]], Plan]) -> Plan:
    """The plan from the cache when present, else ``build(exercise, checks)``, stored for the next run.

    A loaded plan refers to the live ``exercise`` and ``checks``, exactly as a fresh build does.
    """
    key = plan_key(exercise, tuple(check.id for check in checks)) if cache.enabled() else None
    if key is None:
        return build(exercise, checks)
    plan = cache.load(key, lambda data: plan_from_data(data, exercise, checks), kind="plan")
    if plan is not None:
        return plan
    plan = build(exercise, checks)
    _store_plan(key, plan, exercise, checks)
    return plan


def _store_plan(key: str, plan: Plan, exercise: Any, checks: list[Any]) -> None:
    """Keep ``plan`` only when its data, read back, writes the very same data (else it is built each run)."""
    try:
        data = plan_data(plan)
        text = json.dumps(data)
        if json.dumps(plan_data(plan_from_data(json.loads(text), exercise, checks))) != text:
            return
    except (TypeError, ValueError, RecursionError):
        return
    cache.store(key, data, kind="plan")


def stored_answers(
    exercise: Any, check_ids: tuple[str, ...], source: bytes, ask: Callable[[], list[CallOutcome]]
) -> list[CallOutcome]:
    """An instructor solution's answers to the whole plan: from the cache when present, else ``ask()``, kept."""
    plan = plan_key(exercise, check_ids) if cache.enabled() else None
    if plan is None:
        return ask()
    key = hashlib.sha256(plan.encode() + _sandbox_code() + source).hexdigest()
    answers = cache.load(key, _answers, kind="known-wrong")
    if answers is not None:
        return answers
    answers = ask()
    if all(answer.status in _FINAL for answer in answers):
        try:
            written = [_answer_data(answer) for answer in answers]
        except (TypeError, ValueError):  # a value the wire cannot carry: asked again next time
            return answers
        cache.store(key, written, kind="known-wrong")
    return answers


def stored_separation(
    exercise: Any, check_ids: tuple[str, ...], source: bytes, choose: Callable[[], Separation]
) -> Separation:
    """The plan's separating calls (``engine.separation``): from the cache when present, else ``choose()``, kept.

    ``source``: the bytes of every solution whose answers the choice was made
    from (the reference's and each known-wrong's, with the given functions).
    """
    plan = plan_key(exercise, check_ids) if cache.enabled() else None
    if plan is None:
        return choose()
    key = hashlib.sha256(plan.encode() + _sandbox_code() + b"separation\0" + source).hexdigest()
    kept = cache.load(key, separation_from_data, kind="separation")
    if kept is not None:
        return kept
    separation = choose()
    cache.store(key, separation_data(separation), kind="separation")
    return separation


def _answer_data(answer: CallOutcome) -> dict[str, Any]:
    """One final answer as plain data: its arrays in the wire's encoding, its error report as read."""
    if answer.status != "ok":
        return {"status": answer.status, "error": answer.error, "detail": answer.detail}
    payload = [encode_array(value) for value in [*answer.values, *answer.inputs_after]]
    data = {
        "status": "ok",
        "kind": answer.kind,
        "types": list(answer.types),
        "values": len(answer.values),
        "payload": [base64.b64encode(blob).decode("ascii") for blob in payload],
        "float_errors": answer.float_errors,
    }
    return {**data, "keys": list(answer.keys)} if answer.keys else data


def _answers(data: Any) -> list[CallOutcome]:
    """The answers of a cache entry (``_answer_data``), each checked; ``ValueError`` for anything else."""
    if type(data) is not list:
        raise ValueError("the answers are not a list")
    return [_answer(item) for item in data]


def _answer(item: Any) -> CallOutcome:
    if type(item) is not dict:
        raise ValueError("an answer is not a mapping")
    status = item.get("status")
    if status in ("raised", "bad_value"):
        if item.keys() != {"status", "error", "detail"} or type(item["detail"]) is not str:
            raise ValueError(f"a {status} answer has other fields than the grader writes")
        error = item["error"]
        if error is not None and (type(error) is not dict or not _as_read(error)):
            raise ValueError("an error report that the learner process's reader would not have produced")
        return CallOutcome(status=status, error=error, detail=item["detail"])
    fields = {"status", "kind", "types", "values", "payload", "float_errors"}
    if status != "ok" or item.keys() - {"keys"} != fields:
        raise ValueError("an answer that is neither returned, raised nor refused")
    kind, types, count, encoded, float_errors = (
        item[k] for k in ("kind", "types", "values", "payload", "float_errors")
    )
    keys = item.get("keys", [])
    if kind not in ("single", "tuple", "mapping") or type(types) is not list or any(clean_type(t) != t for t in types):
        raise ValueError("an answer's kind or types are not as read")
    if type(count) is not int or type(encoded) is not list or not 1 <= count <= len(encoded):
        raise ValueError("an answer's count of values does not fit its payload")
    if clean_float_errors(float_errors) != float_errors:
        raise ValueError("an answer's floating-point errors are not as read")
    try:
        payload = [base64.b64decode(text, validate=True) for text in encoded]
        for blob in payload:
            check_array(blob)
    except (TypeError, binascii.Error, ProtocolError, IndexError) as problem:
        raise ValueError(f"an answer's arrays are not the wire's encoding ({problem})") from None
    if (kind == "mapping") != bool(keys) or (keys and (type(keys) is not list or len(keys) != count)):
        raise ValueError("an answer's field names do not fit its values")
    if keys and not all(type(key) is str for key in keys):
        raise ValueError("an answer's field names are not strings")
    digest = answer_digest(kind, types, count, payload, float_errors, keys)
    return WireOutcome(payload, count, kind, types, digest, float_errors, keys)


def _as_read(error: dict[str, Any]) -> bool:
    """Whether ``error`` holds, for every key the reader keeps, just what the reader would have kept."""
    cleaned = clean_error(error)
    return all(error.get(key) == value for key, value in cleaned.items()) and all(
        type(value) in (str, int, float, bool, type(None)) for key, value in error.items() if key not in cleaned
    )


def stored_held(exercise: Any, check_ids: tuple[str, ...]) -> dict[str, set[bytes]]:
    """For each check of the plan, the digests of whole outputs on which every case held (empty when none kept).

    A digest covers every call's answer bytes (``findings.signature_of``); the key
    covers the spec, the check code, numpy, Python and the learner-process code
    that computes those digests, so a kept one always means what it meant.
    """
    key = _held_key(exercise, check_ids)
    value = cache.load(key, _held, kind="held") if key is not None else None
    return value or {}


def _held(data: Any) -> dict[str, set[bytes]]:
    """Held digests by check id, each 16 bytes written in hex; ``ValueError`` for anything else."""
    if type(data) is not dict:
        raise ValueError("held outputs are not a mapping")
    held: dict[str, set[bytes]] = {}
    for name, kept in data.items():
        if type(kept) is not list or not all(type(d) is str and len(d) == 2 * _DIGEST_BYTES for d in kept):
            raise ValueError(f"the held outputs of {name!r} are not digests")
        held[name] = {bytes.fromhex(d) for d in kept}
    return held


def store_held(exercise: Any, check_ids: tuple[str, ...], held: dict[str, set[bytes]]) -> None:
    """Keep ``held`` (see :func:`stored_held`) for the next run; a process grading in parallel may overwrite it."""
    key = _held_key(exercise, check_ids)
    if key is not None:
        data = {name: sorted(d.hex() for d in kept if len(d) == _DIGEST_BYTES) for name, kept in held.items() if kept}
        cache.store(key, data, kind="held")


def _held_key(exercise: Any, check_ids: tuple[str, ...]) -> str | None:
    plan = plan_key(exercise, check_ids) if cache.enabled() else None
    return None if plan is None else hashlib.sha256(plan.encode() + _sandbox_code() + b"held").hexdigest()


def keep_held(found: PlanFindings) -> None:
    """Save the outputs every case of a check held on, when a submission added some (:func:`store_held`)."""
    held = found.new_held()
    if held is not None:
        store_held(found.plan.exercise, found.plan.check_ids(), held)
