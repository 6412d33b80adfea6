"""A learner's fingerprint covers what grading reads, changes with it, and is safe whatever the folder holds."""

from __future__ import annotations

import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.batch import fingerprint
from grader.batch.fingerprint import (
    GRADED_SUFFIXES,
    MAX_HASHED_BYTES,
    MAX_HASHED_FILES,
    Fingerprint,
    fingerprint_learner,
    graded_suffix,
)

HUGE = 8 << 30  # sparse: a few KB on disk


def _within(seconds: float, path: Path) -> Fingerprint:
    """Fingerprint ``path`` in a thread: a fingerprint that blocks (on a FIFO, say) fails the test, not the run."""
    found: list[Fingerprint] = []
    thread = threading.Thread(target=lambda: found.append(fingerprint_learner(path)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert found, f"fingerprinting {path} took longer than {seconds} s"
    return found[0]


def _learner(tmp_path: Path) -> Path:
    folder = tmp_path / "ann"
    folder.mkdir()
    (folder / "softmax.py").write_text("def softmax(z, axis=-1):\n    return z\n")
    (folder / "answers.yaml").write_text("q: A\n")
    return folder


def test_fingerprint_follows_the_files_grading_reads_and_only_those(tmp_path: Path) -> None:
    folder = _learner(tmp_path)
    first = fingerprint_learner(folder).digest
    (folder / "notes.txt").write_text("not graded")
    (folder / "sub").mkdir()
    (folder / "sub" / "helper.py").write_text("X = 1\n")  # grading reads only the folder's own files
    assert fingerprint_learner(folder).digest == first
    for change in [
        lambda: (folder / "softmax.py").write_text("x = 2\n"),
        lambda: (folder / "answers.yaml").write_text("q: B\n"),
        lambda: (folder / "nb.ipynb").write_text("{}"),
        lambda: (folder / "nb.ipynb").rename(folder / "nb2.ipynb"),
        lambda: (folder / "answers.yaml").unlink(),
    ]:
        before = fingerprint_learner(folder).digest
        change()
        assert fingerprint_learner(folder).digest != before


def test_fingerprint_of_a_huge_sparse_file_is_quick_and_follows_its_size_and_time(tmp_path: Path) -> None:
    folder = _learner(tmp_path)
    for name in ("big.py", "big.ipynb", "big.bin"):
        with open(folder / name, "wb") as stream:
            stream.truncate(HUGE)
    started = time.monotonic()
    found = _within(10, folder)
    assert time.monotonic() - started < 1.0
    assert any("'big.py' is larger than 16 MiB" in note for note in found.notes)
    assert any("'big.ipynb' is larger than 16 MiB" in note for note in found.notes)
    assert not any("big.bin" in note for note in found.notes)  # never graded, so never looked at
    os.truncate(folder / "big.py", HUGE + 1)
    grown = fingerprint_learner(folder).digest
    assert grown != found.digest
    os.utime(folder / "big.py", ns=(0, 12345))
    assert fingerprint_learner(folder).digest != grown


def test_fingerprint_opens_nothing_but_regular_files_and_follows_no_link(tmp_path: Path) -> None:
    folder = _learner(tmp_path)
    os.mkfifo(folder / "pipe.py")
    os.mkfifo(folder / "pipe")
    (folder / "loop.py").symlink_to("loop.py")
    (folder / "loop").symlink_to("loop")
    (folder / "zero.py").symlink_to("/dev/zero")
    (folder / "root").symlink_to("/")
    (folder / "up.json").symlink_to("..")
    (folder / "folder.py").mkdir()
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "socket.yaml"))
        found = _within(10, folder)
    assert _within(10, folder).digest == found.digest
    kinds = {note.split("'")[1]: note for note in found.notes}
    assert "a FIFO" in kinds["pipe.py"] and "a socket" in kinds["socket.yaml"] and "a folder" in kinds["folder.py"]
    assert "loop.py" not in kinds  # links: the grader's own note says they are not read
    if os.geteuid() == 0:
        os.mknod(folder / "null.py", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        assert any("'null.py' is a device" in note for note in _within(10, folder).notes)


def test_fingerprint_of_an_entry_that_is_no_folder(tmp_path: Path) -> None:
    sparse = tmp_path / "ann.py"
    with open(sparse, "wb") as stream:
        stream.truncate(HUGE)
    assert _within(10, sparse).notes
    os.mkfifo(tmp_path / "bob.py")
    assert _within(10, tmp_path / "bob.py").notes == ()  # the grader says it is not a file
    (tmp_path / "cy").symlink_to("/")
    (tmp_path / "dee").symlink_to("dee")
    assert _within(10, tmp_path / "cy").digest != _within(10, tmp_path / "dee").digest
    text = tmp_path / "eve.txt"  # refused for its suffix: its bytes do not matter
    text.write_text("one")
    first = fingerprint_learner(text).digest
    text.write_text("two")
    assert fingerprint_learner(text).digest == first
    assert fingerprint_learner(tmp_path / "gone").digest != first


def test_fingerprint_of_a_file_swapped_for_a_fifo_after_its_stat_does_not_block(tmp_path: Path) -> None:
    folder = _learner(tmp_path)
    regular = os.stat(folder / "softmax.py")
    os.mkfifo(folder / "late.py")
    digest = fingerprint.hashlib.sha256()
    done = threading.Event()

    def hash_it() -> None:
        fingerprint.hash_graded_file(digest, [], os.fspath(folder), "late.py", regular)
        done.set()

    threading.Thread(target=hash_it, daemon=True).start()
    assert done.wait(10), "opening a FIFO taken for a file blocked"


def test_fingerprint_of_an_unreadable_file_marks_it_without_failing(tmp_path: Path, monkeypatch) -> None:
    folder = _learner(tmp_path)
    readable = fingerprint_learner(folder).digest
    real_open = os.open

    def refuse(path, flags, *args, **kwargs):
        if os.fspath(path).endswith("softmax.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    assert fingerprint_learner(folder).digest != readable


def test_fingerprint_past_the_files_the_grader_reads_counts_only_names(tmp_path: Path) -> None:
    folder = tmp_path / "ann"
    folder.mkdir()
    for index in range(MAX_HASHED_FILES + 5):
        (folder / f"f{index:04d}.py").write_text(f"x = {index}\n")
    found = fingerprint_learner(folder)
    assert any(f"Of its {MAX_HASHED_FILES + 5} files" in note for note in found.notes)
    (folder / "f0001.py").write_text("changed = True\n")
    first = fingerprint_learner(folder).digest
    assert first != found.digest
    last = folder / f"f{MAX_HASHED_FILES + 4:04d}.py"
    last.write_text("past what the grader reads\n")
    assert fingerprint_learner(folder).digest == first
    last.rename(folder / "renamed.py")
    assert fingerprint_learner(folder).digest != first


def test_fingerprint_of_a_folder_too_large_to_list_is_not_complete(tmp_path: Path, monkeypatch) -> None:
    folder = _learner(tmp_path)
    for index in range(10):
        (folder / f"data{index}.csv").write_text("1\n")
    assert fingerprint_learner(folder).complete
    monkeypatch.setattr(fingerprint, "MAX_LISTED", 5)
    found = fingerprint_learner(folder)
    assert not found.complete and "graded again on every run" in found.notes[0]


def test_fingerprint_tells_names_apart_by_their_bytes(tmp_path: Path) -> None:
    folder = _learner(tmp_path)
    odd = os.path.join(os.fsencode(folder), b"bad\xff\nname.py")
    with open(odd, "wb") as stream:
        stream.write(b"x = 1\n")
    os.mkfifo(os.path.join(os.fsencode(folder), b"pipe\xfe.py"))
    first = fingerprint_learner(folder)
    assert any(note.startswith("'pipe\ufffd.py'") for note in first.notes)
    os.rename(odd, os.path.join(os.fsencode(folder), b"bad\xfe\nname.py"))
    assert fingerprint_learner(folder).digest != first.digest


def test_graded_files_are_those_submission_reads_within_its_caps() -> None:
    from grader.submission import answers, notebook
    from grader.submission import files as submission

    assert GRADED_SUFFIXES == set(submission.GRADED_SUFFIXES)
    assert MAX_HASHED_BYTES >= max(submission.MAX_PY_BYTES, notebook.MAX_NOTEBOOK_BYTES, answers.MAX_BYTES)
    assert MAX_HASHED_FILES >= submission.MAX_FILES


@given(st.text(alphabet=st.sampled_from("ab.pyjsonml\n\udcff"), max_size=8))
def test_graded_suffix_is_the_suffix_pathlib_gives(name: str) -> None:
    if name and "/" not in name and name not in (".", ".."):
        assert graded_suffix(name) == Path(name).suffix


@pytest.mark.parametrize("name", ["a.py", ".py", "a.", "..py", "a.b.yaml", "x.PY"], ids=str)
def test_graded_suffix_examples(name: str) -> None:
    assert graded_suffix(name) == Path(name).suffix
