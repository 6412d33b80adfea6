"""Read what a learner handed in: Python files and answers files, from a file or a folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.answers import ANSWER_SUFFIXES, AnswersProblem, load_answers
from grader.errors import SubmissionError
from grader.notebook import NOTEBOOK_SUFFIX, NotebookProblem, notebook_to_python

__all__ = ["Submission", "read_notebook", "read_submission"]

MAX_PY_BYTES = 1 << 20
MAX_FILES = 64
_GRADED_SUFFIXES = (".py", NOTEBOOK_SUFFIX, *ANSWER_SUFFIXES)


@dataclass
class Submission:
    """The learner's Python files (name to bytes) and merged answers."""

    label: str
    python: dict[str, bytes] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    answers_problem: str | None = None
    has_answers_file: bool = False
    notes: list[str] = field(default_factory=list)


def read_submission(path: str | Path) -> Submission:
    """Collect a submission; raise ``SubmissionError`` only when there is nothing to grade at all."""
    given = Path(path)
    submission = Submission(label=str(path))
    if not given.exists():
        raise SubmissionError(f"{path}: no such file or directory")
    if given.is_file():
        if given.suffix not in _GRADED_SUFFIXES:
            raise SubmissionError(
                f"{path}: cannot grade a {given.suffix or 'extensionless'} file; give a .py file, "
                "a Jupyter notebook (.ipynb), an answers file (.yaml, .yml, .json) or a directory holding them"
            )
        _add(submission, given)
        return submission
    if not given.is_dir():
        raise SubmissionError(f"{path}: not a file or a directory")
    candidates = sorted(p for p in given.iterdir() if p.suffix in _GRADED_SUFFIXES)
    links = [p for p in candidates if p.is_symlink()]
    entries = [p for p in candidates if p.is_file() and not p.is_symlink()]
    for link in links:  # a link could point at the specs or any file the grader can read
        submission.notes.append(f"{link.name} is a symbolic link and was not read; hand in the file itself.")
    if not entries:
        raise SubmissionError(f"{path}: nothing to grade: no .py file, no notebook (.ipynb) "
                              "and no answers file (.yaml, .yml, .json) in it")
    names = {entry.name for entry in entries[:MAX_FILES]}
    for entry in entries[:MAX_FILES]:
        _add(submission, entry, names)
    if len(entries) > MAX_FILES:
        submission.notes.append(f"Only the first {MAX_FILES} files were read.")
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
        return
    if path.suffix == ".py":
        try:
            size = path.stat().st_size
            if size > MAX_PY_BYTES:
                submission.notes.append(f"{path.name} is larger than {MAX_PY_BYTES // 1024} KiB and was not graded.")
                return
            submission.python[path.name] = path.read_bytes()
        except OSError as exc:
            raise SubmissionError(f"{path}: cannot be read ({exc.strerror})") from None
        return
    submission.has_answers_file = True
    try:
        answers = load_answers(path)
    except AnswersProblem as problem:
        submission.answers_problem = str(problem)
        return
    for key, value in answers.items():
        if key in submission.answers:
            submission.notes.append(f"{path.name} answers {key!r} again; the later file's answers were used.")
        submission.answers[key] = value


def _add_notebook(submission: Submission, path: Path, siblings: set[str]) -> None:
    """Convert in memory, in this process: the notebook is JSON data, never run here."""
    name = path.stem + ".py"
    if name in submission.python or name in siblings:
        name = path.name + ".py"  # a learner's own STEM.py, in the same folder, keeps its name
    try:
        source, notes = notebook_to_python(path)
    except NotebookProblem as problem:
        submission.notes.append(str(problem))
        return
    except OSError as exc:
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror})") from None
    submission.python[name] = source
    submission.notes.extend(notes)
