"""The exercises of one submission share a learner process, without sharing what they should not."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.sandbox.warm_parent import WarmParent

ROOT = Path(__file__).resolve().parents[1]


def _reference(exercise: str) -> str:
    return (ROOT / "solutions" / exercise / "reference.py").read_text()


def _spawns(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the pid of every learner process the warm parent forks."""
    pids: list[int] = []
    original = WarmParent.spawn

    def spawn(self, config, fds):  # type: ignore[no-untyped-def]
        pid = original(self, config, fds)
        if not config.get("selftest"):
            pids.append(pid)
        return pid

    monkeypatch.setattr(WarmParent, "spawn", spawn)
    return pids


def _learner(tmp_path: Path, files: dict[str, str] | None = None, references: tuple[str, ...] = ()) -> Path:
    """A learner's folder: ``files`` (name -> text) and each named exercise's reference as ``<exercise>.py``."""
    folder = tmp_path / "learner"
    folder.mkdir()
    for exercise in references:
        (folder / f"{exercise.replace('-', '_')}.py").write_text(_reference(exercise))
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


def _by_id(report) -> dict:  # type: ignore[no-untyped-def]
    return {exercise.id: exercise for exercise in report.exercises}


def _ask_references(session, *exercise_ids: str) -> None:  # type: ignore[no-untyped-def]
    """The session asks the reference solutions for their answers now, so only learner processes are counted."""
    from grader.authoring.validate import check_reference_answers

    for exercise_id in exercise_ids:
        check_reference_answers(session.catalog, session.catalog.exercise(exercise_id), session)


@pytest.mark.slow
def test_exercises_of_one_submission_share_one_process(session, tmp_path: Path, monkeypatch) -> None:
    folder = _learner(tmp_path, references=("stable-softmax", "log-softmax", "temperature"))
    session.factory.self_test()
    _ask_references(session, "stable-softmax", "log-softmax", "temperature")
    pids = _spawns(monkeypatch)
    report = session.grade(folder, exercise_ids=["stable-softmax", "log-softmax", "temperature"])
    assert all(e.score == e.max_score for e in report.exercises), [e.reason for e in report.exercises]
    assert len(pids) == 1
    second = session.grade(folder, exercise_ids=["stable-softmax"])  # the next submission: a process of its own
    assert second.score == second.max_score and len(pids) == 2


@pytest.mark.slow
def test_one_exercise_settings_do_not_leak_into_the_next(session, tmp_path: Path) -> None:
    """``np.seterr(all="raise")`` and an ``error`` warning filter in one file change nothing for another file."""
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / "aaa_first.py").write_text(
        "import warnings\nimport numpy as np\nnp.seterr(all='raise')\n"
        "warnings.simplefilter('error')\n" + _reference("stable-softmax")
    )
    naive = (
        "import numpy as np\n\ndef log_softmax(z, axis=-1):\n    z = np.asarray(z, float)\n"
        "    return np.log(np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True))\n"
    )
    (folder / "zzz_second.py").write_text(naive)
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "zzz_second.py").write_text(naive)
    shared = _by_id(session.grade(folder, exercise_ids=["stable-softmax", "log-softmax"]))["log-softmax"]
    fresh = _by_id(session.grade(alone, exercise_ids=["log-softmax"]))["log-softmax"]
    assert [(c.id, c.status, c.reason) for c in shared.checks] == [(c.id, c.status, c.reason) for c in fresh.checks]
    assert "FloatingPointError" not in " ".join(c.reason for c in shared.checks)


@pytest.mark.slow
def test_modules_one_exercise_replaced_are_back_for_the_next(session, tmp_path: Path) -> None:
    """A file that puts its own object in ``sys.modules`` (or blocks an import) leaves the next file real modules."""
    folder = _learner(
        tmp_path,
        files={
            "aaa_first.py": "import sys, types\n"
            + _reference("stable-softmax")
            + "\nsys.modules['numpy'] = types.ModuleType('numpy')\nsys.modules['json'] = None\n",
            "zzz_second.py": "import json\n" + _reference("log-softmax"),
        },
    )
    exercises = _by_id(session.grade(folder, exercise_ids=["stable-softmax", "log-softmax"]))
    assert exercises["stable-softmax"].score == exercises["stable-softmax"].max_score
    assert exercises["log-softmax"].score == exercises["log-softmax"].max_score, exercises["log-softmax"].reason


