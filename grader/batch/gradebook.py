"""``gradebook.csv``: one row per learner, ready for an LMS import.

Columns: ``learner,score,max_score``, then one column per exercise of the
assignment with its score, in the assignment's order, then one ``ID:status``
column per exercise in the same order (``passed``, ``failed``, ``missing``,
``syntax-error``, ``import-error``, ``timeout`` or ``error``; see
``grader.batch.status``). The status columns come after every score column
so that each older column keeps its place for imports and scripts that read
columns by position. Rows are sorted by learner name. Numbers are written
without exponent and without float noise (``7.5``, ``12``, ``0.3333``); a
learner the grader failed on has empty score and status cells, so an import
leaves that grade untouched instead of recording a zero.

A learner name is the learner's to choose (a folder or file name), so every
text cell goes through ``inert_cell`` before it is written. Each control or
line-separator character (C0 and C1 controls, tab, CR, LF, ``\\x0b \\x0c``,
``\\x1c-\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029``) and each invisible
format character but zero-width joiners and spaces becomes a visible escape
(``\\x0d``, ``\\u2028``): a cell is one line, and a row is one learner for
``csv.reader`` and for spreadsheets alike. Then a cell whose first visible
character starts a formula (``=``, ``+``, ``-``, ``@``, their full-width and
small forms, ``\\u2212``), even after leading spaces, gets a leading
apostrophe, so opening the gradebook never evaluates it. Score cells are
numbers the grader writes and stay numbers. The results files keep the exact
name.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from dataclasses import dataclass

from grader.batch.status import exercise_status
from grader.results import Report

__all__ = ["GradebookRow", "format_gradebook", "format_points", "inert_cell", "status_column"]


@dataclass(frozen=True)
class GradebookRow:
    learner: str
    report: Report
    grader_error: bool = False


def format_points(value: float) -> str:
    """``12``, ``7.5``, ``0.3333``: at most four decimals, no exponent, no trailing zeros."""
    text = f"{round(value, 4):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def inert_cell(text: str) -> str:
    """``text`` as one line that a spreadsheet shows and never evaluates (OWASP's advice for CSV files)."""
    text = "".join(_visible(ch) for ch in text)
    first = text.lstrip(_BLANK + _JOINERS)[:1]
    if first and (first == "\u2212" or unicodedata.normalize("NFKC", first)[:1] in _FORMULA_STARTS):
        return "'" + text
    return text


_FORMULA_STARTS = ("=", "+", "-", "@")
# Spaces a spreadsheet may trim before it looks for a formula; kept, as they are ordinary text in a name.
_BLANK = " \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
# Zero-width characters of ordinary text (emoji sequences, scripts that need joiners); kept as well.
_JOINERS = "\u200b\u200c\u200d\u2060"


def _visible(ch: str) -> str:
    """``ch`` itself when it is printable text, else its escape (``\\x0d``, ``\\u2028``)."""
    if ch.isprintable() or ch in _BLANK or ch in _JOINERS:
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def status_column(exercise_id: str) -> str:
    """The header of an exercise's status column: ``stable-softmax:status``."""
    return f"{exercise_id}:status"


def format_gradebook(rows: list[GradebookRow], exercise_ids: list[str]) -> str:
    """The CSV text (UTF-8, ``\\n`` line ends, quoting only where needed)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header = ("learner", "score", "max_score", *exercise_ids, *(status_column(i) for i in exercise_ids))
    writer.writerow([inert_cell(text) for text in header])
    for row in sorted(rows, key=lambda r: r.learner):
        by_id = {exercise.id: exercise for exercise in row.report.exercises}
        if row.grader_error:
            cells = ["", format_points(row.report.max_score)] + [""] * (2 * len(exercise_ids))
        else:
            cells = [format_points(row.report.score), format_points(row.report.max_score)]
            cells += [format_points(by_id[i].score) if i in by_id else "" for i in exercise_ids]
            cells += [exercise_status(by_id[i]) if i in by_id else "" for i in exercise_ids]
        writer.writerow([inert_cell(row.learner), *cells])
    return out.getvalue()
