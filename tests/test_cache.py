"""The disk cache holds plain JSON data: a hit equals a fresh load, any edit misses, and nothing read runs code.

Every entry is rebuilt from checked data; a damaged, forged or foreign entry
is discarded with a one-line note on stderr and worked out again. Files that
are not the user's alone, or that are links, are never read.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import typing
from pathlib import Path
from typing import Any

import pytest

from grader import cache
from grader.checks import registry
from grader.checks.statistics import variance_interval
from grader.record import Record
from grader.record.plain import NotPlain, field_types, from_plain, to_plain
from grader.spec import listing
from grader.spec.loader import load_catalog, load_spec_file
from grader.spec.models import Spec

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "exercises" / "stable-softmax.yaml"


class Payload:
    """Unpickled, it would create ``path``: the proof that a cache read ran code."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


def _spec_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    return copy


def _entry(cache_dir: Path, kind: str) -> Path:
    (found,) = cache_dir.glob(f"{kind}-*.json")
    return found


def test_load_spec_file_from_cache_equals_a_fresh_load(tmp_path: Path, cache_dir: Path) -> None:
    copy = _spec_copy(tmp_path)
    fresh = load_spec_file(copy)
    entry = _entry(cache_dir, "spec")
    assert json.loads(entry.read_bytes())["id"] == "stable-softmax"  # plain JSON data
    assert load_spec_file(copy) == fresh


def test_load_spec_file_edit_misses_the_cache(tmp_path: Path, cache_dir: Path) -> None:
    copy = _spec_copy(tmp_path)
    load_spec_file(copy)
    copy.write_text(SPEC.read_text().replace("title: A softmax that never overflows", "title: Edited"))
    assert load_spec_file(copy).title == "Edited"


def test_every_spec_of_the_catalog_comes_back_equal_from_its_entry(cache_dir: Path) -> None:
    fresh = load_catalog(ROOT / "exercises")
    assert len(list(cache_dir.glob("spec-*.json"))) == len(fresh.exercises) + len(fresh.assignments)
    again = load_catalog(ROOT / "exercises")
    assert again.exercises == fresh.exercises and again.assignments == fresh.assignments
    assert all(again.exercises[i] is not fresh.exercises[i] for i in fresh.exercises)


@pytest.mark.slow
def test_nothing_in_the_cache_folder_is_a_pickle_after_a_grade(tmp_path: Path, cache_dir: Path, session) -> None:
    from grader.grading import GradingSession

    learner = tmp_path / "answer.py"
    shutil.copy(ROOT / "solutions" / "stable-softmax" / "wrong_global_max.py", learner)
    with GradingSession(load_catalog(ROOT / "exercises"), warm_parent=session.warm_parent) as grading:
        grading.grade(learner, exercise_ids=["stable-softmax"])
    files = list(cache_dir.iterdir())
    assert {path.name.split("-")[0] for path in files} >= {"spec", "known", "held"}
    for path in files:
        assert path.suffix == ".json" and not path.read_bytes().startswith(b"\x80")  # pickle's opcode PROTO
        json.loads(path.read_bytes())


