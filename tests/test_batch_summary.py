"""Class statistics, summary.md, report.html and the gradebook, from hand-made reports."""

from __future__ import annotations

import csv
import io
import re
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
    return CheckResult(
        id=check_id,
        status="passed" if passed else "failed",
        score=1.0 if passed else 0.0,
        max_score=1.0,
        visibility="public",
        reason=reason or f"{check_id} held.",
        diagnosis=diagnosis,
    )


def _report(
    name: str, quiz: bool | None, finite: bool, sums: bool, *, finite_reason: str = "", diagnosis: str | None = None
) -> Report:
    exercises = []
    if quiz is None:
        exercises.append(
            ExerciseResult(
                id="quiz",
                status="missing",
                score=0.0,
                max_score=1.0,
                reason="No answers.",
                checks=[
                    CheckResult(
                        id="q1", status="skipped", score=0.0, max_score=1.0, visibility="public", reason="No answers."
                    )
                ],
            )
        )
    else:
        exercises.append(
            ExerciseResult(
                id="quiz",
                status="passed" if quiz else "failed",
                score=float(quiz),
                max_score=1.0,
                reason="r",
                checks=[_check("q1", quiz, "Not quite: B.")],
            )
        )
    checks = [_check("finite", finite, finite_reason, diagnosis), _check("sums", sums, "Sums are off.")]
    score = float(finite + sums)
    exercises.append(
        ExerciseResult(
            id="impl",
            status="passed" if score == 2 else "failed",
            score=score,
            max_score=2.0,
            reason="r",
            checks=checks,
        )
    )
    return Report(
        grader_version="0", submission=name, score=score + float(bool(quiz)), max_score=3.0, exercises=exercises
    )


def _class() -> dict[str, Report]:
    return {
        "a": _report("a", True, True, True),
        "b": _report(
            "b",
            False,
            False,
            True,
            finite_reason="softmax is finite, but not for softmax(z=array([1000., 1001.])). Expected x.",
        ),
        "c": _report(
            "c",
            None,
            False,
            True,
            finite_reason="softmax is finite, but not for softmax(z=array([800., -3.5e+02])). Expected y.",
        ),
        "d": _report("d", True, False, False, finite_reason="Other.", diagnosis="no max shift"),
    }


def test_reason_group_uses_diagnosis_else_first_sentence_without_numbers() -> None:
    first = _check("f", False, "softmax is finite, but not for softmax(z=array([1000., 1001.])). Expected inf.")
    second = _check("f", False, "softmax is finite, but not for softmax(z=array([7., -2e+30])). Expected 3.")
    assert reason_group(first) == reason_group(second) == "softmax is finite, but not for softmax(z=array([#, #]))."
    assert reason_group(_check("f", False, "x", diagnosis="no max shift")) == "Known mistake: no max shift"


def test_class_stats_ranks_checks_among_learners_who_attempted_the_exercise() -> None:
    stats = class_stats(_class(), CHECKS, 3.0)
    assert stats.learners == 4 and stats.mean == 1.5 and stats.median == 1.0
    assert [(s.exercise, s.check, s.not_passed, s.judged) for s in stats.checks] == [
        ("impl", "finite", 3, 4),
        ("quiz", "q1", 1, 3),
        ("impl", "sums", 1, 4),
    ]
    finite = stats.checks[0]
    assert finite.reason.startswith("softmax is finite, but not for softmax(z=array([1000., 1001.]))")
    assert finite.reason_count == 2
    assert sum(stats.histogram) == 4 and stats.histogram[len(BIN_LABELS) - 1] == 1
    quiz, impl = stats.exercises
    statuses = quiz.statuses
    assert (quiz.exercise, statuses["passed"], statuses["failed"], statuses["missing"]) == ("quiz", 2, 1, 1)
    assert (impl.statuses["passed"], impl.statuses["failed"], impl.stopped) == (1, 3, 0)


