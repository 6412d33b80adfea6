"""Cross references inside an implementation spec, each problem with the place it is written.

A spec's parts name one another: a check names an entry, case sets and
functions of the reference solution; a known-wrong solution names checks; a case names the entry's
arguments. Pydantic checks each part alone; this module checks that the
names resolve, and says where the name that does not is written, as a
location path (``checks, 2, cases, 0``) the loader turns into a line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from grader.errors import did_you_mean
from grader.spec.classes import class_problems

__all__ = ["SpecProblem", "first_problem", "parameters", "solution_problems", "top_level_functions"]


class SpecProblem(ValueError):
    """A name in a spec that does not resolve; ``loc`` is where it is written (keys and list indices)."""

    def __init__(self, message: str, *loc: str | int) -> None:
        super().__init__(message)
        self.loc = loc


def parameters(signature: str) -> tuple[str, dict[str, bool]] | None:
    """The function name and its parameters (name -> has a default) of ``name(a, b=1)``; ``None`` if not one."""
    try:
        tree = ast.parse(f"def {signature}:\n    pass\n")
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    arguments = tree.body[0].args
    positional = arguments.posonlyargs + arguments.args
    defaulted = positional[len(positional) - len(arguments.defaults) :] if arguments.defaults else []
    with_default = {a.arg for a in defaulted}
    with_default |= {a.arg for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is not None}
    names = [a.arg for a in positional + arguments.kwonlyargs]
    return tree.body[0].name, {name: name in with_default for name in names}


def first_problem(exercise: Any) -> SpecProblem | None:
    """The first name in ``exercise`` (an implementation spec) that does not resolve, or ``None``."""
    return next(_problems(exercise), None)


def _problems(exercise: Any) -> Iterator[SpecProblem]:
    signatures: dict[str, dict[str, bool]] = {}
    for name, entry in exercise.entries.items():
        parsed = parameters(entry.signature)
        if parsed is None or parsed[0] != name:
            yield SpecProblem(
                f"{entry.signature!r} is not a Python signature of {name}(...)", "entries", name, "signature"
            )
            continue
        signatures[name] = parsed[1]
        if list(entry.args) != list(parsed[1]):
            declared = ", ".join(entry.args) or "nothing"
            yield SpecProblem(
                f"names {declared}, but {entry.signature} takes {', '.join(parsed[1]) or 'no arguments'} "
                "(args gives a kind to every parameter, in order)",
                "entries",
                name,
                "args",
            )
    ids: dict[str, int] = {}
    for number, check in enumerate(exercise.checks):
        if check.id in ids:
            yield SpecProblem(
                f"the check id {check.id!r} is also used by checks[{ids[check.id]}]; ids must be unique",
                "checks",
                number,
                "id",
            )
        ids.setdefault(check.id, number)
    for number, check in enumerate(exercise.checks):
        yield from _check_problems(exercise, number, check, signatures)
    for message, loc in class_problems(exercise, signatures):  # class entries and their scripts (spec.classes)
        yield SpecProblem(message, *loc)
    if exercise.gate is not None and exercise.gate not in ids:
        yield SpecProblem(
            f"names the check {exercise.gate!r}, which does not exist{did_you_mean(exercise.gate, ids)}", "gate"
        )
    for number, wrong in enumerate(exercise.known_wrong):
        for index, check_id in enumerate(wrong.must_fail):
            if check_id not in ids:
                yield SpecProblem(
                    f"names the check {check_id!r}, which does not exist{did_you_mean(check_id, ids)}",
                    "known_wrong",
                    number,
                    "must_fail",
                    index,
                )


def _hint_problems(exercise: Any, number: int, check: Any, signature: dict[str, bool] | None) -> Iterator[SpecProblem]:
    """A hint's premise naming a known mistake the exercise does not list, or an argument the entry lacks."""
    if not isinstance(check.hints, list):
        return
    wrong_ids = [wrong.id for wrong in exercise.known_wrong]
    for index, hint in enumerate(check.hints):
        like = hint.when.like
        if like is not None and like not in wrong_ids:
            yield SpecProblem(
                f"names the known-wrong solution {like!r}, which is not in known_wrong{did_you_mean(like, wrong_ids)}",
                "checks",
                number,
                "hints",
                index,
                "when",
                "like",
            )
        for name in hint.when.changed:
            if signature is not None and name not in signature:
                yield SpecProblem(
                    f"names the argument {name!r}, which the entry does not have{did_you_mean(name, signature)}",
                    "checks",
                    number,
                    "hints",
                    index,
                    "when",
                    "changed",
                )


