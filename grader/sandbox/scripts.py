"""Scripts: how a class entry is exercised, one whole script in one call of the learner process.

A script constructs the learner's class once, then calls methods in order,
reads attributes or properties, and may expect a step to raise. The values a
script keeps (``keep``) come back as one answer, a dict from each kept name
to its value, so every check that judges a field of a returned dict judges
them. A step that fails (the learner's code raised, or did not raise where
the script expects it to) ends the script, and the answer names the step's
number: the grader phrases the steps up to it.

The parent side (``Script``, ``Step``, ``encode_script``) and the learner
side (``run_script``) share this module. Standard library and numpy only:
the learner process imports it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.sandbox.learner_errors import describe_exception

__all__ = [
    "MAX_STEPS",
    "Script",
    "ScriptFailure",
    "Step",
    "decode_script",
    "encode_script",
    "run_script",
    "unsendable_step",
]

# A script is written by an author; its length is bounded so that one answer's header stays small.
MAX_STEPS = 200
_OPS = ("new", "call", "read")


@dataclass(frozen=True, eq=False)
class Step:
    """One step: ``new`` (construct with ``args``), ``call`` (method ``name`` with ``args``) or ``read``
    (attribute or property ``name``); ``keep`` names the value kept, ``raises`` the exception expected."""

    op: str
    name: str = ""
    args: tuple[tuple[str, Any], ...] = ()
    keep: str = ""
    raises: str = ""


@dataclass(frozen=True, eq=False)
class Script:
    """A case of a class entry: its steps, in order (the first constructs the object)."""

    steps: tuple[Step, ...]

    def kept(self) -> list[str]:
        """The names of the values the script keeps, in order."""
        return [step.keep for step in self.steps if step.keep]

    def upto(self, name: str | None) -> int:
        """The number of steps up to and including the one keeping ``name`` (all of them when none keeps it)."""
        for number, step in enumerate(self.steps):
            if name is not None and step.keep == name:
                return number + 1
        return len(self.steps)


def encode_script(script: Script, value: Callable[[Any], dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps as JSON, each argument encoded by ``value`` (the call encoder's: arrays go as payloads)."""
    encoded = []
    for step in script.steps:
        item: dict[str, Any] = {"op": step.op, "name": step.name, "args": {k: value(v) for k, v in step.args}}
        if step.keep:
            item["keep"] = step.keep
        if step.raises:
            item["raises"] = step.raises
        encoded.append(item)
    return encoded


def decode_script(steps: Any, value: Callable[[dict[str, Any]], Any]) -> list[dict[str, Any]]:
    """Steps as sent (``encode_script``), each argument decoded by ``value``; ``ValueError`` when malformed."""
    if not isinstance(steps, list) or not 0 < len(steps) <= MAX_STEPS:
        raise ValueError("a script of no known form")
    decoded = []
    for step in steps:
        if not isinstance(step, dict) or step.get("op") not in _OPS or not isinstance(step.get("args", {}), dict):
            raise ValueError("a script step of no known form")
        args = {str(k): value(v) for k, v in step.get("args", {}).items()}
        decoded.append(dict(step, args=args))
    return decoded


class ScriptFailure(Exception):
    """A step of a script failed: ``step`` is its number; ``cause`` what the learner's code raised (``None``
    when it raised nothing where ``expected`` was due)."""

    def __init__(self, step: int, cause: BaseException | None, expected: str = "") -> None:
        super().__init__(step)
        self.step, self.cause, self.expected = step, cause, expected

    def report(self, scratch: str) -> dict[str, Any]:
        """The facts for the grader: what the step raised (or ``kind: not-raised``), its number, what was due."""
        if self.cause is None:
            error: dict[str, Any] = {"type": "", "message": "", "frames": [], "kind": "not-raised"}
        else:
            error = describe_exception(self.cause, scratch)
        error["step"] = self.step
        if self.expected:
            error["expected"] = self.expected[:100]
        return error


def run_script(entry: Any, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Run the steps on the learner's class ``entry``: the values kept, by name; ``ScriptFailure`` on a step
    that fails.

    Each kept value is copied when it is read, so a later step that changes
    the object's state never changes what an earlier read saw.
    """
    kept: dict[str, Any] = {}
    target: Any = None
    for number, step in enumerate(steps):
        expected = str(step.get("raises") or "")
        try:
            if step["op"] == "new":
                value = target = entry(**step["args"])
            elif step["op"] == "call":
                value = getattr(target, str(step["name"]))(**step["args"])
            else:
                value = getattr(target, str(step["name"]))
        except BaseException as exc:  # SystemExit included: the learner's code ends only this step
            if expected and _is_a(exc, expected):
                if step.get("keep"):
                    kept[str(step["keep"])] = type(exc).__name__
                continue
            raise ScriptFailure(number, exc, expected) from exc
        if expected:
            raise ScriptFailure(number, None, expected)
        if step.get("keep"):
            kept[str(step["keep"])] = _snapshot(value)
    return kept


def unsendable_step(
    steps: list[dict[str, Any]], kept: Any, encode: Callable[[Any], Any]
) -> tuple[int, BaseException] | None:
    """Of a script whose kept values cannot all be sent: the step that kept the first one ``encode`` refuses
    (each value alone, as if returned), and why; ``None`` when none is refused alone."""
    if type(kept) is not dict:  # pragma: no cover - run_script returns a dict
        return None
    for number, step in enumerate(steps):
        if step.get("keep") in kept:
            try:
                encode(kept[step["keep"]])
            except BaseException as exc:
                return number, exc
    return None


def _is_a(exc: BaseException, name: str) -> bool:
    """Whether ``exc`` is an instance of a class named ``name`` (a subclass counts, as ``except`` would)."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def _snapshot(value: Any) -> Any:
    """``value`` as it is now: arrays and plain lists copied (an object's own state may change later)."""
    if type(value) is np.ndarray:
        return value.copy()
    if type(value) in (list, tuple, dict):
        try:
            return copy.deepcopy(value)
        except BaseException:  # something deepcopy cannot copy: the encoder refuses what is not numbers anyway
            return value
    return value
