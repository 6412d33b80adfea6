"""Several files defining one entry: the named entry file, else the only one, else the most recently modified.

The rule (``choose_entry_file``) is tested directly; slow tests grade real
folders whose files' modification times are set with ``os.utime``, and check
that the choice never depends on the files' names and always comes with a note.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from batch_helpers import notebook

from grader.errors import SpecError
from grader.grading import GradingSession
from grader.report import FORMATS, render
from grader.results import CheckResult, ExerciseResult, Report
from grader.spec.loader import load_catalog, load_spec_file
from grader.submission.entry_files import choose_entry_file
from grader.submission.files import read_submission

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions" / "stable-softmax"
CORRECT = SOLUTIONS / "reference.py"
BUGGY = SOLUTIONS / "wrong_no_max_shift.py"
SECOND = 1_000_000_000


def test_choose_entry_file_takes_the_most_recently_modified() -> None:
    choice = choose_entry_file("softmax", ["final.py", "draft.py"], {"draft.py": 5 * SECOND, "final.py": 9 * SECOND})
    assert choice.module == "final.py"
    assert choice.note == "softmax() is defined in draft.py and final.py; graded final.py, the most recently modified."


def test_choose_entry_file_does_not_follow_names() -> None:
    older_first = choose_entry_file("softmax", ["a.py", "z.py"], {"a.py": 9 * SECOND, "z.py": 5 * SECOND})
    older_last = choose_entry_file("softmax", ["a.py", "z.py"], {"a.py": 5 * SECOND, "z.py": 9 * SECOND})
    assert (older_first.module, older_last.module) == ("a.py", "z.py")


def test_choose_entry_file_breaks_ties_by_name_and_says_so() -> None:
    times = {"b.py": 7 * SECOND, "a.py": 7 * SECOND, "c.py": 3 * SECOND}
    choice = choose_entry_file("softmax", ["c.py", "b.py", "a.py"], times)
    assert choice.module == "a.py"
    assert choice.note == (
        "softmax() is defined in a.py, b.py, and c.py; graded a.py, the first by name of those modified last, together."
    )
    assert choose_entry_file("softmax", ["a.py", "b.py", "c.py"], times) == choice


def test_choose_entry_file_prefers_the_named_file() -> None:
    times = {"draft.py": 9 * SECOND, "softmax.py": 5 * SECOND}
    choice = choose_entry_file("softmax", ["draft.py", "softmax.py"], times, named="softmax.py")
    assert choice.module == "softmax.py"
    assert choice.note is not None and "graded softmax.py, the file the exercise names (entry_file)" in choice.note


def test_choose_entry_file_says_when_the_named_file_does_not_define_it() -> None:
    choice = choose_entry_file("softmax", ["mine.py"], {"mine.py": SECOND}, named="softmax.py")
    assert choice.module == "mine.py"
    assert choice.note == (
        "The exercise asks for softmax() in softmax.py, which does not define it here. Graded mine.py."
    )


def test_choose_entry_file_single_file_needs_no_note() -> None:
    assert choose_entry_file("softmax", ["mine.py"], {"mine.py": SECOND}).note is None


def test_choose_entry_file_names_a_notebook_as_itself() -> None:
    origins = {"work.ipynb.py": "work.ipynb"}
    times = {"work.ipynb.py": 9 * SECOND, "work.py": 5 * SECOND}
    choice = choose_entry_file("softmax", ["work.py", "work.ipynb.py"], times, origins)
    assert choice.module == "work.ipynb.py"
    assert choice.note == (
        "softmax() is defined in work.ipynb and work.py; graded work.ipynb, the most recently modified."
    )


def test_read_submission_keeps_modification_times_as_stored(tmp_path: Path) -> None:
    shutil.copy(CORRECT, tmp_path / "final.py")
    (tmp_path / "work.ipynb").write_text(notebook(("code", "x = 1")))
    os.utime(tmp_path / "final.py", ns=(3 * SECOND, 3 * SECOND))
    os.utime(tmp_path / "work.ipynb", ns=(4 * SECOND, 4 * SECOND))
    submission = read_submission(tmp_path)
    assert submission.modified == {"final.py": 3 * SECOND, "work.py": 4 * SECOND}
    assert submission.origins == {"work.py": "work.ipynb"}


@pytest.mark.parametrize(
    ("value", "accepted"),
    [("softmax.py", True), ("work.ipynb", True), ("../secret.py", False), ("dir/softmax.py", False)],
    ids=["python", "notebook", "parent", "folder"],
)
def test_entry_file_in_a_spec_is_a_plain_file_name(tmp_path: Path, value: str, accepted: bool) -> None:
    text = (ROOT / "exercises" / "stable-softmax.yaml").read_text() + f"entry_file: {value}\n"
    path = tmp_path / "exercises" / "stable-softmax.yaml"
    path.parent.mkdir()
    path.write_text(text)
    if accepted:
        assert load_spec_file(path).entry_file == value  # type: ignore[union-attr]
    else:
        with pytest.raises(SpecError, match="entry_file"):
            load_spec_file(path)


def _folder(tmp_path: Path, files: dict[str, tuple[Path | str, int]]) -> Path:
    """A learner folder: each file copied from a solution (or given as text) with its modification time."""
    folder = tmp_path / "learner"
    folder.mkdir(exist_ok=True)
    for name, (source, seconds) in files.items():
        path = folder / name
        if isinstance(source, Path):
            shutil.copy(source, path)
        else:
            path.write_text(source)
        os.utime(path, ns=(seconds * SECOND, seconds * SECOND))
    return folder


def _graded(session: GradingSession, folder: Path):
    (result,) = session.grade(folder, exercise_ids=["stable-softmax"]).exercises
    return result


@pytest.mark.slow
@pytest.mark.parametrize(("draft", "final"), [("draft.py", "final.py"), ("z.py", "a.py")], ids=["named", "renamed"])
def test_grading_never_takes_the_draft_silently(session, tmp_path: Path, draft: str, final: str) -> None:
    folder = _folder(tmp_path, {draft: (BUGGY, 100), final: (CORRECT, 200)})
    result = _graded(session, folder)
    assert result.score == result.max_score
    assert result.note is not None and f"graded {final}, the most recently modified" in result.note
    assert draft in result.note

    os.utime(folder / draft, ns=(300 * SECOND, 300 * SECOND))  # the draft touched last is the one graded
    again = _graded(session, folder)
    assert again.score < again.max_score
    assert again.note is not None and f"graded {draft}, the most recently modified" in again.note


@pytest.mark.slow
def test_grading_same_times_picks_by_name_and_says_so(session, tmp_path: Path) -> None:
    result = _graded(session, _folder(tmp_path, {"b.py": (BUGGY, 100), "a.py": (CORRECT, 100)}))
    assert result.score == result.max_score
    assert result.note == (
        "softmax() is defined in a.py and b.py; graded a.py, the first by name of those modified last, together."
    )


@pytest.mark.slow
def test_grading_notebook_and_its_exported_python(session, tmp_path: Path) -> None:
    cells = notebook(("code", CORRECT.read_text()))
    folder = _folder(tmp_path, {"work.py": (BUGGY, 100), "work.ipynb": (cells, 200)})
    result = _graded(session, folder)
    assert result.score == result.max_score
    assert result.note == (
        "softmax() is defined in work.ipynb and work.py; graded work.ipynb, the most recently modified."
    )


@pytest.mark.slow
def test_grading_takes_the_named_entry_file(tmp_path: Path) -> None:
    catalog = load_catalog(ROOT / "exercises", only=["stable-softmax"])
    exercise = catalog.exercises["stable-softmax"]
    catalog.exercises["stable-softmax"] = exercise.model_copy(update={"entry_file": "softmax.py"})
    folder = _folder(tmp_path, {"softmax.py": (CORRECT, 100), "scratch.py": (BUGGY, 200)})
    with GradingSession(catalog) as session:
        result = _graded(session, folder)
    assert result.score == result.max_score
    assert result.note is not None and "graded softmax.py, the file the exercise names (entry_file)" in result.note


def test_batch_fingerprint_changes_when_the_newest_file_changes(tmp_path: Path) -> None:
    from grader.batch.fingerprint import fingerprint_learner

    folder = _folder(tmp_path, {"draft.py": (BUGGY, 100), "final.py": (CORRECT, 200)})
    before = fingerprint_learner(folder).digest
    os.utime(folder / "final.py", ns=(250 * SECOND, 250 * SECOND))  # still the newest: the same file is graded
    assert fingerprint_learner(folder).digest == before
    os.utime(folder / "draft.py", ns=(300 * SECOND, 300 * SECOND))  # now the draft is graded: grade again
    assert fingerprint_learner(folder).digest != before


NOTE = "softmax() is defined in draft.py and final.py; graded final.py, the most recently modified."


@pytest.mark.parametrize("format_name", sorted(FORMATS), ids=sorted(FORMATS))
def test_every_report_format_shows_the_note(format_name: str) -> None:
    check = CheckResult(
        id="rows-sum-to-one", status="passed", score=1.0, max_score=1.0, visibility="public", reason="ok."
    )
    exercise = ExerciseResult(
        id="stable-softmax", status="passed", score=1.0, max_score=1.0, reason="All 1 checks passed.", checks=[check]
    )
    exercise.note = NOTE
    report = Report(grader_version="0", submission="s", score=1.0, max_score=1.0, exercises=[exercise])
    shown = render(report, format_name)
    plain = " ".join(shown.replace("\\", "").split())  # markdown escapes dots, text wraps lines
    assert "graded final.py, the most recently modified" in plain


def test_class_summary_lists_learners_graded_on_a_chosen_file() -> None:
    from grader.batch.html import format_report_html
    from grader.batch.summary import class_stats

    noted = ExerciseResult(id="stable-softmax", status="passed", score=1.0, max_score=1.0, reason="ok.", note=NOTE)
    plain = ExerciseResult(id="stable-softmax", status="passed", score=1.0, max_score=1.0, reason="ok.")
    reports = {
        name: Report(grader_version="0", submission=name, score=1.0, max_score=1.0, exercises=[exercise])
        for name, exercise in (("alice", noted), ("bob", plain))
    }
    stats = class_stats(reports, [], 1.0)
    assert any(
        "1 learner handed in several files defining one entry" in note and "alice" in note for note in stats.notes
    )
    assert "bob" not in " ".join(stats.notes)
    assert "alice" in format_report_html(stats, title="class")


def test_batch_fingerprint_ignores_times_that_agree_with_the_name_order(tmp_path: Path) -> None:
    from grader.batch.fingerprint import fingerprint_learner

    folder = _folder(tmp_path, {"a.py": (CORRECT, 300), "b.py": (BUGGY, 200)})
    before = fingerprint_learner(folder).digest
    os.utime(folder / "b.py", ns=(100 * SECOND, 100 * SECOND))
    assert fingerprint_learner(folder).digest == before


@pytest.mark.slow
def test_grading_a_file_importing_the_entry_from_another_is_no_rival(session, tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"helpers.py": (CORRECT, 100), "main.py": ("from helpers import softmax\n", 200)})
    result = _graded(session, folder)
    assert result.score == result.max_score
    assert result.note is None
