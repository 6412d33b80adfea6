"""The built-plan cache: a hit equals a fresh build and refers to the live spec; edits and unkeyed specs miss."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader import cache
from grader.checks import disk_cache
from grader.checks.plan import build_plan
from grader.spec.loader import load_spec_file

SPEC = Path(__file__).resolve().parents[1] / "exercises" / "stable-softmax.yaml"


def _fresh(exercise):  # type: ignore[no-untyped-def]
    return build_plan(exercise, list(exercise.checks))


def _same_plan(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.signatures == b.signatures
    assert a.table.index == b.table.index

    def shape(plan: Any) -> list[tuple[Any, Any]]:
        return [(c.function, c.return_inputs) for c in plan.table.calls]

    assert shape(a) == shape(b)
    for x, y in zip(a.table.calls, b.table.calls, strict=True):
        assert x.args.keys() == y.args.keys()
        for name in x.args:
            assert np.array_equal(np.asarray(x.args[name]), np.asarray(y.args[name]))
    assert [(p.entry, p.keys) for p in a.checks] == [(p.entry, p.keys) for p in b.checks]
    everything = list(range(len(a.table.calls)))
    x, y = a.encode(everything), b.encode(everything)
    assert (x.calls, x.blobs, x.key) == (y.calls, y.blobs, y.key)


def test_a_stored_plan_equals_a_fresh_build_and_refers_to_the_live_spec(tmp_path: Path, cache_dir: Path) -> None:
    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    exercise = load_spec_file(copy)
    checks = list(exercise.checks)
    built = disk_cache.stored_plan(exercise, checks, build_plan)
    assert len(list(cache_dir.glob("plan-*.pickle"))) == 1

    again = load_spec_file(copy)  # a new run: a new exercise object, from the same file
    loaded = disk_cache.stored_plan(again, list(again.checks), lambda *_: pytest.fail("the plan was built again"))
    assert loaded.exercise is again
    assert all(stored.check is live for stored, live in zip(loaded.checks, again.checks, strict=True))
    _same_plan(loaded, built)
    _same_plan(loaded, _fresh(again))


def test_an_edited_spec_or_other_checks_miss_the_plan_cache(tmp_path: Path, cache_dir: Path) -> None:
    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    exercise = load_spec_file(copy)
    disk_cache.stored_plan(exercise, list(exercise.checks), build_plan)
    public = [check for check in exercise.checks if check.visibility == "public"]
    assert disk_cache.plan_key(exercise, tuple(c.id for c in public)) != plan_key_of(exercise)

    copy.write_text(SPEC.read_text().replace("title: A softmax that never overflows", "title: Edited"))
    edited = load_spec_file(copy)
    assert plan_key_of(edited) != plan_key_of(exercise)
    builds = []
    disk_cache.stored_plan(edited, list(edited.checks), lambda *args: builds.append(1) or build_plan(*args))
    assert builds == [1]


def plan_key_of(exercise) -> str | None:  # type: ignore[no-untyped-def]
    return disk_cache.plan_key(exercise, tuple(check.id for check in exercise.checks))


def test_a_spec_not_read_from_a_file_is_built_and_not_stored(cache_dir: Path) -> None:
    exercise = load_spec_file(SPEC)
    copy = exercise.model_copy()
    assert cache.origin(copy) is None
    plan = disk_cache.stored_plan(copy, list(copy.checks), build_plan)
    assert plan.exercise is copy
    assert not list(cache_dir.glob("plan-*.pickle"))


def test_no_plan_is_stored_with_grader_no_cache(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exercise = load_spec_file(SPEC)
    monkeypatch.setenv("GRADER_NO_CACHE", "1")
    disk_cache.stored_plan(exercise, list(exercise.checks), build_plan)
    assert not list(cache_dir.glob("plan-*.pickle"))


def test_known_wrong_answers_are_kept_only_when_every_call_answered(tmp_path: Path, cache_dir: Path) -> None:
    """Diagnosis reuses a known-wrong solution's answers between runs, but never a time-out or a crash."""
    from grader.sandbox.outcomes import CallOutcome

    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    exercise = load_spec_file(copy)
    ids = tuple(check.id for check in exercise.checks)
    full = [CallOutcome(status="ok"), CallOutcome(status="raised", error={"type": "ValueError"})]
    asked: list[str] = []

    def ask(answers):  # type: ignore[no-untyped-def]
        return lambda: asked.append("asked") or answers

    assert disk_cache.stored_answers(exercise, ids, b"wrong one", ask(full)) == full
    assert disk_cache.stored_answers(load_spec_file(copy), ids, b"wrong one", ask([])) == full  # a later run
    assert len(asked) == 1
    cut_short = [CallOutcome(status="ok"), CallOutcome(status="timeout")]
    for _ in range(2):
        assert disk_cache.stored_answers(exercise, ids, b"wrong two", ask(cut_short)) == cut_short
    assert len(asked) == 3  # asked again: how a time-out ends may depend on the machine's load
    assert disk_cache.stored_answers(exercise, ids, b"wrong one, edited", ask(cut_short)) == cut_short
    assert len(asked) == 4


