"""Result keys change exactly when what a result depends on changes; writes are atomic."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from grader.batch.cache import (
    KeyRecord,
    learner_digest,
    read_key,
    remove_stale_temporaries,
    result_key,
    spec_digest,
    write_atomically,
)
from grader.spec.loader import load_catalog

ROOT = Path(__file__).resolve().parents[1]


def test_learner_digest_follows_names_and_bytes(tmp_path: Path) -> None:
    folder = tmp_path / "ann"
    folder.mkdir()
    (folder / "a.py").write_text("x = 1\n")
    first = learner_digest(folder)
    assert learner_digest(folder) == first
    (folder / "a.py").write_text("x = 2\n")
    second = learner_digest(folder)
    assert second != first
    (folder / "a.py").rename(folder / "b.py")
    assert learner_digest(folder) != second
    os.utime(folder / "b.py", (0, 0))  # times do not count
    assert learner_digest(folder) == learner_digest(folder)


def test_learner_digest_does_not_follow_links_or_open_fifos(tmp_path: Path) -> None:
    folder = tmp_path / "ann"
    folder.mkdir()
    (folder / "link").symlink_to("/etc/hostname")
    os.mkfifo(folder / "pipe")
    assert len(learner_digest(folder)) == 64


def test_learner_digest_of_a_fixed_tree_never_changes(tmp_path: Path) -> None:
    """Every stored result is filed under this digest: a new way of computing it must give the same bytes,
    or the next batch after an upgrade grades the whole class again. (Value from the fingerprint that hashes
    only what grading reads.)"""
    folder = tmp_path / "ann"
    (folder / "sub" / "__pycache__").mkdir(parents=True)
    (folder / "__pycache__").mkdir()
    (folder / "softmax.py").write_text("import numpy as np\n")
    (folder / "answers.yaml").write_text("q: A\n")
    (folder / "sub" / "helper.py").write_text("X = 1\n")
    (folder / "sub" / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"\0")
    (folder / "__pycache__" / "softmax.cpython-311.pyc").write_bytes(b"\1")
    (folder / "b\u00e9.py").write_text("y = 2\n")
    (folder / "link.py").symlink_to("softmax.py")
    (folder / "gone.py").symlink_to("nowhere.py")
    os.mkfifo(folder / "pipe")
    assert learner_digest(folder) == "85a13d4b091e861b5e8921f54fd04dcd2e68dbed9afb3f34b8a77ca07b56b0f3"
    assert learner_digest(folder / "softmax.py") == "7cab0d7098f2f2e7e0aa2c9602f063df8d4ca61477d50ab6ff32ff6e8897fa28"


def test_spec_digest_changes_with_any_spec_or_solution(tmp_path: Path) -> None:
    from batch_helpers import make_exercises

    exercises = make_exercises(tmp_path)
    first = spec_digest(load_catalog(exercises), exercises)
    (exercises / "README.txt").write_text("notes")
    second = spec_digest(load_catalog(exercises), exercises)
    assert second != first
    solution = tmp_path / "solutions" / "stable-softmax" / "wrong_global_max.py"
    solution.write_text(solution.read_text() + "\n# changed\n")
    assert spec_digest(load_catalog(exercises), exercises) != second


def test_result_key_depends_on_each_part() -> None:
    keys = {
        result_key("l", "s", "a"),
        result_key("l2", "s", "a"),
        result_key("l", "s2", "a"),
        result_key("l", "s", "a2"),
    }
    assert len(keys) == 4


def test_write_atomically_replaces_whole_files_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    write_atomically(target, "one")
    write_atomically(target, "two")
    assert target.read_text() == "two"
    assert os.listdir(tmp_path) == ["r.json"]
    assert target.stat().st_mode & 0o644 == 0o644


def test_write_atomically_keeps_the_old_file_when_writing_fails(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "r.json"
    write_atomically(target, "old")

    def broken(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        write_atomically(target, "new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["r.json"]


def test_remove_stale_temporaries_only_removes_ours(tmp_path: Path) -> None:
    (tmp_path / ".ann.json.x1y2.tmp").write_text("half")
    (tmp_path / "ann.json").write_text("{}")
    assert remove_stale_temporaries(tmp_path) == 1
    assert os.listdir(tmp_path) == ["ann.json"]


def test_key_record_round_trips_and_rejects_garbage(tmp_path: Path) -> None:
    path = tmp_path / "a.key"
    record = KeyRecord(key="k", learner="Éloïse", entry="Éloïse.py", grader_error=None)
    path.write_text(record.dumps(), encoding="utf-8")
    assert read_key(path) == record
    path.write_text("{not json")
    assert read_key(path) is None
    assert read_key(tmp_path / "missing.key") is None
    shutil.rmtree(tmp_path)


def test_key_record_counts_grader_failures_and_reads_records_without_the_count(tmp_path: Path) -> None:
    path = tmp_path / "a.key"
    once = KeyRecord(key="k", learner="ann", entry="ann.py", grader_error="Traceback ...", failures=1)
    path.write_text(once.dumps(), encoding="utf-8")
    assert read_key(path) == once and not once.failure_kept
    assert KeyRecord(key="k", learner="ann", entry="ann.py", grader_error="again", failures=2).failure_kept
    path.write_text('{"key": "k", "learner": "ann", "entry": "ann.py", "grader_error": "boom"}')
    assert read_key(path).failures == 1  # written before failures were counted: one failure
    path.write_text('{"key": "k", "learner": "ann", "entry": "ann.py", "grader_error": null}')
    assert read_key(path).failures == 0
    for garbage in ('"text"', '{"key": "k", "learner": "ann", "entry": "a", "grader_error": "x", "failures": "2"}'):
        path.write_text(garbage)
        assert read_key(path) is None
