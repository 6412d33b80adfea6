"""A result is stored only for the files it graded: a class folder copied again during the batch is graded again.

``grade_settled`` fingerprints a learner's entry before and after grading it;
the unit tests give it a grading that rewrites the files meanwhile, the way
``rsync`` (a new file renamed into place) or an LMS download (the same file
truncated and written again) does, ending with the same bytes. The batch
tests do the same through ``run_batch`` with the real grading of a quiz: the
stored result is of the final files, the next run re-grades nothing, and a
learner whose files never hold still is graded again on the next run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, RIGHT_ANSWERS, make_exercises

from grader.batch import run_batch
from grader.batch.cache import read_key
from grader.batch.fingerprint import fingerprint_learner
from grader.batch.worker import SETTLE_TRIES, Outcome, grade_settled
from grader.results import Report

HALF = RIGHT_ANSWERS[: len(RIGHT_ANSWERS) // 2]


def _in_place(path: Path, final: str) -> None:
    """An LMS download: the same file truncated, half written, then written to the end."""
    with open(path, "r+", encoding="utf-8") as stream:
        stream.truncate(0)
        stream.write(HALF)
        stream.flush()
        stream.seek(0)
        stream.write(final)
        stream.truncate()


def _renamed(path: Path, final: str) -> None:
    """``rsync``: a new file beside it, renamed over it."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(final, encoding="utf-8")
    os.replace(temporary, path)


def _report(label: str = "ann") -> Report:
    return Report(grader_version="0", submission=label, score=1.0, max_score=1.0)


def _grading(rewrites: int, how: Callable[[Path, str], None], path: Path) -> tuple[Callable[..., Report], list]:
    """A grading that rewrites ``path`` (same final bytes) during its first ``rewrites`` calls."""
    calls: list[tuple[str, ...]] = []

    def grade(notes: tuple[str, ...]) -> Report:
        calls.append(notes)
        if len(calls) <= rewrites:
            how(path, path.read_text(encoding="utf-8"))
        return _report()

    return grade, calls


@pytest.mark.parametrize("how", [_in_place, _renamed], ids=["in-place", "renamed"])
@pytest.mark.parametrize("entry", ["folder", "file"])
def test_grade_settled_grades_again_files_rewritten_with_the_same_bytes(how, entry: str, tmp_path: Path) -> None:
    if entry == "folder":
        (tmp_path / "ann").mkdir()
        learner, path = tmp_path / "ann", tmp_path / "ann" / "answers.yaml"
    else:
        learner = path = tmp_path / "ann.yaml"
    path.write_text(RIGHT_ANSWERS, encoding="utf-8")
    before = fingerprint_learner(learner)
    grade, calls = _grading(1, how, path)
    found = grade_settled(learner, grade)
    assert found.settled and found.tries == 2 and len(calls) == 2
    assert found.fingerprint.digest == before.digest  # the same bytes: the key is the one the next run finds
    assert (
        "changed while they were being graded, so they were graded again (2 times in all)" in found.report.problems[-1]
    )


def test_grade_settled_grades_once_files_that_hold_still(tmp_path: Path) -> None:
    (tmp_path / "ann.yaml").write_text(RIGHT_ANSWERS, encoding="utf-8")
    grade, calls = _grading(0, _in_place, tmp_path / "ann.yaml")
    found = grade_settled(tmp_path / "ann.yaml", grade)
    assert found.settled and found.tries == 1 and len(calls) == 1 and found.report.problems == []


def test_grade_settled_gives_up_on_files_that_never_hold_still_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "ann.yaml").write_text(RIGHT_ANSWERS, encoding="utf-8")
    grade, calls = _grading(SETTLE_TRIES, _renamed, tmp_path / "ann.yaml")
    found = grade_settled(tmp_path / "ann.yaml", grade)
    assert not found.settled and found.tries == SETTLE_TRIES == len(calls)
    assert "the next batch run grades them again" in found.report.problems[-1]


def test_grade_settled_a_file_added_or_removed_meanwhile_is_a_change(tmp_path: Path) -> None:
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / "answers.yaml").write_text(RIGHT_ANSWERS, encoding="utf-8")
    calls: list[int] = []

    def grade(notes: tuple[str, ...]) -> Report:
        calls.append(1)
        if len(calls) == 1:
            (tmp_path / "ann" / "softmax.py").write_text("")
        return _report()

    assert grade_settled(tmp_path / "ann", grade).tries == 2


def test_grade_settled_a_file_that_is_not_graded_changing_is_no_change(tmp_path: Path) -> None:
    """An editor's backup or a notes file beside the work changes nothing graded: one grading."""
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / "answers.yaml").write_text(RIGHT_ANSWERS, encoding="utf-8")
    calls: list[int] = []

    def grade(notes: tuple[str, ...]) -> Report:
        calls.append(1)
        (tmp_path / "ann" / f"notes-{len(calls)}.txt").write_text("x")
        return _report()

    assert grade_settled(tmp_path / "ann", grade).tries == 1


