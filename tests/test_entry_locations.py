"""Where an entry is defined, for annotations on the learner's line (grader.submission.locations)."""

from __future__ import annotations

import json
from pathlib import Path

from grader.grading import GradingSession
from grader.report import render
from grader.submission.files import MAX_PY_BYTES, read_submission
from grader.submission.locations import entry_location

SOFTMAX = "import numpy as np\n\n\n# a comment\ndef softmax(z, axis=-1):\n    return z\n"


def test_a_single_file_names_itself_and_the_line_of_its_def(tmp_path: Path) -> None:
    path = tmp_path / "mine.py"
    path.write_text(SOFTMAX)
    submission = read_submission(path)
    assert entry_location(submission, "mine.py", ["softmax"]) == (str(path), 5)


def test_a_folder_names_the_file_inside_it_and_the_last_binding(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text(SOFTMAX + "softmax = softmax\n")
    submission = read_submission(tmp_path)
    assert entry_location(submission, "b.py", ["softmax"]) == (str(tmp_path / "b.py"), 7)
    assert entry_location(submission, "a.py", ["softmax"]) == (str(tmp_path / "a.py"), None)
    assert entry_location(submission, "nowhere.py", ["softmax"]) == (None, None)


def test_source_too_deep_for_pythons_parser_gets_its_line_and_is_never_parsed(
    tmp_path: Path, parsed_by_ast: list[object]
) -> None:
    # Python's parser takes about a second and 300 MiB on this megabyte, then gives up (RecursionError).
    head = "import numpy as np\n\ndef softmax(z, axis=-1):\n    return z\n\n"
    path = tmp_path / "mine.py"
    path.write_text(head + "x = f" + "(1)" * ((MAX_PY_BYTES - len(head) - 8) // 3) + "\n")
    submission = read_submission(path)
    assert submission.python, "the file is within the size the grader reads"

    location = entry_location(submission, "mine.py", ["softmax"])
    assert not parsed_by_ast, "learner source was parsed in the grader's process"
    assert location == (str(path), 3)


def test_a_notebook_is_named_without_a_line(tmp_path: Path) -> None:
    notebook = {"nbformat": 4, "cells": [{"cell_type": "code", "source": SOFTMAX}]}
    (tmp_path / "work.ipynb").write_text(json.dumps(notebook))
    (tmp_path / "other.py").write_text("y = 2\n")
    submission = read_submission(tmp_path)
    (module,) = [m for m in submission.python if m in submission.origins]
    assert entry_location(submission, module, ["softmax"]) == (str(tmp_path / "work.ipynb"), None)


def test_a_graded_exercise_records_where_its_entry_is_and_annotations_sit_there(
    tmp_path: Path, session: GradingSession
) -> None:
    path = tmp_path / "mine.py"
    path.write_text(SOFTMAX)
    report = session.grade(path, exercise_ids=["stable-softmax"])
    (result,) = report.exercises
    assert (result.file, result.line) == (str(path), 5)
    errors = [line for line in render(report, "github").splitlines() if line.startswith("::error")]
    assert errors and all(line.startswith(f"::error file={path},line=5,title=") for line in errors)