def test_a_pickle_planted_under_an_entry_name_runs_no_code(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A forged entry, written where the old pickle cache and the JSON cache look, is data that fails to parse."""
    copy = _spec_copy(tmp_path)
    fresh = load_spec_file(copy)
    key = cache.spec_key(copy.read_bytes())
    canary = tmp_path / "code-ran-in-the-grader"
    forged = pickle.dumps(Payload(canary))
    for name in (f"spec-{key}.pickle", f"spec-{key}.json"):
        (cache_dir / name).write_bytes(forged)
    assert load_spec_file(copy) == fresh
    assert not canary.exists()
    assert "grader: note: discarded the cache entry spec-" in capsys.readouterr().err
    assert load_spec_file(copy) == fresh and json.loads((cache_dir / f"spec-{key}.json").read_bytes())


def _damaged(data: dict[str, Any]) -> Any:
    data["checks"][0]["points"] = "many"
    return data


def _extra_field(data: dict[str, Any]) -> Any:
    data["checks"][0]["run"] = "os.system"
    return data


def _missing_field(data: dict[str, Any]) -> Any:
    del data["entries"]
    return data


def _other_class(data: dict[str, Any]) -> Any:
    data["checks"][0]["__record__"] = "Popen"
    return data


def _not_a_record(data: dict[str, Any]) -> Any:
    data["checks"][0] = ["sums-to-one"]
    return data


def _bool_for_float(data: dict[str, Any]) -> Any:
    data["time_limit"] = True
    return data


def _literal(data: dict[str, Any]) -> Any:
    data["checks"][0]["visibility"] = "everyone"
    return data


DAMAGE = {
    "wrong-type": lambda text: json.dumps(_damaged(json.loads(text))),
    "extra-field": lambda text: json.dumps(_extra_field(json.loads(text))),
    "missing-field": lambda text: json.dumps(_missing_field(json.loads(text))),
    "unknown-class": lambda text: json.dumps(_other_class(json.loads(text))),
    "list-for-record": lambda text: json.dumps(_not_a_record(json.loads(text))),
    "bool-for-float": lambda text: json.dumps(_bool_for_float(json.loads(text))),
    "not-a-literal": lambda text: json.dumps(_literal(json.loads(text))),
    "truncated": lambda text: text[: len(text) // 2],
    "not-utf8": lambda text: b"\xff\xfe" + text.encode(),
    "deep-nesting": lambda text: "[" * 100_000 + "]" * 100_000,
    "empty": lambda text: "",
    "a-list": lambda text: "[1, 2, 3]",
}


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_a_damaged_spec_entry_is_discarded_with_a_note(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    copy = _spec_copy(tmp_path)
    fresh = load_spec_file(copy)
    entry = _entry(cache_dir, "spec")
    written = DAMAGE[damage](entry.read_text())
    entry.write_bytes(written if isinstance(written, bytes) else written.encode())
    capsys.readouterr()
    assert load_spec_file(copy) == fresh
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"grader: note: discarded the cache entry {entry.name} ("), err
    assert str(cache_dir) not in err[0]
    assert load_spec_file(copy) == fresh and not capsys.readouterr().err  # stored afresh, read cleanly


def test_cache_ignores_a_file_others_can_write(cache_dir: Path) -> None:
    cache.store("k", {"x": 1})
    assert cache.load("k", dict) == {"x": 1}
    os.chmod(cache_dir / "spec-k.json", 0o666)
    assert cache.load("k", dict) is None


def test_cache_ignores_a_folder_others_can_write(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Neither read nor written, said once: what others could plant is never read, what the grader keeps never shown."""
    cache.store("k", {"x": 1})
    os.chmod(cache_dir, 0o777)
    assert cache.load("k", dict) is None and cache.load("k", dict) is None
    cache.store("j", {"x": 1})
    assert not (cache_dir / "spec-j.json").exists()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("grader: note: the cache folder is not used")
    assert str(cache_dir) not in err[0]


def test_cache_never_follows_a_link(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.store("k", {"x": 1})
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"x": 2}')
    os.chmod(elsewhere, 0o600)
    (cache_dir / "spec-k.json").unlink()
    (cache_dir / "spec-k.json").symlink_to(elsewhere)
    assert cache.load("k", dict) is None
    linked = tmp_path / "linked"
    linked.symlink_to(cache_dir)
    monkeypatch.setenv("GRADER_CACHE_DIR", str(linked))
    cache.store("j", {"x": 3})
    assert cache.load("j", dict) is None


def test_cache_off_with_grader_no_cache(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_NO_CACHE", "1")
    cache.store("k", 1)
    assert not cache_dir.exists()


def test_data_that_is_not_json_is_not_stored(cache_dir: Path) -> None:
    for value in (b"bytes", {1, 2}, object(), {"a": float}):
        cache.store("k", value)
        assert cache.load("k", lambda data: data) is None


def test_a_kept_interval_is_checked_and_a_bad_one_worked_out_again(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compute = variance_interval.__wrapped__
    first = compute(8, 500)
    (entry,) = cache_dir.glob("interval-*.json")
    assert json.loads(entry.read_text()) == list(first)
    for forged in ('["0.1", 0.2]', "[0.3, 0.1]", "[0.1, 0.2, 0.3]", '{"low": 0.1}'):
        entry.write_text(forged)
        assert compute(8, 500) == first
        assert "discarded the cache entry interval-" in capsys.readouterr().err


def test_a_damaged_listing_entry_is_discarded(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = load_catalog(ROOT / "exercises")
    rows = listing.catalog_rows(catalog)
    listing.store_rows(ROOT / "exercises", catalog, rows)
    assert listing.cached_rows(ROOT / "exercises") == rows
    entry = _entry(cache_dir, "listing")
    for forged in ('{"rows": [[1, 2, 3, 4]], "paths": []}', '{"rows": [], "paths": [7]}', '{"rows": []}'):
        entry.write_text(forged)
        assert listing.cached_rows(ROOT / "exercises") is None
        assert "discarded the cache entry listing-" in capsys.readouterr().err


# -- records as plain data ---------------------------------------------------------


def _record_classes() -> list[type[Record]]:
    import grader.spec.models  # noqa: F401 -- defines the spec records

    found: list[type[Record]] = []
    todo = list(Record.__subclasses__())
    while todo:
        record = todo.pop()
        found.append(record)
        todo.extend(record.__subclasses__())
    return sorted({r for r in found if r.__module__.startswith("grader.")}, key=lambda r: r.__qualname__)


def test_field_types_are_the_annotations_typing_resolves() -> None:
    for record in _record_classes():
        hints = typing.get_type_hints(record, include_extras=True)
        assert field_types(record) == {name: hints[name] for name in record.model_fields}, record


@pytest.mark.parametrize(
    "value", [(1, 2), b"x", {1: "a"}, {1, 2}, float], ids=["tuple", "bytes", "int-key", "set", "class"]
)
def test_to_plain_refuses_what_json_would_not_give_back(value: Any) -> None:
    with pytest.raises(NotPlain):
        to_plain({"x": value})


def test_from_plain_rebuilds_only_the_classes_the_annotation_allows() -> None:
    check = registry.CHECK_TYPES[1].model_validate({"id": "rows-sum", "property": "sums-to-one"})
    data = to_plain(check)
    assert from_plain(json.loads(json.dumps(data)), registry.CheckSpec) == check
    for name in ("ImplementationExercise", "Record", "Payload", "system"):
        with pytest.raises(NotPlain):
            from_plain({**data, "__record__": name}, registry.CheckSpec)
    with pytest.raises(NotPlain):
        from_plain(data, Spec)


# -- the learner's side --------------------------------------------------------------

ATTACK = """
import os

TARGETS = {targets!r}
FOLDER = {folder!r}
wrote = []
for path in TARGETS + [os.path.join(FOLDER, "spec-planted.json")]:
    for mode in ("r+b", "wb", "ab"):
        try:
            with open(path, mode) as handle:
                handle.write(b"planted")
            wrote.append(path)
        except OSError:
            pass
for path in TARGETS:
    try:
        os.rename(path, path + ".moved")
        wrote.append(path)
    except OSError:
        pass
try:
    os.chmod(FOLDER, 0o777)
except OSError:
    pass
"""


def _grade_twice_with_an_attack(tmp_path: Path, cache_dir: Path) -> tuple[dict[Path, bytes], Any, list[str]]:
    """Grade a correct learner (filling the cache), then the same learner with ``ATTACK`` run at its import.

    The attack's softmax is wrong whenever one of its writes got through, so the grade shows it.
    """
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    shutil.copytree(ROOT / "solutions", tmp_path / "solutions")
    learner = tmp_path / "learner.py"
    reference = (ROOT / "solutions" / "stable-softmax" / "reference.py").read_text()
    learner.write_text(reference)
    command = [sys.executable, "-m", "grader.cli", "grade", str(learner), "--exercise", "stable-softmax"]
    env = {**os.environ, "GRADER_CACHE_DIR": str(cache_dir)}
    first = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    before = {path: path.read_bytes() for path in cache_dir.iterdir()}
    attack = textwrap.dedent(ATTACK.format(targets=[str(path) for path in before], folder=str(cache_dir)))
    learner.write_text(
        attack + reference + "\n_right = softmax\n\ndef softmax(z, axis=-1):\n"
        "    return _right(z, axis) * 2 if wrote else _right(z, axis)\n"
    )
    second = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    return before, second, command


@pytest.mark.slow
def test_a_confined_learner_process_cannot_write_the_cache(tmp_path: Path, cache_dir: Path) -> None:
    """Under the kernel layers, a learner's writes to the cache folder fail: every entry stays as the grader wrote it.

    Should its mode change all the same, later runs neither read nor write there (``cache._private``).
    """
    before, second, command = _grade_twice_with_an_attack(tmp_path, cache_dir)
    assert second.returncode == 0, second.stdout + second.stderr  # every write failed
    assert {path: path.read_bytes() for path in cache_dir.iterdir() if path in before} == before
    assert not list(cache_dir.glob("*planted*")) and not list(cache_dir.glob("*.moved"))
    if cache_dir.stat().st_mode & 0o077:
        names = sorted(path.name for path in cache_dir.iterdir())
        env = {**os.environ, "GRADER_CACHE_DIR": str(cache_dir)}
        third = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert third.returncode == 0 and sorted(path.name for path in cache_dir.iterdir()) == names


@pytest.mark.slow
def test_a_confined_learner_process_cannot_change_the_cache_folder_mode(tmp_path: Path, cache_dir: Path) -> None:
    _grade_twice_with_an_attack(tmp_path, cache_dir)
    assert cache_dir.stat().st_mode & 0o777 == 0o700
