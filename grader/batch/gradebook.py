"""``gradebook.csv``: one row per learner, ready for an LMS import.

Columns: ``learner,score,max_score``, then one column per exercise of the
assignment, in the assignment's order. Rows are sorted by learner name.
Numbers are written without exponent and without float noise (``7.5``,
``12``, ``0.3333``); a learner the grader failed on has empty score cells,
so an import leaves that grade untouched instead of recording a zero.

A learner name a spreadsheet would read as a formula (it starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return: a folder name is the
learner's to choose) is written with a leading apostrophe, so opening the
gradebook never runs it; the results and feedback files keep the exact name.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from grader.results import Report

__all__ = ["GradebookRow", "format_gradebook", "format_points", "inert_cell"]


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
    """``text`` as a spreadsheet shows it and never evaluates it (OWASP's advice for CSV files)."""
    return "'" + text if text[:1] in _FORMULA_STARTS else text


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def format_gradebook(rows: list[GradebookRow], exercise_ids: list[str]) -> str:
    """The CSV text (UTF-8, ``\\n`` line ends, quoting only where needed)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["learner", "score", "max_score", *exercise_ids])
    for row in sorted(rows, key=lambda r: r.learner):
        by_id = {exercise.id: exercise for exercise in row.report.exercises}
        if row.grader_error:
            scores = ["", format_points(row.report.max_score)] + [""] * len(exercise_ids)
        else:
            scores = [format_points(row.report.score), format_points(row.report.max_score)]
            scores += [format_points(by_id[i].score) if i in by_id else "" for i in exercise_ids]
        writer.writerow([inert_cell(row.learner), *scores])
    return out.getvalue()
