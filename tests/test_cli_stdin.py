"""``grader grade -``: a learner's file on standard input, and ``--output -`` for standard output."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from grader.cli import main
from grader.cli.stdin import guess_suffix, spooled_stdin
from grader.errors import UsageError
from grader.submission.answers import MAX_BYTES

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "solutions" / "stable-softmax" / "reference.py"
NOTEBOOK = {
    "cells": [{"cell_type": "code", "source": "x = 1\n", "metadata": {}, "outputs": [], "execution_count": None}],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.mark.parametrize(
    ("data", "suffix"),
    [
        (b"import numpy as np\n\ndef softmax(z):\n    return z\n", ".py"),
        (json.dumps(NOTEBOOK).encode(), ".ipynb"),
        (b'{"why-softmax-quiz": {"exp-first": "A"}}', ".json"),
        (b"why-softmax-quiz:\n  exp-first: A\n", ".yaml"),
        (b"x: int\ny: float\n", ".py"),  # Python that YAML also reads as a mapping: Python wins
        (b'{"a": 1}', ".py"),  # a JSON object that is neither a notebook nor answers
        (b"def broken(:\n", ".py"),  # neither: graded as Python, whose reader says what is wrong
        (b"", ".py"),
        (b"{" + b" " * (17 << 20), ".ipynb"),  # too large to parse; only a notebook may be that large
    ],
    ids=[
        "python",
        "notebook",
        "json-answers",
        "yaml-answers",
        "python-and-yaml",
        "json-other",
        "broken",
        "empty",
        "huge",
    ],
)
def test_guess_suffix_reads_the_content(data: bytes, suffix: str) -> None:
    assert guess_suffix(data) == suffix


def test_guess_suffix_parses_no_python_larger_than_an_answers_file(parsed_by_ast: list[object]) -> None:
    # past an answers file's size, what comes in is Python, and is not parsed to tell
    assert guess_suffix(b"x = f" + b"(1)" * (MAX_BYTES // 3 + 1)) == ".py"
    assert not parsed_by_ast, "Python larger than an answers file was parsed in the grader's process"
    assert guess_suffix(b"x: int\ny: float\n") == ".py" and parsed_by_ast, "small data is still told apart by parsing"


@given(
    st.one_of(
        st.binary(max_size=200),
        st.lists(
            st.sampled_from([b"{", b"}", b"[", b'"cells"', b":", b"\n  ", b"a", b"\x00", b"\xff", b"- ", b"&x"])
        ).map(b"".join),
    )
)
def test_guess_suffix_names_a_suffix_for_any_bytes(data: bytes) -> None:
    assert guess_suffix(data) in (".py", ".ipynb", ".json", ".yaml")


def test_spooled_stdin_is_a_private_file_removed_afterwards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with spooled_stdin(io.BytesIO(b"{}"), "json") as path:
        assert path.name == "stdin.json" and path.read_bytes() == b"{}"
        assert path.parent.stat().st_mode & 0o077 == 0
    assert list(tmp_path.iterdir()) == []


def test_spooled_stdin_refuses_a_terminal() -> None:
    class Terminal(io.BytesIO):
        def isatty(self) -> bool:
            return True

    with pytest.raises(UsageError, match="standard input is a terminal"):
        with spooled_stdin(Terminal(b""), None):
            pass


def test_stdin_as_without_dash_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["grade", str(REFERENCE), "--stdin-as", "py"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"grader: error: --stdin-as is for PATH '-' (standard input), not {str(REFERENCE)!r}"
    ]


def test_grade_answers_from_stdin_names_the_submission_dash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    answers = b"why-softmax-quiz:\n  exp-first: A\n"
    result = CliRunner().invoke(
        main,
        ["grade", "-", "--exercises", str(ROOT / "exercises"), "--format", "json", "--output", "-"],
        input=answers,
    )
    assert result.exit_code in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert report["submission"] == "-"
    assert [exercise["id"] for exercise in report["exercises"]] == ["why-softmax-quiz"]
    assert list(tmp_path.iterdir()) == []  # no file named '-', nothing spooled left behind in the folder


@pytest.mark.slow
def test_grade_python_from_stdin_is_graded_like_the_file(tmp_path: Path) -> None:
    source = REFERENCE.read_bytes()
    runner = CliRunner()
    piped = runner.invoke(main, ["grade", "-", "--exercise", "stable-softmax", "--format", "json"], input=source)
    assert piped.exit_code == 0, piped.stderr
    copy = tmp_path / "stdin.py"
    copy.write_bytes(source)
    direct = runner.invoke(main, ["grade", str(copy), "--exercise", "stable-softmax", "--format", "json"])
    expected = json.loads(direct.stdout) | {"submission": "-"}
    for exercise in expected["exercises"]:
        exercise["file"] = "-"  # where the entry is defined: standard input, at the same line
    assert json.loads(piped.stdout) == expected