@pytest.mark.slow
def test_each_exercise_shows_only_what_it_printed(session, tmp_path: Path) -> None:
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / "one.py").write_text("print('from the first file')\n" + _reference("stable-softmax"))
    (folder / "two.py").write_text("print('from the second file')\n" + _reference("log-softmax"))
    exercises = _by_id(session.grade(folder, exercise_ids=["stable-softmax", "log-softmax"]))
    assert "from the first file" in (exercises["stable-softmax"].output or "")
    assert "second" not in (exercises["stable-softmax"].output or "")
    assert "from the second file" in (exercises["log-softmax"].output or "")
    assert "first" not in (exercises["log-softmax"].output or "")


@pytest.mark.slow
def test_a_crash_in_one_exercise_costs_the_next_nothing(session, tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / "one.py").write_text("import os\n\ndef softmax(z, axis=-1):\n    os._exit(3)\n")
    (folder / "two.py").write_text(_reference("log-softmax"))
    session.factory.self_test()
    pids = _spawns(monkeypatch)
    exercises = _by_id(session.grade(folder, exercise_ids=["stable-softmax", "log-softmax"]))
    assert exercises["stable-softmax"].score == 0
    assert "exited with status 3" in " ".join(c.reason for c in exercises["stable-softmax"].checks)
    assert exercises["log-softmax"].score == exercises["log-softmax"].max_score
    assert len(set(pids)) == len(pids) >= 2  # the dead process was replaced, never reused


@pytest.mark.slow
def test_a_thread_left_running_is_not_inherited(session, tmp_path: Path, monkeypatch) -> None:
    """A file that starts a thread gets the process to itself: the next exercise starts a new one."""
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / "one.py").write_text(
        "import threading, time\nthreading.Thread(target=time.sleep, args=(60,), "
        "daemon=True).start()\n" + _reference("stable-softmax")
    )
    (folder / "two.py").write_text(_reference("log-softmax"))
    session.factory.self_test()
    pids = _spawns(monkeypatch)
    report = session.grade(folder, exercise_ids=["stable-softmax", "log-softmax"])
    assert report.score == report.max_score
    assert len(pids) == 2


@pytest.mark.slow
def test_the_graders_own_functions_never_reach_a_later_exercise(session, catalog, tmp_path: Path, monkeypatch) -> None:
    """Some checks hand the learner process the grader's functions; that process serves no other exercise."""
    from grader.engine.call_loop import SourceModule, grade_implementation

    files = {
        "a_gradient.py": _reference("argmax-zero-gradient").encode(),
        # Full marks only if the grader's source is nowhere in this process when the file is imported.
        "b_softmax.py": (
            "import sys\nassert 'given_functions' not in sys.modules, 'found the given functions'\n"
            + _reference("stable-softmax")
        ).encode(),
    }
    session.factory.self_test()
    _ask_references(session, "argmax-zero-gradient", "stable-softmax")
    pids = _spawns(monkeypatch)
    try:
        gradient = grade_implementation(
            catalog.exercise("argmax-zero-gradient"),
            SourceModule(files, "a_gradient.py"),
            session.factory,
            references=catalog.root,
            memo=session.memo,
        )
        softmax = grade_implementation(
            catalog.exercise("stable-softmax"),
            SourceModule(files, "b_softmax.py"),
            session.factory,
            references=catalog.root,
            memo=session.memo,
        )
    finally:
        session.factory.release()
    assert gradient.score == gradient.max_score
    assert softmax.score == softmax.max_score, softmax.reason
    assert len(pids) == 2


@pytest.mark.slow
def test_exercises_handing_over_functions_are_graded_last_and_reported_in_order(
    session, tmp_path: Path, monkeypatch
) -> None:
    folder = _learner(tmp_path, references=("argmax-zero-gradient", "stable-softmax", "temperature"))
    session.factory.self_test()
    pids = _spawns(monkeypatch)
    wanted = ["argmax-zero-gradient", "stable-softmax", "temperature"]
    report = session.grade(folder, exercise_ids=wanted)
    assert [e.id for e in report.exercises] == wanted
    assert report.score == report.max_score
    assert len(pids) == 1


