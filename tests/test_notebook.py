"""Jupyter notebooks become the Python file their code cells make, without running anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batch_helpers import notebook

from grader.errors import SubmissionError
from grader.submission.files import read_notebook, read_submission
from grader.submission.notebook import MAX_NOTEBOOK_BYTES, NotebookProblem, notebook_to_python


def _write(tmp_path: Path, text: str | bytes, name: str = "work.ipynb") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_notebook_code_cells_joined_in_order_magics_removed(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        notebook(
            ("markdown", "# title\n%not code"),
            ("code", "import numpy as np\n%matplotlib inline"),
            ("code", "files = !ls\nif True:\n    !echo hi\nnp.exp?\nx = 1 % 2\ny = a != b"),
            ("code", "%%bash\necho hello"),
        ),
    )
    source, notes = notebook_to_python(path)
    text = source.decode()
    assert text.index("import numpy") < text.index("x = 1 % 2")
    assert "%matplotlib" not in text and "!ls" not in text and "echo" not in text and "np.exp?" not in text
    assert "    pass  # IPython-only line removed by the grader" in text
    assert "y = a != b" in text and "# title" not in text
    compile(text, "work.py", "exec")
    assert notes[0] == "work.ipynb: graded as one Python file made of its 2 code cells, in order."
    assert notes[1].endswith(
        "removed: cell 2: %matplotlib inline; cell 3: files = !ls; cell 3: !echo hi; "
        "cell 3: np.exp?; cell 4: %%bash (the whole cell)."
    )


def test_notebook_list_or_string_sources_and_nbformat_3(tmp_path: Path) -> None:
    old = {"nbformat": 3, "worksheets": [{"cells": [{"cell_type": "code", "input": ["a = 1\n", "b = 2\n"]}]}]}
    source, _ = notebook_to_python(_write(tmp_path, json.dumps(old)))
    assert "a = 1\nb = 2" in source.decode()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe{}", "not UTF-8"),
        (b"{not json", "not valid notebook JSON"),
        (b"[1, 2]", "shape of a Jupyter"),
        (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
        (b'{"cells": 3}', "shape of a Jupyter"),
    ],
    ids=["not-utf8", "not-json", "not-a-dict", "deep", "cells-not-list"],
)
def test_notebook_problems_become_notes(tmp_path: Path, content: bytes, message: str) -> None:
    with pytest.raises(NotebookProblem, match=message):
        notebook_to_python(_write(tmp_path, content))
    submission = read_submission(tmp_path / "work.ipynb")
    assert not submission.python and message in submission.notes[0]


def test_notebook_size_is_capped(tmp_path: Path) -> None:
    path = _write(tmp_path, b" " * (MAX_NOTEBOOK_BYTES + 1))
    with pytest.raises(NotebookProblem, match="larger than"):
        notebook_to_python(path)


def test_read_submission_takes_notebooks_alone_and_in_folders(tmp_path: Path) -> None:
    path = _write(tmp_path, notebook(("code", "def softmax(z, axis=-1):\n    return z")))
    alone = read_notebook(path)
    assert list(alone.python) == ["work.py"] and alone.notes
    assert list(read_submission(path).python) == ["work.py"]
    (tmp_path / "work.py").write_text("x = 1\n")
    both = read_submission(tmp_path)
    assert sorted(both.python) == ["work.ipynb.py", "work.py"]
    assert both.python["work.py"] == b"x = 1\n"


def test_read_notebook_refuses_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SubmissionError):
        read_notebook(tmp_path / "none.ipynb")


def test_lone_notebook_is_named_after_itself_whatever_lies_beside_it(tmp_path: Path) -> None:
    path = _write(tmp_path, notebook(("code", "x = 1")))
    (tmp_path / "work.py").write_text("y = 2\n")  # another learner's file in the class folder
    assert list(read_submission(path).python) == ["work.py"]


@pytest.mark.parametrize(
    "learner_files",
    [
        ["softmax.ipynb.py"],
        ["softmax.py", "softmax.ipynb.py"],
        ["softmax.py", "softmax.ipynb.py", "softmax.ipynb-2.py"],
        ["softmax.ipynb-2.py", "softmax.ipynb-3.py", "softmax.py", "softmax.ipynb.py"],
    ],
    ids=["name-dot-py", "both-names", "numbered-too", "several-numbered"],
)
def test_a_converted_notebook_never_takes_a_learner_files_name(tmp_path: Path, learner_files: list[str]) -> None:
    _write(tmp_path, notebook(("code", "def softmax(z, axis=-1):\n    return z")), "softmax.ipynb")
    _write(tmp_path, notebook(("code", "y = 2")), "softmax.py.ipynb")  # a second notebook, whose STEM.py is taken
    for name in learner_files:
        (tmp_path / name).write_text(f"# the learner's {name}\n")
    submission = read_submission(tmp_path)
    for name in learner_files:  # every learner file is graded as itself, with its own content
        assert submission.python[name] == f"# the learner's {name}\n".encode() and name not in submission.origins
    converted = {module: origin for module, origin in submission.origins.items()}
    assert sorted(converted.values()) == ["softmax.ipynb", "softmax.py.ipynb"]
    assert len(submission.python) == len(learner_files) + 2
    (softmax_module,) = [module for module, origin in converted.items() if origin == "softmax.ipynb"]
    assert b"def softmax" in submission.python[softmax_module]
