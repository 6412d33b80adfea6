"""Where an entry function is defined in what the learner handed in: a file and a line, for annotations.

A CI runner shows an annotation on the learner's own line only when it names
the file (relative to where the grader was pointed) and the line. Both are
read from the source without running it, and without parsing it: the
learner's source is lexed in time linear in its length
(``bindings.binding_line``), as it is to find which file defines an entry,
for the line of the top-level ``def``, ``class`` or assignment that binds the
entry last. A notebook's code cells are graded as a module of their own,
whose lines are not the notebook's: it is named, with no line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from grader.submission.bindings import binding_line
from grader.submission.files import Submission

__all__ = ["entry_location"]


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
    return path, binding_line(submission.python[module].decode("utf-8", "replace"), names)
