"""The instructor's overrides file and ``--only``: adjustments that survive re-runs and ``--force``.

A stand-in executor grades each learner from a word in its file (``right``,
``wrong``, ``none``) into a report over the real specs' ids, so the tests
run in a moment and follow every learner's result exactly.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, make_exercises
from click.testing import CliRunner

from grader.batch import run_batch
from grader.batch.overrides import Override, apply_overrides, load_overrides, strip_adjustments
from grader.batch.worker import Outcome
from grader.cli import main
from grader.errors import SpecError, UsageError
from grader.report import render
from grader.results import CheckResult, ExerciseResult, Report, report_from_json, report_from_worker, report_to_json
from grader.spec.loader import load_catalog
from grader.spec.models import QuizExercise


@pytest.fixture(scope="module")
def exercises(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_exercises(tmp_path_factory.mktemp("specs"))


def _report(name: str, word: str, exercises_dir: Path) -> Report:
    catalog = load_catalog(exercises_dir)
    results = []
    for exercise_id in catalog.assignments[ASSIGNMENT].exercises:
        exercise = catalog.exercises[exercise_id]
        rows = exercise.questions if isinstance(exercise, QuizExercise) else exercise.checks
        if word == "none":
            results.append(ExerciseResult.unscored(exercise, "missing", "Not attempted."))
            continue
        checks = [
            CheckResult(
                id=row.id,
                status="passed" if word == "right" or number == 0 else "failed",
                score=float(row.points) if word == "right" or number == 0 else 0.0,
                max_score=float(row.points),
                visibility="public",
                reason="Checked.",
            )
            for number, row in enumerate(rows)
        ]
        score = float(sum(check.score for check in checks))
        status = "passed" if score == exercise.max_score else "failed"
        results.append(
            ExerciseResult(
                id=exercise.id, status=status, score=score, max_score=exercise.max_score, reason="R.", checks=checks
            )
        )
    return Report(
        grader_version="0",
        submission=name,
        score=float(sum(r.score for r in results)),
        max_score=float(sum(r.max_score for r in results)),
        exercises=results,
    )


class _Words:
    """Grades each learner from the word in its file, rendered as a worker renders it; records whom it graded."""

    graded: list[str] = []

    def __init__(self, config) -> None:
        self.exercises = Path(config.exercises_dir)

    def map(self, tasks):
        for task in tasks:
            _Words.graded.append(task.learner)
            word = Path(task.path).read_text().strip()
            yield task, Outcome(result_json=render(_report(task.label, word, self.exercises), "json"))


def _class(base: Path, **words: str) -> Path:
    folder = base / "class"
    folder.mkdir()
    for name, word in words.items():
        (folder / f"{name}.py").write_text(word)
    return folder


def _run(folder: Path, out: Path, exercises: Path, **options):
    _Words.graded = []
    return run_batch(folder, assignment=ASSIGNMENT, out=out, executor=_Words, exercises_dir=exercises, **options)


def _gradebook(out: Path) -> dict[str, dict[str, str]]:
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as stream:
        return {row["learner"]: row for row in csv.DictReader(stream)}


def _exercise(out: Path, learner: str, exercise: str) -> dict:
    data = json.loads((out / "results" / f"{learner}.json").read_text(encoding="utf-8"))
    return next(found for found in data["exercises"] if found["id"] == exercise)


OVERRIDES = """\
- learner: ann
  exercise: stable-softmax
  check: rows-sum-to-one
  score: 1
  reason: The row sums were checked against a wrong tolerance.
- learner: bob
  exercise: why-softmax-quiz
  change: -0.5
  reason: Handed in a day late; the agreed penalty.
