"""JUnit output as strict readers take it: the schema (``tests/junit.xsd``), GitLab's view and GitHub reporters' view.

``tests/test_report_formats.py`` holds the golden files; here each case is
validated against the schema and read back the way a CI platform reads it,
so a field a platform ignores cannot be where the only copy of a reason is.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
import xmlschema
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.report.junit import format_junit
from grader.results import CheckResult, ExerciseResult, Report
from tests.test_report_formats import CASES

SCHEMA = xmlschema.XMLSchema(Path(__file__).resolve().parent / "junit.xsd")
OUTCOMES = ("failure", "error", "skipped")


@dataclass
class PlatformCase:
    """One test case as GitLab's parser keeps it: ``system_output`` is the outcome element's text."""

    suite: str
    classname: str | None
    name: str
    file: str | None
    time: str | None
    status: str
    message: str | None
    system_output: str | None


def gitlab_cases(xml: str) -> list[PlatformCase]:
    """The test cases GitLab's Tests tab lists: it reads test cases only, never properties or a suite's output."""
    cases = []
    for suite in ET.fromstring(xml.encode("utf-8")).iter("testsuite"):
        for case in suite.findall("testcase"):
            outcome = next((case.find(tag) for tag in OUTCOMES if case.find(tag) is not None), None)
            cases.append(
                PlatformCase(
                    suite=suite.get("name", ""),
                    classname=case.get("classname"),
                    name=case.get("name", ""),
                    file=case.get("file") or suite.get("file"),
                    time=case.get("time"),
                    status="success" if outcome is None else outcome.tag,
                    message=None if outcome is None else outcome.get("message"),
                    system_output=None if outcome is None else outcome.text,
                )
            )
    return cases


def _schema_errors(xml: str) -> list[str]:
    return [str(error).splitlines()[0] for error in SCHEMA.iter_errors(xml)]


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_junit_is_valid_against_the_schema(case: str) -> None:
    assert _schema_errors(format_junit(CASES[case]())) == []


@pytest.mark.parametrize(
    ("change", "what"),
    [
        (lambda x: x.replace('<testsuites name="grader"', '<testsuites name="grader" skipped="0"', 1), "skipped"),
        (lambda x: re.sub(r' time="0"', "", x, count=2), "time"),
        (lambda x: x.replace("<testcase ", '<testcase file="a.py" ', 1), "file"),
    ],
    ids=["skipped-on-testsuites", "no-time", "file-on-testcase"],
)
def test_junit_schema_rejects_what_strict_readers_reject(change, what: str) -> None:
    """The schema is no rubber stamp: each form Jenkins' xUnit refuses is refused here too."""
    xml = change(format_junit(CASES["failed"]()))
    errors = _schema_errors(xml)
    assert errors and any(what in error for error in errors), errors


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_junit_every_case_and_suite_has_a_time_a_reader_can_sum(case: str) -> None:
    """dorny/test-reporter adds up ``time``: a missing one is NaN; the value is fixed, so output is byte-stable."""
    root = ET.fromstring(format_junit(CASES[case]()).encode("utf-8"))
    for element in [root, *root.iter("testsuite"), *root.iter("testcase")]:
        assert float(element.get("time", "nan")) == 0.0


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_junit_every_row_that_did_not_pass_says_why_in_message_and_body(case: str) -> None:
    for row in gitlab_cases(format_junit(CASES[case]())):
        if row.status != "success":
            assert row.message and row.system_output and row.message in row.system_output, row


def test_junit_import_error_reason_is_in_each_test_case_gitlab_shows() -> None:
    """A file that does not import: the cause is in every case, not only in the suite's properties."""
    rows = gitlab_cases(format_junit(CASES["error"]()))
    assert rows and all(row.status == "error" for row in rows)
    for row in rows:
        assert row.message is not None and row.message.startswith("Your file has a SyntaxError at line 3")
        assert row.system_output is not None and "SyntaxError at line 3 (invalid syntax)" in row.system_output
        assert row.system_output.splitlines()[-1] == "Not run: your file could not be imported (see above)."


def test_junit_entry_not_defined_reason_is_in_each_test_case() -> None:
    why = "Not run: your file does not define softmax() (see above)."
    checks = [_check(name, "skipped", why) for name in ("matches-reference", "rows-sum-to-one")]
    exercise = _exercise("stable-softmax", "missing", checks, "Not attempted: your file does not define softmax().")
    rows = gitlab_cases(format_junit(_report(exercise, submission="mine.py")))
    assert [row.status for row in rows] == ["failure", "failure"]
    assert all(row.message == "Not attempted: your file does not define softmax()." for row in rows)


