"""Lines a CI runner reads: no line the grader writes starts a runner's command with learner text.

CI runners read a job's stdout and stderr line by line and obey some lines:

- GitHub Actions: a line that, after leading white space, starts with ``::``
  (``::add-mask::``, ``::error::``, ``::stop-commands::``, ``::set-output``),
  and the older ``##[command]`` form anywhere in a line.
- Azure Pipelines: ``##vso[command]`` anywhere in a line.
- GitLab: ``section_start:`` and ``section_end:`` markers, which fold the log.
- Terminals and log viewers: ANSI and OSC escape sequences, which start
  with a control character (ESC, or the C1 CSI and OSC).

GitHub's runner ends a line at ``\\n``, ``\\r`` or ``\\r\\n``. Here every
line break Python knows counts (``str.splitlines``: also ``\\x0b \\x0c
\\x1c-\\x1e \\x85 \\u2028 \\u2029``), and the white space before ``::``
is every character ``str.isspace`` accepts plus the zero-width ones, a
superset of what the runner trims.

The grader's own sentences never hold these sequences, so each one found
in an output came from text the learner controls (an exception message,
printed output, a file name), however it got there: a wrapped line, a
pretty-printed JSON string, an XML element's text. :func:`inert_lines`
is the one pass every writer applies to its whole output, so a format or a
field added later cannot forget it. It changes only these sequences, and in
a way that keeps the document's meaning:

- ``text`` (also Markdown, where ``\\x`` is no escape): the character is
  written as a visible escape, as ``printable`` writes control characters:
  ``\\x3a:error::``, ``#\\x23[``, ``section_start\\x3a``.
- ``json``: the JSON escape (``\\u003a``), so the decoded value is exactly
  the learner's text.
- ``xml``: a character reference (``&#58;``), likewise.

Control characters other than ``\\n`` and ``\\t`` (C0, DEL and C1: every
escape sequence starts with one) and the line breaks other than ``\\n`` are
escaped the same way, so the only line break left is ``\\n`` and each line
is checked once. The formats pass learner text through ``printable``
already; this pass keeps that true of every character they write.
"""

from __future__ import annotations

import re
from typing import Literal

from grader.report._common import printable

__all__ = ["Syntax", "inert_line", "inert_lines"]

Syntax = Literal["text", "json", "xml"]

# Control characters and every line break str.splitlines knows, except \n and \t.
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029"
_SPACE = r"[^\S\n]|[\u200b-\u200d\u2060\ufeff]"
# GitHub's ``::command::`` at the start of a line, after any white space: the first colon is escaped.
_LINE_COMMAND = re.compile(rf"^((?:{_SPACE})*):(?=:)", re.MULTILINE)
# ``##[command]`` (GitHub's older form) and ``##vso[command]`` (Azure) anywhere: the second # is escaped.
_ANYWHERE_COMMAND = re.compile(r"(?<=#)#(?=\[|vso\[)", re.IGNORECASE)
# GitLab's section markers (``section_start:``, ``section_end:``): the colon is escaped. Found by their tail,
# which starts with a character that has no case and so is searched for quickly, then their head is looked at:
# the whole marker as one case-blind pattern is tried at every position, and is the slowest pass of all.
_SECTION_TAIL = re.compile(r"_(?:start|end):", re.IGNORECASE)
_SECTION_HEAD = re.compile(r"section", re.IGNORECASE)
_CONTROL = re.compile(f"[{_CONTROLS}]")


def _escape(char: str, syntax: Syntax) -> str:
    code = ord(char)
    if syntax == "json":
        return f"\\u{code:04x}"
    if syntax == "xml" and char in ":#\r\x85\u2028\u2029":  # XML 1.0 forbids the other breaks even as references
        return f"&#{code};"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert_lines(text: str, syntax: Syntax = "text") -> str:
    """``text`` with no line a CI runner would obey: each runner command sequence has one character escaped.

    ``syntax`` is the output's language (``text``, ``json`` or ``xml``),
    which decides how the character is escaped (see the module docstring).
    Text without any of the sequences comes back unchanged.
    """
    colon, hash_ = _escape(":", syntax), _escape("#", syntax)
    text = _CONTROL.sub(lambda m: _escape(m.group(), syntax), text)
    if "##" in text:  # (both forms need two: most outputs hold none, and the test is cheaper than the pattern)
        text = _ANYWHERE_COMMAND.sub(lambda _: hash_, text)
    text = _escape_sections(text, colon)
    if "::" in text:
        text = _LINE_COMMAND.sub(lambda m: m.group(1) + colon, text)
    return text


def _escape_sections(text: str, colon: str) -> str:
    """``text`` with the colon of every GitLab section marker (any case) escaped as ``colon``."""

    def escaped(tail: re.Match[str]) -> str:
        start = tail.start()
        if start >= 7 and _SECTION_HEAD.fullmatch(text, start - 7, start):  # each letter matches one character
            return tail.group()[:-1] + colon
        return tail.group()

    return _SECTION_TAIL.sub(escaped, text)


def inert_line(text: str) -> str:
    """``text`` as one inert line of plain text: control characters and line breaks escaped visibly.

    For messages that are one line by contract (``grader: error: ...`` on
    stderr) and may quote a learner's file name or text.
    """
    return inert_lines(printable(text).replace("\n", "\\x0a"))