def test_class_stats_share_leaves_out_learners_who_did_not_attempt() -> None:
    """Nine learners without the quiz and one who got it wrong: the question is failed by all who tried."""
    reports = {f"m{i}": _report(f"m{i}", None, True, True) for i in range(9)}
    reports["w"] = _report("w", False, True, True)
    reports["r"] = _report("r", True, False, True, finite_reason="Other.")
    stats = class_stats(reports, CHECKS, 3.0)
    assert [(s.check, s.not_passed, s.judged) for s in stats.checks][:2] == [("q1", 1, 2), ("finite", 1, 11)]
    assert stats.checks[0].share == 0.5 and stats.exercises[0].statuses["missing"] == 9


def _hung(name: str, checks: int) -> Report:
    """A learner whose function never answers: every check times out (two ran, the rest were not run)."""
    results = [
        CheckResult(
            id=f"c{i}",
            status="timeout",
            score=0.0,
            max_score=1.0,
            visibility="public",
            reason=(
                f"c{i} holds, but not for f(z=array([1.])). Expected an answer within the time "
                "limit; got no answer within 2 s (wall-clock limit)."
            )
            if i < 2
            else f"c{i}: not run, because f already ran out of time 2 times.",
            input="f(z=array([1.]))" if i < 2 else None,
            got="no answer within 2 s" if i < 2 else None,
        )
        for i in range(checks)
    ]
    exercise = ExerciseResult(
        id="long",
        kind="implementation",
        status="error",
        score=0.0,
        max_score=float(checks),
        reason="0 of 40 checks passed. What stopped it: no answer within 2 s.",
        checks=results,
    )
    return Report(grader_version="0", submission=name, score=0.0, max_score=float(checks), exercises=[exercise])


def _long(name: str, failing: set[int], checks: int, reason: str = "Wrong values.") -> Report:
    results = [
        CheckResult(
            id=f"c{i}",
            status="failed" if i in failing else "passed",
            score=0.0 if i in failing else 1.0,
            max_score=1.0,
            visibility="public",
            reason=reason if i in failing else "Held.",
            input="f(z=array([1.]))",
            got="x",
        )
        for i in range(checks)
    ]
    exercise = ExerciseResult(
        id="long",
        kind="implementation",
        status="failed" if failing else "passed",
        score=float(checks - len(failing)),
        max_score=float(checks),
        reason="r.",
        checks=results,
    )
    return Report(
        grader_version="0", submission=name, score=exercise.score, max_score=float(checks), exercises=[exercise]
    )


def _unimportable(name: str, why: str, checks: int) -> Report:
    results = [
        CheckResult(
            id=f"c{i}", status="error", score=0.0, max_score=1.0, visibility="public", reason=f"Not run: {why}."
        )
        for i in range(checks)
    ]
    exercise = ExerciseResult(
        id="long",
        kind="implementation",
        status="error",
        score=0.0,
        max_score=float(checks),
        reason=f"{why[0].upper()}{why[1:]}; none of its checks could run.",
        checks=results,
    )
    return Report(grader_version="0", submission=name, score=0.0, max_score=float(checks), exercises=[exercise])


def test_one_hung_learner_is_listed_once_not_under_every_check() -> None:
    checks = [("long", f"c{i}") for i in range(40)]
    reports = {
        "hung": _hung("hung", 40),
        "a": _long("a", {0}, 40, "Sums are off."),
        "b": _long("b", {0, 1}, 40, "Sums are off by 2."),
        "c": _long("c", set(), 40),
    }
    stats = class_stats(reports, checks, 40.0)
    (exercise,) = stats.exercises
    assert exercise.statuses["timeout"] == 1 and exercise.stopped == 1 and exercise.stopped_by == {"timeout": 1}
    assert exercise.reason is not None and exercise.reason_count == 1
    assert [(s.check, s.not_passed, s.judged) for s in stats.checks[:3]] == [("c0", 2, 3), ("c1", 1, 3), ("c2", 0, 3)]
    text = format_summary_markdown(stats, title="T")
    assert "time limit" not in text.split("## Checks")[1]
    assert text.lower().count("no answer within") == 1
    assert "No answer within 2 s. (1 of 1)" in text
    assert "long: 1 timeout" in format_summary_text(stats)


