"""Where an entry function is defined in what the learner handed in: a file and a line, for annotations.

A CI runner shows an annotation on the learner's own line only when it names
the file (relative to where the grader was pointed) and the line. Both are
read from the source without running it: the top-level ``def``, ``class`` or
assignment that binds the entry. A notebook's code cells are graded as a
module of their own, whose lines are not the notebook's: it is named, with
no line.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Sequence

from grader.submission.files import Submission

__all__ = ["entry_location"]

# Larger sources are named without a line: parsing costs hundreds of bytes of memory a character.
_MAX_PARSED = 1 << 20


def entry_location(submission: Submission, module: str, names: Sequence[str]) -> tuple[str | None, int | None]:
    """The file (as the learner would name it) and line where the first of ``names`` is bound in ``module``.

    ``(None, None)`` when the module is not one of the submission's files.
    """
    if module not in submission.python:
        return None, None
    origin = submission.origins.get(module)
    label = submission.label
    single = not submission.folder
    if origin is not None:
        return (label if single else os.path.join(label, origin)), None
    path = label if single else os.path.join(label, module)
    source = submission.python[module]
    if len(source) > _MAX_PARSED:
        return path, None
    return path, _bound_at(source, names)


def _bound_at(source: bytes, names: Sequence[str]) -> int | None:
    """The line of the last top-level binding of the first of ``names`` bound at all (what an import leaves)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines[node.name] = node.lineno
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    lines[target.id] = node.lineno
    return next((lines[name] for name in names if name in lines), None)
