"""What a spec says of a class entry, checked: its methods, its script cases and the values checks judge.

``crossrefs`` asks :func:`class_problems` for each problem, as a message and
the location it is written at (keys and list indices), and makes each one
line with file:line. A function entry's case sets hold no scripts, and a
class entry's hold nothing else; a script calls only the methods the entry
lists, with their parameters, reads only its attributes, and a check that
judges a kept value (``item: m1``) names one its scripts keep.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from grader.errors import did_you_mean

__all__ = ["class_problems", "method_parameters"]

Problem = tuple[str, tuple[str | int, ...]]


def method_parameters(signature: str) -> tuple[str, dict[str, bool]] | None:
    """``update(x, w=1)`` -> ``("update", {"x": False, "w": True})`` (name -> has a default); ``None`` if not one.

    A leading ``self`` is left out: specs may write it or not.
    """
    try:
        tree = ast.parse(f"def {signature}:\n    pass\n")
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    arguments = tree.body[0].args
    positional = arguments.posonlyargs + arguments.args
    defaulted = (
        {a.arg for a in positional[len(positional) - len(arguments.defaults) :]} if arguments.defaults else set()
    )
    defaulted |= {a.arg for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is not None}
    names = [a.arg for a in positional + arguments.kwonlyargs]
    if names[:1] == ["self"]:
        names = names[1:]
    return tree.body[0].name, {name: name in defaulted for name in names}


def class_problems(exercise: Any, constructors: dict[str, dict[str, bool]]) -> Iterator[Problem]:
    """Every problem of the exercise's class entries and script cases, in the order they are written.

    ``constructors``: each entry's parameters (name -> has a default), as ``crossrefs`` parsed them.
    """
    methods: dict[str, dict[str, dict[str, bool]]] = {}
    for name, entry in exercise.entries.items():
        if entry.kind != "class":
            for key in ("methods", "attributes"):
                if getattr(entry, key):
                    yield f"a function has no {key}: write 'kind: class' to make {name} a class", ("entries", name, key)
            continue
        methods[name] = {}
        for number, written in enumerate(entry.methods):
            parsed = method_parameters(written)
            if parsed is None:
                yield f"{written!r} is not a method signature such as 'update(x)'", ("entries", name, "methods", number)
            elif parsed[0] in methods[name] or parsed[0] in entry.attributes:
                yield f"{parsed[0]!r} is listed twice", ("entries", name, "methods", number)
            else:
                methods[name][parsed[0]] = parsed[1]
    for number, check in enumerate(exercise.checks):
        entry = exercise.entry_of(check)
        if entry not in exercise.entries:
            continue  # crossrefs names it
        spec = exercise.entries[entry]
        item = getattr(check, "item", None)
        if spec.kind == "class" and not check.description:  # its default speaks of what a function returns
            yield f"checks[{number}] judges the class {entry}: say what it judges in description:", ("checks", number)
        for case_set in check.cases:
            for index, generator in enumerate(exercise.cases.get(case_set, [])):
                where = ("cases", case_set, index)
                scripts = getattr(generator, "scripts", None)
                if spec.kind == "class" and scripts is None:
                    yield f"{entry} is a class: its cases are scripts: (checks[{number}] uses this set)", where
                elif spec.kind != "class" and scripts is not None:
                    yield f"scripts: are cases of a class entry, and {entry} is a function", where
                elif scripts is not None:
                    for at, steps in enumerate(scripts):
                        for step_number, step in enumerate(steps):
                            spot = (*where, "scripts", at, step_number)
                            yield from _step_problems(entry, spec, constructors.get(entry, {}), methods, step, spot)
                        kept = [step.keep for step in steps if step.keep]
                        if isinstance(item, str) and item not in kept:
                            yield (
                                f"keeps no {item!r}, which checks[{number}] judges (item: {item})"
                                f"{did_you_mean(item, kept)}",
                                (*where, "scripts", at),
                            )
                        elif item is None:
                            yield (
                                f"checks[{number}] judges a class entry's script: name the value it judges "
                                f"with item: (one of {', '.join(kept) or 'the names its steps keep'})",
                                ("checks", number),
                            )


def _step_problems(
    entry: str,
    spec: Any,
    constructor: dict[str, bool],
    methods: dict[str, dict[str, dict[str, bool]]],
    step: Any,
    spot: tuple[str | int, ...],
) -> Iterator[Problem]:
    if step.new is not None:
        yield from _argument_problems(f"{entry}(...)", constructor, step.new, (*spot, "new"))
    elif step.call is not None:
        known = methods.get(entry, {})
        if step.call not in known:
            yield f"{step.call!r} is not one of {entry}'s methods{did_you_mean(step.call, known)}", (*spot, "call")
        else:
            yield from _argument_problems(f"{step.call}(...)", known[step.call], step.args, (*spot, "args"))
    elif step.read not in spec.attributes:
        yield (
            f"{step.read!r} is not one of {entry}'s attributes{did_you_mean(str(step.read), spec.attributes)}",
            (
                *spot,
                "read",
            ),
        )


def _argument_problems(
    written: str, parameters: dict[str, bool], given: dict[str, Any], spot: tuple[str | int, ...]
) -> Iterator[Problem]:
    for key in given:
        if key not in parameters:
            yield f"{key!r} is not an argument of {written}{did_you_mean(str(key), parameters)}", (*spot, key)
    missing = [name for name, has_default in parameters.items() if not has_default and name not in given]
    if missing:
        yield f"gives no {', '.join(map(repr, missing))}, which {written} needs", spot
