"""``--format github`` and ``github-classroom``: annotations on the learner's file, escaped for the runner."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from grader.report import render
from grader.report._common import printable
from grader.report.github import ANNOTATIONS_PER_KIND, format_classroom, format_github
from grader.report.runner_safe import inert_lines
from grader.results import CheckResult, ExerciseResult, Report, report_from_json

GOLDEN = Path(__file__).resolve().parent / "golden"
_COMMAND = re.compile(r"::(?P<kind>error|warning|notice) (?P<properties>[^:]*)::(?P<message>.*)")


def _decode(value: str, *, is_property: bool = False) -> str:
    """What the runner makes of an escaped value (its documented escapes, undone in reverse order)."""
    if is_property:
        value = value.replace("%2C", ",").replace("%3A", ":")
    return value.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


def _commands(output: str) -> list[dict[str, str]]:
    """Each line as the runner parses it: kind, properties (decoded) and the message (decoded)."""
    parsed = []
    for line in output.splitlines():
        match = _COMMAND.fullmatch(line)
        assert match, line
        properties = dict(item.split("=", 1) for item in match["properties"].split(","))
        decoded = {name: _decode(value, is_property=True) for name, value in properties.items()}
        parsed.append({"kind": match["kind"], **decoded, "message": _decode(match["message"])})
    return parsed


def _check(check_id: str, status: str, reason: str, **given: object) -> CheckResult:
    score = 1.0 if status == "passed" else 0.0
    return CheckResult(
        id=check_id, status=status, score=score, max_score=1.0, visibility="public", reason=reason, **given
    )  # type: ignore[arg-type]


def _report(checks: list[CheckResult], submission: str = "work/softmax.py", **given: object) -> Report:
    score = sum(check.score for check in checks)
    status = "passed" if all(check.status == "passed" for check in checks) else "failed"
    exercise = ExerciseResult(
        id="stable-softmax", status=status, score=score, max_score=len(checks), reason="r", checks=checks
    )  # type: ignore[arg-type]
    return Report(
        grader_version="0",
        submission=submission,
        score=score,
        max_score=len(checks),
        exercises=[exercise],
        **given,  # type: ignore[arg-type]
    )


HOSTILE = {
    "newline": "got 1\n::error title=Grader::Full marks",
    "carriage-return": "got 1\r::add-mask::secret",
    "colons": "::error::x, y: z",
    "percent": "100%0A::error::%25 done",
    "legacy": "ok ##[error]forged ##vso[task.complete result=Succeeded;]",
}


@pytest.mark.parametrize("text", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_learner_text_stays_in_one_message_of_the_graders_command(text: str) -> None:
    report = _report([_check(f"rows{text}", "failed", text)], submission=f"w,{text}.py")
    output = format_github(report)
    lines = output.splitlines()
    assert len(lines) == 2 and all(line.startswith(("::error ", "::notice ")) for line in lines)
    error = _commands(output)[0]
    assert set(error) == {"kind", "file", "title", "message"}
    for value in (error["file"], error["title"], error["message"]):
        assert "##[" not in value and "##vso[" not in value.lower()
        assert "\r" not in value
    # Decoded, each value is the learner's text with only the runner's sequences made visible, as in every format.
    assert error["message"] == inert_lines(printable(text))
    assert error["file"] == inert_lines(printable(f"w,{text}.py"))


def test_a_percent_or_newline_the_learner_wrote_comes_back_as_written() -> None:
    text = "100%0A done\nsecond line"
    error = _commands(format_github(_report([_check("c", "failed", text)])))[0]
    assert error["message"] == text


def test_annotations_name_the_submitted_file_and_the_check() -> None:
    report = _report([_check("rows-sum-to-one", "failed", "sums are 2"), _check("finite", "passed", "ok")])
    error, overall = _commands(format_github(report))
    assert error == {
        "kind": "error",
        "file": "work/softmax.py",
        "title": "stable-softmax: rows-sum-to-one",
        "message": "sums are 2",
    }
    assert overall["kind"] == "notice" and overall["message"] == "1 of 2 points" and "file" not in overall


def test_a_folder_submission_names_no_file() -> None:
    report = _report([_check("rows-sum-to-one", "error", "raised")], submission="work")
    error = _commands(format_github(report))[0]
    assert "file" not in error and error["title"] == "stable-softmax: rows-sum-to-one"


def test_a_failing_input_is_shown_with_what_came_back() -> None:
    check = _check(
        "rows-sum-to-one",
        "failed",
        "r",
        property="rows sum to 1",
        input="softmax(z=array([1000.]))",
        expected="sums 1",
        got="sums nan",
        more_failures=2,
    )
    message = _commands(format_github(_report([check])))[0]["message"]
    assert message.splitlines() == [
        "rows sum to 1",
        "smallest failing input: softmax(z=array([1000.]))",
        "expected: sums 1",
        "got: sums nan",
        "(and 2 more failing inputs)",
    ]


@pytest.mark.parametrize("failing", [ANNOTATIONS_PER_KIND, ANNOTATIONS_PER_KIND + 5], ids=["at-limit", "over"])
def test_no_more_errors_than_github_shows_and_the_rest_are_counted(failing: int) -> None:
    checks = [_check(f"check-{n}", "failed", f"reason {n}") for n in range(failing)]
    errors = [c for c in _commands(format_github(_report(checks))) if c["kind"] == "error"]
    assert len(errors) == min(failing, ANNOTATIONS_PER_KIND)
    if failing > ANNOTATIONS_PER_KIND:
        assert errors[-1]["message"].startswith(f"{failing - ANNOTATIONS_PER_KIND + 1} more checks did not pass")
        assert [e["title"] for e in errors[:-1]] == [
            f"stable-softmax: check-{n}" for n in range(ANNOTATIONS_PER_KIND - 1)
        ]
    else:
        assert errors[-1]["message"] == f"reason {failing - 1}"


def test_render_offers_both_formats() -> None:
    report = _report([_check("c", "passed", "ok")])
    assert render(report, "github") == format_github(report)
    assert render(report, "github-classroom") == format_classroom(report)


@pytest.mark.parametrize("case", ["failed", "passed", "missing", "error", "quiz", "public-only", "nothing"])
def test_classroom_result_adds_up_to_the_reports_points(case: str) -> None:
    report = report_from_json((GOLDEN / f"{case}.report.json").read_text(encoding="utf-8"))
    result = json.loads(format_classroom(report))
    assert result["version"] == 1 and result["max_score"] == report.max_score
    assert sum(test["score"] for test in result["tests"]) == pytest.approx(report.score)
    assert [test["name"] for test in result["tests"]] == [exercise.id for exercise in report.exercises]
    assert result["status"] == ("pass" if report.all_passed else "error" if not report.exercises else "fail")
    passed = {exercise.id for exercise in report.exercises if exercise.status == "passed"}
    assert {test["name"] for test in result["tests"] if test["status"] == "pass"} == passed
    # What the workflow hands the reporter: base64 of these bytes, decoded back by it.
    encoded = base64.b64encode(format_classroom(report).encode("utf-8"))
    assert json.loads(base64.b64decode(encoded)) == result


@pytest.mark.parametrize("graded", [True, False], ids=["note-beside-results", "nothing-graded"])
def test_a_note_on_the_submission_is_a_warning_unless_nothing_was_graded(graded: bool) -> None:
    report = _report([_check("c", "passed", "ok")], problems=["two files answer 'x'"])
    if not graded:
        report = Report(grader_version="0", submission="work", score=0, max_score=0, problems=["nothing here"])
    first = _commands(format_github(report))[0]
    assert first["title"] == "submission" and first["kind"] == ("warning" if graded else "error")
