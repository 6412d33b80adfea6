"""A batch over hostile folders and grader faults: every other learner graded, nothing retried forever.

A learner's folder may hold a huge sparse file, a FIFO or a link loop: it is
graded on its files as any other, and an unchanged re-run is quick and grades
nothing. A learner the grader fails on is stored with an error result, tried
once more by the next run, then kept until its files change or ``--force``;
``grader batch`` exits 3 for a run that met a grader fault, after storing
everything, and 0 for a run that only keeps an earlier one.
"""

from __future__ import annotations

import functools
import json
import os
import time
from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, CORRECT, RIGHT_ANSWERS, make_exercises, raising_worker_main
from click.testing import CliRunner

from grader.batch import run_batch
from grader.batch.cache import read_key
from grader.batch.executors import LocalPool
from grader.cli import main

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def exercises(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_exercises(tmp_path_factory.mktemp("specs"))


def _result(out: Path, stem: str) -> dict:
    return json.loads((out / "results" / f"{stem}.json").read_text(encoding="utf-8"))


def _class(folder: Path) -> Path:
    """``ann`` (whom the injected fault hits), ``one`` and ``two``, all correct."""
    folder.mkdir()
    for name in ("ann", "one"):
        (folder / f"{name}.py").write_text(CORRECT)
    (folder / "two.yaml").write_text(RIGHT_ANSWERS)
    return folder


def _status(out: Path, stem: str, exercise: str) -> str:
    return {found["id"]: found["status"] for found in _result(out, stem)["exercises"]}[exercise]


def _faulty(config):
    return LocalPool(config, 1, worker_main=raising_worker_main)


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

    def placeless(exercises: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        return [{key: value for key, value in exercise.items() if key != "file"} for exercise in exercises]

    assert graded["score"] == plain["score"] and placeless(graded["exercises"]) == placeless(plain["exercises"])
    assert any("'big.py' is larger than 16 MiB" in note for note in graded["problems"])
    assert any("'pipe.py' is a FIFO" in note for note in graded["problems"])
    started = time.monotonic()
    again = run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=1, exercises_dir=exercises)
    assert time.monotonic() - started < 5.0
    assert again.graded == 0 and again.reused == 2


def test_batch_keeps_a_grader_fault_after_one_retry(exercises, tmp_path) -> None:
    folder = _class(tmp_path / "class")
    out = tmp_path / "out"
    first = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_faulty, exercises_dir=exercises)
    assert first.graded == 3 and first.grader_errors == ["ann"]
    assert _status(out, "one", "stable-softmax") == _status(out, "two", "why-softmax-quiz") == "passed"
    failed = _result(out, "ann")
    assert {exercise["status"] for exercise in failed["exercises"]} == {"error"}
    assert "Please report it" in failed["exercises"][0]["reason"]
    record = read_key(out / "results" / "ann.key")
    assert record is not None and record.failures == 1 and "an injected grader fault" in record.grader_error
    retried = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_faulty, exercises_dir=exercises)
    assert retried.graded == 1 and retried.grader_errors == ["ann"]
    assert read_key(out / "results" / "ann.key").failures == 2
    kept = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_faulty, exercises_dir=exercises)
    assert kept.graded == 0 and kept.grader_errors == [] and kept.kept_grader_errors == ["ann"]
    assert "note: the grader failed on 'ann' in earlier runs" in kept.text()
    assert kept.stats.grader_errors == ["ann"]  # still left out of the class's numbers
    (folder / "ann.py").write_text(CORRECT + "\n# changed\n")
    changed = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_faulty, exercises_dir=exercises)
    assert changed.graded == 1 and changed.grader_errors == ["ann"]
    assert read_key(out / "results" / "ann.key").failures == 1  # a new key: counted afresh
    forced = run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=1, force=True, exercises_dir=exercises)
    assert forced.graded == 3 and not forced.grader_errors and not forced.kept_grader_errors
    assert _status(out, "ann", "stable-softmax") == "passed"
    assert read_key(out / "results" / "ann.key").failures == 0


def test_batch_cli_exits_3_for_a_run_that_met_a_grader_fault_and_0_once_it_is_kept(
    exercises, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr("grader.batch.run.LocalPool", functools.partial(LocalPool, worker_main=raising_worker_main))
    folder = _class(tmp_path / "class")
    command = [
        "--exercises",
        str(exercises),
        "batch",
        str(folder),
        "--assignment",
        ASSIGNMENT,
        "--out",
        str(tmp_path / "out"),
        "--jobs",
        "1",
    ]
    runner = CliRunner()
    for attempt in ("first", "retry"):
        result = runner.invoke(main, command)
        assert result.exit_code == 3, (attempt, result.output)
        assert "the grader itself failed on 1 learner(s), every other one is stored" in result.output
        assert "Please report it" in result.output and "Traceback" not in result.output
    result = runner.invoke(main, command)
    assert result.exit_code == 0, result.output
    assert "3 learners: 0 graded now, 3 unchanged since the last run." in result.output
    assert "'grader batch --force' tries again" in result.output


class _InProcess:
    """An executor grading in this process, so a test can change what grading meets (``monkeypatch``)."""

    def __init__(self, config) -> None:
        from grader.batch.worker import start_worker

        self.worker = start_worker(config)

    def map(self, tasks):
        try:
            for task in tasks:
                yield task, self.worker.grade(task)
        finally:
            self.worker.close()


def test_batch_learner_folder_the_grader_may_not_list_is_graded_not_a_grader_error(
    exercises, tmp_path, monkeypatch
) -> None:
    import grader.submission.files

    folder = _class(tmp_path / "class")
    real = grader.submission.files.read_submission

    def read_submission(path):
        if Path(path).stem == "ann":  # as listing a folder of mode 000 does for a grader not run as root
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(grader.submission.files, "read_submission", read_submission)
    out = tmp_path / "out"
    summary = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_InProcess, exercises_dir=exercises)
    assert summary.graded == 3 and not summary.grader_errors
    assert "ann.py: cannot be read (Permission denied)" in _result(out, "ann")["problems"][0]
    assert read_key(out / "results" / "ann.key").grader_error is None
