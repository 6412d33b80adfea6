"""``report.html``: the class picture as one self-contained page that opens offline.

A roster (``#roster``: each learner's score, how each exercise ended and a
link to their feedback, sortable by any column), the score histogram (an
SVG, ``#score-histogram``, scaled to the window by its ``viewBox``), the
checks most learners did not pass (``#failure-rates``, a bar per check, and
``#checks``; every other check folded away in ``<details>``, ``#checks-more``),
a table of how each exercise ended, and the quiz item statistics
(``#quiz-items``, ``grader.batch.items``), with the numbers of ``summary.md``.
Ids are kept whole on one line; wide tables scroll inside their own box, so
the page itself never scrolls sideways. Scores are rounded to one decimal
for reading; the gradebook keeps the exact points.

Inline CSS and one inline script, which sorts the roster and, once the page
is laid out, records which charts were drawn (``body[data-charts-rendered]``)
for a headless browser. The Content-Security-Policy allows that script by
its hash and forbids every network request; every piece of text is escaped
(reasons quote learner code, names are the learners' folder names).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from grader.batch.items import ITEMS_NOTE, format_discrimination, format_share
from grader.batch.mistakes import COMMAND_NOTE, NOTHING_SHARED, SharedMistake, mistake_rows
from grader.batch.roster import GRADER_FAILED, RosterRow
from grader.batch.status import STATUSES
from grader.batch.summary import (
    BIN_LABELS,
    CHECKS_NOTE,
    EXERCISES_NOTE,
    CheckStat,
    ClassStats,
    items_nothing,
    judged_text,
    option_text,
)

__all__ = ["SHOWN_CHECKS", "format_report_html", "rounded"]


def _notes(stats: ClassStats) -> str:
    """The batch's notes (``summary.md`` has them too), each escaped: they quote learner names."""
    if not stats.notes:
        return ""
    return "<h2>Notes</h2><ul>" + "".join(f"<li>{escape(note)}</li>" for note in stats.notes) + "</ul>"


