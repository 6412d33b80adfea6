"""Reading a learner process's answers: each checked before it is used, batches taken apart, known ones reused.

The learner process is untrusted: every count, size and index of an answer
is checked before anything is cut or allocated, and its text is cleaned
(``untrusted``). Arrays are decoded without pickle (``protocol``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct

from grader.memo import BoundedMemo
from grader.sandbox.frames import LimitExceeded
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.protocol import MAX_FIELD_NAME, ProtocolError, check_array, decode_array
from grader.sandbox.replies import size_error
from grader.sandbox.untrusted import clean_error, clean_float_errors, clean_type

__all__ = [
    "MAX_BATCH",
    "KnownAnswers",
    "WireOutcome",
    "answer_digest",
    "decode_answer",
    "numbers_only",
    "printed_marks",
    "refused_reply",
    "unbatch",
]

MAX_BATCH = 1 << 16
_KEEP_DECODED_BYTES = 64 << 10


def refused_reply(exc: ProtocolError) -> CallOutcome:
    """The outcome of a reply that was not read: over one of its limits (a fact: which, and its size), or malformed."""
    if isinstance(exc, LimitExceeded):
        return CallOutcome(status="bad_value", error=size_error(exc.scope, exc.limit))
    return CallOutcome(status="protocol", detail=f"{exc}")


def numbers_only(outcome: CallOutcome) -> CallOutcome:
    """The outcome as a reader of numbers alone takes it: a result that is a mapping or holds a string is a value
    that is not numbers, refused as the learner process refuses any other (the type it had, as a fact)."""
    if not outcome.holds_text_or_fields():
        return outcome
    name = "dict" if outcome.kind == "mapping" else "str"
    message = f"returned a value that is not an array of numbers ({name})"
    return CallOutcome(status="bad_value", error=clean_error({"type": "TypeError", "message": message, "frames": []}))


def decode_answer(index: int, header: dict[Any, Any], payload: list[bytes]) -> CallOutcome:
    """The outcome of answer ``index`` as the process sent it: every count and array checked, text cleaned.

    An ``ok`` answer's arrays are decoded on first use (``WireOutcome``); an
    answer that breaks the protocol becomes a ``protocol`` outcome, never an
    exception.
    """
    if header.get("op") != "result" or header.get("index") != index:
        return CallOutcome(status="protocol", detail="the process sent an answer out of order")
    if not header.get("ok"):
        error = clean_error(header.get("error"))
        status = "bad_value" if header.get("stage") == "value" else "raised"
        return CallOutcome(status=status, error=error)  # type: ignore[arg-type]
    try:
        n_values = int(header.get("values", 0))
        n_inputs = int(header.get("inputs", 0))
        if n_values + n_inputs != len(payload) or n_values < 1:
            raise ProtocolError("payload count mismatch")
        for blob in payload:
            check_array(blob)
    except (ProtocolError, TypeError, ValueError) as exc:
        return CallOutcome(status="protocol", detail=f"{exc}")
    kind = str(header.get("kind")) if header.get("kind") in ("tuple", "mapping") else "single"
    types = [clean_type(t) for t in header.get("types", [])][:n_values] if isinstance(header.get("types"), list) else []
    keys = header.get("keys", []) if kind == "mapping" else []
    problem = _form_problem(kind, types, keys, n_values, payload)
    if problem:
        return CallOutcome(status="protocol", detail=problem)
    float_errors = clean_float_errors(header.get("float_errors"))
    digest = answer_digest(kind, types, n_values, payload, float_errors, keys)
    return WireOutcome(payload, n_values, kind, types, digest, float_errors, keys)


def _form_problem(kind: str, types: list[str], keys: Any, n_values: int, payload: list[bytes]) -> str:
    """What is wrong with an answer's form (a mapping's field names, a string's array), or empty.

    Field names are compared with a spec's, so they must be what the learner process sends: distinct short
    strings, one per value. A string travels as a 1-D array of 32-bit code points, and nothing else may say so.
    """
    if kind == "mapping" and (
        type(keys) is not list
        or len(keys) != n_values
        or not all(type(key) is str and 0 < len(key) <= MAX_FIELD_NAME for key in keys)
        or len(set(keys)) != len(keys)
    ):
        return "the field names of a returned mapping are malformed"
    for type_name, blob in zip(types, payload, strict=False):
        if type_name == "str":
            dtype, shape, _, _ = check_array(blob)
            if dtype.kind != "u" or dtype.itemsize != 4 or len(shape) != 1:
                return "a returned string is malformed"
    return ""


class WireOutcome(CallOutcome):
    """An ``ok`` outcome as it arrived: its payloads checked, its arrays decoded on first use.

    Most outcomes are never looked at: their finding is remembered by digest
    from an earlier submission that returned the same bytes.
    """

    def __init__(
        self,
        payload: list[bytes],
        n_values: int,
        kind: str,
        types: list[str],
        digest: bytes,
        float_errors: list[dict[str, Any]] | None = None,
        keys: list[str] | None = None,
    ) -> None:
        self._payload, self._n_values = payload, n_values
        self._arrays: list[Any] | None = None
        super().__init__(
            status="ok", kind=kind, types=types, digest=digest, float_errors=float_errors or [], keys=keys or []
        )

    def release(self) -> None:
        """Forget the decoded arrays of a large answer (a check has judged it); they are decoded again if read again.

        Small answers (every answer of the catalog's references) stay decoded
        for the next check that reads them: decoding them again would cost more than they hold.
        """
        if self._arrays is not None and sum(map(len, self._payload)) > _KEEP_DECODED_BYTES:
            self._arrays = None

    @property
    def payload_bytes(self) -> int:
        """The bytes of its arrays as they arrived."""
        return sum(map(len, self._payload))

    @property
    def decoded(self) -> bool:
        """Whether its arrays are held decoded now (``release`` lets a large answer's go)."""
        return self._arrays is not None

    def _decoded(self) -> list[Any]:
        if self._arrays is None:
            arrays = [decode_array(blob) for blob in self._payload]  # checked on arrival: cannot fail
            for array in arrays:
                array.flags.writeable = False  # an outcome may be shared (``KnownAnswers``): nobody changes it
            self._arrays = arrays
        return self._arrays

    @property
    def values(self) -> list[Any]:
        return self._decoded()[: self._n_values]

    @values.setter
    def values(self, arrays: list[Any]) -> None:
        if arrays:  # only the dataclass's empty default ever arrives here
            raise AttributeError("the arrays of a received outcome are what the process sent")

    @property
    def inputs_after(self) -> list[Any]:
        return self._decoded()[self._n_values :]

    @inputs_after.setter
    def inputs_after(self, arrays: list[Any]) -> None:
        if arrays:
            raise AttributeError("the arrays of a received outcome are what the process sent")


def unbatch(header: dict[str, Any], blobs: list[bytes]) -> list[tuple[dict[str, Any], list[bytes]]]:
    """The answers of a ``results`` message (a batch, ``child``), as if each had come alone.

    Every count, size and index is checked before anything is cut: a
    malformed batch raises ``ProtocolError`` (the sender cannot be trusted).
    Each answer is then checked by ``decode_answer`` as any other.
    """
    kinds, answers, sizes, first = header.get("kinds"), header.get("answers"), header.get("sizes"), header.get("first")
    if (
        not isinstance(kinds, list)
        or not isinstance(answers, list)
        or not isinstance(sizes, list)
        or type(first) is not int
        or first < 0
        or len(blobs) != 1
        or len(kinds) > MAX_BATCH
        or len(answers) > MAX_BATCH
        or len(sizes) > MAX_BATCH
        or not all(type(kind) is int and 0 <= kind < len(kinds) for kind in answers)
        or not all(type(size) is int and size >= 0 for size in sizes)
        or sum(sizes) != len(blobs[0])
    ):
        raise ProtocolError("a batch of answers is malformed")
    counts = [_array_count(entry) for entry in kinds]
    data, offset, taken = blobs[0], 0, 0
    out: list[tuple[dict[str, Any], list[bytes]]] = []
    for number, kind in enumerate(answers):
        count = counts[kind]
        if taken + count > len(sizes):
            raise ProtocolError("a batch of answers names more arrays than it holds")
        payload = []
        for size in sizes[taken : taken + count]:
            payload.append(data[offset : offset + size])
            offset += size
        taken += count
        out.append(({**kinds[kind], "op": "result", "index": first + number}, payload))
    if taken != len(sizes):
        raise ProtocolError("a batch of answers holds arrays no answer names")
    return out


def printed_marks(header: dict[str, Any], count: int) -> list[tuple[int, int]]:
    """The ``printed`` marks of a ``results`` message of ``count`` answers (``answer_batches.Answers``): pairs of an
    answer's number in the batch and the bytes the process had printed by the end of its call.

    Checked like the rest of a batch: anything but pairs of numbers naming answers of the batch raises
    ``ProtocolError``. A batch of calls that printed nothing has none.
    """
    marks = header.get("printed")
    if marks is None:
        return []
    if (
        not isinstance(marks, list)
        or len(marks) > count
        or not all(
            type(mark) is list
            and len(mark) == 2
            and type(mark[0]) is int
            and type(mark[1]) is int
            and 0 <= mark[0] < count
            and mark[1] >= 0
            for mark in marks
        )
    ):
        raise ProtocolError("a batch of answers is malformed")
    return [(number, printed) for number, printed in marks]


def _array_count(entry: Any) -> int:
    """How many arrays an answer header of a batch says it comes with; ``ProtocolError`` if it makes no sense."""
    if not isinstance(entry, dict):
        raise ProtocolError("a batch of answers is malformed")
    if entry.get("ok") is not True:
        return 0
    values, inputs = entry.get("values", 0), entry.get("inputs", 0)
    if type(values) is not int or type(inputs) is not int or values < 0 or inputs < 0:
        raise ProtocolError("a batch of answers is malformed")
    return values + inputs


def answer_digest(
    kind: str,
    types: list[str],
    n_values: int,
    payload: list[bytes],
    float_errors: Sequence[Mapping[str, Any]] = (),
    keys: Sequence[str] = (),
) -> bytes:
    """What a call returned, exactly, in 16 bytes (each array's frame holds its dtype, shape and bytes).

    NumPy's floating-point errors count too: the same numbers with an overflow are a different answer, and
    so do a mapping's field names.
    """
    digest = hashlib.blake2b(f"{kind}\0{n_values}\0{chr(31).join(types)}\0".encode(), digest_size=16)
    if keys:
        digest.update(json.dumps(list(keys)).encode() + b"\0")
    if float_errors:
        digest.update(json.dumps(float_errors, sort_keys=True).encode() + b"\0")
    for blob in payload:
        digest.update(len(blob).to_bytes(8, "little"))
        digest.update(blob)
    return digest.digest()


class _KnownBatch(Struct):
    first: Any
    kinds: Any
    answers: Any
    sizes: Any
    data: bytes
    outcomes: list[CallOutcome]


class KnownAnswers:
    """Recent batches of answers whose every answer was ``ok``, by their exact bytes, with their outcomes.

    A class's correct submissions return the same numbers, so a batch whose
    bytes are exactly those of a recent one gets that batch's outcomes again
    without being taken apart a second time. Found only on an exact match
    (payload, answer headers and first index), so a hit is what decoding
    would give. The outcomes are shared, which is safe because their arrays
    are read-only (``WireOutcome``) and nothing else in them changes once
    decoded. Bounded in bytes too: a learner returning large arrays must not
    fill the grader (a batch kept holds up to three times its bytes: itself,
    each answer's part, the decoded arrays).

    Where a batch is new, its answers may not be: the child cuts its batches
    by time as well as by size, so two learners returning the same numbers
    seldom send the same batches. Each ``ok`` answer is therefore kept as
    well, by its header and bytes, and a batch is taken apart (``decode``)
    reusing the outcome of every answer seen before.
    """

    def __init__(
        self,
        limit: int = 64,
        max_batch_bytes: int = 1 << 18,
        max_bytes: int = 4 << 20,
        answer_limit: int = 8192,
        max_answer_bytes: int = 8 << 20,
    ) -> None:
        self._max_batch_bytes = max_batch_bytes
        self._batches: BoundedMemo[bytes, _KnownBatch] = BoundedMemo(
            limit, max_weight=max_bytes, weigh=lambda batch: len(batch.data)
        )
        # An answer kept weighs its bytes twice (as it came and decoded) and its share of the key.
        self._answers: BoundedMemo[tuple[Any, ...], WireOutcome] = BoundedMemo(
            answer_limit, max_weight=max_answer_bytes, weigh=lambda outcome: 2 * outcome.payload_bytes + 256
        )

    def decode(self, header: dict[str, Any], blobs: list[bytes]) -> list[CallOutcome]:
        """Every answer of a ``results`` message, checked and decoded (``unbatch``, ``decode_answer``), an answer
        with exactly the header and bytes of one decoded before getting that one's outcome (what decoding it would
        give: the index, the only part of a header that differs, is checked by ``unbatch``)."""
        answers = unbatch(header, blobs)
        kinds = [json.dumps(kind, sort_keys=True) for kind in header["kinds"]]  # checked by unbatch
        outcomes: list[CallOutcome] = []
        for (answer, payload), number in zip(answers, header["answers"], strict=True):
            key = (kinds[number], *payload)
            outcome: CallOutcome | None = self._answers.get(key)
            if outcome is None:
                outcome = decode_answer(answer["index"], answer, payload)
                if type(outcome) is WireOutcome:
                    self._answers[key] = outcome
            outcomes.append(outcome)
        return outcomes

    @property
    def held_bytes(self) -> int:
        """The payload bytes of the batches kept."""
        return self._batches.weight

    @staticmethod
    def key(blobs: list[bytes]) -> bytes | None:
        """What a batch is filed under: a digest of its one payload (``None``: not a batch that is kept)."""
        return hashlib.blake2b(blobs[0], digest_size=16).digest() if len(blobs) == 1 else None

    def find(self, header: dict[str, Any], blobs: list[bytes], key: bytes | None = None) -> list[CallOutcome] | None:
        """The outcomes of a batch with exactly these bytes and headers, or ``None``."""
        key = key if key is not None else self.key(blobs)
        known = self._batches.get(key) if key is not None else None
        if known is None:
            return None
        if (
            type(header.get("first")) is not int
            or header["first"] != known.first
            or known.data != blobs[0]
            or header.get("sizes") != known.sizes
            or header.get("answers") != known.answers
            or header.get("kinds") != known.kinds
        ):
            return None
        return known.outcomes

    def remember(
        self, header: dict[str, Any], blobs: list[bytes], outcomes: list[CallOutcome], key: bytes | None = None
    ) -> None:
        """Keep a decoded batch whose every answer was ``ok`` (and not too large) for the next learner."""
        key = key if key is not None else self.key(blobs)
        if (
            key is None
            or not outcomes
            or len(blobs[0]) > self._max_batch_bytes
            or not all(type(o) is WireOutcome for o in outcomes)
        ):
            return
        self._batches[key] = _KnownBatch(
            header["first"], header["kinds"], header["answers"], header["sizes"], bytes(blobs[0]), outcomes
        )
