"""What a learner process did with a request, as plain data for the parent to judge."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

__all__ = ["CallOutcome", "StartOutcome"]

CallStatus = Literal["ok", "raised", "bad_value", "timeout", "crashed", "output_limit", "protocol", "not_run"]


@dataclass
class CallOutcome:
    """One call's result: decoded arrays when ``status == "ok"``, otherwise why not.

    ``detail`` is a short learner-facing phrase for the non-ok statuses
    ("no answer within 2.0 s", "the process exited with status 0").
    ``digest`` identifies exactly what an ``ok`` call returned (types, bytes,
    inputs after the call): two outcomes with the same digest are judged alike.
    """

    status: CallStatus
    values: list[np.ndarray] = field(default_factory=list)
    kind: str = "single"
    types: list[str] = field(default_factory=list)
    inputs_after: list[np.ndarray] = field(default_factory=list)
    error: dict[str, Any] | None = None
    detail: str = ""
    digest: bytes | None = field(default=None, compare=False, repr=False)

    @property
    def value(self) -> Any:
        """The single returned array, or the tuple of arrays."""
        return tuple(self.values) if self.kind == "tuple" else self.values[0]

    def release(self) -> None:
        """Let go of decoded arrays that can be decoded again (only answers read off the wire have any)."""


@dataclass
class StartOutcome:
    """How importing the submission went, and which sandbox layers held."""

    status: Literal["ok", "raised", "timeout", "crashed", "output_limit", "protocol"]
    entries: dict[str, bool] = field(default_factory=dict)
    layers: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    detail: str = ""