@pytest.mark.slow
def test_a_helper_module_and_process_settings_start_afresh(session, tmp_path: Path) -> None:
    """A helper file imported by two exercises runs afresh for each; a low recursion limit or a pending
    alarm set by one exercise's file is gone for the next."""
    folder = tmp_path / "learner"
    folder.mkdir()
    (folder / "helpers.py").write_text("CALLS = []\n")
    (folder / "one.py").write_text(
        "import signal, sys, helpers\nhelpers.CALLS.append(1)\nsys.setrecursionlimit(60)\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.3)\n" + _reference("stable-softmax")
    )
    (folder / "two.py").write_text(
        "import helpers\nassert helpers.CALLS == [], 'helpers was not imported afresh'\n"
        "import time\ntime.sleep(0.5)\n" + _reference("log-softmax")
    )
    exercises = _by_id(session.grade(folder, exercise_ids=["stable-softmax", "log-softmax"]))
    assert exercises["log-softmax"].score == exercises["log-softmax"].max_score, exercises["log-softmax"].reason


@pytest.mark.slow
def test_calls_sent_with_the_import_are_answered_and_a_file_without_its_function_costs_the_next_nothing(
    session, tmp_path: Path, monkeypatch
) -> None:
    """Each exercise's calls go with its import; when nobody collects their answers the process is not reused."""
    folder = _learner(
        tmp_path,
        files={"stable_softmax.py": "softmax = 'not written yet'\n"},
        references=("log-softmax", "temperature"),
    )
    session.factory.self_test()
    pids = _spawns(monkeypatch)
    report = _by_id(session.grade(folder, exercise_ids=["stable-softmax", "log-softmax", "temperature"]))
    assert report["stable-softmax"].status == "missing"
    assert "does not define softmax()" in report["stable-softmax"].reason
    for exercise in ("log-softmax", "temperature"):
        assert report[exercise].score == report[exercise].max_score, report[exercise].reason
    assert len(pids) <= 2  # the process owing the first file's answers was replaced, not asked again


@pytest.mark.slow
def test_a_process_asked_for_other_calls_than_those_sent_ahead_ends() -> None:
    from grader.sandbox.calls import CallBatch
    from grader.sandbox.runner import LearnerProcess

    source = b"def double(x):\n    return 2.0 * x\n"
    ahead = CallBatch.of([{"fn": "double", "args": [{"t": "value", "v": 1.5}], "return_inputs": False}])
    other = CallBatch.of([{"fn": "double", "args": [{"t": "value", "v": 4.0}], "return_inputs": False}])
    with WarmParent.start() as warm_parent:
        process = LearnerProcess(warm_parent, {"double.py": source}, "double.py", ["double"])
        try:
            assert process.start(ahead).status == "ok" and not process.settled
            same = CallBatch.of(list(ahead.calls))  # other objects, the same calls: the same key
            (answer,) = process.call_many(same, batch=True)
            assert answer.status == "ok" and float(answer.value) == 3.0 and process.settled
        finally:
            process.close()
        process = LearnerProcess(warm_parent, {"double.py": source}, "double.py", ["double"])
        try:
            assert process.start(ahead).status == "ok"
            (answer,) = process.call_many(other, batch=True)
            assert answer.status == "not_run" and not process.alive  # its answers to `ahead` would be taken for these
        finally:
            process.close()


@pytest.mark.parametrize("wrong", ["wrong_global_state", "wrong_unseeded_generator"])
@pytest.mark.slow
def test_unseeded_draws_are_the_same_each_time_a_submission_is_graded(session, catalog, wrong: str) -> None:
    """NumPy's global generator and ``default_rng()`` without a seed draw the same numbers in every learner
    process, whether it was forked before or after ``numpy.random`` was imported: the reasons are the same."""
    from grader.grading import GradingSession

    path = ROOT / "solutions" / "scaling-experiment" / f"{wrong}.py"

    def reasons(grading: GradingSession) -> list[str]:
        exercise = grading.grade(path, exercise_ids=["scaling-experiment"]).exercises[0]
        return [check.reason for check in exercise.checks]

    first = reasons(session)
    assert any("the first time and" in reason for reason in first), first  # numbers were shown
    assert reasons(session) == first
    with GradingSession(catalog) as another:  # a fresh warm parent: its first learner is forked before numpy.random
        assert reasons(another) == first
