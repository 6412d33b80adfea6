"""``grader.check("stable-softmax")``: a learner's public checks, run from inside their notebook.

What is graded is the code the kernel ran (``kernel``), converted as a
saved notebook is (IPython-only lines and the grader's own cells left out),
or, with ``file=``, that file as it is saved; the report's first note says
which. The checks are the handout's public ones (``public-checks/``, found
beside the notebook or in the working directory), never hidden ones, so
the sandbox's fallback runner may run them where the kernel cannot confine
a process (``sandbox.parents``). The learner's code runs in a learner
process, as for ``grader grade FILE --public``; the kernel only reads its text.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from grader.engine.quiz import QUIZ_FORMS
from grader.errors import UsageError
from grader.grading import GradingSession
from grader.jupyter.display import ReportView
from grader.jupyter.kernel import kernel_cells, notebook_path, running_shell, watch_cells
from grader.results import Report
from grader.sandbox.parents import start_parent
from grader.spec.folder import HANDOUT_SPECS
from grader.submission.excerpts import excerpt
from grader.submission.files import Submission, read_submission
from grader.submission.notebook import NotebookProblem, convert_cells

__all__ = ["KERNEL_MODULE", "check", "find_public_checks", "grade_public", "kernel_submission"]

# The module the kernel's cells are graded as; the name appears where a learner's traceback quotes its line.
KERNEL_MODULE = "kernel_cells.py"
_KERNEL_LABEL = "the code this kernel ran"


def check(
    exercise: str,
    *,
    file: str | os.PathLike[str] | None = None,
    exercises_dir: str | os.PathLike[str] | None = None,
) -> ReportView:
    """Run the public checks of ``exercise`` on the work in this notebook, and return a result it shows.

    For a learner's self-check from a cell (``grader.check("stable-softmax")``,
    as otter-grader's ``grader.check("q1")``): the functions are graded as
    the kernel holds them, from the code cells it ran, not from the saved
    file, unless ``file`` names a file to grade instead (a ``.py``, a
    notebook, a folder). ``exercises_dir``: the public checks to use (a
    handout's ``public-checks`` folder, or the handout folder holding it);
    by default the one beside the notebook, else in the working directory.
    Raises ``UsageError`` (one line) when there is nothing to grade or no
    checks to grade it with. The result shows as HTML in Jupyter and as the
    text report elsewhere; its ``report`` is the data.
    """
    shell = running_shell()
    beside: Path | None
    if file is not None:
        given = Path(file)
        submission = read_submission(given)
        kernel = ", not the cells this kernel ran" if shell is not None else ""
        submission.notes.insert(0, f"Graded the file {excerpt(given.name)} as it is saved{kernel}.")
        beside = given if given.is_file() else given / HANDOUT_SPECS  # a folder: the checks inside it, if any
    elif shell is not None:
        watch_cells(shell)  # where importing grader did not (it came before this shell), record from now on
        submission = kernel_submission(shell)
        beside = notebook_path(shell)
    else:
        raise UsageError(
            "grader.check grades the cells of a running notebook, and none runs here; "
            "pass file='your_file.py', or run: grader grade FILE --public"
        )
    return ReportView(grade_public(submission, exercise, find_public_checks(exercises_dir, beside=beside)))


def kernel_submission(shell: object) -> Submission:
    """The code cells ``shell`` ran as a one-file submission, the first note saying so."""
    cells = kernel_cells(shell)
    submission = Submission(label=_KERNEL_LABEL, notes=[cells.describe()])
    try:
        converted = convert_cells(cells.cells, "this kernel", raised=cells.raised)
    except NotebookProblem as problem:  # too much code: graded as nothing, with the reason
        submission.notes.append(str(problem))
        return submission
    submission.python[KERNEL_MODULE] = converted.source
    submission.modified[KERNEL_MODULE] = 0
    submission.notes.extend(converted.notes)
    return submission


def find_public_checks(exercises_dir: str | os.PathLike[str] | None = None, *, beside: Path | None = None) -> Path:
    """The public checks to grade with: ``exercises_dir`` (or the ``public-checks`` inside it) when given, else
    the ``public-checks`` folder beside ``beside`` (the notebook), else the one in the working directory.

    Raises ``UsageError`` naming where it looked.
    """
    if exercises_dir is not None:
        given = Path(exercises_dir)
        if (given / HANDOUT_SPECS).is_dir():
            return given / HANDOUT_SPECS
        if given.is_dir():
            return given
        raise UsageError(f"{exercises_dir}: no such folder (exercises_dir names a handout's {HANDOUT_SPECS} folder)")
    places = ([beside.parent] if beside is not None else []) + [Path()]
    for place in places:
        if (place / HANDOUT_SPECS).is_dir():
            return place / HANDOUT_SPECS
    where = f"beside the notebook ({beside.parent}) or " if beside is not None else ""
    raise UsageError(
        f"no {HANDOUT_SPECS} folder {where}in the working directory ({Path.cwd()}); open the notebook in the "
        f"handout's folder, or pass exercises_dir='PATH/{HANDOUT_SPECS}'"
    )


def grade_public(submission: Submission, exercise_id: str, checks: Path) -> Report:
    """``submission`` graded on the public checks of ``exercise_id`` in ``checks``, in learner processes.

    Raises ``UsageError`` for an id the checks do not hold; for a quiz of
    the handout, it says that quizzes are graded from the answers file.
    """
    if exercise_id in _handout_quizzes(checks):
        raise UsageError(
            f"{exercise_id!r} is a quiz: it has no public checks (grading it needs its key); "
            "write your answers in answers.yaml, which is graded when you hand it in"
        )
    parent = start_parent(public_only=True)
    try:
        with GradingSession(exercises_dir=checks, warm_parent=parent, only=[exercise_id]) as session:
            return session.grade_loaded(submission, [session.catalog.exercise(exercise_id)], public_only=True)
    finally:
        parent.close()


def _handout_quizzes(checks: Path) -> set[str]:
    """The ids of the quizzes a handout's ``quizzes.json`` describes (none when it has none or it is unreadable)."""
    try:
        data = json.loads((checks / QUIZ_FORMS).read_text(encoding="utf-8"))
        return {quiz["id"] for quiz in data["quizzes"] if isinstance(quiz["id"], str)}
    except (OSError, ValueError, KeyError, TypeError):
        return set()
