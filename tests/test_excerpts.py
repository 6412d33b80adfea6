"""Learner text quoted back in results is bounded: per item, per list, and per report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader.submission.excerpts import MAX_NOTES, NOTE_CHARS, bounded_notes, excerpt, listing
from grader.submission.files import read_submission
from grader.submission.notebook import convert_notebook

ROOT = Path(__file__).resolve().parents[1]


def _notebook(*sources: str) -> str:
    return json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": s} for s in sources]})


@pytest.mark.parametrize(
    ("text", "limit", "shown"),
    [
        ("short", 200, "short"),
        ("x" * 300, 200, "x" * 200 + "... (100 more characters)"),
        ("a\x1b[31mb\n", 200, "a\\x1b[31mb\\n"),
        ("\u2028" * 10, 12, "\\u2028\\u2028... (8 more characters)"),
        ("é😀", 200, "é😀"),
        ("", 200, ""),
    ],
    ids=["short", "long", "control", "escapes-count", "printable-unicode", "empty"],
)
def test_excerpt_escapes_and_cuts(text: str, limit: int, shown: str) -> None:
    assert excerpt(text, limit) == shown


def test_excerpt_of_a_huge_text_is_small() -> None:
    assert len(excerpt("\x00" * (16 << 20))) < 250


@pytest.mark.parametrize(
    ("items", "total", "text"),
    [
        (["a", "b"], None, "a; b"),
        (list("abcdefg"), None, "a; b; c; d; e (and 2 more)"),
        (["a", "b"], 10, "a; b (and 8 more)"),
        ([], 0, ""),
    ],
    ids=["all-shown", "cut", "counted-elsewhere", "empty"],
)
def test_listing_shows_the_first_few_and_counts_the_rest(items: list[str], total: int | None, text: str) -> None:
    assert listing(items, total) == text


def test_bounded_notes_caps_each_note_and_their_number() -> None:
    notes = bounded_notes(["n" * (NOTE_CHARS + 10)] + ["short"] * 100)
    assert len(notes) == MAX_NOTES + 1 and notes[-1].startswith("(and 81 more notes")
    assert notes[0].endswith("... (10 more characters)") and len(notes[0]) < NOTE_CHARS + 40


def test_notebook_notes_quote_removed_lines_briefly() -> None:
    magics = "\n".join(f"%time {'x' * 100_000} {index}" for index in range(60))
    whole_cell = "%%bash " + "y" * 100_000 + "\necho"
    _, notes = convert_notebook(_notebook(magics, whole_cell).encode(), "long\x1b[2J" + "n" * 1000 + ".ipynb")
    assert sum(map(len, notes)) < 4000
    assert notes[1].count("cell 1: %time xxx") == 5 and notes[1].endswith("(and 56 more).")
    assert "\x1b" not in "".join(notes) and "long\\x1b[2J" in notes[0]


def test_submission_notes_stay_bounded_for_a_hostile_folder(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.py"
    target.write_text("x = 1\n")
    folder = tmp_path / "learner"
    folder.mkdir()
    for index in range(200):
        (folder / f"link{index:03}{'z' * 200}.py").symlink_to(target)
    many = {f"key-{index}-" + "k" * 40: 1 for index in range(300)}  # under the answers file's 32 KiB
    for name in ("a.yaml", "b.yaml"):
        (folder / name).write_text(yaml.safe_dump(many))
    (folder / "c.json").write_text("{" + "x" * 300_000)
    submission = read_submission(folder)
    assert sum(map(len, submission.notes)) < 4000
    assert any("are symbolic links and were not read" in note and "(and 195 more)" in note for note in submission.notes)
    assert any("b.yaml answers" in note and "(and 295 more)" in note for note in submission.notes)
    assert submission.answers_problem is not None and len(submission.answers_problem) < 600


@pytest.mark.slow
def test_result_of_a_hostile_notebook_submission_stays_small(tmp_path: Path) -> None:
    folder = tmp_path / "learner"
    folder.mkdir()
    magics = "\n".join(f"!echo {'x' * 10_000} {index}" for index in range(600))  # a 6 MB notebook
    reference = (ROOT / "solutions/stable-softmax/reference.py").read_text()
    (folder / ("work" + "w" * 200 + ".ipynb")).write_text(_notebook(magics, reference, "%%bash\n" + "y" * 100_000))
    (folder / "answers.yaml").write_text(
        yaml.safe_dump({f"not-a-quiz-{i}-" + "q" * 100: {"a": "A"} for i in range(200)})
    )  # within the answers file's limits
    for index in range(100):
        (folder / f"link{index:03}.py").symlink_to(folder / "answers.yaml")
    outputs = {}
    for format_name in ("json", "markdown"):
        done = subprocess.run(
            [sys.executable, "-m", "grader.cli", "grade", str(folder), "--format", format_name],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert len(done.stdout.encode()) < 64 * 1024
        outputs[format_name] = done.stdout
    report = json.loads(outputs["json"])
    assert [exercise["id"] for exercise in report["exercises"]] == ["stable-softmax"]
    problems = report["problems"]
    assert any("(and 596 more)" in problem for problem in problems)
    assert any("which are not quizzes here" in problem and "(and 195 more)" in problem for problem in problems)
