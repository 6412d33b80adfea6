"""Which code of a notebook's cells only uses the grader itself, so that it is left out of what is graded.

A learner who checks their work from the notebook (``import grader``,
``grader.check("stable-softmax")``) hands in cells that do not belong to the
answer: the grader is not there to call where their code is graded, so
those cells would make the whole notebook fail to import. ``GraderCells``
reads the cells in order with ``ast`` (parsed, never run) and tells, for
each, whether it is the learner's code, grader code alone (left out),
grader statements beside code that stands without them (those statements
left out), or the two mixed so that they cannot be told apart safely (kept
as written). A grader statement is an ``import`` of the grader or one of
its modules, or an expression statement, or an assignment to plain names,
rooted in a name bound to the grader (``grader.check(...)``, ``check(...)``
after ``from grader import check``, ``print(grader.check(...))``,
``result = grader.check(...)``, after which ``result`` is such a name too).
Only a cell whose text mentions ``grader`` or one of those names is parsed,
and parsing is bounded (``MAX_PARSED_CELL`` characters a cell,
``MAX_PARSED_TOTAL`` a notebook: a syntax tree costs hundreds of bytes a
character of source); a cell past those bounds, or that Python cannot parse,
is the learner's code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Literal

from msgspec import Struct

from grader import __all__ as GRADER_API

__all__ = [
    "GRADER_PACKAGE",
    "MAX_NAMES",
    "MAX_PARSED_CELL",
    "MAX_PARSED_TOTAL",
    "PLACEHOLDER",
    "CellVerdict",
    "GraderCells",
]

GRADER_PACKAGE = "grader"
# Cells that check work are a line or two; a cell of learner code that also calls the grader is rarely long.
MAX_PARSED_CELL = 64 << 10
MAX_PARSED_TOTAL = 256 << 10
# Every cell is searched for each name bound to the grader, so their number is bounded too; names past it are
# not followed, and calls of them are kept as the learner's code.
MAX_NAMES = 64
PLACEHOLDER = "pass  # grader code, left out by the grader"  # in place of each statement left out
# Calls that only show what their arguments give: ``print(grader.check(...))`` is a grader statement too.
_SHOWING = ("print", "display")

Kind = Literal["code", "grader", "stripped", "mixed"]


class CellVerdict(Struct, frozen=True):
    """What became of one cell: ``source``, the code kept of it, and ``kind``.

    ``code``: no grader statement, kept as it is. ``grader``: only grader
    statements, left out (``source`` is empty). ``stripped``: its grader
    statements were replaced by ``pass`` lines (line numbers unchanged), the
    rest kept. ``mixed``: grader statements that could not be taken out
    safely (sharing a line with other code, or the rest using a name bound to
    the grader), or a name bound to the grader used in code of the learner's,
    so the cell is kept as written.
    """

    source: str
    kind: Kind


class GraderCells:
    """Reads a notebook's cells in order, remembering the names earlier cells bound to the grader."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.parsed = 0  # characters parsed so far, against MAX_PARSED_TOTAL

    def judge(self, source: str) -> CellVerdict:
        """The verdict on the next cell, ``source`` (lines joined with ``\\n``, as the notebook's conversion does).

        Cells are judged in the order they run, since ``from grader import
        check`` in one cell makes ``check(...)`` in a later one a grader call.
        """
        if GRADER_PACKAGE not in source and not any(name in source for name in self.names):
            return CellVerdict(source, "code")  # nothing in it can name the grader: the common case, one search
        if len(source) > MAX_PARSED_CELL or self.parsed + len(source) > MAX_PARSED_TOTAL:
            return CellVerdict(source, "code")
        self.parsed += len(source)
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # its own import error says what is wrong
            return CellVerdict(source, "code")
        statements = tree.body
        graded: list[bool] = []
        for statement in statements:  # in order: after ``import grader``, the next ``grader.check()`` is the grader's
            graded.append(not self._is_grader_statement(statement))
            if graded[-1] or not isinstance(statement, ast.Assign):
                self._follow_bindings(statement)
            else:  # ``result = grader.check(...)``: the names hold what the grader gave
                for target in statement.targets:
                    if isinstance(target, ast.Name) and len(self.names) < MAX_NAMES:
                        self.names.add(target.id)
        kept = [statement for statement, keep in zip(statements, graded, strict=True) if keep]
        dropped = [statement for statement, keep in zip(statements, graded, strict=True) if not keep]
        if not dropped:
            return CellVerdict(source, "mixed" if self._uses_grader_names(kept) else "code")
        if not kept:
            return CellVerdict("", "grader")
        if _share_a_line(kept, dropped) or self._uses_grader_names(kept):
            return CellVerdict(source, "mixed")
        lines = source.split("\n")
        for statement in dropped:
            first, last = statement.lineno - 1, (statement.end_lineno or statement.lineno) - 1
            lines[first : last + 1] = [PLACEHOLDER] + [""] * (last - first)
        return CellVerdict("\n".join(lines), "stripped")

    def _is_grader_statement(self, statement: ast.stmt) -> bool:
        if isinstance(statement, ast.Import):
            return all(_is_grader_module(alias.name) for alias in statement.names)
        if isinstance(statement, ast.ImportFrom):
            return statement.level == 0 and _is_grader_module(statement.module or "")
        if isinstance(statement, ast.Assign) and all(isinstance(target, ast.Name) for target in statement.targets):
            return not _binds_in_place(statement) and self._rooted_in_grader(statement.value)
        if not isinstance(statement, ast.Expr) or _binds_in_place(statement):
            return False
        value = statement.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _SHOWING:
            shown = [*value.args, *(keyword.value for keyword in value.keywords)]
            return bool(shown) and all(self._rooted_in_grader(node) for node in shown)
        return self._rooted_in_grader(value)

    def _rooted_in_grader(self, node: ast.expr) -> bool:
        """Whether ``node`` is a chain of calls, attributes and subscripts starting at a name bound to the grader."""
        while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
            node = node.func if isinstance(node, ast.Call) else node.value
        return isinstance(node, ast.Name) and node.id in self.names

    def _uses_grader_names(self, statements: list[ast.stmt]) -> bool:
        return any(
            isinstance(node, ast.Name) and node.id in self.names
            for statement in statements
            for node in ast.walk(statement)
        )

    def _follow_bindings(self, statement: ast.stmt) -> None:
        """Add the names ``statement`` binds to the grader; drop those it binds to anything else."""
        for name, to_grader in _top_level_bindings(statement):
            if to_grader and len(self.names) < MAX_NAMES:
                self.names.add(name)
            else:
                self.names.discard(name)


