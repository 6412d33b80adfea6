"""Default arguments: when a failing call left an argument out, compare the learner's default with the spec's.

A case may leave out an argument to test the entry's default (``softmax(z)``
for ``softmax(z, axis=-1)``). When a check fails on such a case, the
learner's own default may be the cause: the learner process reports each
entry's defaults at import (``sandbox.signatures``), and the spec's come from
its ``signature`` line, read with ``ast`` (the spec is the grader's own text).
The reason then says which default differs ("your default for axis is 0;
the signature asks for -1") or is missing; a missing one turns the call's
``TypeError`` into a plain failure rather than an error. When the defaults
agree, nothing is said about them, and a hint that spells out one of them
(``n_samples=10000``) is dropped: it would send a learner whose defaults are
right to change them.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Collection, Mapping, Sequence

from msgspec import Struct, structs

from grader.checks.base import Call, Finding
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.scripts import Script

__all__ = ["DefaultsVerdict", "judge_defaults", "signature_defaults"]


class DefaultsVerdict(Struct, frozen=True):
    """What the defaults explain about one failing case: the finding to show, whether the hint still fits,
    and the sentence said about the defaults (empty when they agree or are unknown)."""

    finding: Finding
    keep_hint: bool = True
    said: str = ""


@functools.lru_cache(maxsize=256)
def signature_defaults(signature: str) -> dict[str, str | None]:
    """Each parameter of a spec ``signature`` line (``softmax(z, axis=-1)``) and its default's text, as written.

    ``None``: no default. A line that does not read as a ``def`` gives ``{}``.
    """
    source = f"def {signature.strip()}: pass"
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}

    def text(node: ast.expr) -> str:  # as the learner reads it (``1e-5``, not ``1e-05``)
        return ast.get_source_segment(source, node) or ast.unparse(node)

    function = tree.body[0]
    if not isinstance(function, ast.FunctionDef):
        return {}
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    defaults: dict[str, str | None] = {argument.arg: None for argument in positional}
    with_defaults = positional[len(positional) - len(arguments.defaults) :]
    for argument, default in zip(with_defaults, arguments.defaults, strict=True):
        defaults[argument.arg] = text(default)
    for argument, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        defaults[argument.arg] = None if kw_default is None else text(kw_default)
    return defaults


def judge_defaults(
    finding: Finding,
    *,
    entry: str,
    signature: str,
    learner: Mapping[str, str | None] | None,
    calls: Sequence[Call],
    outcomes: Sequence[CallOutcome],
    hint: str = "",
) -> DefaultsVerdict:
    """The failing case's finding, told which of the defaults its calls relied on differ from the signature's.

    ``learner``: the entry's parameters and defaults as its process reported
    them (``None`` when unknown: then nothing is said). ``calls`` and
    ``outcomes``: the case's calls and what they returned. ``hint``: the
    check's hint; one that spells out a default the case relied on
    (``axis=-1``) is about defaults, and does not fit when they agree.
    """
    spec = signature_defaults(signature)
    left_out = [
        name
        for name, default in spec.items()
        if default is not None
        and any(c.function == entry and c.on == "learner" and name not in _given(c) for c in calls)
    ]
    if not left_out or learner is None:
        return DefaultsVerdict(finding)
    catches_all = any(name.startswith("**") for name in learner)
    missing = [name for name in left_out if name in learner and learner[name] is None]
    absent = [name for name in left_out if name not in learner and not catches_all]
    differ = [name for name in left_out if learner.get(name) is not None and not _same(learner[name], spec[name])]
    if not (missing or absent or differ):
        spelled = hint.replace(" ", "")
        return DefaultsVerdict(finding, keep_hint=not any(f"{name}={spec[name]}" in spelled for name in left_out))
    sentences = []
    if missing:
        sentences.append(
            f"your {entry} has no default for {_names(missing)}; "
            f"the signature asks for {', '.join(f'{name}={spec[name]}' for name in missing)}"
        )
    if absent:
        sentences.append(
            f"your {entry} has no parameter {_names(absent)}; "
            f"the signature asks for {', '.join(f'{name}={spec[name]}' for name in absent)}"
        )
    sentences += [f"your default for {name} is {learner[name]}; the signature asks for {spec[name]}" for name in differ]
    note = "; ".join(sentences) + "."
    changes: dict[str, str] = {"note": f"{note} {finding.note}".strip()}
    if (missing or absent) and any(_type_error(outcome) for outcome in outcomes):
        changes["status"] = "failed"  # the call could not be made as written: a wrong signature, not a crash
    return DefaultsVerdict(structs.replace(finding, **changes), said=note)


def _same(learner: str | None, spec: str | None) -> bool:
    """Whether two defaults' texts mean the same value (``1e-5`` and ``1e-05``, ``-1`` and ``-1.0``)."""
    if learner == spec:
        return True
    try:
        mine, theirs = ast.literal_eval(learner or ""), ast.literal_eval(spec or "")
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    if isinstance(mine, bool) or isinstance(theirs, bool):
        return mine is theirs
    return type(mine) is type(theirs) and mine == theirs or _both_numbers(mine, theirs) and mine == theirs


def _both_numbers(first: object, second: object) -> bool:
    return isinstance(first, (int, float)) and isinstance(second, (int, float))


def _type_error(outcome: CallOutcome) -> bool:
    return outcome.status == "raised" and bool(outcome.error) and outcome.error.get("type") == "TypeError"  # type: ignore[union-attr]


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _given(call: Call) -> Collection[str]:
    """The arguments a call gives its entry by name; a class entry's script gives its constructor its ``new`` step's."""
    script = call.args.get("script")
    if isinstance(script, Script):
        return [name for step in script.steps if step.op == "new" for name, _ in step.args]
    return call.args.keys()
