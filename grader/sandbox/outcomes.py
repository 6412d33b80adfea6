"""What a learner process did with a request, as plain data for the parent to judge.

These are facts (a status, the arrays returned, the error reported, why the
process stopped: ``Stop``); the sentences a learner reads are written from
them by ``grader.engine.reasons``, never here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
import numpy as np

__all__ = ["CallOutcome", "Phase", "StartOutcome", "Stop", "hit_cpu_limit"]

Phase = Literal["call", "import", "self-test"]

CallStatus = Literal["ok", "raised", "bad_value", "timeout", "crashed", "output_limit", "protocol", "not_run"]


class Stop(msgspec.Struct, frozen=True):
    """Why a learner process stopped answering, as facts: the limit hit, how it ended, in which phase.

    ``kind``: ``timeout`` (no answer within ``seconds`` of wall clock;
    ``cpu_used`` CPU seconds over the wait when measured; ``budget`` when the
    exercise's whole time budget ran out first), ``output_limit`` (printed
    more than ``output_cap`` bytes), ``ended`` (it ended by itself: ``end``
    holds its exit status or signal and the CPU time it used, judged against
    ``cpu_seconds`` and ``file_bytes``), ``closed`` (it closed its channel).
    """

    kind: Literal["timeout", "output_limit", "ended", "closed"]
    phase: Phase = "call"
    seconds: float = 0.0
    cpu_used: float | None = None
    budget: bool = False
    output_cap: int = 0
    end: Mapping[str, Any] = msgspec.field(default_factory=dict)
    cpu_seconds: float = 0.0
    file_bytes: int = 0


def hit_cpu_limit(end: Mapping[str, Any], cpu_seconds: float) -> bool:
    """Whether a process that ended by itself was stopped by its CPU-time limit (a timeout, not a crash)."""
    name = end.get("signal_name")
    cpu = end.get("cpu")
    soft = float(int(-(-cpu_seconds // 1)))  # the kernel's limit is whole seconds
    return name == "SIGXCPU" or (name == "SIGKILL" and isinstance(cpu, (int, float)) and cpu >= soft - 0.05)


@dataclass
class CallOutcome:
    """One call's result: decoded arrays when ``status == "ok"``, otherwise why not.

    ``stop`` says why the process stopped (a timeout, a crash, a flood), as
    facts; ``detail`` is a fixed note for the other non-ok statuses ("the
    process had already ended"). ``reasons.outcome_detail`` phrases either.
    ``digest`` identifies exactly what an ``ok`` call returned (types, bytes,
    inputs after the call, floating-point errors): two outcomes with the same
    digest are judged alike. ``float_errors``: NumPy's floating-point errors
    during an ``ok`` call, the first of each kind (``kind``: ``overflow``,
    ``invalid`` or ``divide``; ``in``: the ufunc; ``file``, ``line``,
    ``text``: the learner's line that raised it, where known).

    The result's form: ``kind`` is ``single`` (one item), ``tuple`` or
    ``mapping`` (a dict, its field names in ``keys``, in order); ``types``
    names each item's Python type. An item of type ``str`` travels as the
    array of its code points: ``item`` and ``value`` give it back as text.
    """

    status: CallStatus
    values: list[np.ndarray] = field(default_factory=list)
    kind: str = "single"
    types: list[str] = field(default_factory=list)
    inputs_after: list[np.ndarray] = field(default_factory=list)
    error: dict[str, Any] | None = None
    detail: str = ""
    stop: Stop | None = None
    digest: bytes | None = field(default=None, compare=False, repr=False)
    float_errors: list[dict[str, Any]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    @property
    def value(self) -> Any:
        """What the call returned: one item, a tuple of items, or a dict of them (an item is an array or a str)."""
        items = [self.item(position) for position in range(len(self.values))]
        if self.kind == "mapping":
            return dict(zip(self.keys, items, strict=False))
        return tuple(items) if self.kind == "tuple" else items[0]

    def item(self, position: int) -> Any:
        """Item ``position`` of the result: its array, or its text when the learner returned a ``str``."""
        array = self.values[position]
        if position < len(self.types) and self.types[position] == "str" and array.ndim == 1 and array.dtype.kind == "u":
            return "".join(chr(code) if code < 0x110000 else "\ufffd" for code in array.tolist())
        return array

    def holds_text_or_fields(self) -> bool:
        """Whether the result is a mapping or holds a string: more than numbers, which most checks judge alone."""
        return self.status == "ok" and (self.kind == "mapping" or "str" in self.types)

    def release(self) -> None:
        """Let go of decoded arrays that can be decoded again (only answers read off the wire have any)."""


class StartOutcome(msgspec.Struct):
    """How importing the submission went, and which sandbox layers held.

    ``entries``: whether the module defines each entry name; ``defaults``: for
    each entry defined, its parameters and the text of each one's default
    (``None``: no default), as ``sandbox.signatures`` describes them.
    """

    status: Literal["ok", "raised", "timeout", "crashed", "output_limit", "protocol"]
    entries: dict[str, bool] = msgspec.field(default_factory=dict)
    defaults: dict[str, dict[str, str | None]] = msgspec.field(default_factory=dict)
    layers: dict[str, Any] = msgspec.field(default_factory=dict)
    error: dict[str, Any] | None = None
    detail: str = ""
    stop: Stop | None = None
