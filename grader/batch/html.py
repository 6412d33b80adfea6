"""``report.html``: the class picture as one self-contained page that opens offline.

Two inline SVG charts (``#score-histogram`` and ``#failure-rates``, each bar a
``rect.bar``), a table of how each exercise ended and a table of the checks
with their most common reasons, both with the numbers of ``summary.md``,
the quiz item statistics (``#quiz-items``, ``grader.batch.items``),
inline CSS, and a few lines of inline script that only measure the charts
once the page is laid out (``body[data-charts-rendered]``), so a headless
browser can confirm that they were drawn. A Content-Security-Policy forbids
every network request; every piece of text is escaped (reasons quote learner
code).
"""

from __future__ import annotations

from html import escape

from grader.batch.gradebook import format_points
from grader.batch.items import ITEMS_NOTE, format_discrimination, format_share
from grader.batch.status import STATUSES
from grader.batch.summary import (
    BIN_LABELS,
    CHECKS_NOTE,
    EXERCISES_NOTE,
    ClassStats,
    items_nothing,
    judged_text,
    option_text,
)

__all__ = ["format_report_html"]


def _notes(stats: ClassStats) -> str:
    """The batch's notes (``summary.md`` has them too), each escaped: they quote learner names."""
    if not stats.notes:
        return ""
    return "<h2>Notes</h2><ul>" + "".join(f"<li>{escape(note)}</li>" for note in stats.notes) + "</ul>"


_WIDTH = 680
_CSP = (
    '<meta http-equiv="Content-Security-Policy" '
    "content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
)
_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; color: #1b1b1b; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.headline { font-size: 1.05rem; }
.warning { background: #fff4e5; border-left: 4px solid #d9822b; padding: .5rem .75rem; }
svg text { font-size: 12px; fill: #1b1b1b; }
svg .axis { stroke: #888; stroke-width: 1; }
svg .track { fill: #eef1f5; }
#score-histogram .bar { fill: #3a6ea5; }
#failure-rates .bar { fill: #c0504d; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; margin-top: 1rem; }
th, td { border-bottom: 1px solid #ddd; padding: .35rem .5rem; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
"""
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
"""


def _histogram(stats: ClassStats) -> str:
    height, left, bottom, top = 260, 40, 40, 20
    plot_w, plot_h = _WIDTH - left - 10, height - bottom - top
    most = max(stats.histogram) or 1
    step = plot_w / len(BIN_LABELS)
    parts = [
        (
            f'<svg id="score-histogram" role="img" aria-labelledby="histogram-title" '
            f'xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}" '
            f'viewBox="0 0 {_WIDTH} {height}">'
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
        f"{escape(format_points(stats.max_score))} points</text></svg>"
    )
    return "\n".join(parts)


def _failure_rates(stats: ClassStats) -> str:
    row, top = 24, 10
    longest = max((len(f"{s.exercise} / {s.check}") for s in stats.checks), default=10)
    label_w = int(min(440, 16 + 7 * longest))  # about 7 px a character at 12 px
    width = max(_WIDTH, label_w + 360)
    bar_w = width - label_w - 100
    height = top + row * max(1, len(stats.checks)) + 10
    parts = [
        (
            f'<svg id="failure-rates" role="img" aria-labelledby="failures-title" '
            f'xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">'
        ),
        '<title id="failures-title">Share of the learners judged on each check who did not pass it, '
        "most failed first</title>",
    ]
    for index, stat in enumerate(stats.checks):
        y = top + index * row
        name = f"{stat.exercise} / {stat.check}"
        failed_w = bar_w * stat.share
        tip = (
            f"{name}: {stat.not_passed} of the {stat.judged} learners judged on it did not pass"
            if stat.judged
            else f"{name}: no learner was judged on it"
        )
        parts.append(
            f'<g class="check"><text x="{label_w - 8}" y="{y + 15}" text-anchor="end">{escape(name)}</text>'
            f'<rect class="track" x="{label_w}" y="{y + 3}" width="{bar_w}" height="{row - 8}"/>'
            f'<rect class="bar" x="{label_w}" y="{y + 3}" width="{failed_w:.1f}" height="{row - 8}">'
            f"<title>{escape(tip)}</title></rect>"
            f'<text x="{label_w + bar_w + 6}" y="{y + 15}">{escape(judged_text(stat))}</text></g>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def _exercise_table(stats: ClassStats) -> str:
    head = "".join(f"<th>{escape(status)}</th>" for status in STATUSES)
    rows = [
        f'<table id="exercises"><thead><tr><th>exercise</th>{head}'
        "<th>most common reason it stopped before any check</th></tr></thead><tbody>"
    ]
    for exercise in stats.exercises:
        counts = "".join(f'<td class="num">{exercise.statuses[status]}</td>' for status in STATUSES)
        reason = f"{escape(exercise.reason)} ({exercise.reason_count} of {exercise.stopped})" if exercise.reason else ""
        rows.append(f"<tr><td>{escape(exercise.exercise)}</td>{counts}<td>{reason}</td></tr>")
    rows.append("</tbody></table>")
    return "\n".join(rows)


def _table(stats: ClassStats) -> str:
    rows = [
        (
            '<table id="checks"><thead><tr><th>exercise</th><th>check</th><th>did not pass</th>'
            "<th>most common reason</th></tr></thead><tbody>"
        )
    ]
    for stat in stats.checks:
        reason = f"{escape(stat.reason)} ({stat.reason_count} of {stat.not_passed})" if stat.reason else ""
        rows.append(
            f"<tr><td>{escape(stat.exercise)}</td><td>{escape(stat.check)}</td>"
            f'<td class="num">{escape(judged_text(stat))}</td><td>{reason}</td></tr>'
        )
    rows.append("</tbody></table>")
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
        '<table id="quiz-items"><thead><tr><th>exercise</th><th>question</th><th>answered</th><th>facility</th>'
        "<th>discrimination</th><th>options</th></tr></thead><tbody>"
    ]
    for item in items:
        options = "<br>".join(escape(text) for text in option_text(item))
        rows.append(
            f"<tr><td>{escape(item.exercise)}</td><td>{escape(item.question)}</td>"
            f'<td class="num">{item.answered}</td><td class="num">{format_share(item.facility)}</td>'
            f'<td class="num">{format_discrimination(item.discrimination)}</td><td>{options}</td></tr>'
        )
    rows.append("</tbody></table>")
    return head + "\n".join(rows)


def format_report_html(stats: ClassStats, *, title: str) -> str:
    """The whole page; byte-identical for the same statistics."""
    if stats.mean is not None and stats.median is not None:
        top = format_points(stats.max_score)
        headline = (
            f"{stats.learners} learners graded. Mean score {format_points(stats.mean)}/{top}, "
            f"median {format_points(stats.median)}/{top}."
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
            "<h2>Score distribution</h2>",
            _histogram(stats),
            "<h2>Exercises</h2>",
            f"<p>{escape(EXERCISES_NOTE)}</p>",
            _exercise_table(stats),
            "<h2>Share of learners who did not pass each check</h2>",
            f"<p>{escape(CHECKS_NOTE)}</p>",
            _failure_rates(stats),
            _table(stats),
            _items(stats),
            f"<script>{_SCRIPT}</script>",
            "</body></html>",
            "",
        ]
    )