"""


def test_override_is_applied_in_gradebook_json_and_feedback_and_survives_force(exercises, tmp_path) -> None:
    folder = _class(tmp_path, ann="wrong", bob="right", cy="right")
    (tmp_path / "overrides.yaml").write_text(OVERRIDES)
    out = tmp_path / "out"
    plain = _run(folder, out, exercises)
    before = _gradebook(out)
    raw = {name: (out / "results" / f"{name}.json").read_bytes() for name in ("ann", "bob", "cy")}
    summary = _run(folder, out, exercises, overrides=tmp_path / "overrides.yaml")
    assert summary.graded == 0 and plain.graded == 3  # an overrides file regrades no one
    after = _gradebook(out)
    assert float(after["ann"]["stable-softmax"]) == float(before["ann"]["stable-softmax"]) + 1
    assert float(after["ann"]["score"]) == float(before["ann"]["score"]) + 1
    assert float(after["bob"]["why-softmax-quiz"]) == float(before["bob"]["why-softmax-quiz"]) - 0.5
    assert after["cy"] == before["cy"]
    assert (out / "results" / "cy.json").read_bytes() == raw["cy"]
    change = _exercise(out, "ann", "stable-softmax")["adjustments"]
    assert change == [
        {
            "check": "rows-sum-to-one",
            "check_score_before": 0.0,
            "check_score_after": 1.0,
            "score_before": float(before["ann"]["stable-softmax"]),
            "score_after": float(before["ann"]["stable-softmax"]) + 1,
            "reason": "The row sums were checked against a wrong tolerance.",
        }
    ]
    rows = {c["id"]: c for c in _exercise(out, "ann", "stable-softmax")["checks"]}
    assert rows["rows-sum-to-one"]["score"] == 1.0 and rows["rows-sum-to-one"]["status"] == "failed"
    feedback = (out / "feedback" / "bob.md").read_text(encoding="utf-8")
    said = "**Adjusted by your instructor:** from 5 to 4.5 points. Handed in a day late; the agreed penalty."
    assert said in feedback
    assert feedback.startswith(f"# Grading results: {after['bob']['score']} / {after['bob']['max_score']} points")
    once = {p.name: p.read_bytes() for p in (out / "results").glob("*.json")}
    for again in ({}, {"force": True}):  # applied once, from the graded result, however often the batch runs
        summary = _run(folder, out, exercises, overrides=tmp_path / "overrides.yaml", **again)
        assert _gradebook(out) == after
        assert {p.name: p.read_bytes() for p in (out / "results").glob("*.json")} == once
    assert summary.graded == 3
    (tmp_path / "overrides.yaml").write_text("")  # every override taken back: the results are as graded
    _run(folder, out, exercises, overrides=tmp_path / "overrides.yaml")
    assert _gradebook(out) == before
    assert {name: (out / "results" / f"{name}.json").read_bytes() for name in raw} == raw
    assert "Adjusted" not in (out / "feedback" / "bob.md").read_text(encoding="utf-8")


def test_overrides_file_beside_the_exercises_folder_is_read_by_default(exercises, tmp_path) -> None:
    folder = _class(tmp_path, ann="wrong")
    beside = exercises.parent / "overrides.yaml"
    beside.write_text(OVERRIDES.split("- learner: bob")[0])
    try:
        summary = _run(folder, tmp_path / "out", exercises)
    finally:
        beside.unlink()
    assert any("1 override read from overrides.yaml" in note for note in summary.notes)
    assert _exercise(tmp_path / "out", "ann", "stable-softmax")["adjustments"][0]["check"] == "rows-sum-to-one"


def test_overrides_on_a_class_of_one_full_marks_and_no_code_stay_within_the_points(exercises, tmp_path) -> None:
    folder = _class(tmp_path, ann="right")
    (tmp_path / "o.yaml").write_text(
        "- {learner: ann, exercise: stable-softmax, change: 5, reason: Bonus.}\n"
        "- {learner: ann, exercise: why-softmax-quiz, change: -100, reason: Penalty.}\n"
    )
    out = tmp_path / "out"
    summary = _run(folder, out, exercises, overrides=tmp_path / "o.yaml")
    assert not summary.grader_errors
    row = _gradebook(out)["ann"]
    assert row["why-softmax-quiz"] == "0" and float(row["stable-softmax"]) == float(row["score"])
    (folder / "ann.py").write_text("none")  # no code at all: a check that never ran is given its point
    (tmp_path / "o.yaml").write_text(
        "- {learner: ann, exercise: stable-softmax, check: non-negative, change: 1, reason: Given back.}\n"
    )
    _run(folder, out, exercises, overrides=tmp_path / "o.yaml")
    assert _gradebook(out)["ann"]["stable-softmax"] == "1" and _gradebook(out)["ann"]["score"] == "1"


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("- {learner: anne, exercise: stable-softmax, score: 1, reason: R.}\n", 1, "'anne' is not a learner"),
        ("- learner: ann\n  exercise: softmax\n  score: 1\n  reason: R.\n", 2, "'softmax' is not an exercise"),
        (
            "# a comment\n- learner: ann\n  exercise: stable-softmax\n  check: rows-sum\n  score: 1\n  reason: R.\n",
            4,
            "'rows-sum' is not a check of 'stable-softmax' (did you mean 'rows-sum-to-one'?)",
        ),
        ("- {learner: ann, exercise: stable-softmax, scor: 1, reason: R.}\n", 1, "unknown key (did you mean 'score'?)"),
        ("- learner: ann\n  exercise: stable-softmax\n  score: 99\n  reason: R.\n", 3, "99 is outside 0 to"),
        ("- {learner: ann, exercise: stable-softmax, score: 1, change: 1, reason: R.}\n", 1, "either 'score'"),
        ("- {learner: ann, exercise: stable-softmax, score: 1}\n", 1, "'reason' is missing"),
        ("- {learner: 7, exercise: stable-softmax, score: 1, reason: R.}\n", 1, "write the name in quotes"),
        ("learner: ann\n", 1, "must be a list"),
        ("- [ann\n", 2, "not valid YAML"),
    ],
    ids=[
        "learner",
        "exercise",
        "check",
        "key",
        "score-range",
        "score-and-change",
        "no-reason",
        "number",
        "shape",
        "yaml",
    ],
)
def test_overrides_naming_what_is_not_there_are_refused_with_file_and_line(exercises, tmp_path, text, line, says):
    folder = _class(tmp_path, ann="wrong")
    (tmp_path / "o.yaml").write_text(text)
    with pytest.raises(SpecError) as caught:
        _run(folder, tmp_path / "out", exercises, overrides=tmp_path / "o.yaml")
    assert str(caught.value).startswith(f"{tmp_path / 'o.yaml'}:{line}: ") and says in str(caught.value)
    assert "\n" not in str(caught.value) and _Words.graded == [] and not (tmp_path / "out").exists()


def test_batch_cli_refuses_an_unknown_learner_in_one_line_with_exit_2(exercises, tmp_path) -> None:
    folder = _class(tmp_path, ann="wrong")
    (tmp_path / "o.yaml").write_text(
        "- learner: ann\n  exercise: stable-softmax\n  score: 1\n  reason: R.\n"
        "- {learner: bo, exercise: stable-softmax, score: 1, reason: R.}\n"
    )
    result = CliRunner().invoke(
        main,
        ["--exercises", str(exercises), "batch", str(folder), "--assignment", ASSIGNMENT, "--out", str(tmp_path / "o")]
        + ["--overrides", str(tmp_path / "o.yaml")],
    )
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"grader: error: {tmp_path / 'o.yaml'}:5: [1].learner: 'bo' is not a learner of this class"
    ]


def test_only_regrades_one_learner_and_leaves_the_others_stored_results_untouched(exercises, tmp_path) -> None:
    folder = _class(tmp_path, ann="wrong", bob="wrong", cy="right")
    out = tmp_path / "out"
    _run(folder, out, exercises)
    (folder / "ann.py").write_text("right")
    (folder / "bob.py").write_text("right")
    kept = {p.name: p.read_bytes() for p in (out / "results").iterdir() if not p.name.startswith("ann.")}
    summary = _run(folder, out, exercises, only=["ann"])
    assert _Words.graded == ["ann"] and summary.graded == 1 and summary.reused == 2
    assert {p.name: p.read_bytes() for p in (out / "results").iterdir() if not p.name.startswith("ann.")} == kept
    book = _gradebook(out)
    assert book["ann"]["score"] == book["cy"]["score"] != book["bob"]["score"]
    _run(folder, out, exercises, only=["cy"])  # unchanged, graded again all the same
    assert _Words.graded == ["cy"]
    with pytest.raises(UsageError, match=r"--only: 'an' is not a learner in .* \(did you mean 'ann'\?\)$"):
        _run(folder, out, exercises, only=["an"])


def test_strip_undoes_exactly_what_apply_did() -> None:
    check = CheckResult(id="c", status="failed", score=0.0, max_score=1.0, visibility="public", reason="R.")
    exercise = ExerciseResult(id="e", status="failed", score=0.1, max_score=2.0, reason="R.", checks=[check])
    report = Report(grader_version="0", submission="s", score=0.1, max_score=2.0, exercises=[exercise])
    graded = report_to_json(report)
    changes = [
        Override(learner="a", exercise="e", check="c", score=None, change=0.7, reason="A.", limit=1.0, line=1),
        Override(learner="a", exercise="e", check=None, score=None, change=-0.3, reason="B.", limit=2.0, line=2),
    ]
    assert apply_overrides(report, changes)
    assert (report.score, check.score) == (0.5, 0.7)
    assert strip_adjustments(report) and report_to_json(report) == graded


def test_load_overrides_of_an_empty_file_is_no_override(tmp_path) -> None:
    (tmp_path / "o.yaml").write_text("# nothing yet\n")
    assert load_overrides(tmp_path / "o.yaml", learners=["a"], exercises=[]) == []


def test_an_overrides_file_named_but_not_there_is_refused_before_grading(exercises, tmp_path) -> None:
    folder = _class(tmp_path, ann="wrong")
    with pytest.raises(UsageError, match=r"gone\.yaml: no such overrides file$"):
        _run(folder, tmp_path / "out", exercises, overrides=tmp_path / "gone.yaml")
    assert _Words.graded == []


def test_overrides_wait_for_a_learner_the_grader_failed_on(exercises, tmp_path) -> None:
    folder = _class(tmp_path, ann="wrong")
    (tmp_path / "o.yaml").write_text(OVERRIDES.split("- learner: bob")[0])

    class _Failing:
        def __init__(self, config) -> None:
            pass

        def map(self, tasks):
            for task in tasks:
                yield task, Outcome(grader_error="an injected fault")

    out = tmp_path / "out"
    summary = run_batch(
        folder,
        assignment=ASSIGNMENT,
        out=out,
        executor=_Failing,
        exercises_dir=exercises,
        overrides=tmp_path / "o.yaml",
    )
    assert summary.grader_errors == ["ann"]
    assert any("the overrides for 'ann' wait until the grader grades them" in note for note in summary.notes)
    assert _gradebook(out)["ann"]["score"] == ""
    assert "adjustments" not in _exercise(out, "ann", "stable-softmax")


def test_an_adjusted_result_reads_back_the_same_from_disk_and_from_a_worker() -> None:
    check = CheckResult(id="c", status="failed", score=0.0, max_score=1.0, visibility="public", reason="R.")
    exercise = ExerciseResult(id="e", status="failed", score=0.0, max_score=1.0, reason="R.", checks=[check])
    report = Report(grader_version="0", submission="s", score=0.0, max_score=1.0, exercises=[exercise])
    given = Override(learner="a", exercise="e", check="c", score=1.0, change=None, reason="A.", limit=1.0, line=1)
    apply_overrides(report, [given])
    text = report_to_json(report)
    assert report_to_json(report_from_json(text)) == text == report_to_json(report_from_worker(text))