_WIDTH = 680
_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; color: #1b1b1b; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.headline { font-size: 1.05rem; }
.warning { background: #fff4e5; border-left: 4px solid #d9822b; padding: .5rem .75rem; }
.id { white-space: nowrap; }
.wide { overflow-x: auto; }
svg text { font-size: 12px; fill: #1b1b1b; }
svg .axis { stroke: #888; stroke-width: 1; }
svg .track { fill: #eef1f5; }
svg.chart { display: block; width: 100%; max-width: 680px; height: auto; }
#score-histogram .bar { fill: #3a6ea5; }
#failure-rates { list-style: none; padding: 0; margin: 1rem 0; }
#failure-rates li { display: grid; grid-template-columns: minmax(0, 2fr) minmax(4rem, 3fr) 7.5rem; gap: .5rem;
  align-items: center; margin: .3rem 0; font-size: .9rem; }
#failure-rates svg { display: block; width: 100%; height: .9rem; }
#failure-rates .bar { fill: #c0504d; }
@media (max-width: 36rem) {
  #failure-rates li { grid-template-columns: minmax(0, 1fr) 7.5rem; }
  #failure-rates .label { grid-column: 1 / -1; }
}
table { border-collapse: collapse; width: 100%; font-size: .9rem; margin-top: 1rem; }
th, td { border-bottom: 1px solid #ddd; padding: .35rem .5rem; text-align: left; vertical-align: top; }
td { overflow-wrap: break-word; }
.prose { min-width: 12rem; }
td.num { text-align: right; white-space: nowrap; }
th button { font: inherit; font-weight: bold; border: 0; background: none; padding: 0; cursor: pointer; }
th[aria-sort=ascending] button::after { content: " \\25B2"; }
th[aria-sort=descending] button::after { content: " \\25BC"; }
td.status-passed { color: #2e6b30; }
td.status-failed, td.status-error, td.status-timeout, td.status-syntax-error, td.status-import-error { color: #a33a36; }
details { margin-top: 1rem; }
"""
# Two jobs, no network: once laid out, record which charts were drawn (``body[data-charts-rendered]``, read by the
# headless-browser test); and sort a ``table.sortable`` by the column whose header button is clicked, on each
# cell's ``data-key`` (numbers when the header says ``data-numeric``), ties kept in the page's order.
_SCRIPT = """
window.addEventListener("load", function () {
  var found = [];
  ["score-histogram", "failure-rates"].forEach(function (id) {
    var chart = document.getElementById(id);
    if (!chart) { return; }
    var box = chart.getBoundingClientRect();
    var bars = chart.querySelectorAll("rect.bar");
    if (box.width > 0 && box.height > 0) { found.push(id + "=" + bars.length); }
  });
  document.body.setAttribute("data-charts-rendered", found.join(" "));
});
document.querySelectorAll("table.sortable th button").forEach(function (button) {
  button.addEventListener("click", function () {
    var header = button.parentNode;
    var table = header.closest("table");
    var column = Array.prototype.indexOf.call(header.parentNode.children, header);
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var numeric = header.hasAttribute("data-numeric");
    table.querySelectorAll("th").forEach(function (other) { other.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[column].getAttribute("data-key"), y = b.cells[column].getAttribute("data-key");
      var order = numeric ? parseFloat(x) - parseFloat(y) : (x < y ? -1 : x > y ? 1 : 0);
      if (order === 0) { return a.getAttribute("data-index") - b.getAttribute("data-index"); }
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
"""
# The page runs only the script above: the policy names its hash, so no other inline script (a learner's text
# that escaped escaping) could run, and it forbids every network request.
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
_CSP = (
    '<meta http-equiv="Content-Security-Policy" '
    f"content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_SCRIPT_HASH}'\">"
)
# The checks the chart and the first table show; the rest are folded away in <details>.
SHOWN_CHECKS = 12


def rounded(value: float) -> str:
    """``98.5``, ``167``: a score as people read it, to one decimal (the gradebook keeps the exact points)."""
    text = f"{value:.1f}".removesuffix(".0")
    return "0" if text == "-0" else text


def _id(text: str) -> str:
    """An id (exercise, check, learner) escaped and kept whole on one line: ids are never cut at a hyphen."""
    return f'<span class="id">{escape(text)}</span>'


def _check_name(exercise: str, check: str) -> str:
    """``exercise / check``, breakable only at the slash."""
    return f"{_id(exercise)} / {_id(check)}"


def _histogram(stats: ClassStats) -> str:
    height, left, bottom, top = 260, 40, 40, 20
    plot_w, plot_h = _WIDTH - left - 10, height - bottom - top
    most = max(stats.histogram) or 1
    step = plot_w / len(BIN_LABELS)
    parts = [
        (
            f'<svg id="score-histogram" class="chart" role="img" aria-labelledby="histogram-title" '
            f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {height}">'
        ),
        '<title id="histogram-title">Number of learners per score band (share of the maximum score)</title>',
        f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}"/>',
        f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}"/>',
        f'<text x="{left - 6}" y="{top + 4}" text-anchor="end">{most}</text>',
        f'<text x="{left - 6}" y="{top + plot_h}" text-anchor="end">0</text>',
    ]
    for index, (label, count) in enumerate(zip(BIN_LABELS, stats.histogram, strict=True)):
        bar_h = plot_h * count / most
        x = left + index * step + 3
        y = top + plot_h - bar_h
        parts.append(
            f'<g class="bin"><rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{step - 6:.1f}" '
            f'height="{bar_h:.1f}"><title>{escape(label)}: {count} learner{"s" if count != 1 else ""}'
            f"</title></rect>"
        )
        if count:
            parts.append(f'<text x="{x + (step - 6) / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle">{count}</text>')
        parts.append(
            f'<text x="{x + (step - 6) / 2:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
            f"{escape(label)}</text></g>"
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{height - 4}" text-anchor="middle">score, as a share of '
        f"{escape(rounded(stats.max_score))} points</text></svg>"
    )
    return "\n".join(parts)


def _shown_checks(stats: ClassStats) -> list[CheckStat]:
    """The checks that matter first: those some learner did not pass, most failed first, at most ``SHOWN_CHECKS``."""
    return [stat for stat in stats.checks if stat.not_passed][:SHOWN_CHECKS]


def _failure_rates(stats: ClassStats) -> str:
    """One row per check shown: its name, a bar of the share failing (an SVG that fills the row), and the count."""
    shown = _shown_checks(stats)
    if not shown:
        return '<p id="failure-rates-none">Every learner judged on a check passed it.</p>'
    parts = [
        '<ol id="failure-rates" aria-label="Share of the learners judged on each check who did not pass it, '
        'most failed first">'
    ]
    for stat in shown:
        tip = f"{stat.exercise} / {stat.check}: {stat.not_passed} of the {stat.judged} learners judged did not pass"
        parts.append(
            f'<li class="check"><span class="label">{_check_name(stat.exercise, stat.check)}</span>'
            '<svg viewBox="0 0 100 10" preserveAspectRatio="none" role="img" xmlns="http://www.w3.org/2000/svg">'
            f"<title>{escape(tip)}</title>"
            '<rect class="track" x="0" y="0" width="100" height="10"/>'
            f'<rect class="bar" x="0" y="0" width="{100 * stat.share:.1f}" height="10"/></svg>'
            f'<span class="num">{escape(judged_text(stat))}</span></li>'
        )
    parts.append("</ol>")
    return "\n".join(parts)


def _exercise_table(stats: ClassStats) -> str:
    head = "".join(f"<th>{escape(status)}</th>" for status in STATUSES)
    rows = [
        f'<div class="wide"><table id="exercises"><thead><tr><th>exercise</th>{head}'
        '<th class="prose">most common reason it stopped before any check</th></tr></thead><tbody>'
    ]
    for exercise in stats.exercises:
        counts = "".join(f'<td class="num">{exercise.statuses[status]}</td>' for status in STATUSES)
        reason = f"{escape(exercise.reason)} ({exercise.reason_count} of {exercise.stopped})" if exercise.reason else ""
        rows.append(f'<tr><td>{_id(exercise.exercise)}</td>{counts}<td class="prose">{reason}</td></tr>')
    rows.append("</tbody></table></div>")
    return "\n".join(rows)


def _check_rows(table_id: str, checks: list[CheckStat]) -> str:
    rows = [
        (
            f'<div class="wide"><table id="{table_id}"><thead><tr><th>exercise</th><th>check</th>'
            '<th>did not pass</th><th class="prose">most common reason</th></tr></thead><tbody>'
        )
    ]
    for stat in checks:
        reason = f"{escape(stat.reason)} ({stat.reason_count} of {stat.not_passed})" if stat.reason else ""
        rows.append(
            f"<tr><td>{_id(stat.exercise)}</td><td>{_id(stat.check)}</td>"
            f'<td class="num">{escape(judged_text(stat))}</td><td class="prose">{reason}</td></tr>'
        )
    rows.append("</tbody></table></div>")
    return "\n".join(rows)


def _table(stats: ClassStats) -> str:
    """The checks shown in the chart (``#checks``), then every other check folded away (``#checks-more``)."""
    shown = _shown_checks(stats)
    rest = stats.checks[len(shown) :]
    parts = [_check_rows("checks", shown)] if shown else []
    if rest:
        failing = sum(1 for stat in rest if stat.not_passed)
        what = f"{len(rest)} other check{'s' if len(rest) != 1 else ''}"
        if failing:
            what += f" ({failing} of them not passed by some learner)"
        parts.append(f"<details><summary>The {what}</summary>{_check_rows('checks-more', rest)}</details>")
    return "\n".join(parts)


def _roster(roster: Sequence[RosterRow], exercise_ids: Sequence[str]) -> str:
    """``#roster``: a row per learner, sortable by any column, with a link to the learner's feedback file."""
    if not roster:
        return ""
    head = "".join(f'<th><button type="button">{_id(exercise_id)}</button></th>' for exercise_id in exercise_ids)
    rows = [
        "<h2>Learners</h2><p>Click a column's header to sort by it; click again to reverse.</p>",
        '<div class="wide"><table id="roster" class="sortable"><thead><tr>'
        '<th><button type="button">learner</button></th>'
        '<th data-numeric=""><button type="button">score</button></th>'
        f"{head}<th>feedback</th></tr></thead><tbody>",
    ]
    for index, row in enumerate(roster):
        if row.score is None:
            score = f'<td class="num" data-key="-1">{escape(GRADER_FAILED)}</td>'
        else:
            score = f'<td class="num" data-key="{row.score!r}">{rounded(row.score)} of {rounded(row.max_score)}</td>'
        statuses = "".join(
            f'<td class="status-{escape(status.replace(" ", "-"))}" data-key="{escape(status)}">{escape(status)}</td>'
            for status in row.statuses
        )
        rows.append(
            f'<tr data-index="{index}"><td data-key="{escape(row.learner)}">{_id(row.learner)}</td>{score}'
            f'{statuses}<td><a href="{escape(quote(row.feedback))}">feedback</a></td></tr>'
        )
    rows.append("</tbody></table></div>")
    return "\n".join(rows)


def _items(stats: ClassStats) -> str:
    """The quiz item statistics (``#quiz-items``), or the sentence saying there are none; nothing without a quiz."""
    items = stats.quiz_items
    if items is None:
        return ""
    head = f"<h2>Quiz questions</h2><p>{escape(ITEMS_NOTE)}</p>"
    nothing = items_nothing(items)
    if nothing:
        return head + f'<p id="quiz-items-none">{escape(nothing)}</p>'
    rows = [
        '<div class="wide"><table id="quiz-items"><thead><tr><th>exercise</th><th>question</th><th>answered</th>'
        "<th>facility</th>"
        "<th>discrimination</th><th>options</th></tr></thead><tbody>"
    ]
    for item in items:
        options = "<br>".join(escape(text) for text in option_text(item))
        rows.append(
            f"<tr><td>{escape(item.exercise)}</td><td>{escape(item.question)}</td>"
            f'<td class="num">{item.answered}</td><td class="num">{format_share(item.facility)}</td>'
            f'<td class="num">{format_discrimination(item.discrimination)}</td><td>{options}</td></tr>'
        )
    rows.append("</tbody></table></div>")
    return head + "\n".join(rows)


def _mistakes(mistakes: list[SharedMistake] | None) -> str:
    """``#shared-mistakes``: the groups of learners sharing a mistake no known-wrong solution catches, or the
    sentence saying there are none; nothing when they were not sought."""
    if mistakes is None:
        return ""
    head = "<h2>Shared mistakes no known-wrong solution catches</h2>"
    if not mistakes:
        return head + f'<p id="shared-mistakes-none">{escape(NOTHING_SHARED)}</p>'
    rows = [
        head,
        f"<p>{escape(COMMAND_NOTE)}</p>",
        '<div class="wide"><table id="shared-mistakes"><thead><tr><th>group</th><th>exercise</th><th>check</th>'
        '<th class="prose">input</th><th class="prose">shared output</th><th class="prose">expected</th>'
        "<th>learners</th><th>example</th></tr></thead><tbody>",
    ]
    for mistake, (number, exercise, _, call, got, expected, count, example) in zip(
        mistakes, mistake_rows(mistakes), strict=True
    ):
        checks = ", ".join(_id(check) for check in mistake.checks)
        rows.append(
            f'<tr><td class="num">{number}</td><td>{_id(exercise)}</td><td>{checks}</td>'
            f'<td class="prose"><code>{escape(call)}</code></td><td class="prose">{escape(got)}</td>'
            f'<td class="prose">{escape(expected)}</td>'
            f'<td class="num">{count}</td><td>{_id(example)}</td></tr>'
        )
    rows.append("</tbody></table></div>")
    return "\n".join(rows)


def format_report_html(
    stats: ClassStats,
    *,
    title: str,
    roster: Sequence[RosterRow] = (),
    mistakes: list[SharedMistake] | None = None,
) -> str:
    """The whole page; byte-identical for the same statistics, roster and shared mistakes."""
    if stats.mean is not None and stats.median is not None:
        top = rounded(stats.max_score)
        headline = (
            f"{stats.learners} learner{'s' if stats.learners != 1 else ''} graded. "
            f"Mean score {rounded(stats.mean)} of {top}, median {rounded(stats.median)} of {top}."
        )
    else:
        headline = "No learner was graded."
    warning = ""
    if stats.grader_errors:
        warning = (
            f'<p class="warning">The grader failed on {len(stats.grader_errors)} learner'
            f"{'s' if len(stats.grader_errors) != 1 else ''}; they are left out of these charts. "
            "Run the batch again once the problem is fixed.</p>"
        )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            _CSP,
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape(title)}</title>",
            f"<style>{_CSS}</style></head>",
            "<body>",
            f"<h1>{escape(title)}</h1>",
            f'<p class="headline">{escape(headline)}</p>',
            warning,
            _notes(stats),
            _roster(roster, [exercise.exercise for exercise in stats.exercises]),
            "<h2>Score distribution</h2>",
            _histogram(stats),
            "<h2>Exercises</h2>",
            f"<p>{escape(EXERCISES_NOTE)}</p>",
            _exercise_table(stats),
            "<h2>Checks, most failed first</h2>",
            f"<p>{escape(CHECKS_NOTE)}</p>",
            _failure_rates(stats),
            _table(stats),
            _items(stats),
            _mistakes(mistakes),
            f"<script>{_SCRIPT}</script>",
            "</body></html>",
            "",
        ]
    )