def _check_problems(
    exercise: Any, number: int, check: Any, signatures: dict[str, dict[str, bool]]
) -> Iterator[SpecProblem]:
    entry = check.entry or next(iter(exercise.entries))
    if entry not in exercise.entries:
        yield SpecProblem(
            f"names the entry {entry!r}, which is not in entries{did_you_mean(entry, exercise.entries)}",
            "checks",
            number,
            "entry",
        )
        return
    verifier = getattr(check, "verifier", None)
    if isinstance(verifier, str):
        from grader.checks.witness import VERIFIERS

        if verifier not in VERIFIERS:
            yield SpecProblem(
                f"names the verifier {verifier!r}, which the grader does not have"
                f"{did_you_mean(verifier, VERIFIERS)} (known: {', '.join(sorted(VERIFIERS))})",
                "checks",
                number,
                "verifier",
            )
    for index, name in enumerate(check.cases):
        if name not in exercise.cases:
            yield SpecProblem(
                f"names the case set {name!r}, which is not in cases{did_you_mean(name, exercise.cases)}",
                "checks",
                number,
                "cases",
                index,
            )
    for message, key in check.spec_problems(entry, signatures):
        yield SpecProblem(message, "checks", number, key)
    yield from _hint_problems(exercise, number, check, signatures.get(entry))
    signature = signatures.get(entry)
    if signature is None:
        return
    required = [name for name, has_default in signature.items() if not has_default]
    if not check.cases and required:
        yield SpecProblem(
            f"has no 'cases:', so {entry}() would be called without its arguments "
            f"({', '.join(required)}); name a case set, like 'cases: [basic]'",
            "checks",
            number,
        )
    for name in check.cases:
        for index, generator in enumerate(exercise.cases.get(name, [])):
            yield from _case_problems(
                entry, exercise.entries[entry].signature, signature, ("cases", name, index), generator
            )


def _matrix_problems(
    written: str, signature: dict[str, bool], required: list[str], where: tuple[str | int, ...], spec: Any
) -> Iterator[SpecProblem]:
    """A ``matrices`` generator names arguments of the entry, and gives every one it needs."""
    if spec.arg not in signature:
        yield SpecProblem(
            f"{spec.arg!r} is not an argument of {written}{did_you_mean(spec.arg, signature)}", *where, "arg"
        )
    for key in spec.args:
        if key not in signature:
            yield SpecProblem(
                f"{key!r} is not an argument of {written}{did_you_mean(str(key), signature)}", *where, "args", key
            )
    missing = [name for name in required if name != spec.arg and name not in spec.args]
    if missing:
        yield SpecProblem(
            f"gives no {', '.join(map(repr, missing))}, which {written} needs "
            "(only arguments with a default may be left out)",
            *where,
            "args",
        )


def _case_problems(
    entry: str, written: str, signature: dict[str, bool], where: tuple[str | int, ...], generator: Any
) -> Iterator[SpecProblem]:
    if getattr(generator, "scripts", None) is not None:  # a class entry's: spec.classes checks them
        return
    required = [name for name, has_default in signature.items() if not has_default]
    examples = getattr(generator, "examples", None)
    if examples is not None:
        for number, example in enumerate(examples):
            for key in example:
                if key not in signature:
                    yield SpecProblem(
                        f"{key!r} is not an argument of {written}{did_you_mean(str(key), signature)}",
                        *where,
                        "examples",
                        number,
                        key,
                    )
            missing = [name for name in required if name not in example]
            if missing:
                yield SpecProblem(
                    f"gives no {', '.join(map(repr, missing))}, which {written} needs "
                    "(only arguments with a default may be left out)",
                    *where,
                    "examples",
                    number,
                )
        return
    matrices = getattr(generator, "matrices", None)
    if matrices is not None:
        yield from _matrix_problems(written, signature, required, (*where, "matrices"), matrices)
        return
    draw = generator.random
    for key in draw.args:
        if key not in signature:
            yield SpecProblem(
                f"{key!r} is not an argument of {written}{did_you_mean(str(key), signature)}",
                *where,
                "random",
                "args",
                key,
            )
    missing = [name for name in required if name not in draw.args]
    if missing:
        yield SpecProblem(
            f"draws no {', '.join(map(repr, missing))}, which {written} needs "
            "(only arguments with a default may be left out)",
            *where,
            "random",
            "args",
        )
    for key, how in draw.args.items():
        for index, shape in enumerate(getattr(how, "shape", [])):
            for place, size in enumerate(shape):
                if isinstance(size, str) and size not in draw.dims:
                    yield SpecProblem(
                        f"the size {size!r} is not one of dims{did_you_mean(size, draw.dims)}",
                        *where,
                        "random",
                        "args",
                        key,
                        "shape",
                        index,
                        place,
                    )
        high = getattr(how, "high", None)
        if isinstance(high, str) and high not in draw.dims:
            yield SpecProblem(
                f"the size {high!r} is not one of dims{did_you_mean(high, draw.dims)}",
                *where,
                "random",
                "args",
                key,
                "high",
            )
    if draw.axis_of is not None and draw.axis_of not in draw.args:
        yield SpecProblem(
            f"names {draw.axis_of!r}, which is not one of the drawn arguments{did_you_mean(draw.axis_of, draw.args)}",
            *where,
            "random",
            "axis_of",
        )


