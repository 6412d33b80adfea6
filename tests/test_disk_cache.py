"""The checks' disk cache: plans, instructor answers and held outputs come back as checked plain data, or not at all."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader import cache
from grader.engine import disk_cache
from grader.engine.plan import build_plan
from grader.sandbox.answers import WireOutcome, answer_digest
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.protocol import encode_array
from grader.sandbox.untrusted import clean_error
from grader.spec.loader import load_spec_file

SPEC = Path(__file__).resolve().parents[1] / "exercises" / "stable-softmax.yaml"


def _answers() -> list[CallOutcome]:
    """Answers as a learner process's reader gives them: arrays returned, an exception raised, a value refused."""
    returned = np.array([[0.25, 0.75], [1.0, 0.0]])
    payload = [encode_array(returned), encode_array(np.array([1.0, 2.0]))]
    ok = WireOutcome(payload, 1, "single", ["ndarray"], answer_digest("single", ["ndarray"], 1, payload, []), [])
    raised = CallOutcome(status="raised", error=clean_error({"type": "ValueError", "message": "no", "frames": []}))
    refused = CallOutcome(status="bad_value", error=clean_error({"type": "TypeError", "message": "a list"}))
    return [ok, raised, refused]


def _same_answers(got: list[CallOutcome], expected: list[CallOutcome]) -> None:
    assert [(a.status, a.kind, a.types, a.error, a.detail, a.digest) for a in got] == [
        (a.status, a.kind, a.types, a.error, a.detail, a.digest) for a in expected
    ]
    for a, b in zip(got, expected, strict=True):
        assert len(a.values) == len(b.values) and all(map(np.array_equal, a.values, b.values))
        assert len(a.inputs_after) == len(b.inputs_after) and all(map(np.array_equal, a.inputs_after, b.inputs_after))


def test_known_wrong_answers_are_kept_only_when_every_call_answered(tmp_path: Path, cache_dir: Path) -> None:
    """Diagnosis reuses a known-wrong solution's answers between runs, but never a time-out or a crash."""
    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    exercise = load_spec_file(copy)
    ids = tuple(check.id for check in exercise.checks)
    full = _answers()
    asked: list[str] = []

    def ask(answers):  # type: ignore[no-untyped-def]
        return lambda: asked.append("asked") or answers

    assert disk_cache.stored_answers(exercise, ids, b"wrong one", ask(full)) == full
    _same_answers(disk_cache.stored_answers(load_spec_file(copy), ids, b"wrong one", ask([])), full)  # a later run
    assert len(asked) == 1
    cut_short = [full[0], CallOutcome(status="timeout")]
    for _ in range(2):
        assert disk_cache.stored_answers(exercise, ids, b"wrong two", ask(cut_short)) == cut_short
    assert len(asked) == 3  # asked again: how a time-out ends may depend on the machine's load
    assert disk_cache.stored_answers(exercise, ids, b"wrong one, edited", ask(cut_short)) == cut_short
    assert len(asked) == 4


def _stored(tmp_path: Path, cache_dir: Path) -> tuple[Any, tuple[str, ...], Path]:
    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    exercise = load_spec_file(copy)
    ids = tuple(check.id for check in exercise.checks)
    disk_cache.stored_answers(exercise, ids, b"wrong", lambda: _answers())
    (entry,) = cache_dir.glob("known-wrong-*.json")
    return exercise, ids, entry


def _set(index: int, key: str, value: Any) -> Any:
    def change(data: list[dict[str, Any]]) -> Any:
        data[index][key] = value
        return data

    return change


FORGED = {
    "digest-given": _set(0, "digest", "00" * 16),
    "not-base64": _set(0, "payload", ["%%%"]),
    "huge-array": _set(0, "payload", [base64.b64encode(b"\x00\x01" + (10**11).to_bytes(8, "little")).decode()]),
    "object-dtype": _set(0, "payload", [base64.b64encode(b"\x7f\x00").decode()]),
    "more-values-than-payload": _set(0, "values", 3),
    "no-values": _set(0, "values", 0),
    "kind": _set(0, "kind", "generator"),
    "types": _set(0, "types", ["<script>" * 20]),
    "float-errors": _set(0, "float_errors", [{"kind": "exec", "in": "os.system"}]),
    "error-not-as-read": _set(1, "error", {"type": 7, "message": "no", "frames": []}),
    "error-frames": _set(1, "error", {"type": "E", "message": "", "frames": "all"}),
    "status-timeout": _set(1, "status", "timeout"),
    "not-a-list": lambda data: {"answers": data},
}


@pytest.mark.parametrize("forgery", list(FORGED), ids=list(FORGED))
def test_a_forged_answers_entry_is_discarded_and_asked_again(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], forgery: str
) -> None:
    exercise, ids, entry = _stored(tmp_path, cache_dir)
    entry.write_text(json.dumps(FORGED[forgery](json.loads(entry.read_text()))))
    asked: list[int] = []
    got = disk_cache.stored_answers(exercise, ids, b"wrong", lambda: asked.append(1) or _answers())
    assert asked == [1]
    _same_answers(got, _answers())
    assert f"grader: note: discarded the cache entry {entry.name} (" in capsys.readouterr().err