def test_import_failures_are_counted_once_per_exercise_by_learner() -> None:
    checks = [("long", f"c{i}") for i in range(11)]
    syntax = "your file has a SyntaxError at line 3 (invalid syntax): def f(:"
    reports = {
        "s1": _unimportable("s1", syntax, 11),
        "s2": _unimportable("s2", syntax.replace("3", "7"), 11),
        "i": _unimportable("i", "importing your file raised ModuleNotFoundError: scipy", 11),
        "ok": _long("ok", {4}, 11),
    }
    stats = class_stats(reports, checks, 11.0)
    (exercise,) = stats.exercises
    assert exercise.stopped_by == {"syntax-error": 2, "import-error": 1}
    assert exercise.reason.startswith("Your file has a SyntaxError at line") and exercise.reason_count == 2
    assert all(s.judged == 1 for s in stats.checks)
    assert stats.checks[0].check == "c4" and stats.checks[0].reason == "Wrong values."
    row = next(line for line in format_summary_markdown(stats, title="T").splitlines() if line.startswith("| long |"))
    assert "| 0 | 1 | 0 | 2 | 1 | 0 | 0 |" in row and "(2 of 3)" in row


def test_most_common_reason_counts_learners_and_prefers_a_shared_reason() -> None:
    reports = {
        name: _report(name, True, False, True, finite_reason=reason)
        for name, reason in [("a", "Aaa first."), ("b", "Zzz shared."), ("c", "Zzz shared."), ("d", "Bbb.")]
    }
    reports["e"] = _report("e", True, False, True, finite_reason="Ccc.", diagnosis="no max shift")
    reports["f"] = _report("f", True, False, True, finite_reason="Ddd.", diagnosis="no max shift")
    finite = next(s for s in class_stats(reports, CHECKS, 3.0).checks if s.check == "finite")
    assert (finite.reason, finite.reason_count, finite.not_passed) == ("Known mistake: no max shift", 2, 6)


def test_held_back_checks_are_not_counted_as_failures() -> None:
    report = _report("g", True, False, True)
    held = report.exercises[1].checks[1]
    held.status, held.score, held.reason = "skipped", 0.0, "Not credited yet: this property held. Sums."
    stats = class_stats({"g": report, "h": _report("h", True, True, True)}, CHECKS, 3.0)
    sums = next(s for s in stats.checks if s.check == "sums")
    assert (sums.not_passed, sums.judged) == (0, 1)


def test_class_stats_leave_out_learners_the_grader_failed_on() -> None:
    stats = class_stats(_class(), CHECKS, 3.0, grader_errors=["d"])
    assert stats.learners == 3 and stats.grader_errors == ["d"]
    assert "The grader failed on 1: d" in format_summary_text(stats)
    assert sum(stats.exercises[0].statuses.values()) == 3


def test_summary_markdown_escapes_learner_text() -> None:
    reports = {"x": _report("x", True, False, True, finite_reason="raised ValueError: a|b <script>\nnext")}
    text = format_summary_markdown(class_stats(reports, CHECKS, 3.0), title="T")
    row = next(line for line in text.splitlines() if line.startswith("| impl | finite"))
    assert "a\\|b &lt;script&gt; next" in row and row.count(" | ") == 3
    assert "Mean score: 2/3" in text and "| 100% | 0 |" in text