@pytest.mark.slow
def test_diagnosis_in_a_later_session_starts_no_known_wrong_process(
    session, tmp_path: Path, cache_dir: Path, monkeypatch
) -> None:
    """A second grading session finds the known-wrong answers on disk: only the learner's own process starts."""
    from grader.grading import GradingSession
    from grader.sandbox.warm_parent import WarmParent

    learner = tmp_path / "answer.py"
    shutil.copy(Path(__file__).resolve().parents[1] / "solutions" / "stable-softmax" / "wrong_global_max.py", learner)
    # A session of its own: nothing remembered in memory.
    with GradingSession(warm_parent=session.warm_parent) as earlier:
        first = earlier.grade(learner, exercise_ids=["stable-softmax"])
    spawned: list[int] = []
    original = WarmParent.spawn
    monkeypatch.setattr(WarmParent, "spawn", lambda self, config, fds: spawned.append(1) or original(self, config, fds))
    with GradingSession(warm_parent=session.warm_parent) as later:
        later.factory.self_test()
        spawned.clear()
        again = later.grade(learner, exercise_ids=["stable-softmax"])
    assert again == first
    assert any(check.diagnosis for check in again.exercises[0].checks)  # diagnosed, from the stored answers
    assert len(spawned) == 1


@pytest.mark.slow
def test_a_grade_builds_its_plans_before_it_waits_for_the_sandbox(session, tmp_path: Path, monkeypatch) -> None:
    """A cold ``grader grade`` loads its plans while the warm parent may still be importing numpy."""
    from grader.grading import GradingSession

    learner = tmp_path / "answer.py"
    shutil.copy(Path(__file__).resolve().parents[1] / "solutions" / "stable-softmax" / "reference.py", learner)
    exercise = session.catalog.exercises["stable-softmax"]
    for public_only in (False, True):
        built_before: list[bool] = []
        with GradingSession(session.catalog, warm_parent=session.warm_parent) as fresh:
            original = fresh.factory.require_strong
            monkeypatch.setattr(
                fresh.factory,
                "require_strong",
                lambda built_before=built_before, fresh=fresh, original=original: (
                    built_before.append(bool(len(fresh.memo.plans))) or original()
                ),
            )
            report = fresh.grade(learner, exercise_ids=["stable-softmax"], public_only=public_only)
        assert report.exercises[0].checks and all(c.status == "passed" for c in report.exercises[0].checks)
        assert built_before == ([] if public_only else [True])  # public checks need no strong sandbox
        checks = [c for c in exercise.checks if not public_only or c.visibility == "public"]
        plans = list(fresh.memo.plans)
        assert plans == [(exercise.id, tuple(c.id for c in checks))]  # the plan grading used
        assert fresh.memo.plans[plans[0]].exercise is exercise
