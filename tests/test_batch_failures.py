"""A batch over hostile folders: graded as any other, and an unchanged re-run is quick.

A learner's folder may hold a huge sparse file, a FIFO or a link loop: it is
graded on its files as any other, and an unchanged re-run is quick and grades
nothing.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, CORRECT, make_exercises

from grader.batch import run_batch

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def exercises(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_exercises(tmp_path_factory.mktemp("specs"))


def _result(out: Path, stem: str) -> dict:
    return json.loads((out / "results" / f"{stem}.json").read_text(encoding="utf-8"))


def test_batch_grades_a_folder_holding_a_sparse_file_a_fifo_and_a_link_loop(exercises, tmp_path) -> None:
    folder = tmp_path / "class"
    (folder / "eve").mkdir(parents=True)
    (folder / "plain").mkdir()
    for learner in ("eve", "plain"):
        (folder / learner / "softmax.py").write_text(CORRECT)
    eve = folder / "eve"
    for name in ("data.bin", "big.py"):
        with open(eve / name, "wb") as stream:
            stream.truncate(8 << 30)
    os.mkfifo(eve / "pipe")
    os.mkfifo(eve / "pipe.py")
    (eve / "loop").symlink_to("loop")
    (eve / "self").symlink_to(".")
    out = tmp_path / "out"
    first = run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=1, exercises_dir=exercises)
    assert first.graded == 2 and not first.grader_errors
    graded, plain = _result(out, "eve"), _result(out, "plain")
    assert graded["score"] == plain["score"] and graded["exercises"] == plain["exercises"]
    assert any("'big.py' is larger than 16 MiB" in note for note in graded["problems"])
    assert any("'pipe.py' is a FIFO" in note for note in graded["problems"])
    started = time.monotonic()
    again = run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=1, exercises_dir=exercises)
    assert time.monotonic() - started < 5.0
    assert again.graded == 0 and again.reused == 2

