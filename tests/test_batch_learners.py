"""Who is in the class, and a result file of their own for every learner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader.batch.learners import discover_learners, file_stem


@pytest.mark.parametrize(
    ("name", "stem"),
    [("ann", "ann"), ("x.y", "x.y"), ("bob_smith-2", "bob_smith-2")],
    ids=["plain", "dotted", "underscore-and-digit"],
)
def test_file_stem_keeps_plain_names(name: str, stem: str) -> None:
    assert file_stem(name) == stem


@pytest.mark.parametrize(
    "name",
    ["Ann", "a b", "é", "Éloïse Durand", "..", ".hidden", "con", "a/b", "x" * 200, "日本語", "-ann-"],
    ids=[
        "upper",
        "space",
        "accent",
        "full-name",
        "dots",
        "leading-dot",
        "windows-reserved",
        "slash",
        "long",
        "no-ascii",
        "edge-hyphens",
    ],
)
def test_file_stem_hashes_names_that_are_not_plain(name: str) -> None:
    stem = file_stem(name)
    assert stem != name
    assert stem.isascii() and stem == stem.lower() and "/" not in stem and not stem.startswith(".")
    assert len(stem) <= 70
    assert file_stem(name) == stem  # stable


def test_file_stem_never_shares_across_case_or_spelling() -> None:
    names = ["Ann", "ann", "ANN", "a b", "a-b", "a_b", "é", "e", "x.y", "x-y", "e\u0301"]
    stems = [file_stem(name).casefold() for name in names]
    assert len(set(stems)) == len(names)


def test_discover_learners_names_entries_and_skips_litter(tmp_path: Path) -> None:
    (tmp_path / "Ann").mkdir()
    (tmp_path / "ann.py").write_text("")
    (tmp_path / "notes.v2.ipynb").write_text("{}")
    (tmp_path / ".DS_Store").write_text("")
    (tmp_path / "__MACOSX").mkdir()
    (tmp_path / "out").mkdir()
    learners, notes = discover_learners(tmp_path, exclude=tmp_path / "out")
    assert [(one.name, one.entry) for one in learners] == [
        ("Ann", "Ann"),
        ("ann", "ann.py"),
        ("notes.v2", "notes.v2.ipynb"),
    ]
    assert len(notes) == 2 and all("skipped" in note for note in notes)


def test_discover_learners_names_clashing_entries_by_their_whole_name(tmp_path: Path) -> None:
    (tmp_path / "bob.py").write_text("")
    (tmp_path / "bob.yaml").write_text("")
    (tmp_path / "bob").mkdir()
    learners, notes = discover_learners(tmp_path)
    assert sorted(one.name for one in learners) == ["bob", "bob.py", "bob.yaml"]
    assert len({one.stem for one in learners}) == 3
    assert "would all be learner 'bob'" in notes[0]


def test_discover_learners_handles_names_that_are_not_utf8(tmp_path: Path) -> None:
    raw = os.fsdecode(b"caf\xe9.py")
    (tmp_path / raw).write_text("")
    learners, _ = discover_learners(tmp_path)
    assert learners[0].name == "caf\ufffd"
    assert learners[0].name.encode("utf-8")  # printable in a UTF-8 gradebook


@pytest.mark.parametrize("out", [".", "ann/graded"], ids=["the-class-folder", "inside-a-learner"])
def test_run_batch_refuses_an_output_folder_among_learners(tmp_path: Path, out: str) -> None:
    from batch_helpers import ASSIGNMENT, make_exercises

    from grader.batch import run_batch
    from grader.errors import UsageError

    exercises = make_exercises(tmp_path / "specs")
    folder = tmp_path / "class"
    (folder / "ann").mkdir(parents=True)
    with pytest.raises(UsageError, match="output folder"):
        run_batch(folder, assignment=ASSIGNMENT, out=folder / out, exercises_dir=exercises)
    assert sorted(p.name for p in folder.rglob("*")) == ["ann"]


def test_discover_learners_takes_links_fifos_and_devices_for_learners_without_following_them(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "root").symlink_to("/")
    (tmp_path / "out").mkdir()
    (tmp_path / "to-out").symlink_to("out")  # leads to the output folder: skipped with it
    os.mkfifo(tmp_path / "pipe.py")
    learners, notes = discover_learners(tmp_path, exclude=tmp_path / "out")
    assert [(one.name, one.entry) for one in learners] == [("loop", "loop"), ("pipe", "pipe.py"), ("root", "root")]
    assert notes == []


def test_run_batch_refuses_an_output_folder_that_is_a_link_loop(tmp_path: Path) -> None:
    from batch_helpers import ASSIGNMENT, make_exercises

    from grader.batch import run_batch
    from grader.errors import UsageError

    exercises = make_exercises(tmp_path / "specs")
    folder = tmp_path / "class"
    (folder / "ann").mkdir(parents=True)
    (tmp_path / "out").symlink_to("out")
    with pytest.raises(UsageError, match="cannot tell where this folder is"):
        run_batch(folder, assignment=ASSIGNMENT, out=tmp_path / "out", exercises_dir=exercises)
