"""Read what a learner handed in: Python files and answers files, from a file or a folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from grader.errors import SubmissionError
from grader.submission.excerpts import SHOWN, clip, excerpt, listing
from grader.submission.formats import GRADED_SUFFIXES, MAX_CODE_BYTES, NOTEBOOK_SUFFIX, PYTHON_SUFFIX

__all__ = ["Submission", "read_notebook", "read_submission"]

MAX_PY_BYTES = MAX_CODE_BYTES  # one cap for Python, from a .py file or a notebook's code cells
# The grader reads every file to find which defines an entry (time grows with the total) and hands them
# all to each learner process, so a submission's Python is capped as a whole as well.
MAX_SUBMISSION_PY_BYTES = 4 << 20
MAX_FILES = 64
_PROBLEM_CHARS = 500


class Submission(Struct):
    """The learner's Python files (name to bytes) and merged answers.

    ``modified``: each Python file's modification time (``st_mtime_ns``, as
    stored on disk) and ``origins``: the file a Python module came from, when
    not itself (a notebook's code cells become ``STEM.py``, or another name
    that no file of the submission has). Together they let
    ``grader.submission.entry_files`` choose between several files defining one entry.
    ``folder``: the submission is a folder (its modules are named relative to ``label``), not one file.
    """

    label: str
    python: dict[str, bytes] = field(default_factory=dict)
    modified: dict[str, int] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    answers_problem: str | None = None
    has_answers_file: bool = False
    notes: list[str] = field(default_factory=list)
    folder: bool = False


def read_submission(path: str | os.PathLike[str]) -> Submission:
    """Collect a submission; raise ``SubmissionError`` only when there is nothing to grade at all."""
    given = Path(path)
    submission = Submission(label=str(path))
    if not given.exists():
        raise SubmissionError(f"{path}: no such file or directory")
    if given.is_file():
        if given.suffix not in GRADED_SUFFIXES:
            raise SubmissionError(
                f"{path}: cannot grade a {given.suffix or 'extensionless'} file; give a .py file, "
                "a Jupyter notebook (.ipynb), an answers file (.yaml, .yml, .json) or a directory holding them"
            )
        _add(submission, given)
        return submission
    if not given.is_dir():
        raise SubmissionError(f"{path}: not a file or a directory")
    submission.folder = True
    candidates = sorted(p for p in given.iterdir() if p.suffix in GRADED_SUFFIXES)
    links = [p for p in candidates if p.is_symlink()]
    entries = [p for p in candidates if p.is_file() and not p.is_symlink()]
    if links:  # a link could point at the specs or any file the grader can read
        named = listing([excerpt(link.name) for link in links[:SHOWN]], len(links), separator=", ")
        submission.notes.append(
            f"{named} is a symbolic link and was not read; hand in the file itself."
            if len(links) == 1
            else f"{named} are symbolic links and were not read; hand in the files themselves."
        )
    if not entries:
        raise SubmissionError(
            f"{path}: nothing to grade: no .py file, no notebook (.ipynb) "
            "and no answers file (.yaml, .yml, .json) in it"
        )
    names = {entry.name for entry in entries[:MAX_FILES]}
    for entry in entries[:MAX_FILES]:
        _add(submission, entry, names)
    if len(entries) > MAX_FILES:
        submission.notes.append(
            f"Only the first {MAX_FILES} files were read ({len(entries) - MAX_FILES:,} more were not)."
        )
    return submission


def read_notebook(path: str | Path) -> Submission:
    """A Jupyter notebook as a one-file Python submission (its code cells, in order, as ``STEM.py``)."""
    given = Path(path)
    if not given.is_file():
        raise SubmissionError(f"{path}: no such file")
    submission = Submission(label=str(path))
    _add(submission, given)
    return submission


def _add(submission: Submission, path: Path, siblings: set[str] | None = None) -> None:
    if path.suffix == NOTEBOOK_SUFFIX:
        _add_notebook(submission, path, siblings or set())
    elif path.suffix == PYTHON_SUFFIX:
        _add_python(submission, path, _read_python(path))
    else:
        _add_answers(submission, path)


def _read_python(path: Path) -> bytes:
    """The file's bytes, never more than one past the cap: a file growing while read is still bounded."""
    try:
        with path.open("rb") as stream:
            return stream.read(MAX_PY_BYTES + 1)
    except OSError as exc:
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror})") from None


def _add_python(submission: Submission, path: Path, source: bytes, name: str | None = None) -> bool:
    """Keep ``source`` as the submission's file ``name``, or say which cap it exceeds."""
    shown = excerpt(path.name)
    if len(source) > MAX_PY_BYTES:
        submission.notes.append(f"{shown} is larger than {MAX_PY_BYTES // 1024} KiB and was not graded.")
        return False
    if sum(map(len, submission.python.values())) + len(source) > MAX_SUBMISSION_PY_BYTES:
        submission.notes.append(
            f"{shown} was not graded: with it, the submission's Python would come to more than "
            f"{MAX_SUBMISSION_PY_BYTES >> 20} MiB."
        )
        return False
    module = name or path.name
    submission.python[module] = source
    try:
        submission.modified[module] = path.stat().st_mtime_ns
    except OSError:  # gone since it was read: it then counts as the oldest
        submission.modified[module] = 0
    if module != path.name:
        submission.origins[module] = path.name
    return True


def _add_answers(submission: Submission, path: Path) -> None:
    from grader.submission.answers import AnswersProblem, load_answers  # imported by the first answers file

    submission.has_answers_file = True
    try:
        answers = load_answers(path)
    except AnswersProblem as problem:
        submission.answers_problem = clip(str(problem), _PROBLEM_CHARS)
        for quiz in problem.named:  # each quiz the unreadable file names is attempted, and scores 0 with the reason
            submission.answers.setdefault(quiz, None)
        return
    again = [key for key in answers if key in submission.answers]
    if again:
        keys = listing([repr(excerpt(key)) for key in again[:SHOWN]], len(again), separator=", ")
        submission.notes.append(f"{excerpt(path.name)} answers {keys} again; the later file's answers were used.")
    submission.answers.update(answers)


def _add_notebook(submission: Submission, path: Path, siblings: set[str]) -> None:
    """Convert in memory, in this process: the notebook is JSON data, never run here."""
    from grader.submission.notebook import NotebookProblem, notebook_to_python  # imported by the first notebook

    name = _notebook_module(path, siblings | submission.python.keys())
    try:
        source, notes = notebook_to_python(path)
    except NotebookProblem as problem:
        submission.notes.append(str(problem))
        return
    except OSError as exc:
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror})") from None
    if _add_python(submission, path, source, name):
        submission.notes.extend(notes)


def _notebook_module(path: Path, taken: set[str]) -> str:
    """The name a notebook's code is graded under: ``STEM.py``, unless a file of the submission has that name.

    ``taken``: the name of every file in the learner's folder and every module already read. A learner's
    own file keeps its name, so the notebook takes the first free name of ``STEM.py``, ``NAME.py``
    (``work.ipynb.py``), ``NAME-2.py``, ...: one of the first ``len(taken) + 1`` is always free.
    """
    numbered = (f"{path.name}-{number}.py" for number in range(2, len(taken) + 2))
    return next(name for name in (path.stem + ".py", path.name + ".py", *numbered) if name not in taken)
