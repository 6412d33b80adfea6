"""The roster of report.html: a row per learner, with statuses, scores and a feedback link, from hand-made reports."""

from __future__ import annotations

from test_batch_summary import CHECKS, _report, _Tables

from grader.batch.html import format_report_html
from grader.batch.roster import GRADER_FAILED, class_roster
from grader.batch.summary import class_stats


def test_roster_rows_sorted_by_name_with_status_per_exercise_and_feedback_path() -> None:
    reports = {"zoe": _report("zoe", True, True, True), "Ann": _report("Ann", None, False, True)}
    rows = class_roster([(name, f"stem-{name}", report) for name, report in reports.items()], ["quiz", "impl"])
    assert [row.learner for row in rows] == ["Ann", "zoe"]
    assert rows[0].statuses == ("missing", "failed") and rows[1].statuses == ("passed", "passed")
    assert rows[0].feedback == "feedback/stem-Ann.md" and rows[1].score == reports["zoe"].score


def test_roster_says_grader_error_instead_of_a_score_the_learner_did_not_earn() -> None:
    rows = class_roster([("bob", "bob", _report("bob", True, True, True))], ["quiz", "impl"], grader_errors=["bob"])
    assert rows[0].score is None and rows[0].statuses == (GRADER_FAILED, GRADER_FAILED)


def test_report_html_roster_links_each_learner_and_escapes_names() -> None:
    reports = {"<b>x</b>": _report("x", True, False, True), "y": _report("y", True, True, True)}
    roster = class_roster([(name, name.strip("<>/b"), report) for name, report in reports.items()], ["quiz", "impl"])
    page = format_report_html(class_stats(reports, CHECKS, 3.0), title="T", roster=roster)
    parser = _Tables()
    parser.feed(page)
    assert [row for row in parser.tables["roster"] if row] == [
        ["<b>x</b>", "2 of 3", "passed", "failed", "feedback"],
        ["y", "3 of 3", "passed", "passed", "feedback"],
    ]
    assert '<a href="feedback/x.md">' in page and "<b>x</b>" not in page
    assert 'data-key="2.0"' in page  # the exact score sorts, the rounded one is shown
