"""Two self-tests of ``grader validate`` beyond grading: public examples against the reference, and stubs.

``check_examples`` runs the reference solution on every public example
whose call and result are plain values (``grader.authoring.examples``), through the
same grading path as the checks (a copy of the exercise whose only checks are
"gives the example's result"), and compares in the grader's process.
``stubbed_entries`` finds a solution file still as ``grader new`` wrote it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from grader.authoring.examples import ExampleMistake, ExampleValue, NotAValue, compare_result, read_example
from grader.authoring.verdicts import ValidationLine, to_author
from grader.checks.base import Check, Finding
from grader.checks.cases import Case, ExamplesGenerator
from grader.results import ExerciseResult
from grader.sandbox.outcomes import CallOutcome
from grader.spec.models import ImplementationExercise

__all__ = ["check_examples", "stubbed_entries"]


class ExampleResult(Check):
    """The entry, called as a public example shows, returns the result the example shows (validate only)."""

    property: Literal["example-result"]
    example: Any = None

    def default_description(self, entry: str) -> str:
        return f"{entry} returns the example's result"

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        outcome = outcomes[0]
        problem = compare_result(self.example, outcome.values, outcome.kind)
        return None if problem is None else Finding(got=problem, expected="the example's result")

    def __hash__(self) -> int:
        return hash((type(self), self.id))


def check_examples(
    exercise: ImplementationExercise,
    grade: Callable[[ImplementationExercise], ExerciseResult],
    *,
    source: Path | None = None,
) -> Iterator[ValidationLine]:
    """Verdicts on the exercise's public examples: each checked one agrees with the reference, or not.

    ``source``: the spec file, so that a wrong example is named with the line of its ``result:``.
    """
    from grader.spec.loader import line_in

    read: dict[int, ExampleValue] = {}
    for number, example in enumerate(exercise.examples):
        try:
            read[number] = read_example(example.call, example.result, exercise.entries)
        except ExampleMistake as why:
            line = line_in(source, ("examples", number, "call")) if source is not None else None
            where = f" at {source}:{line}" if line else ""
            yield ValidationLine(
                exercise.id, "examples", "problem", f"example {number + 1}{where} ({example.call}) cannot work: {why}"
            )
        except NotAValue as why:
            yield ValidationLine(
                exercise.id, "examples", "note", f"example {number + 1} ({example.call}) is not checked: {why}"
            )
    if not read:
        return
    cases = {
        f"example-{n}": [ExamplesGenerator.construct_trusted({"examples": [value.args]})] for n, value in read.items()
    }
    checks = [
        ExampleResult.construct_trusted(
            {
                "id": f"example-{n + 1}",
                "property": "example-result",
                "entry": value.entry,
                "cases": [f"example-{n}"],
                "visibility": "public",
                "example": value,
            }
        )
        for n, value in read.items()
    ]
    copy = exercise.model_copy(update={"cases": cases, "checks": checks, "known_wrong": [], "gate": None})
    result = grade(copy)  # type: ignore[arg-type]
    wrong = []
    for number, check in zip(read, result.checks or [], strict=bool(result.checks)):
        if check.status != "passed":
            said = check.got if check.status == "failed" and check.got else f"fails: {to_author(check.reason)}"
            line = line_in(source, ("examples", number, "result")) if source is not None else None
            where = f" at {source}:{line}" if line else ""
            wrong.append(
                ValidationLine(
                    exercise.id,
                    "examples",
                    "problem",
                    f"example {number + 1}{where} ({exercise.examples[number].call}): the "
                    f"reference {said}; correct the example's result (or the reference)",
                )
            )
    if not result.checks:
        wrong.append(ValidationLine(exercise.id, "examples", "problem", f"cannot be run: {to_author(result.reason)}"))
    yield from wrong or [
        ValidationLine(
            exercise.id,
            "examples",
            "ok",
            f"the reference gives the result of {len(read)} example{'s' if len(read) != 1 else ''}",
        )
    ]


def stubbed_entries(path: Path, exercise: ImplementationExercise) -> str | None:
    """``f(), g()`` when every entry the file defines only raises ``NotImplementedError``, as a stub does."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    defined = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    stubs = [name for name in exercise.entries if name in defined and _stubbed(defined[name])]
    return (
        ", ".join(f"{name}()" for name in stubs)
        if stubs and len(stubs) == len([name for name in exercise.entries if name in defined])
        else None
    )


def _stubbed(node: ast.FunctionDef | ast.ClassDef) -> bool:
    """A function that only raises ``NotImplementedError``, or a class whose every method does (a class stub)."""
    if isinstance(node, ast.FunctionDef):
        return _only_raises(node)
    methods = [item for item in node.body if isinstance(item, ast.FunctionDef)]
    return bool(methods) and all(_only_raises(method) for method in methods)


def _only_raises(function: ast.FunctionDef) -> bool:
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
