"""A report graded against a handout says so, in every format: it is a self-check, not a grade of record.

A handout's public checks compare with the reference's answers written in
``public-checks/EXERCISE.answers.json``; whoever holds the handout can
rewrite them from wrong code and see wrong code pass. The report of such a
run carries ``handout`` (the sentence), round-tripped by JSON and shown at
the top of every format.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_release import build_project

from grader.authoring.release import release_handout
from grader.cli import main
from grader.grading import NOT_OF_RECORD, handout_note
from grader.report import FORMATS, render
from grader.results import CheckResult, ExerciseResult, Report, report_from_json, report_from_worker
from grader.spec.loader import load_catalog

ROOT = Path(__file__).resolve().parents[1]
NOTE = (
    "Graded against a handout's public checks and its reference answers (public-checks/stable-softmax.answers.json), "
    f"which whoever holds the handout can change: {NOT_OF_RECORD}."
)


@pytest.fixture(scope="module")
def handout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("handout")
    out = base / "handout"
    release_handout(load_catalog(build_project(base)), out=out)
    return out


def _moved(handout: Path, tmp_path: Path, *, keep_marker: bool, folder: str) -> Path:
    """A copy of the handout's specs, with or without its marker file, in a folder named ``folder``."""
    copy = tmp_path / "copy"
    shutil.copytree(handout, copy)
    if not keep_marker:
        (copy / ".grader-handout").unlink()
    if folder != "public-checks":
        (copy / "public-checks").rename(copy / folder)
    return copy / folder


@pytest.mark.parametrize(
    ("keep_marker", "folder"),
    [(True, "public-checks"), (False, "public-checks"), (False, "exercises")],
    ids=["as-released", "marker-removed", "marker-removed-and-folder-renamed"],
)
def test_a_handout_catalog_marks_its_reports(handout: Path, tmp_path: Path, keep_marker: bool, folder: str) -> None:
    specs = _moved(handout, tmp_path, keep_marker=keep_marker, folder=folder)
    if folder != "public-checks":  # the specs name their answers files by path: follow the rename
        for path in specs.glob("*.yaml"):
            path.write_text(path.read_text(encoding="utf-8").replace("public-checks/", f"{folder}/"), encoding="utf-8")
    catalog = load_catalog(specs)
    note = handout_note(catalog, [catalog.exercises["stable-softmax"]])
    assert note is not None and NOT_OF_RECORD in note
    assert f"{folder}/stable-softmax.answers.json" in note


def test_a_handout_marks_even_an_exercise_without_answers(handout: Path) -> None:
    catalog = load_catalog(handout / "public-checks")
    note = handout_note(catalog, [])
    assert note is not None and NOT_OF_RECORD in note and "answers.json" not in note


def test_the_instructors_specs_mark_nothing(catalog) -> None:
    assert handout_note(catalog, list(catalog.exercises.values())) is None


def _report(**fields) -> Report:
    check = CheckResult(id="sums", status="failed", score=0.0, max_score=1.0, visibility="public", reason="r")
    exercise = ExerciseResult(id="softmax", status="failed", score=0.0, max_score=1.0, reason="r", checks=[check])
    return Report(grader_version="0", submission="mine.py", score=0.0, max_score=1.0, exercises=[exercise], **fields)


def test_the_mark_round_trips_through_json() -> None:
    report = _report(handout=NOTE)
    text = render(report, "json")
    assert json.loads(text)["handout"] == NOTE
    assert report_from_json(text) == report and report_from_worker(text) == report
    assert "handout" not in json.loads(render(_report(), "json"))


@pytest.mark.parametrize("format_name", list(FORMATS), ids=list(FORMATS))
def test_every_format_says_it(format_name: str) -> None:
    shown = " ".join(re.sub(r"\\(?=[.])", "", render(_report(handout=NOTE), format_name)).split())  # wrapped, escaped
    assert NOTE in shown
    assert NOT_OF_RECORD not in render(_report(), format_name)


def test_text_and_markdown_say_it_first() -> None:
    report = _report(handout=NOTE, unsandboxed="These results were not produced in the sandbox.")
    assert render(report, "text").startswith("note: Graded against a handout")
    lines = render(report, "markdown").splitlines()
    assert lines[0] == "# Grading results: 0 / 1 points (a self-check, not a grade of record)"
    assert lines[2].startswith("**Note:** Graded against a handout")


def test_junit_gives_every_suite_the_property() -> None:
    for report in (_report(handout=NOTE), _report(handout=NOTE, problems=["a note"])):
        suites = ET.fromstring(render(report, "junit")).findall("testsuite")
        assert len(suites) >= 1
        for suite in suites:
            assert [p.get("value") for p in suite.iter("property") if p.get("name") == "handout"] == [NOTE]


def test_platform_formats_say_it_where_learners_look() -> None:
    report = _report(handout=NOTE)
    gradescope = json.loads(render(report, "gradescope"))
    assert gradescope["output"].startswith(f"Note: {NOTE}\n") and gradescope["extra_data"]["handout"] == NOTE
    exercism = json.loads(render(report, "exercism"))
    assert exercism["tests"][0]["output"].startswith(f"note: {NOTE}\n")
    nothing = Report(grader_version="0", submission="x", score=0, max_score=0, handout=NOTE)
    stopped = json.loads(render(nothing, "exercism"))
    assert stopped["status"] == "error" and stopped["message"].startswith(NOTE)
    prairielearn = json.loads(render(report, "prairielearn"))
    assert prairielearn["message"].startswith(NOTE) and prairielearn["output"].startswith(f"Note: {NOTE}")


@pytest.mark.slow
def test_grading_against_a_tampered_handout_is_marked(handout: Path, tmp_path: Path) -> None:
    """The issue's learner rewrote the answers file; whatever it now holds, the report says what it was graded on."""
    copy = tmp_path / "copy"
    shutil.copytree(handout, copy)
    answers = copy / "public-checks/stable-softmax.answers.json"
    answers.write_text(json.dumps({"format": 1, "answers": {}}), encoding="utf-8")
    wrong = str(ROOT / "solutions/stable-softmax/wrong_global_max.py")
    args = ["--exercises", str(copy / "public-checks"), "grade", wrong, "--public"]
    done = CliRunner().invoke(main, [*args, "--format", "json"])
    assert done.exit_code in (0, 1), done.output
    assert json.loads(done.stdout)["handout"] == NOTE
    text = CliRunner().invoke(main, args)
    assert text.stdout.startswith("note: Graded against a handout")
