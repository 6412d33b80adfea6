"""The text report as HTML, for a notebook's output: the same lines, every character of learner text escaped."""

from __future__ import annotations

import html
import re

from grader.report.text import format_text
from grader.results import Report

__all__ = ["format_html"]

# Check lines of the text report start with two spaces and the status label; wrapped lines are indented deeper.
_CHECK_LINE = re.compile(r"^  (PASS|FAIL|ERROR|TIMEOUT|SKIP) ")
_COLOURS = {"PASS": "#1a7f37", "FAIL": "#cf222e", "ERROR": "#cf222e", "TIMEOUT": "#bc4c00", "SKIP": "#6e7781"}


def format_html(report: Report) -> str:
    """:func:`format_text`'s report in a ``<pre>`` block, each check's label coloured by its status.

    The text is escaped whole before any markup is added, so learner text
    (names, printed output, messages) can never become markup.
    """
    lines = []
    for line in html.escape(format_text(report), quote=True).split("\n"):
        label = _CHECK_LINE.match(line)
        if label:
            word = label.group(1)
            line = f'  <b style="color: {_COLOURS[word]}">{word}</b>' + line[label.end() - 1 :]
        lines.append(line)
    body = "\n".join(lines).rstrip("\n")
    return f'<pre class="grader-report" style="white-space: pre-wrap">{body}</pre>\n'
