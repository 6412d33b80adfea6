"""Report formats: one pure function per format, ``Report`` in, text out.

It owns text, json, junit, markdown, gradescope, exercism, prairielearn, github
(workflow commands) and github-classroom (the Classroom reporter's result),
learner text made inert for Markdown (``markdown_safe``) and for CI runners
(``runner_safe``, the last pass of every format). It imports only the
foundation (``results``): a format never grades, reads a file or prints.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grader.results import Report

__all__ = ["FORMATS", "render"]


def _text(report: Report) -> str:
    from grader.report.text import format_text

    return format_text(report)


def _json(report: Report) -> str:
    from grader.report.json import format_json

    return format_json(report)


def _junit(report: Report) -> str:
    from grader.report.junit import format_junit

    return format_junit(report)


def _gradescope(report: Report, catalog: Any = None) -> str:
    from grader.report.gradescope import format_gradescope, hidden_checks_on_gradescope

    return format_gradescope(report, hidden_as=hidden_checks_on_gradescope(catalog) if catalog is not None else None)


def _markdown(report: Report) -> str:
    from grader.report.markdown import format_markdown

    return format_markdown(report)


def _exercism(report: Report) -> str:
    from grader.report.exercism import format_exercism

    return format_exercism(report)


def _prairielearn(report: Report) -> str:
    from grader.report.prairielearn import format_prairielearn

    return format_prairielearn(report)


def _github(report: Report) -> str:
    from grader.report.github import format_github

    return format_github(report)


def _github_classroom(report: Report) -> str:
    from grader.report.github import format_classroom

    return format_classroom(report)


FORMATS: dict[str, Callable[[Report], str]] = {"text": _text, "json": _json}
FORMATS.update(junit=_junit, gradescope=_gradescope, markdown=_markdown, exercism=_exercism, prairielearn=_prairielearn)
FORMATS.update({"github": _github, "github-classroom": _github_classroom})


def render(report: Report, format_name: str, *, catalog: Any = None) -> str:
    """The report in the named format.

    ``catalog`` (the specs graded against) gives Gradescope its one
    platform setting, each exercise's ``gradescope_hidden``; the other
    formats need the report alone.
    """
    if format_name == "gradescope" and catalog is not None:
        return _gradescope(report, catalog)
    return FORMATS[format_name](report)
