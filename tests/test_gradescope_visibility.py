"""``--format gradescope``: hidden checks follow the spec's ``gradescope_hidden``; printed output follows its checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.report.gradescope import format_gradescope, output_visibility
from grader.results import CheckResult, ExerciseResult, Report
from tests.batch_helpers import ASSIGNMENT, NO_MAX_SHIFT, make_exercises


def _grade(tmp_path: Path, setting: str | None) -> dict:
    exercises = make_exercises(tmp_path / setting if setting else tmp_path / "default")
    if setting:
        spec = exercises / "stable-softmax.yaml"
        spec.write_text(spec.read_text(encoding="utf-8") + f"gradescope_hidden: {setting}\n", encoding="utf-8")
    submission = tmp_path / "softmax.py"
    submission.write_text(NO_MAX_SHIFT)
    result = CliRunner().invoke(
        main,
        ["--exercises", str(exercises), "grade", str(submission), "--assignment", ASSIGNMENT, "--format", "gradescope"],
    )
    assert result.exit_code == 1, result.output
    return json.loads(result.output)


@pytest.mark.slow
def test_hidden_checks_follow_the_exercise_spec(tmp_path: Path) -> None:
    default, never = _grade(tmp_path, None), _grade(tmp_path, "hidden")

    def words(results: dict) -> set[str]:
        return {t["visibility"] for t in results["tests"] if t["tags"] == ["stable-softmax"]}

    assert "after_published" in words(default) and "hidden" not in words(default)
    assert "hidden" in words(never) and "after_published" not in words(never)
    assert "never shown" in never["output"] and "never shown" not in default["output"]
    assert default["visibility"] == never["visibility"] == "visible"


# --- what the learner's code printed is shown no earlier than the checks it was printed during ----------

PRINTED = "SECRET-INPUT array([1000., 1001.])"  # what a submission that prints its arguments shows
_RANK = {"visible": 0, "after_published": 1, "after_due_date": 1, "hidden": 2}


def _report(visibilities: list[str], *, output: str | None = PRINTED) -> Report:
    checks = [
        CheckResult(id=f"c{index}", status="failed", score=0.0, max_score=1.0, visibility=word, reason=f"c{index}.")
        for index, word in enumerate(visibilities)
    ]
    exercise = ExerciseResult(
        id="e", status="failed", score=0.0, max_score=float(len(checks)), reason="e.", checks=checks, output=output
    )
    return Report(grader_version="0", submission="s.py", score=0.0, max_score=exercise.max_score, exercises=[exercise])


CASES = {
    "public": (["public", "public"], None, "visible"),
    "public-hidden": (["public", "hidden", "hidden"], None, "after_published"),
    "hidden-never": (["public", "hidden"], "hidden", "hidden"),
    "due-date": (["public", "after_due_date"], None, "after_due_date"),
    "published": (["after_published", "public"], None, "after_published"),
    "due-date-and-published": (["public", "after_due_date", "after_published"], None, "hidden"),
    "hidden-and-due-date": (["hidden", "after_due_date"], None, "hidden"),
    "unknown": (["public", "staff-only"], None, "hidden"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_printed_output_is_never_more_visible_than_the_checks_it_ran_with(case: str) -> None:
    visibilities, hidden_as, strictest = CASES[case]
    report = _report(visibilities)
    words = {"e": hidden_as} if hidden_as else None
    assert output_visibility(report.exercises[0], hidden_as=hidden_as or "after_published") == strictest
    results = json.loads(format_gradescope(report, hidden_as=words))
    assert (PRINTED in results["output"]) is (strictest == "visible")
    holding = [test for test in results["tests"] if PRINTED in test["output"]]
    assert all(_RANK[test["visibility"]] >= _RANK[strictest] for test in holding)
    assert all(test["visibility"] == strictest for test in holding) and len(holding) <= 1
    if strictest != "visible":
        assert "What your code printed (e)" in results["output"]
    assert PRINTED not in json.dumps(results["extra_data"])


def test_printed_output_goes_with_the_first_test_of_the_strictest_visibility() -> None:
    results = json.loads(format_gradescope(_report(["public", "hidden", "hidden"])))
    shown = [test["number"] for test in results["tests"] if PRINTED in test["output"]]
    assert shown == ["1.2"] and "is shown with test 1.2, once grades are published" in results["output"]
    assert results["tests"][1]["output"].startswith("c1.\n\nOutput of your code while this exercise's checks ran:")


@pytest.mark.slow
def test_a_submission_printing_hidden_inputs_shows_them_only_with_hidden_checks(tmp_path: Path) -> None:
    exercises = make_exercises(tmp_path / "exercises")
    submission = tmp_path / "softmax.py"
    submission.write_text(
        NO_MAX_SHIFT.replace("def softmax(z, axis=-1):\n", "def softmax(z, axis=-1):\n    print(repr(z))\n")
    )
    result = CliRunner().invoke(
        main,
        ["--exercises", str(exercises), "grade", str(submission), "--assignment", ASSIGNMENT, "--format", "gradescope"],
    )
    assert result.exit_code == 1, result.output
    results = json.loads(result.output)
    assert "array(" not in results["output"]
    printed = [test for test in results["tests"] if "Output of your code" in test["output"]]
    assert printed and all(test["visibility"] == "after_published" for test in printed)
