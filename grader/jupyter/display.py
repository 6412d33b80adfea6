"""The result of ``grader.check`` as a notebook shows it: HTML in Jupyter, the text report anywhere else.

A thin wrapper: the ``Report`` stays data, and both renderings are
``grader.report``'s formatters, so the two show the same content.
"""

from __future__ import annotations

from grader.report.html import format_html
from grader.report.text import format_text
from grader.results import Report

__all__ = ["ReportView"]


class ReportView:
    """A ``Report`` that IPython displays: ``_repr_html_`` for Jupyter, ``__repr__``/``__str__`` elsewhere."""

    def __init__(self, report: Report) -> None:
        self.report = report

    def __str__(self) -> str:
        return format_text(self.report)

    def __repr__(self) -> str:  # what a terminal IPython and a plain ``>>>`` prompt print
        return format_text(self.report).rstrip("\n")

    def _repr_html_(self) -> str:
        """The report as Jupyter shows it: the text report's lines, escaped, with each check's status marked."""
        return format_html(self.report)
