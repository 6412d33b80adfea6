"""Script cases: how a spec exercises a class entry, step by step.

A case set of a class entry holds ``scripts:``; each script is a list of
steps, and each step does one thing:

- ``{new: {window: 3}}`` constructs the object (the first step, and only it);
- ``{call: update, args: {x: 1.0}}`` calls a method (``keep: r`` keeps what it returned);
- ``{read: mean, keep: m1}`` reads an attribute or a property and keeps it as ``m1``;
- ``expect_raises: ValueError`` beside ``call`` or ``read``: that step must raise it.

A script is one case: one call of the learner process, answered by a dict
from each kept name to its value, so checks judge a kept value as a field
(``item: m1``). Arguments are converted by the constructor's kinds (the
entry's ``args``) for ``new``, and as written for methods: a list becomes a
NumPy array, a number stays a number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.record import ConfigDict, Field, Record, model_validator
from grader.sandbox.scripts import MAX_STEPS, Script, Step

__all__ = ["ScriptStep", "ScriptsGenerator", "script_case_args", "script_text"]

_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class _Strict(Record):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ScriptStep(_Strict):
    """One step of a script: exactly one of ``new``, ``call`` and ``read``."""

    new: dict[str, Any] | None = Field(default=None, description="construct the object with these arguments")
    call: str | None = Field(default=None, pattern=_NAME, description="call this method")
    args: dict[str, Any] = Field(default_factory=dict, description="the method's arguments, by name")
    read: str | None = Field(default=None, pattern=_NAME, description="read this attribute or property")
    keep: str | None = Field(
        default=None, pattern=_NAME, description="keep the value read (or returned) under this name, for checks"
    )
    expect_raises: str | None = Field(
        default=None, pattern=_NAME, description="the exception this step must raise, e.g. ValueError"
    )

    @model_validator(mode="after")
    def _one_action(self) -> ScriptStep:
        actions = [name for name in ("new", "call", "read") if getattr(self, name) is not None]
        if len(actions) != 1:
            raise ValueError(f"a step does one thing: new, call or read (this one has {', '.join(actions) or 'none'})")
        if self.args and self.call is None:
            raise ValueError("args: go with call: (the arguments of new: are written under new:)")
        if self.new is not None and self.expect_raises is not None:
            raise ValueError("expect_raises: goes with call: or read:, not with new:")
        return self


class ScriptsGenerator(_Strict):
    """A case set of a class entry: scripts written out by hand, each one case."""

    scripts: list[list[ScriptStep]] = Field(min_length=1, description="each script a list of steps")
    label: str | None = Field(default=None, description="a name for these cases, which reasons may use for an input")

    @model_validator(mode="after")
    def _constructs_first(self) -> ScriptsGenerator:
        for number, steps in enumerate(self.scripts):
            if not steps or steps[0].new is None:
                raise ValueError(f"script {number} does not start with new: (the object is constructed first)")
            if any(step.new is not None for step in steps[1:]):
                raise ValueError(f"script {number} constructs its object twice (new: is its first step only)")
            if len(steps) > MAX_STEPS:
                raise ValueError(f"script {number} has more than {MAX_STEPS} steps")
            kept = [step.keep for step in steps if step.keep]
            if len(set(kept)) != len(kept):
                raise ValueError(f"script {number} keeps two values under one name")
        return self


def script_case_args(steps: list[ScriptStep], new_kinds: dict[str, str], convert: Any) -> dict[str, Any]:
    """A script's case arguments: ``{"script": Script}``, each argument converted (``convert(value, kind)``)."""
    built = []
    for step in steps:
        if step.new is not None:
            args = tuple((name, convert(value, new_kinds.get(name, "any"))) for name, value in step.new.items())
            built.append(Step("new", "", args, step.keep or ""))
        else:
            args = tuple((name, _as_written(value)) for name, value in step.args.items())
            op, name = ("call", step.call) if step.call is not None else ("read", step.read)
            built.append(Step(op, str(name), args, step.keep or "", step.expect_raises or ""))
    return {"script": Script(tuple(built))}


def _as_written(value: Any) -> Any:
    """A method's argument as YAML wrote it: a list of numbers becomes an array, anything else stays."""
    if isinstance(value, list):
        array = np.asarray(value)
        return array if array.dtype.kind in "biuf" else value
    return value


def script_text(entry: str, script: Script, upto: int, show: Any, *, bare_last: bool = False) -> str:
    """The first ``upto`` steps as a learner reads them: ``RunningMean(window=3), then update(x=1.0), then
    mean``; ``show(value)`` writes an argument. ``bare_last``: the last step without what it keeps or must
    raise (a reason says what it did instead)."""

    def one(step: Step, bare: bool) -> str:
        inner = ", ".join(f"{name}={show(value)}" for name, value in step.args)
        if step.op == "new":
            return f"{entry}({inner})"
        written = f"{step.name}({inner})" if step.op == "call" else step.name
        if bare:
            return written
        if step.raises:
            return f"{written} (expected to raise {step.raises})"
        return f"{written} (kept as {step.keep})" if step.keep and step.keep != step.name else written

    shown = script.steps[:upto]
    return ", then ".join(one(step, bare_last and n == len(shown) - 1) for n, step in enumerate(shown))