def test_a_kept_answer_digest_is_worked_out_from_its_arrays(tmp_path: Path, cache_dir: Path) -> None:
    """Two kept answers with the same arrays are judged alike; no entry can claim another output's digest."""
    exercise, ids, entry = _stored(tmp_path, cache_dir)
    data = json.loads(entry.read_text())
    assert "digest" not in data[0]
    other = np.array([[0.5, 0.5], [0.5, 0.5]])
    data[0]["payload"][0] = base64.b64encode(encode_array(other)).decode()
    entry.write_text(json.dumps(data))
    loaded = disk_cache.stored_answers(exercise, ids, b"wrong", lambda: pytest.fail("asked again"))
    assert np.array_equal(loaded[0].value, other) and loaded[0].digest != _answers()[0].digest


def test_held_outputs_are_kept_as_hex_digests_and_checked(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exercise, ids, _ = _stored(tmp_path, cache_dir)
    held = {"rows-sum-to-one": {bytes(range(16)), bytes(16)}}
    disk_cache.store_held(exercise, ids, held)
    (entry,) = cache_dir.glob("held-*.json")
    assert json.loads(entry.read_text()) == {"rows-sum-to-one": sorted(d.hex() for d in held["rows-sum-to-one"])}
    assert disk_cache.stored_held(exercise, ids) == held
    for forged in ('{"rows-sum-to-one": ["zz" ]}', '{"rows-sum-to-one": ["0011"]}', '["00"]', '{"x": "00"}'):
        entry.write_text(forged)
        assert disk_cache.stored_held(exercise, ids) == {}
        assert "discarded the cache entry held-" in capsys.readouterr().err


def test_a_spec_not_read_from_a_file_keeps_nothing(cache_dir: Path) -> None:
    exercise = load_spec_file(SPEC).model_copy()
    assert cache.origin(exercise) is None and disk_cache.plan_key(exercise, ()) is None
    disk_cache.stored_answers(exercise, (), b"wrong", _answers)
    disk_cache.store_held(exercise, (), {"x": {bytes(16)}})
    assert not list(cache_dir.glob("known-wrong-*")) and not list(cache_dir.glob("held-*"))


def test_nothing_is_kept_with_grader_no_cache(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exercise = load_spec_file(SPEC)
    monkeypatch.setenv("GRADER_NO_CACHE", "1")
    disk_cache.stored_answers(exercise, (), b"wrong", _answers)
    assert not list(cache_dir.glob("known-wrong-*"))


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
    assert len(list(cache_dir.glob("plan-*.json"))) == 1

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
    assert not list(cache_dir.glob("plan-*.json"))


def test_no_plan_is_stored_with_grader_no_cache(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exercise = load_spec_file(SPEC)
    monkeypatch.setenv("GRADER_NO_CACHE", "1")
    disk_cache.stored_plan(exercise, list(exercise.checks), build_plan)
    assert not list(cache_dir.glob("plan-*.json"))


def _first_call(**changes: Any) -> Any:
    return lambda data: {**data, "calls": [{**data["calls"][0], **changes}, *data["calls"][1:]]}


PLAN_FORGERIES = {
    "other-checks": lambda data: {**data, "checks": data["checks"][::-1]},
    "key-out-of-range": lambda data: {**data, "whole": [*data["whole"], 10**6]},
    "index-off": lambda data: {**data, "index": {key: 0 for key in data["index"]}},
    "array-not-encoded": lambda data: {**data, "arrays": ["AAAA" + text for text in data["arrays"]]},
    "array-number": _first_call(args={"z": {"a": -1}}),
    "unknown-tag": _first_call(args={"z": {"x": 1}}),
    "call-side": _first_call(on="grader"),
    "flag-type": _first_call(return_inputs="yes"),
    "scalar-overflow": _first_call(args={"z": {"n": ["<i8", 10**30]}}),
    "bound-not-array": _first_call(args={"f": {"f": "softmax", "b": [["A", 1.0]]}}),
    "extra-key": lambda data: {**data, "encoded": {}},
}


@pytest.mark.parametrize("forgery", list(PLAN_FORGERIES), ids=list(PLAN_FORGERIES))
def test_a_forged_plan_entry_is_discarded_and_the_plan_built(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], forgery: str
) -> None:
    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    exercise = load_spec_file(copy)
    disk_cache.stored_plan(exercise, list(exercise.checks), build_plan)
    (entry,) = cache_dir.glob("plan-*.json")
    entry.write_text(json.dumps(PLAN_FORGERIES[forgery](json.loads(entry.read_text()))))
    builds: list[int] = []
    plan = disk_cache.stored_plan(exercise, list(exercise.checks), lambda *a: builds.append(1) or build_plan(*a))
    assert builds == [1] and plan.exercise is exercise
    _same_plan(plan, _fresh(exercise))
    assert f"grader: note: discarded the cache entry {entry.name} (" in capsys.readouterr().err


def test_a_plan_entry_shares_an_array_between_a_case_and_its_calls(tmp_path: Path, cache_dir: Path) -> None:
    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    exercise = load_spec_file(copy)
    built = disk_cache.stored_plan(exercise, list(exercise.checks), build_plan)
    loaded = disk_cache.stored_plan(exercise, list(exercise.checks), lambda *_: pytest.fail("built again"))
    (entry,) = cache_dir.glob("plan-*.json")
    data = json.loads(entry.read_text())
    distinct = {id(v) for p in built.checks for c in p.cases for v in c.args.values() if isinstance(v, np.ndarray)}
    assert len(data["arrays"]) <= len(distinct) + sum(
        1 for call in built.table.calls for v in call.args.values() if isinstance(v, np.ndarray)
    )
    first = loaded.checks[0]
    assert first.calls[0][0].args["z"] is first.cases[0].args["z"]
    assert built.checks[0].calls[0][0].args["z"] is built.checks[0].cases[0].args["z"]


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