def solution_problems(exercise: Any, root: Path) -> Iterator[SpecProblem]:
    """Names an implementation spec gives functions of its reference solution, checked against that file.

    Checks that compare with the reference need one (or, in a handout, its
    answers file); every ``reference:`` and ``method:`` must name a function
    the file defines at top level. The file is read with ``ast``, never
    imported: reference code runs only in a learner process.
    """
    yield from _given_function_problems(exercise, root)
    users = [number for number, check in enumerate(exercise.checks) if check.calls_reference()]
    if exercise.reference_solution is None:
        if users and exercise.reference_answers is None:
            check = exercise.checks[users[0]]
            yield SpecProblem(
                f"{check.property} compares with the exercise's reference solution, but the spec names no "
                "reference_solution",
                "checks",
                users[0],
                "property",
            )
        return
    defined = top_level_functions(root / exercise.reference_solution)
    if defined is None:
        yield SpecProblem(
            f"the solution file {exercise.reference_solution!r} is not Python that parses", "reference_solution"
        )
        return
    for number, check in enumerate(exercise.checks):
        named = [("reference", getattr(check, "reference", None)), ("method", _method(check))]
        named += [("relation", name) for name in check.reference_functions()]
        for key, name in named:
            if isinstance(name, str) and name not in defined:
                yield SpecProblem(
                    f"names {name!r}, which {exercise.reference_solution} does not define at top level"
                    f"{did_you_mean(name, defined)}",
                    "checks",
                    number,
                    key if getattr(check, key, None) else "property",
                )


def _given_function_problems(exercise: Any, root: Path) -> Iterator[SpecProblem]:
    """Each function a case hands to an entry (``f: softmax``) must be a given function: one the ``functions:``
    file defines at top level, or one of ``given_functions:``, whose parameters the case's fixed arguments name."""
    written = {function.name: function for function in getattr(exercise, "given_functions", None) or []}
    given = getattr(exercise, "functions", None)
    from_file = top_level_functions(root / given) if given else set()
    for number, function in enumerate(getattr(exercise, "given_functions", None) or []):
        if from_file and function.name in from_file:
            yield SpecProblem(
                f"{function.name!r} is also defined by {given}; a given function has one definition",
                "given_functions",
                number,
                "name",
            )
    if len(written) != len(getattr(exercise, "given_functions", None) or []):
        yield SpecProblem("two given functions have one name", "given_functions")
    callables = {name for entry in exercise.entries.values() for name, kind in entry.args.items() if kind == "callable"}
    if not callables:
        return
    defined = None if from_file is None else from_file | set(written)
    if given:
        where = f"{given} does not define at top level" + (" and given_functions does not list" if written else "")
    elif written:
        where = "given_functions does not list"
    else:
        where = "the spec names no functions: file or given_functions to take it from"
    for set_name, generators in exercise.cases.items():
        for number, generator in enumerate(generators):
            for loc, value in _function_spots(generator, callables):
                name = value.get("function") if isinstance(value, dict) else value
                if not isinstance(name, str):
                    continue
                if defined is not None and name not in defined:
                    problem = f"names the function {name!r}, which {where}{did_you_mean(name, defined or set())}"
                    yield SpecProblem(problem, "cases", set_name, number, *loc)
                elif name in written and isinstance(value, dict):
                    params = written[name].params
                    for fixed in value:
                        if fixed != "function" and fixed not in params[1:]:
                            yield SpecProblem(
                                f"fixes {fixed!r}, which is not a parameter {name} leaves to a case "
                                f"({', '.join(params[1:]) or 'it has none'}){did_you_mean(fixed, params[1:])}",
                                "cases",
                                set_name,
                                number,
                                *loc,
                            )


def _function_spots(generator: Any, callables: set[str]) -> list[tuple[tuple[Any, ...], Any]]:
    """Where a case set's generator names a function for a ``callable`` argument: (location, value) pairs."""
    spots: list[tuple[tuple[Any, ...], Any]] = []
    for index, example in enumerate(getattr(generator, "examples", None) or []):
        spots += [(("examples", index, arg), example[arg]) for arg in callables if arg in example]
    random = getattr(generator, "random", None)
    drawn = random.args if random is not None else {}
    for arg in callables:
        values = drawn.get(arg)
        spots += [(("random", "args", arg), value) for value in values or [] if isinstance(values, list)]
    return spots


def _method(check: Any) -> str | None:
    """The reference function a witness is verified with (written, or its verifier's default)."""
    method_name = getattr(check, "method_name", None)
    name = method_name() if callable(method_name) else None
    return name if isinstance(name, str) and name else None


def top_level_functions(path: Path) -> set[str] | None:
    """The names of the functions ``path`` defines at top level (``def``), or ``None`` if it does not parse."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