def test_junit_keeps_a_check_reason_alone_when_checks_fail_for_their_own_reasons() -> None:
    checks = [_check("rows-sum-to-one", "failed", "Row sums were [nan]."), _check("non-negative", "passed", "holds")]
    exercise = _exercise("stable-softmax", "failed", checks, "1 of 2 checks passed.")
    (failed,) = [row for row in gitlab_cases(format_junit(_report(exercise))) if row.status != "success"]
    assert failed.message == failed.system_output == "Row sums were [nan]."


@pytest.mark.parametrize(
    ("submission", "file"),
    [("work/mine.py", "work/mine.py"), ("answers.yaml", "answers.yaml"), ("nb.ipynb", "nb.ipynb"), ("work/", None)],
    ids=["py", "answers", "notebook", "folder"],
)
def test_junit_names_the_file_on_the_suite_when_the_submission_is_one_file(submission: str, file: str | None) -> None:
    exercise = _exercise("stable-softmax", "passed", [_check("rows-sum-to-one", "passed", "holds")], "All passed.")
    rows = gitlab_cases(format_junit(_report(exercise, submission=submission)))
    assert [row.file for row in rows] == [file]


def test_junit_gives_no_file_to_an_exercise_the_file_does_not_attempt() -> None:
    missing = _exercise("stable-softmax", "missing", [], "Not attempted: no file of the submission defines softmax().")
    assert [row.file for row in gitlab_cases(format_junit(_report(missing, submission="answers.yaml")))] == [None]


@settings(max_examples=40, deadline=None)
@given(reason=st.text(min_size=1, max_size=40), output=st.text(max_size=40), name=st.text(min_size=1, max_size=12))
def test_junit_is_valid_whatever_text_the_learner_controls(reason: str, output: str, name: str) -> None:
    """Exception messages, printed output and file names come from the learner: the document stays valid."""
    checks = [_check("rows-sum-to-one", "error", reason), _check("non-negative", "failed", reason)]
    exercise = _exercise("stable-softmax", "error", checks, reason, output=output or None)
    xml = format_junit(_report(exercise, submission=f"{name}.py", problems=[reason]))
    assert _schema_errors(xml) == []
    assert all(row.message and row.system_output for row in gitlab_cases(xml) if row.status != "success")


@pytest.mark.slow
def test_junit_of_a_file_with_a_syntax_error_shows_the_cause_in_every_case(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from grader.cli import main

    path = tmp_path / "broken.py"
    path.write_text("import numpy as np\n\ndef softmax(z, axis=-1):\n    return np.exp(z) / np.exp(z).sum(\n")
    runner = CliRunner()
    outputs = [
        runner.invoke(main, ["grade", str(path), "--exercise", "stable-softmax", "--format", "junit"]) for _ in range(2)
    ]
    assert outputs[0].exit_code == 1, outputs[0].output
    assert outputs[0].output == outputs[1].output
    xml = outputs[0].output
    assert _schema_errors(xml) == []
    rows = gitlab_cases(xml)
    assert len(rows) > 1 and all(row.file == str(path) for row in rows)
    for row in rows:
        assert row.status == "error" and row.message and "SyntaxError" in row.message
        assert row.system_output and "SyntaxError" in row.system_output


def _check(id: str, status: str, reason: str) -> CheckResult:
    return CheckResult(
        id=id,
        status=status,  # type: ignore[arg-type]
        score=1.0 if status == "passed" else 0.0,
        max_score=1.0,
        visibility="public",
        reason=reason,
    )


def _exercise(id: str, status: str, checks: list[CheckResult], reason: str, **fields) -> ExerciseResult:
    return ExerciseResult(
        id=id,
        status=status,  # type: ignore[arg-type]
        score=sum(c.score for c in checks),
        max_score=sum(c.max_score for c in checks) or 1.0,
        reason=reason,
        checks=checks,
        **fields,
    )


def _report(*exercises: ExerciseResult, **fields) -> Report:
    fields.setdefault("submission", "work/mine.py")
    return Report(
        grader_version="0.1.0",
        score=sum(e.score for e in exercises),
        max_score=sum(e.max_score for e in exercises),
        exercises=list(exercises),
        **fields,
    )
