"""Class statistics, summary.md, report.html and the gradebook, from hand-made reports."""

from __future__ import annotations

import csv
import io
from html.parser import HTMLParser

from grader.batch.gradebook import GradebookRow, format_gradebook, format_points
from grader.batch.html import format_report_html
from grader.batch.summary import (
    BIN_LABELS,
    class_stats,
    format_summary_markdown,
    format_summary_text,
    reason_group,
)
from grader.results import CheckResult, ExerciseResult, Report

CHECKS = [("quiz", "q1"), ("impl", "finite"), ("impl", "sums")]


def _check(check_id: str, passed: bool, reason: str = "", diagnosis: str | None = None) -> CheckResult:
    return CheckResult(id=check_id, status="passed" if passed else "failed", score=1.0 if passed else 0.0,
                       max_score=1.0, visibility="public", reason=reason or f"{check_id} held.", diagnosis=diagnosis)


def _report(name: str, quiz: bool | None, finite: bool, sums: bool, *, finite_reason: str = "",
            diagnosis: str | None = None) -> Report:
    exercises = []
    if quiz is None:
        exercises.append(ExerciseResult(id="quiz", status="missing", score=0.0, max_score=1.0, reason="No answers.",
                                        checks=[CheckResult(id="q1", status="skipped", score=0.0, max_score=1.0,
                                                            visibility="public", reason="No answers.")]))
    else:
        exercises.append(ExerciseResult(id="quiz", status="passed" if quiz else "failed", score=float(quiz),
                                        max_score=1.0, reason="r", checks=[_check("q1", quiz, "Not quite: B.")]))
    checks = [_check("finite", finite, finite_reason, diagnosis), _check("sums", sums, "Sums are off.")]
    score = float(finite + sums)
    exercises.append(ExerciseResult(id="impl", status="passed" if score == 2 else "failed", score=score,
                                    max_score=2.0, reason="r", checks=checks))
    return Report(grader_version="0", submission=name, score=score + float(bool(quiz)), max_score=3.0,
                  exercises=exercises)


def _class() -> dict[str, Report]:
    return {
        "a": _report("a", True, True, True),
        "b": _report("b", False, False, True,
                     finite_reason="softmax is finite, but not for softmax(z=array([1000., 1001.])). Expected x."),
        "c": _report("c", None, False, True,
                     finite_reason="softmax is finite, but not for softmax(z=array([800., -3.5e+02])). Expected y."),
        "d": _report("d", True, False, False, finite_reason="Other.", diagnosis="no max shift"),
    }


def test_reason_group_uses_diagnosis_else_first_sentence_without_numbers() -> None:
    first = _check("f", False, "softmax is finite, but not for softmax(z=array([1000., 1001.])). Expected inf.")
    second = _check("f", False, "softmax is finite, but not for softmax(z=array([7., -2e+30])). Expected 3.")
    assert reason_group(first) == reason_group(second) == "softmax is finite, but not for softmax(z=array([#, #]))."
    assert reason_group(_check("f", False, "x", diagnosis="no max shift")) == "Known mistake: no max shift"


def test_class_stats_orders_checks_by_failure_share() -> None:
    stats = class_stats(_class(), CHECKS, 3.0)
    assert stats.learners == 4 and stats.mean == 1.5 and stats.median == 1.0
    assert [(s.exercise, s.check, s.not_passed, s.not_attempted) for s in stats.checks] == [
        ("impl", "finite", 3, 0), ("quiz", "q1", 2, 1), ("impl", "sums", 1, 0)]
    finite = stats.checks[0]
    assert finite.reason.startswith("softmax is finite, but not for softmax(z=array([1000., 1001.]))")
    assert (finite.reason_count, finite.failed_attempts) == (2, 3)
    assert sum(stats.histogram) == 4 and stats.histogram[len(BIN_LABELS) - 1] == 1


def test_class_stats_leave_out_learners_the_grader_failed_on() -> None:
    stats = class_stats(_class(), CHECKS, 3.0, grader_errors=["d"])
    assert stats.learners == 3 and stats.grader_errors == ["d"]
    assert "The grader failed on 1: d" in format_summary_text(stats)


def test_summary_markdown_escapes_learner_text() -> None:
    reports = {"x": _report("x", True, False, True, finite_reason="raised ValueError: a|b <script>\nnext")}
    text = format_summary_markdown(class_stats(reports, CHECKS, 3.0), title="T")
    row = next(line for line in text.splitlines() if line.startswith("| impl | finite"))
    assert "a\\|b &lt;script&gt; next" in row and row.count(" | ") == 4
    assert "Mean score: 2/3" in text and "| 100% | 0 |" in text


class _Charts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.svgs: dict[str, int] = {}
        self.current: str | None = None
        self.scripts_with_src = 0
        self.links = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "svg":
            self.current = values.get("id")
            self.svgs[self.current or ""] = 0
        elif tag == "rect" and self.current and "bar" in (values.get("class") or "").split():
            self.svgs[self.current] += 1
        elif tag == "script" and values.get("src"):
            self.scripts_with_src += 1
        elif tag in ("link", "img", "iframe"):
            self.links += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self.current = None


def test_report_html_has_both_charts_and_nothing_external() -> None:
    reports = {"e": _report("e", True, False, True, finite_reason="<img src=x onerror=alert(1)>")}
    page = format_report_html(class_stats(reports, CHECKS, 3.0), title="Class <1>")
    parser = _Charts()
    parser.feed(page)
    assert parser.svgs == {"score-histogram": len(BIN_LABELS), "failure-rates": len(CHECKS)}
    assert parser.scripts_with_src == 0 and parser.links == 0
    assert "<img src=x" not in page and "&lt;img src=x" in page
    assert "Class &lt;1&gt;" in page and "default-src 'none'" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_gradebook_rows_sorted_exact_names_and_plain_numbers() -> None:
    reports = _class()
    rows = [GradebookRow(name, report) for name, report in [("é, \"x\"", reports["a"]), ("Ann", reports["b"]),
                                                            ("ann", reports["c"])]]
    rows.append(GradebookRow("zed", reports["d"], grader_error=True))
    text = format_gradebook(rows, ["quiz", "impl"])
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == ["learner", "score", "max_score", "quiz", "impl", "quiz:status", "impl:status"]
    assert [row[0] for row in parsed[1:]] == ["Ann", "ann", "zed", "é, \"x\""]
    assert parsed[1] == ["Ann", "1", "3", "0", "1", "failed", "failed"]
    assert parsed[2] == ["ann", "1", "3", "0", "1", "missing", "failed"]
    assert parsed[3] == ["zed", "", "3", "", "", "", ""]
    assert format_points(2 / 3) == "0.6667" and format_points(1e-7) == "0" and format_points(12.0) == "12"
    assert format_points(1234567.5) == "1234567.5"


def test_gradebook_never_hands_a_spreadsheet_a_formula() -> None:
    """A learner folder named like a formula is written so that opening the gradebook cannot run it."""
    reports = _class()
    names = ["=HYPERLINK(\"http://x\",\"y\")", "+1+2", "-2+3", "@SUM(A1)", "ann-marie", "o'neil"]
    text = format_gradebook([GradebookRow(name, reports["a"]) for name in [*names, "\tcmd"]], ["quiz", "impl"])
    cells = [row[0] for row in csv.reader(io.StringIO(text))][1:]
    assert sorted(cells) == sorted(["'" + name for name in names[:4]] + names[4:] + ["\\x09cmd"])
    assert all(cell[:1] not in "=+-@\t\r" for cell in cells)