# Through the batch, with the real grading of a quiz (no learner process needed).


@pytest.fixture(scope="module")
def exercises(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_exercises(tmp_path_factory.mktemp("specs"))


class _InProcess:
    """The real worker, in this process, so a test can copy files while it grades."""

    def __init__(self, config) -> None:
        from grader.batch.worker import start_worker

        self.worker = start_worker(config)

    def map(self, tasks):
        try:
            for task in tasks:
                yield task, self.worker.grade(task)
        finally:
            self.worker.close()


def _copying(monkeypatch: pytest.MonkeyPatch, learner: str, times: int) -> list[str]:
    """Grade ``learner`` while its answers are copied again (half, then all), the first ``times`` gradings."""
    import grader.batch.worker as worker

    real = worker.grade_entry
    seen: list[str] = []

    def grade_entry(session, selected, path, label, **options):
        if Path(path).name == learner and len(seen) < times:
            answers = Path(path) / "answers.yaml"
            final = answers.read_text(encoding="utf-8")
            answers.write_text(HALF, encoding="utf-8")  # what grading reads: a half-written file
            seen.append(label)
            try:
                return real(session, selected, path, label, **options)
            finally:
                _renamed(answers, final)
        return real(session, selected, path, label, **options)

    monkeypatch.setattr(worker, "grade_entry", grade_entry)
    return seen


def _class(folder: Path) -> Path:
    for name in ("ann", "bob"):
        (folder / name).mkdir(parents=True)
        (folder / name / "answers.yaml").write_text(RIGHT_ANSWERS, encoding="utf-8")
    return folder


def _quiz(out: Path, stem: str) -> dict:
    result = json.loads((out / "results" / f"{stem}.json").read_text(encoding="utf-8"))
    return {"problems": result["problems"], **{e["id"]: e for e in result["exercises"]}}


def test_batch_stores_the_result_of_the_final_files_when_a_copy_runs_during_grading(
    exercises: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, out = _class(tmp_path / "class"), tmp_path / "out"
    copies = _copying(monkeypatch, "ann", 1)
    first = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_InProcess, exercises_dir=exercises)
    assert copies == ["ann"] and first.graded == 2
    ann, bob = _quiz(out, "ann"), _quiz(out, "bob")
    assert ann["why-softmax-quiz"] == bob["why-softmax-quiz"] and ann["why-softmax-quiz"]["status"] == "passed"
    assert any("graded again (2 times in all)" in note for note in ann["problems"])
    again = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_InProcess, exercises_dir=exercises)
    assert again.graded == 0 and again.reused == 2


def test_batch_grades_again_next_run_a_learner_whose_files_never_held_still(
    exercises: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, out = _class(tmp_path / "class"), tmp_path / "out"
    _copying(monkeypatch, "ann", SETTLE_TRIES)
    first = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_InProcess, exercises_dir=exercises)
    assert any("'ann': the files changed while they were being graded" in note for note in first.notes)
    assert "the next batch run grades them again" in _quiz(out, "ann")["problems"][-1]
    assert read_key(out / "results" / "ann.key").grader_error is None
    monkeypatch.undo()
    again = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_InProcess, exercises_dir=exercises)
    assert again.graded == 1 and again.reused == 1
    assert _quiz(out, "ann")["why-softmax-quiz"]["status"] == "passed" and _quiz(out, "ann")["problems"] == []


def test_batch_stores_under_the_files_graded_not_those_hashed_before(
    exercises: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files copied after the batch hashed them and before it graded them: the result is keyed by what it graded."""
    folder, out = _class(tmp_path / "class"), tmp_path / "out"
    (folder / "ann" / "answers.yaml").write_text(HALF, encoding="utf-8")  # the copy has not finished
    import grader.batch.run as batch_run

    real = batch_run.fingerprint_learner

    def fingerprint(path: Path):
        found = real(path)
        if path.name == "ann":  # the copy finishes just after the batch hashed ann
            _renamed(path / "answers.yaml", RIGHT_ANSWERS)
        return found

    monkeypatch.setattr(batch_run, "fingerprint_learner", fingerprint)
    run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_InProcess, exercises_dir=exercises)
    assert _quiz(out, "ann")["why-softmax-quiz"]["status"] == "passed"
    monkeypatch.undo()
    again = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_InProcess, exercises_dir=exercises)
    assert again.graded == 0


def test_an_executor_that_does_not_fingerprint_keeps_the_key_the_batch_found(exercises: Path, tmp_path: Path) -> None:
    from grader.batch.run import graded_key

    assert graded_key(Outcome(result_json="{}"), "planned", "specs", ASSIGNMENT) == "planned"
    assert graded_key(Outcome(result_json="{}", unsettled=True), "planned", "specs", ASSIGNMENT) != "planned"
