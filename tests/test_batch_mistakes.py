"""Shared uncatalogued mistakes: grouping hand-made results, and one planted class graded for real."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, CORRECT, ROOT, make_exercises, snapshot
from click.testing import CliRunner
from test_batch_summary import _Tables

from grader.batch import run_batch
from grader.batch.html import format_report_html
from grader.batch.mistakes import (
    NOTHING_SHARED,
    entry_called,
    failing_from_json,
    failing_to_json,
    give_failing,
    shared_mistakes,
    take_failing,
)
from grader.batch.summary import class_stats, format_summary_markdown
from grader.cli import main
from grader.results import CheckResult, ExerciseResult, FailingOutput, Report

CALL = "f(x=array([1., 2.]))"


def _failing(values: list[float | str] | None, *, call: str = CALL, got: str = "", known: str | None = None):
    return FailingOutput(
        input=call,
        got=got or f"array({values})",
        expected="array([1., 2.])",
        values=values,
        shapes=None if values is None else [[len(values)]],
        rtol=1e-6,
        atol=1e-9,
        known=known,
    )


def _learner(name: str, *checks: tuple[str, FailingOutput | None], diagnosis: str | None = None) -> Report:
    """A result of exercise ``ex`` whose checks failed with the given records (``None``: passed)."""
    results = [
        CheckResult(
            id=check_id,
            status="passed" if failing is None else "failed",
            score=1.0 if failing is None else 0.0,
            max_score=1.0,
            visibility="hidden",
            reason="held." if failing is None else "did not hold.",
            failing=failing,
            diagnosis=diagnosis if failing is not None and index == 0 else None,
        )
        for index, (check_id, failing) in enumerate(checks)
    ]
    exercise = ExerciseResult(
        id="ex",
        kind="implementation",
        status="failed" if any(c.status == "failed" for c in results) else "passed",
        score=sum(c.score for c in results),
        max_score=float(len(results)),
        reason="some checks did not hold.",
        checks=results,
    )
    return Report(
        grader_version="0", submission=f"{name}.py", score=exercise.score, max_score=2.0, exercises=[exercise]
    )


def test_learners_agreeing_within_tolerance_form_one_group_and_a_lone_one_none() -> None:
    reports = {
        "zed": _learner("zed", ("c", _failing([2.0, 4.0]))),
        "amy": _learner("amy", ("c", _failing([2.0 + 1e-7, 4.0]))),  # within rtol 1e-6 of zed's
        "bob": _learner("bob", ("c", _failing([3.0, 4.0]))),
        "cy": _learner("cy", ("c", None)),
    }
    [group] = shared_mistakes(reports)
    assert (group.exercise, group.check, group.input) == ("ex", "c", CALL)
    assert group.learners == ("amy", "zed") and group.example == "amy" and group.entry == "amy.py"
    assert entry_called(group.input) == "f"


def test_outputs_beyond_tolerance_or_on_other_inputs_are_not_grouped() -> None:
    reports = {
        "a": _learner("a", ("c", _failing([2.0, 4.0]))),
        "b": _learner("b", ("c", _failing([2.001, 4.0]))),
        "c": _learner("c", ("c", _failing([2.0, 4.0], call="f(x=array([5., 6.]))"))),
    }
    assert shared_mistakes(reports) == []


def test_nan_agrees_with_nan_and_words_stand_in_for_values_not_kept() -> None:
    reports = {
        "a": _learner("a", ("c", _failing(["nan", 1.0])), ("d", _failing(None, got="raised ValueError: no"))),
        "b": _learner("b", ("c", _failing(["nan", 1.0])), ("d", _failing(None, got="raised ValueError: no"))),
        "c": _learner("c", ("c", _failing([0.0, 1.0])), ("d", _failing(None, got="raised ValueError: other"))),
    }
    [group] = shared_mistakes(reports)
    # the same two learners on two checks of one exercise: one group, both checks in it
    assert group.learners == ("a", "b") and group.checks == ("c", "d")


def test_a_failure_matched_to_a_known_wrong_solution_is_catalogued() -> None:
    """Told to the learner (``diagnosis``) or only recorded (``known``): either way no new mistake."""
    reports = {
        "a": _learner("a", ("c", _failing([2.0, 4.0])), ("d", _failing([9.0]))),
        "b": _learner("b", ("c", _failing([2.0, 4.0])), ("d", _failing([9.0])), diagnosis="a known one"),
        "c": _learner("c", ("c", _failing([2.0, 4.0], known="a known one"))),
        "d": _learner("d", ("c", _failing([7.0, 4.0]))),
    }
    assert shared_mistakes(reports) == []
    reports["e"] = _learner("e", ("c", _failing([7.0, 4.0])))
    assert [group.learners for group in shared_mistakes(reports)] == [("d", "e")]


def test_groups_are_the_same_whatever_order_the_results_come_in() -> None:
    outputs = [[1.0], [2.0], [3.0]]
    names = [f"learner-{i:03d}" for i in range(60)]
    reports = {
        name: _learner(name, ("c", _failing(outputs[i % 3] if i % 4 else [100.0 + i]))) for i, name in enumerate(names)
    }
    first = shared_mistakes(reports)
    shuffled = list(reports.items())
    random.Random(7).shuffle(shuffled)
    assert shared_mistakes(dict(shuffled)) == first
    assert [len(group.learners) for group in first] == sorted((len(g.learners) for g in first), reverse=True)
    assert sum(len(group.learners) for group in first) == sum(1 for i in range(60) if i % 4)


def test_a_large_class_is_grouped_correctly() -> None:
    """5,000 learners, 4 ways to be wrong on one input, a tenth correct: four groups, each counted exactly."""
    reports = {}
    for i in range(5000):
        way = i % 5
        failing = None if way == 4 else _failing([float(way), 1.0 + 1e-9 * (i % 7)])
        reports[f"l{i:05d}"] = _learner(f"l{i:05d}", ("c", failing))
    groups = shared_mistakes(reports)
    assert [len(group.learners) for group in groups] == [1000] * 4
    assert [group.got.startswith(f"array([{float(w)}, 1.0") for w, group in enumerate(groups)] == [True] * 4


def test_summary_and_report_list_the_groups_or_say_there_are_none() -> None:
    reports = {
        "<b>a</b>": _learner("a", ("c", _failing([2.0, 4.0]))),
        "b": _learner("b", ("c", _failing([2.0, 4.0]))),
    }
    stats = class_stats(reports, [("ex", "c")], 2.0)
    mistakes = shared_mistakes(reports)
    markdown = format_summary_markdown(stats, title="T", mistakes=mistakes)
    section = markdown.split("## Shared mistakes no known-wrong solution catches\n", 1)[1]
    assert "grader batch-mistake OUTDIR N --class CLASS" in section.replace("\\_", "_")
    assert "| 1 | ex | c | f(x=array(\\[1., 2.\\])) |" in section and "| 2 | `<b>a</b>` |" in section
    page = format_report_html(stats, title="T", mistakes=mistakes)
    parser = _Tables()
    parser.feed(page)
    assert parser.tables["shared-mistakes"][1][:3] == ["1", "ex", "c"]
    assert parser.tables["shared-mistakes"][1][-2:] == ["2", "<b>a</b>"] and "<b>a</b>" not in page
    lone = {"a": reports["b"]}
    assert NOTHING_SHARED in format_summary_markdown(class_stats(lone, [("ex", "c")], 2.0), title="T", mistakes=[])
    assert 'id="shared-mistakes-none"' in format_report_html(stats, title="T", mistakes=[])
    assert "Shared mistakes" not in format_summary_markdown(stats, title="T")  # not sought: nothing said


def test_failing_cases_leave_the_result_and_come_back_unchanged() -> None:
    report = _learner("a", ("c", _failing(["nan", 2.0], known="k")), ("d", None))
    taken = take_failing(report)
    assert all(check.failing is None for e in report.exercises for check in e.checks)
    text = failing_to_json(taken)
    assert failing_to_json(failing_from_json(text)) == text
    give_failing(report, failing_from_json(text))
    assert report.exercises[0].checks[0].failing == _failing(["nan", 2.0], known="k")
    with pytest.raises(ValueError):
        failing_from_json('{"ex": {"c": {"input": "x", "surprise": 1}}}')


TIMES_TWO = CORRECT.replace("return weights /", "return 2 * weights /")
TIMES_THREE = CORRECT.replace("return weights /", "return 3 * weights /")


@pytest.mark.slow
def test_planted_class_shows_its_shared_mistake_and_its_stub_validates(tmp_path: Path) -> None:
    """Two learners double the weights (uncatalogued), one triples them, two hand in a known-wrong solution."""
    exercises = make_exercises(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    known = (ROOT / "solutions" / "stable-softmax" / "wrong_no_max_shift.py").read_text()
    for name, code in (("amy", TIMES_TWO), ("bob", TIMES_TWO), ("cat", TIMES_THREE), ("dan", known), ("eve", known)):
        (folder / f"{name}.py").write_text(code)
    (folder / "fay.py").write_text(CORRECT)
    out = tmp_path / "out"
    run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=2, exercises_dir=exercises)
    summary = (out / "summary.md").read_text()
    rows = [line for line in summary.split("## Shared mistakes", 1)[1].splitlines() if line.startswith("| 1 ")]
    assert len(rows) == 1 and "stable-softmax" in rows[0] and rows[0].endswith("| 2 | `amy` |")
    assert "| 2 |" not in summary.split("## Shared mistakes", 1)[1].split("\n| 1 ", 1)[1].split("\n", 1)[1]
    # the failing cases are kept apart from the result, which stays what grader grade writes
    assert '"failing"' not in (out / "results" / "amy.json").read_text()
    stored = json.loads((out / "failing" / "dan.json").read_text())
    records = [record for checks in stored.values() for record in checks.values()]
    assert records and any(record.get("known") for record in records)
    doubled = json.loads((out / "failing" / "amy.json").read_text())["stable-softmax"]
    assert doubled and all("known" not in record for record in doubled.values())
    before = snapshot(out)
    run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=2, exercises_dir=exercises, force=True)
    assert snapshot(out)["summary.md"] == before["summary.md"]  # same class, same groups, same order
    assert snapshot(out)["report.html"] == before["report.html"]

    runner = CliRunner()
    stub = tmp_path / "solutions" / "stable-softmax" / "shared_1.py"
    base = ["--exercises", str(exercises), "batch-mistake", str(out)]
    made = runner.invoke(main, [*base, "1", "--class", str(folder), "--out", str(stub)])
    assert made.exit_code == 0, made.output
    assert "must_fail: [" in made.output and stub.read_text().endswith(TIMES_TWO)
    assert "amy" not in stub.read_text()  # the stub goes into the course's solutions: no learner's name
    again = runner.invoke(main, [*base, "1", "--class", str(folder), "--out", str(stub)])
    assert again.exit_code == 2 and "already exists" in again.output
    beyond = runner.invoke(main, [*base, "2", "--class", str(folder), "--out", str(tmp_path / "x.py")])
    assert beyond.exit_code == 2 and "found 1 shared mistake" in beyond.output

    entry = made.output.split("validate:\n", 1)[1]
    assert "    path: solutions/stable-softmax/shared_1.py\n" in entry  # relative to the project, as specs say
    spec = exercises / "stable-softmax.yaml"
    spec.write_text(spec.read_text().replace("known_wrong:\n", "known_wrong:\n" + entry, 1))
    checked = runner.invoke(main, ["--exercises", str(exercises), "validate", "--exercise", "stable-softmax"])
    assert checked.exit_code == 0, checked.output
    assert "shared-" in checked.output and "is caught by" in checked.output
