"""Pieces the report formats share: safe text and the rows a format lists.

Everything a report holds may carry text the learner controls (exception
messages, printed output, a file name), so every format passes it through
``printable`` first: control characters become visible ``\\x1b`` escapes,
line ends become ``\\n``. That keeps terminals, XML 1.0 parsers and Markdown
renderers out of the learner's hands, and the output byte-identical.
"""

from __future__ import annotations

from grader.results import CheckResult, CheckStatus, ExerciseResult, Report

__all__ = ["ATTEMPTED", "check_rows", "points", "printable", "submitted_file"]

ATTEMPTED = "attempted"
# What a submission that is one file can end with (grader.submission.files reads these).
_FILE_SUFFIXES = (".py", ".ipynb", ".yaml", ".yml", ".json")

# Bidirectional overrides and isolates can make text read differently from what it is.
_BIDI = {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069}
# Spaces and joiners Python calls unprintable that are ordinary text (no-break spaces, emoji joiners).
_HARMLESS = {0x00A0, 0x2007, 0x202F, 0x3000, 0x200B, 0x200C, 0x200D, 0x2060, *range(0x2000, 0x200B)}


def printable(text: str) -> str:
    """``text`` with ``\\r\\n``/``\\r`` as ``\\n`` and every other control character escaped visibly.

    Kept: newline, tab, every printable character and ordinary spaces and
    joiners. Escaped as ``\\x1b``, ``\\u202e``...: C0 and C1 controls (ANSI
    escape sequences start with one), lone surrogates, non-characters,
    unassigned code points and bidirectional overrides.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\t" or code in _HARMLESS or (ch.isprintable() and code not in _BIDI):
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


def points(value: float) -> str:
    """A score as people write it: ``2``, ``2.5``, ``0.333333``."""
    return f"{value:g}"


def check_rows(exercise: ExerciseResult) -> list[CheckResult]:
    """The checks a format lists for an exercise.

    An exercise with no check results (an implementation exercise that the
    submission does not attempt) still gets one row, ``attempted``, carrying
    its points and reason, so CI and gradebooks see the lost points.
    """
    if exercise.checks:
        return list(exercise.checks)
    as_check: dict[str, CheckStatus] = {"passed": "passed", "missing": "failed", "failed": "failed", "error": "error"}
    status = as_check[exercise.status]
    return [
        CheckResult(
            id=ATTEMPTED,
            status=status,
            score=exercise.score,
            max_score=exercise.max_score,
            visibility="public",
            reason=exercise.reason,
        )
    ]


def submitted_file(report: Report) -> str | None:
    """The file the report graded, when the submission is one file; ``None`` for a folder.

    A folder's report does not say which of its files held each exercise, so
    a format that links results to a file links none then.
    """
    return report.submission if report.submission.endswith(_FILE_SUFFIXES) else None
