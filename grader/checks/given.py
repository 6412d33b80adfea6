"""Given functions written in a spec as expressions of the relation language, compiled for the learner process.

An exercise whose entry takes a function (``args: {f: callable}``) hands it
one of the exercise's given functions. Simple ones need no Python file::

    given_functions:
      - {name: line, params: [x, m, c], expression: "m * x + c"}

and a case names it like a function of the ``functions:`` file
(``f: {function: line, m: -2.0, c: 0.5}``, the learner's code receiving
``partial(line, m=-2.0, c=0.5)``).

The expression is checked when the spec loads by the relation language's
own whitelist (``grader.checks.expressions.parse_expression``): numbers,
the function's parameters, arithmetic, subscripts, ``.T`` and the numpy
functions of ``NUMPY_FUNCTIONS``; it reads no other name and calls neither
an entry nor the reference. The checked tree is then written out as the
source of a plain Python function (``compiled_source``), each numpy
function and constant spelled as an attribute of one private numpy import.
That source goes to the learner process exactly as a ``functions:`` file's
does (``CallBatch.given``), so the learner process runs no evaluator of its
own and never reads spec text: it runs Python the grader wrote from a tree
it has checked, which can do no more than the course's public given file
already may. Shipping the tree walker instead would put the checks layer
inside the sandbox, which imports nothing above itself.
"""

from __future__ import annotations

import ast
import copy
import keyword

from grader.checks.expressions import NUMPY_FUNCTIONS, ExpressionError, parse_expression
from grader.record import ConfigDict, Field, Record, model_validator

__all__ = ["NUMPY_PATHS", "GivenFunction", "compiled_source"]

# Where each function of the relation language lives in numpy, when not at its top level.
NUMPY_PATHS: dict[str, str] = {name: f"linalg.{name}" for name in ("norm", "det", "inv", "solve", "cond")}
_CONSTANTS = ("inf", "nan", "pi")
_NUMPY = "_given_numpy"  # a name no expression can read: the language refuses names starting with "_"


class GivenFunction(Record):
    """A given function written as one expression of its parameters (the relation language)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*$", description="what cases call it: 'f: line'")
    params: list[str] = Field(
        min_length=1,
        description="its parameters in order; the first receives what the learner's code passes, the others are "
        "fixed by a case ('{function: line, m: -2.0, c: 0.5}')",
    )
    expression: str = Field(
        min_length=1,
        description="what it returns, in the relation language over its parameters: 'm * x + c', 'sin(x)', 'A @ z + b'",
    )
    doc: str = Field(default="", description="one sentence for learners, shown in the handout")

    @model_validator(mode="after")
    def _checked(self) -> GivenFunction:
        problem = _problem(self)
        if problem is not None:
            raise ValueError(problem)
        return self


def _problem(function: GivenFunction) -> str | None:
    """Why ``function`` cannot be compiled, or ``None``."""
    taken = set(NUMPY_FUNCTIONS) | set(_CONSTANTS)
    for name in [function.name, *function.params]:
        if keyword.iskeyword(name) or not name.isidentifier() or name.startswith("_"):
            return f"{name!r} is not a name a function or parameter can have"
    if function.name in taken:
        return f"the name {function.name!r} is a function of the relation language; choose another"
    for param in function.params:
        if param in taken:
            return f"the parameter {param!r} has the name of a function or constant of the relation language"
    if len(set(function.params)) != len(function.params):
        return "each parameter is named once"
    try:
        parsed = parse_expression(function.expression)
    except ExpressionError as error:
        return str(error)
    if parsed.calls:
        return "a given function may call numpy functions only, not reference.NAME(...): it runs beside the learner"
    unknown = sorted(parsed.names() - set(function.params))
    if unknown:
        return f"the expression reads {unknown[0]!r}, which is not one of its params ({', '.join(function.params)})"
    return None


class _Spelled(ast.NodeTransformer):
    """Numpy functions and constants written as attributes of the private numpy import."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in NUMPY_FUNCTIONS:
            node.func = _attribute(NUMPY_PATHS.get(node.func.id, node.func.id))
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return _attribute(node.id) if node.id in _CONSTANTS else node


def _attribute(path: str) -> ast.expr:
    node: ast.expr = ast.Name(_NUMPY, ast.Load())
    for part in path.split("."):
        node = ast.Attribute(node, part, ast.Load())
    return node


def _docstring(text: str) -> str:
    """Text that cannot end a triple-quoted docstring or start an escape."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def compiled_source(functions: list[GivenFunction]) -> str:
    """The Python source of ``functions``, one ``def`` each; ``""`` for none.

    Each was checked when its spec loaded; the tree is copied before it is
    rewritten, since parsed expressions are shared.
    """
    if not functions:
        return ""
    lines = [f"import numpy as {_NUMPY}", ""]
    for function in functions:
        tree = _Spelled().visit(copy.deepcopy(parse_expression(function.expression).node))
        ast.fix_missing_locations(tree)
        doc = " ".join(function.doc.split()) or f"{function.expression.strip()}"
        lines += [
            "",
            f"def {function.name}({', '.join(function.params)}):",
            f'    """{_docstring(doc)}"""',
            f"    return {ast.unparse(tree)}",
            "",
        ]
    source = "\n".join(lines)
    ast.parse(source)  # a bug here is ours: every part was checked
    return source