class _Charts(HTMLParser):
    """The bars (``rect.bar``) inside each chart (an element with a chart's id), and anything external."""

    CHARTS = ("score-histogram", "failure-rates")

    def __init__(self) -> None:
        super().__init__()
        self.svgs: dict[str, int] = {}
        self.current: str | None = None
        self.depth = 0
        self.scripts_with_src = 0
        self.links = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id") in self.CHARTS:
            self.current, self.depth = values["id"], 0
            self.svgs[self.current or ""] = 0
        if self.current:
            self.depth += 1
        if tag == "rect" and self.current and "bar" in (values.get("class") or "").split():
            self.svgs[self.current] += 1
        elif tag == "script" and values.get("src"):
            self.scripts_with_src += 1
        elif tag in ("link", "img", "iframe"):
            self.links += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.current:
            self.depth -= 1
            if self.depth == 0:
                self.current = None


def test_report_html_has_both_charts_and_nothing_external() -> None:
    reports = {
        "e": _report("e", True, False, True, finite_reason="<img src=x onerror=alert(1)>"),
        "f": _report("f", True, True, True),
    }
    page = format_report_html(class_stats(reports, CHECKS, 3.0), title="Class <1>")
    parser = _Charts()
    parser.feed(page)
    # one bar per check some learner did not pass: the others are in the folded table, not the chart
    assert parser.svgs == {"score-histogram": len(BIN_LABELS), "failure-rates": 1}
    assert parser.scripts_with_src == 0 and parser.links == 0
    assert "<img src=x" not in page and "&lt;img src=x" in page
    assert "Class &lt;1&gt;" in page and "default-src 'none'" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_report_html_allows_only_its_own_script_by_hash() -> None:
    """The policy names the hash of the page's one inline script, and never allows inline scripts wholesale."""
    import base64
    import hashlib

    page = format_report_html(class_stats({"e": _report("e", True, False, True)}, CHECKS, 3.0), title="T")
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None
    assert f"script-src 'sha256-{digest}'" in policy.group(1) and "script-src 'unsafe-inline'" not in policy.group(1)


def test_report_html_headline_rounds_scores_for_people() -> None:
    reports = {name: _report(name, True, finite, True) for name, finite in (("a", True), ("b", False), ("c", False))}
    page = format_report_html(class_stats(reports, CHECKS, 3.0), title="T")
    # mean 7/3 points: shown to one decimal, never as 2.3333/3
    assert "3 learners graded. Mean score 2.3 of 3, median 2 of 3." in page
    assert "2.3333" not in page


def test_report_html_folds_the_checks_no_one_failed_behind_details() -> None:
    """The checks some learner did not pass come first, most failed first; the rest wait in a closed details."""
    reports = {"a": _report("a", True, False, True), "b": _report("b", True, False, False)}
    parser = _Tables()
    page = format_report_html(class_stats(reports, CHECKS, 3.0), title="T")
    parser.feed(page)
    assert [row[:3] for row in parser.tables["checks"] if row] == [
        ["impl", "finite", "100% (2 of 2)"],
        ["impl", "sums", "50% (1 of 2)"],
    ]
    assert [row[:3] for row in parser.tables["checks-more"] if row] == [["quiz", "q1", "0% (0 of 2)"]]
    folded = page.split("<details>", 1)[1].split("</details>", 1)[0]
    assert "<summary>The 1 other check</summary>" in folded and 'id="checks-more"' in folded


def test_gradebook_rows_sorted_exact_names_and_plain_numbers() -> None:
    reports = _class()
    rows = [
        GradebookRow(name, report)
        for name, report in [('é, "x"', reports["a"]), ("Ann", reports["b"]), ("ann", reports["c"])]
    ]
    rows.append(GradebookRow("zed", reports["d"], grader_error=True))
    text = format_gradebook(rows, ["quiz", "impl"])
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == ["learner", "score", "max_score", "quiz", "impl", "quiz:status", "impl:status"]
    assert [row[0] for row in parsed[1:]] == ["Ann", "ann", "zed", 'é, "x"']
    assert parsed[1] == ["Ann", "1", "3", "0", "1", "failed", "failed"]
    assert parsed[2] == ["ann", "1", "3", "0", "1", "missing", "failed"]
    assert parsed[3] == ["zed", "", "3", "", "", "", ""]
    assert format_points(2 / 3) == "0.6667" and format_points(1e-7) == "0" and format_points(12.0) == "12"
    assert format_points(1234567.5) == "1234567.5"


