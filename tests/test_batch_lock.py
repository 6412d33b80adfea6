"""The batch lock goes with the run that held it, and batch outputs get the usual file mode."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from grader.batch.cache import current_umask, write_atomically
from grader.batch.lock import OutputLock, same_file
from grader.batch.run import run_batch
from grader.batch.worker import Outcome
from grader.errors import UsageError
from tests.batch_helpers import ASSIGNMENT, make_class, make_exercises

HOLD = (
    "import sys, time\nfrom pathlib import Path\nfrom grader.batch.lock import OutputLock\n"
    "with OutputLock(Path(sys.argv[1])):\n    print('held', flush=True)\n    time.sleep(60)\n"
)


class _Refusing:
    """An executor that answers every learner at once with a grader error: the run without the grading."""

    def __init__(self, config) -> None:
        pass

    def map(self, tasks):
        for task in tasks:
            yield task, Outcome(grader_error="not graded in this test")


def _batch(tmp_path: Path) -> Path:
    exercises = make_exercises(tmp_path)
    folder = make_class(tmp_path / "class")
    out = tmp_path / "out"
    run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_Refusing, exercises_dir=exercises)
    return out


def test_a_finished_batch_leaves_no_lock_file(tmp_path: Path) -> None:
    out = _batch(tmp_path)
    assert (out / "gradebook.csv").is_file()
    assert not (out / ".batch.lock").exists()


def test_batch_outputs_get_the_mode_the_umask_gives(tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        out = _batch(tmp_path)
    finally:
        os.umask(previous)
    written = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"gradebook.csv", "summary.md", "report.html", "correct.json", "correct.md"}
    assert {oct(p.stat().st_mode & 0o777) for p in written} == {oct(0o640)}


def test_write_atomically_keeps_the_mode_of_a_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "gradebook.csv"
    write_atomically(target, "one")
    assert target.stat().st_mode & 0o777 == 0o666 & ~current_umask()
    target.chmod(0o600)  # an instructor made the gradebook private
    write_atomically(target, "two")
    assert target.stat().st_mode & 0o777 == 0o600 and target.read_text() == "two"


def test_current_umask_reads_without_changing_it() -> None:
    previous = os.umask(0o037)
    try:
        assert current_umask() == 0o037 and current_umask() == 0o037
    finally:
        os.umask(previous)


def test_a_killed_runs_lock_file_does_not_block_the_next_run(tmp_path: Path) -> None:
    with subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(UsageError, match="another 'grader batch' is writing there"):
            with OutputLock(tmp_path):
                pass
        assert (tmp_path / ".batch.lock").exists()  # a refused run leaves the holder's file alone
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert (tmp_path / ".batch.lock").exists()  # left by the killed run
    with OutputLock(tmp_path):
        pass
    assert not (tmp_path / ".batch.lock").exists()


def test_a_lock_file_removed_between_open_and_lock_is_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open, opened = os.open, []

    def open_as_the_other_run_ends(path, flags, mode=0o777):
        handle = real_open(path, flags, mode)
        opened.append(handle)
        if len(opened) == 1:
            os.unlink(path)  # the run holding it finished just after this open
        return handle

    monkeypatch.setattr(os, "open", open_as_the_other_run_ends)
    lock = OutputLock(tmp_path)
    with lock:
        assert len(opened) == 2 and lock.handle == opened[1]
        assert same_file(lock.handle, tmp_path / ".batch.lock")
    assert not (tmp_path / ".batch.lock").exists()
