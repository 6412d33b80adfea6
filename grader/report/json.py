"""The contract's JSON result: the report model as JSON, keys in a fixed order."""

from __future__ import annotations

from grader.report.runner_safe import inert_lines
from grader.results import Report, report_to_json

__all__ = ["format_json"]


def format_json(report: Report) -> str:
    """Byte-identical for the same submission: no timestamps, no absolute paths, no dict-order surprises."""
    return inert_lines(report_to_json(report) + "\n", "json")
