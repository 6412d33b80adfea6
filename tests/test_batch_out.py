"""``--out`` taken with its links followed: never into the class folder or a learner's, never exit 3.

Each hostile output folder is refused before anything is graded or written,
with one line naming the path, and the class folder is left as it was.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, CORRECT, RIGHT_ANSWERS, make_exercises
from click.testing import CliRunner

from grader.batch import run_batch
from grader.batch.worker import Outcome
from grader.cli import main
from grader.errors import UsageError


@pytest.fixture(scope="module")
def exercises(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_exercises(tmp_path_factory.mktemp("specs"))


def _class(base: Path) -> Path:
    folder = base / "class"
    (folder / "ann").mkdir(parents=True)
    (folder / "ann" / "softmax.py").write_text(CORRECT)
    (folder / "bob.yaml").write_text(RIGHT_ANSWERS)
    return folder


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every path under ``folder`` (links not followed): a file's bytes, a link's target, or ``dir``."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        found[name] = os.readlink(path) if path.is_symlink() else "dir" if path.is_dir() else path.read_bytes()
    return found


class _Refusing:
    """An executor that grades nothing: a refused run must never reach it."""

    def __init__(self, config: object) -> None:
        pass

    def map(self, tasks):
        for task in tasks:
            yield task, Outcome(grader_error="not graded in this test")


def _never(config: object) -> object:
    raise AssertionError("a refused output folder must not reach grading")


def _link(path: Path, target: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


# name -> (how to set up the output folder given (base, class folder), the text the refusal holds)
HOSTILE: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "link-to-a-learner": (lambda base, c: (_link(base / "out", c / "ann"), base / "out")[1], "inside the class"),
    "link-into-a-learner": (lambda base, c: (_link(base / "out", c / "ann" / "graded"), base / "out")[1], "'ann'"),
    "inside-a-learner": (lambda base, c: c / "ann" / "graded", "its entry 'ann'"),
    "inside-the-class": (lambda base, c: c / "graded", "its entry 'graded'"),
    "link-to-the-class": (lambda base, c: (_link(base / "out", c), base / "out")[1], "the class folder itself"),
    "link-to-a-parent-of-the-class": (
        lambda base, c: (_link(base / "out", c / "ann" / ".."), base / "out")[1],
        "class",
    ),
    "results-link-to-a-learner": (
        lambda base, c: (_link(base / "out" / "results", c / "ann"), base / "out")[1],
        "results: leads to",
    ),
    "feedback-link-into-a-learner": (
        lambda base, c: (_link(base / "out" / "feedback", c / "ann" / "fb"), base / "out")[1],
        "feedback: leads to",
    ),
    "dangling-link": (lambda base, c: (_link(base / "out", base / "nowhere"), base / "out")[1], "leads to nothing"),
    "dangling-results": (
        lambda base, c: (_link(base / "out" / "results", base / "gone"), base / "out")[1],
        "results: a symbolic link",
    ),
    "through-a-file": (lambda base, c: ((base / "f").write_text("x"), base / "f" / "out")[1], "is not a folder"),
    "results-is-a-file": (
        lambda base, c: ((base / "out").mkdir(), (base / "out" / "results").write_text("x"), base / "out")[2],
        "results: exists and is not a folder",
    ),
    "a-file": (lambda base, c: ((base / "f").write_text("x"), base / "f")[1], "exists and is not a folder"),
    "link-loop": (lambda base, c: (_link(base / "out", base / "out"), base / "out")[1], "cannot tell where"),
    "gradebook-is-a-folder": (
        lambda base, c: ((base / "out" / "gradebook.csv").mkdir(parents=True), base / "out")[1],
        "gradebook.csv: is a folder",
    ),
    "a-result-is-a-folder": (
        lambda base, c: ((base / "out" / "results" / "ann.json").mkdir(parents=True), base / "out")[1],
        "ann.json: is a folder",
    ),
    "a-feedback-is-a-fifo": (
        lambda base, c: (
            ((base / "out" / "feedback").mkdir(parents=True), os.mkfifo(base / "out/feedback/bob.md")) and base / "out"
        ),
        "bob.md: is not a regular file",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE), ids=sorted(HOSTILE))
def test_batch_refuses_a_hostile_output_folder_in_one_line(case: str, exercises: Path, tmp_path: Path) -> None:
    folder = _class(tmp_path)
    setup, expected = HOSTILE[case]
    out = setup(tmp_path, folder)
    before = _tree(folder)
    with pytest.raises(UsageError) as refused:
        run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_never, exercises_dir=exercises)
    message = str(refused.value)
    assert expected in message and "\n" not in message
    assert _tree(folder) == before


def test_batch_lock_file_that_is_a_link_is_refused_and_not_created_through(exercises: Path, tmp_path: Path) -> None:
    folder = _class(tmp_path)
    out = tmp_path / "out"
    _link(out / ".batch.lock", folder / "ann" / "made.py")
    with pytest.raises(UsageError, match=r"\.batch\.lock: the batch's lock file is a symbolic link"):
        run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_never, exercises_dir=exercises)
    assert not (folder / "ann" / "made.py").exists()


def test_batch_output_folder_it_cannot_write_in_is_refused_before_grading(
    exercises: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root, modes do not stop a write; a read-only mount does, which a failing ``mkstemp`` stands for."""
    import tempfile

    real = tempfile.mkstemp

    def mkstemp(*args, **kwargs):
        if str(kwargs.get("dir", "")).endswith("feedback"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    folder = _class(tmp_path)
    with pytest.raises(UsageError, match=r"feedback: the batch cannot write there \(Read-only file system\)$"):
        run_batch(folder, assignment=ASSIGNMENT, out=tmp_path / "out", executor=_never, exercises_dir=exercises)


def test_batch_output_that_fails_mid_run_is_one_line_and_keeps_the_results_stored(
    exercises: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grader.batch.rebuild as batch_run  # where every output is written

    real = batch_run.write_atomically

    def write_atomically(path: Path, text: str) -> None:
        if path.name == "bob.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, text)

    monkeypatch.setattr(batch_run, "write_atomically", write_atomically)
    folder, out = _class(tmp_path), tmp_path / "out"
    with pytest.raises(UsageError, match=r"bob\.json: the batch cannot write there \(No space left on device\)$"):
        run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_Refusing, exercises_dir=exercises)
    assert (out / "results" / "ann.key").is_file()  # ann came first and stays stored


def test_batch_class_folder_inside_the_results_folder_is_refused(exercises: Path, tmp_path: Path) -> None:
    folder = _class(tmp_path / "out" / "results")
    with pytest.raises(UsageError, match=r"results: the class folder .* is inside it"):
        run_batch(folder, assignment=ASSIGNMENT, out=tmp_path / "out", executor=_never, exercises_dir=exercises)


def test_batch_output_folder_beside_the_class_folder_through_a_link_is_used(exercises: Path, tmp_path: Path) -> None:
    folder = _class(tmp_path)
    (tmp_path / "real-out").mkdir()
    _link(tmp_path / "out", tmp_path / "real-out")
    summary = run_batch(
        folder, assignment=ASSIGNMENT, out=tmp_path / "out", executor=_Refusing, exercises_dir=exercises
    )
    assert summary.learners == 2
    assert sorted(os.listdir(tmp_path / "real-out" / "feedback")) == ["ann.md", "bob.md"]


@pytest.mark.parametrize("target", ["out", "root"])
def test_batch_learner_entry_linking_to_the_output_folder_or_anywhere_is_graded_as_a_link(
    target: str, exercises: Path, tmp_path: Path
) -> None:
    """A learner's link is never followed: it neither hides the learner nor blocks the class."""
    folder, out = _class(tmp_path), tmp_path / "out"
    out.mkdir()
    _link(folder / "eve", out if target == "out" else Path("/"))
    summary = run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_Refusing, exercises_dir=exercises)
    assert summary.learners == 3
    assert sorted(os.listdir(out / "feedback")) == ["ann.md", "bob.md", "eve.md"]
    assert os.readlink(folder / "eve") == str(out if target == "out" else Path("/"))


@pytest.mark.parametrize("case", ["link-to-a-learner", "dangling-link", "through-a-file"])
def test_batch_cli_exits_2_with_one_line_for_a_hostile_output_folder(
    case: str, exercises: Path, tmp_path: Path
) -> None:
    folder = _class(tmp_path)
    out = HOSTILE[case][0](tmp_path, folder)
    before = _tree(folder)
    result = CliRunner().invoke(
        main, ["--exercises", str(exercises), "batch", str(folder), "--assignment", ASSIGNMENT, "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"grader: error: {out}"), result.output
    assert _tree(folder) == before