def _is_grader_module(name: str) -> bool:
    return name == GRADER_PACKAGE or name.startswith(GRADER_PACKAGE + ".")


def _binds_in_place(statement: ast.stmt) -> bool:
    """Whether a statement binds a name inside its expression (``(x := grader.check(...))``): then it is the
    learner's."""
    return any(isinstance(node, ast.NamedExpr) for node in ast.walk(statement))


def _share_a_line(kept: list[ast.stmt], dropped: list[ast.stmt]) -> bool:
    """Whether a statement to leave out shares a line with one to keep (``x = 1; grader.check("a")``)."""
    lines = {line for statement in kept for line in _lines(statement)}
    return any(line in lines for statement in dropped for line in _lines(statement))


def _lines(statement: ast.stmt) -> range:
    return range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)


def _top_level_bindings(statement: ast.stmt) -> Iterator[tuple[str, bool]]:
    """``(name, bound to the grader)`` for each module-level name ``statement`` binds.

    Function and class bodies bind their own local names, so they are not
    entered; the function or class name itself is bound.
    """
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield (alias.asname or alias.name.split(".")[0]), _is_grader_module(alias.name)
            continue
        if isinstance(node, ast.ImportFrom):
            to_grader = node.level == 0 and _is_grader_module(node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    yield from ((name, True) for name in GRADER_API) if to_grader else ()
                else:
                    yield (alias.asname or alias.name), to_grader
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, False
            pending.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.id, False
        pending.extend(ast.iter_child_nodes(node))