def test_gradebook_never_hands_a_spreadsheet_a_formula() -> None:
    """A learner folder named like a formula is written so that opening the gradebook cannot run it."""
    reports = _class()
    names = ['=HYPERLINK("http://x","y")', "+1+2", "-2+3", "@SUM(A1)", "ann-marie", "o'neil"]
    text = format_gradebook([GradebookRow(name, reports["a"]) for name in [*names, "\tcmd"]], ["quiz", "impl"])
    cells = [row[0] for row in csv.reader(io.StringIO(text))][1:]
    assert sorted(cells) == sorted(["'" + name for name in names[:4]] + names[4:] + ["\\x09cmd"])
    assert all(cell[:1] not in "=+-@\t\r" for cell in cells)


class _Tables(HTMLParser):
    """The text of every cell of every table with an id, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.table: str | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.table = dict(attrs).get("id")
            self.tables[self.table or ""] = []
        elif tag == "tr" and self.table:
            self.tables[self.table].append([])
        elif tag == "td" and self.table:
            self.cell = []

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self.table and self.cell is not None:
            self.tables[self.table][-1].append("".join(self.cell))
            self.cell = None
        elif tag == "table":
            self.table = None


def _markdown_rows(text: str, section: str) -> list[list[str]]:
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split(" | ") for line in body.splitlines() if line.startswith("| ")]
    # the header row left out; Markdown's escapes undone, to compare with the page's text
    return [[re.sub(r"\\(.)", r"\1", cell.strip()) for cell in row] for row in rows[1:]]


def test_summary_and_report_html_show_the_same_counts() -> None:
    reports = _class()
    broken = _report("s", True, False, False)
    why = "Your file has a SyntaxError at line 2 (invalid syntax); none of its checks could run"
    broken.exercises[1] = ExerciseResult(
        id="impl",
        kind="implementation",
        status="error",
        score=0.0,
        max_score=2.0,
        reason=why + ".",
        checks=[
            CheckResult(id=c, status="error", score=0.0, max_score=1.0, visibility="public", reason="Not run.")
            for c in ("finite", "sums")
        ],
    )
    reports["s"] = broken
    stats = class_stats(reports, CHECKS, 3.0)
    markdown = format_summary_markdown(stats, title="T")
    parser = _Tables()
    parser.feed(format_report_html(stats, title="T"))
    html_exercises = [row for row in parser.tables["exercises"] if row]
    html_checks = [row for table in ("checks", "checks-more") for row in parser.tables.get(table, []) if row]
    assert html_exercises == _markdown_rows(markdown, "Exercises")
    assert html_checks == _markdown_rows(markdown, "Checks, most failed first")
    assert html_exercises[1] == ["impl", "1", "3", "0", "1", "0", "0", "0", f"{why}. (1 of 1)"]
    assert html_checks[0][:3] == ["impl", "finite", "75% (3 of 4)"]


def test_unreadable_answers_file_is_counted_once_for_the_quiz() -> None:
    report = _report("u", True, True, True)
    why = "Your answers could not be read: a.yaml: not valid YAML (line 2)"
    report.exercises[0] = ExerciseResult(
        id="quiz",
        kind="quiz",
        status="error",
        score=0.0,
        max_score=1.0,
        reason=why,
        checks=[CheckResult(id="q1", status="error", score=0.0, max_score=1.0, visibility="public", reason=why)],
    )
    stats = class_stats({"u": report, "w": _report("w", False, True, True)}, CHECKS, 3.0)
    quiz = stats.exercises[0]
    assert quiz.statuses["error"] == 1 and quiz.stopped_by == {"error": 1} and quiz.reason == why
    q1 = next(s for s in stats.checks if s.check == "q1")
    assert (q1.not_passed, q1.judged, q1.reason) == (1, 1, "Not quite: B.")
