"""``run_batch`` and ``grader batch`` on a generated class, with the real sandbox.

One uninterrupted run of the class is shared by the module (``first_run``);
the other tests run again on copies and compare with it.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from batch_helpers import (
    ASSIGNMENT,
    CORRECT,
    LEARNERS,
    crashing_worker_main,
    make_class,
    make_exercises,
    snapshot,
)
from click.testing import CliRunner

from grader.batch import run_batch
from grader.batch.executors import LocalPool
from grader.batch.learners import file_stem
from grader.batch.progress import PlainProgress
from grader.batch.worker import Task, WorkerConfig
from grader.cli import main
from grader.errors import SandboxError, UsageError
from grader.sandbox.warm_parent import WarmParent

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("batch")
    return {"exercises": make_exercises(base), "class": make_class(base / "class"), "base": base}


@pytest.fixture(scope="module")
def first_run(world: dict[str, Path]):
    out = world["base"] / "first"
    summary = run_batch(world["class"], assignment=ASSIGNMENT, out=out, jobs=2, exercises_dir=world["exercises"])
    return out, summary


def _gradebook(out: Path) -> list[dict[str, str]]:
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def _result(out: Path, learner: str) -> dict:
    return json.loads((out / "results" / f"{file_stem(learner)}.json").read_text(encoding="utf-8"))


def test_batch_grades_every_learner_once(first_run) -> None:
    out, summary = first_run
    rows = _gradebook(out)
    assert [row["learner"] for row in rows] == sorted(LEARNERS)
    assert summary.graded == len(LEARNERS) and summary.reused == 0 and not summary.grader_errors
    assert list(rows[0]) == [
        "learner",
        "score",
        "max_score",
        "why-softmax-quiz",
        "stable-softmax",
        "why-softmax-quiz:status",
        "stable-softmax:status",
    ]
    results = sorted(p.name for p in (out / "results").glob("*.json"))
    assert len(results) == len({name.casefold() for name in results}) == len(LEARNERS)
    assert len(list((out / "feedback").glob("*.md"))) == len(LEARNERS)
    assert not list(out.rglob("*.tmp"))
    for row in rows:
        result = _result(out, row["learner"])
        assert row["score"] == f"{result['score']:g}"
        for exercise in result["exercises"]:
            assert exercise["reason"] and all(check["reason"] for check in exercise["checks"])


def test_batch_scores_each_kind_of_learner(first_run) -> None:
    out, _ = first_run
    scores = {row["learner"]: row for row in _gradebook(out)}
    assert scores["correct"]["score"] == scores["correct"]["max_score"] == "20"
    assert scores["nb"]["stable-softmax"] == "15"  # the notebook's code cells, magics removed
    assert scores["x.y"]["why-softmax-quiz"] == "5" and scores["x.y"]["stable-softmax"] == "0"
    for learner in ("a b", "empty", "latin", "loop", "syntax"):
        assert scores[learner]["score"] == "0", learner
    assert 0 < float(scores["Ann"]["score"]) < 17 and 0 < float(scores["é"]["score"]) < 12
    assert scores["Ann"]["score"] != scores["ann"]["score"]
    notebook = _result(out, "nb")
    assert any("%matplotlib inline" in problem and "!pip install numpy" in problem for problem in notebook["problems"])
    assert "nothing to grade" in " ".join(_result(out, "empty")["problems"])
    reasons = {
        learner: next(e for e in _result(out, learner)["exercises"] if e["id"] == "stable-softmax")["reason"]
        for learner in ("a b", "latin", "loop", "syntax")
    }
    assert "SystemExit" in reasons["a b"]
    assert "SyntaxError" in reasons["latin"] and "SyntaxError" in reasons["syntax"]
    loop = next(e for e in _result(out, "loop")["exercises"] if e["id"] == "stable-softmax")
    assert {check["status"] for check in loop["checks"]} == {"timeout"}


def test_batch_result_is_what_grade_gives(first_run, world) -> None:
    out, _ = first_run
    for entry, learner in (("nb.ipynb", "nb"), ("Ann", "Ann"), ("x.y.yaml", "x.y")):
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader.cli",
                "--exercises",
                str(world["exercises"]),
                "grade",
                entry,
                "--assignment",
                ASSIGNMENT,
                "--format",
                "json",
            ],
            cwd=world["class"],
            capture_output=True,
            check=False,
        )
        assert completed.returncode in (0, 1), completed.stderr
        assert completed.stdout == (out / "results" / f"{file_stem(learner)}.json").read_bytes(), learner


def test_batch_second_run_regrades_nothing(first_run, world, tmp_path) -> None:
    out = tmp_path / "out"
    shutil.copytree(first_run[0], out)
    before = {p.name: p.stat().st_mtime_ns for p in (out / "results").iterdir()}
    summary = run_batch(world["class"], assignment=ASSIGNMENT, out=out, jobs=2, exercises_dir=world["exercises"])
    assert summary.graded == 0 and summary.reused == len(LEARNERS)
    assert {p.name: p.stat().st_mtime_ns for p in (out / "results").iterdir()} == before
    assert snapshot(out) == snapshot(first_run[0])


def test_batch_regrades_only_what_changed(first_run, world, tmp_path) -> None:
    folder = tmp_path / "class"
    shutil.copytree(world["class"], folder)
    out = tmp_path / "out"
    shutil.copytree(first_run[0], out)
    (folder / "syntax.py").write_text(CORRECT)
    summary = run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=1, exercises_dir=world["exercises"])
    assert summary.graded == 1
    assert {row["learner"]: row["score"] for row in _gradebook(out)}["syntax"] == "15"


def test_batch_force_regrades_everything_identically(first_run, world, tmp_path) -> None:
    out = tmp_path / "out"
    shutil.copytree(first_run[0], out)
    summary = run_batch(
        world["class"], assignment=ASSIGNMENT, out=out, jobs=2, force=True, exercises_dir=world["exercises"]
    )
    assert summary.graded == len(LEARNERS)
    assert snapshot(out) == snapshot(first_run[0])


class _StopAfter:
    """An executor that passes on ``count`` results, then behaves as if Ctrl-C was pressed."""

    def __init__(self, inner: LocalPool, count: int) -> None:
        self.inner, self.count = inner, count

    def map(self, tasks):
        for index, pair in enumerate(self.inner.map(tasks)):
            yield pair
            if index + 1 == self.count:
                raise KeyboardInterrupt


def test_the_preflight_runs_after_the_learners_are_hashed_and_before_anything_is_written(
    world, tmp_path, monkeypatch
) -> None:
    """``grader batch`` passes its sandbox preflight as ``before_grading``: a refusal leaves no trace."""
    import grader.batch.run as batch_run

    hashed: list[Path] = []
    original = batch_run.fingerprint_learner
    monkeypatch.setattr(batch_run, "fingerprint_learner", lambda path: hashed.append(path) or original(path))
    seen: list[int] = []

    def refuse() -> None:
        seen.append(len(hashed))
        raise SandboxError("this machine's sandbox is too weak")

    out = tmp_path / "out"
    with pytest.raises(SandboxError):
        run_batch(
            world["class"],
            assignment=ASSIGNMENT,
            out=out,
            exercises_dir=world["exercises"],
            before_grading=refuse,
            executor=lambda config: pytest.fail("nothing may be graded"),
        )
    assert seen == [len(LEARNERS)] and not out.exists()


def test_batch_interrupted_then_resumed_matches_uninterrupted(first_run, world, tmp_path) -> None:
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_batch(
            world["class"],
            assignment=ASSIGNMENT,
            out=out,
            exercises_dir=world["exercises"],
            executor=lambda config: _StopAfter(LocalPool(config, 2), 4),
        )
    assert len(list((out / "results").glob("*.key"))) == 4
    assert not (out / "gradebook.csv").exists()
    summary = run_batch(world["class"], assignment=ASSIGNMENT, out=out, jobs=2, exercises_dir=world["exercises"])
    assert summary.graded == len(LEARNERS) - 4 and summary.reused == 4
    assert snapshot(out) == snapshot(first_run[0])


def test_batch_killed_process_then_resumed_matches_uninterrupted(first_run, world, tmp_path) -> None:
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "grader.cli",
        "--exercises",
        str(world["exercises"]),
        "batch",
        str(world["class"]),
        "--assignment",
        ASSIGNMENT,
        "--out",
        str(out),
        "--jobs",
        "1",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((out / "results").glob("*.key"))) < 3:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done = len(list((out / "results").glob("*.key")))
    assert 3 <= done < len(LEARNERS)
    rerun = subprocess.run(command, capture_output=True, text=True, check=False)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(LEARNERS)} learners: {len(LEARNERS) - done} graded now, {done} unchanged" in rerun.stdout
    assert snapshot(out) == snapshot(first_run[0])


@pytest.mark.parametrize("forked", [False, True], ids=["forkserver", "forked-with-clones"])
def test_batch_worker_crash_and_hang_cost_only_their_learner(world, tmp_path, forked: bool) -> None:
    """Both ways a pool starts its processes: a dead or hung one is replaced, and costs only its learner."""
    out = tmp_path / "out"
    lines = []
    warm_parent = WarmParent.start() if forked else None
    if forked:
        assert threading.active_count() == 1  # else the pool would fall back to its forkserver

    class Lines:
        def write(self, text: str) -> None:
            lines.append(text)

        def flush(self) -> None:
            pass

    def pool(config: WorkerConfig) -> LocalPool:
        return LocalPool(config, 2, watchdog=3, worker_main=crashing_worker_main, warm_parent=warm_parent)

    try:
        summary = run_batch(
            world["class"],
            assignment=ASSIGNMENT,
            out=out,
            exercises_dir=world["exercises"],
            executor=pool,
            progress=PlainProgress(Lines(), interval=0),
        )
    finally:
        if warm_parent is not None:
            warm_parent.close()
    assert sorted(summary.grader_errors) == ["ann", "loop"]
    rows = {row["learner"]: row for row in _gradebook(out)}
    assert len(rows) == len(LEARNERS)
    assert rows["ann"]["score"] == "" and rows["loop"]["score"] == "" and rows["correct"]["score"] == "20"
    crashed = json.loads((out / "results" / "ann.key").read_text())
    assert "stopped unexpectedly (exit status 7)" in crashed["grader_error"]
    hung = json.loads((out / "results" / "loop.key").read_text())
    assert "longer than 3 s" in hung["grader_error"]
    assert "grader itself failed" in _result(out, "ann")["exercises"][0]["reason"]
    assert "2 grader errors" in "".join(lines)
    again = run_batch(world["class"], assignment=ASSIGNMENT, out=out, jobs=2, exercises_dir=world["exercises"])
    assert again.graded == 2 and not again.grader_errors  # a grader failure is tried once more


def test_batch_cli_exit_codes_and_summary(world, tmp_path) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "one.py").write_text(CORRECT)
    (folder / "two.yaml").write_text("why-softmax-quiz: {divide-by-sum-fails: B}\n")
    runner = CliRunner()
    base = ["--exercises", str(world["exercises"]), "batch"]
    result = runner.invoke(
        main, [*base, str(folder), "--assignment", ASSIGNMENT, "--out", str(tmp_path / "o"), "--jobs", "2"]
    )
    assert result.exit_code == 0, result.output
    assert "2 learners: 2 graded now, 0 unchanged since the last run." in result.stdout
    assert "graded 2/2, 2 below full marks" in result.stderr  # progress: on standard error only
    assert "graded 2/2" not in result.stdout
    assert "Most failed checks:" in result.stdout
    assert (tmp_path / "o" / "summary.md").is_file() and (tmp_path / "o" / "report.html").is_file()
    missing = runner.invoke(main, [*base, str(tmp_path / "nowhere"), "--assignment", ASSIGNMENT, "--out", "o"])
    assert missing.exit_code == 2 and "not a folder" in missing.output
    unknown = runner.invoke(main, [*base, str(folder), "--assignment", "batch-clas", "--out", str(tmp_path / "o")])
    assert unknown.exit_code == 2 and "did you mean 'batch-class'?" in unknown.output
    empty = tmp_path / "nobody"
    empty.mkdir()
    nobody = runner.invoke(main, [*base, str(empty), "--assignment", ASSIGNMENT, "--out", str(tmp_path / "o2")])
    assert nobody.exit_code == 2 and "no learners" in nobody.output


def test_batch_to_a_file_holds_the_summary_alone(world, tmp_path) -> None:
    """``grader batch ... > summary.txt``: the progress, with the learner graded last, goes to standard error."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "one.py").write_text(CORRECT)
    (folder / "two.yaml").write_text("why-softmax-quiz: {divide-by-sum-fails: B}\n")
    command = [sys.executable, "-m", "grader.cli", "--exercises", str(world["exercises"]), "batch", str(folder)]
    command += ["--assignment", ASSIGNMENT, "--out", str(tmp_path / "o"), "--jobs", "1"]
    summary = tmp_path / "summary.txt"
    with summary.open("w", encoding="utf-8") as stdout:
        done = subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("2 learners: 2 graded now, 0 unchanged since the last run.")
    assert "graded 2/2" not in text and "elapsed" not in text
    (last,) = [line for line in done.stderr.splitlines() if line.startswith("graded 2/2")]
    assert " elapsed" in last and last.rsplit("; last: ", 1)[1] in ("one", "two")


def test_batch_output_folder_inside_class_folder_is_refused(world, tmp_path) -> None:
    """Every entry of the class folder is a learner: outputs there would be graded, or hide a learner."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "one.py").write_text(CORRECT)
    with pytest.raises(UsageError, match=r"graded: is inside the class folder \(its entry 'graded'\)"):
        run_batch(folder, assignment=ASSIGNMENT, out=folder / "graded", jobs=1, exercises_dir=world["exercises"])
    assert os.listdir(folder) == ["one.py"]


def test_local_pool_that_cannot_start_a_worker_is_a_grader_failure(tmp_path) -> None:
    pool = LocalPool(WorkerConfig(str(tmp_path / "no-specs"), ASSIGNMENT, "digest"), 2)
    with pytest.raises(SandboxError, match="no grading process could start: .*no exercises directory"):
        list(pool.map([Task(learner="a", path=str(tmp_path), label="a")]))
