"""Python source as logical lines, lexed as Python's tokenizer lexes it, in time linear in its length.

The grader reads learner source in its own process (which file defines an
entry, the line that binds it, where the top-level statements begin), so it
never parses it: ``ast.parse`` and ``compile`` can exhaust the stack or
memory on deeply nested source, and regular expressions with open-ended
repeats can backtrack for hours on a crafted line. Python's own ``tokenize``
is exact but, before Python 3.12, pure Python and too slow on a crafted
megabyte. So the source is lexed here the way Python's tokenizer lexes it, as
far as telling code apart goes: strings of every kind (prefixed,
triple-quoted, f-strings), comments, explicit and implicit line joining and
indentation. What is left is the logical lines, their strings blanked and
comments removed, each with the line it begins on (``LogicalLines``), and
the blocks open at each (``Indentation``); ``submission.bindings`` reads
them. Where the source stops being Python as far as lexing tells (an
unclosed string or bracket, a stray backslash), the lines stop there.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

__all__ = ["CLOSERS", "OPENERS", "Indentation", "LogicalLines", "depth_change", "indent_column", "normalized"]

_STRING_PREFIXES = frozenset({"", "r", "u", "b", "br", "rb", "f", "fr", "rf"})
_MAX_FSTRING_LEVELS = 150  # Python's own limit on f-strings nested in replacement fields
# From Python 3.12 (PEP 701) an f-string's replacement fields are code: they may hold strings in the same quotes.
_NESTED_FSTRINGS = sys.version_info >= (3, 12)

# A comment, a string with nothing to escape (whole), or what starts anything else that is not plain code.
_PLAIN = r"[^{q}\\\n{{}}]" if sys.version_info >= (3, 12) else r"[^{q}\\\n]"  # braces: maybe an f-string's fields
_CODE_EVENT = re.compile(
    r"#[^\n]*(?:\n[ \t\f]*#[^\n]*)*"  # a comment, and any lines of comments alone after it
    + "".join(rf"|(?<!\w)[rRbBuUfF]{{0,2}}{q}(?:{_PLAIN.format(q=q)}+{q}|{q}(?!{q}))" for q in "'\"")
    + r"""|['"\\]"""
)
_BRACKET = re.compile(r"[()\[\]{}]")
OPENERS, CLOSERS = "([{", ")]}"


def normalized(text: str) -> str:
    """``text`` with every line ending ``\\n`` and no byte-order mark, as Python reads source."""
    return text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")


class LogicalLines:
    """The logical lines of Python source, each with its strings as ``""`` and its comments removed.

    Iterating stops early where the source stops lexing as Python, and ``readable`` is then False; a
    logical line cut short by the end (an unclosed bracket or string) is not given. Lines are numbered
    as Python numbers them: ``\\n`` ends one, and the text given has had every line end made so.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.readable = True
        self.begins = 0  # where in ``text`` the logical line given last begins
        self._counted = 0  # the newlines before ``_counted_to``, each counted once: lines are asked in order
        self._counted_to = 0

    @property
    def line(self) -> int:
        """The physical line (from 1) the logical line given last begins on: where its first token is."""
        self._counted += self.text.count("\n", self._counted_to, self.begins)
        self._counted_to = self.begins
        return self._counted + 1

    def __iter__(self) -> Iterator[str]:
        text, end = self.text, len(self.text)
        pieces: list[str] = []  # the logical line so far
        depth = 0
        position = 0  # where the code not yet in ``pieces`` begins
        begin = 0  # where the logical line in ``pieces`` begins
        while True:
            event = _CODE_EVENT.search(text, position)
            at = end if event is None else event.start()
            if text.find("\n", position, at) < 0:
                if at > position:  # code between two strings, often none: a line of many strings stays short
                    depth += depth_change(text, position, at)
                    pieces.append(text[position:at])
            elif depth == 0 and _BRACKET.search(text, position, at) is None:  # many plain lines: split at once
                lines = text[position:at].split("\n")
                pieces.append(lines[0])
                self.begins = begin
                yield "".join(pieces)
                begin = position + len(lines[0]) + 1
                for line in lines[1:-1]:
                    self.begins = begin
                    yield line
                    begin += len(line) + 1
                pieces = [lines[-1]]
            else:
                cursor = position
                while True:
                    newline = text.find("\n", cursor, at)
                    stop = at if newline < 0 else newline
                    depth += depth_change(text, cursor, stop)
                    if depth < 0:
                        break
                    pieces.append(text[cursor:stop])
                    if newline < 0:
                        break
                    if depth:  # inside brackets, a newline joins lines
                        pieces.append(" ")
                    else:
                        self.begins = begin
                        yield "".join(pieces)
                        pieces = []
                        begin = newline + 1
                    cursor = newline + 1
            if depth < 0:
                self.readable = False
                return
            if event is None:
                if depth:  # a bracket still open at the end
                    self.readable = False
                    return
                self.begins = begin
                yield "".join(pieces)
                return
            found = event.group()
            if found[0] == "#":
                position = event.end()
                if "\n" in found:  # the lines of comments alone are blank lines: the first newline ends the line
                    if depth:
                        pieces.append(" ")
                    else:
                        self.begins = begin
                        yield "".join(pieces)
                        pieces = []
                        begin = position  # on the last of those lines: what follows there is a (blank) line
            elif found == "\\":
                if not text.startswith("\n", at + 1):  # outside a string, a backslash joins lines or is an error
                    self.readable = False
                    return
                if len(pieces) <= 1 and not "".join(pieces).strip():  # nothing before it: the next line sets
                    pieces = [pieces[0]] if pieces and pieces[0] else []  # the indent
                    begin = at + 2  # and holds the first token
                else:
                    pieces.append(" ")
                position = at + 2
            else:
                closed = event.end() if len(found) > 1 else _string_end(text, at)
                if closed < 0:
                    self.readable = False
                    return
                if not pieces or pieces[-1] != '""':  # strings side by side are one string (as Python joins them)
                    pieces.append('""')
                position = closed


def depth_change(text: str, start: int, stop: int) -> int:
    """How many more brackets ``text[start:stop]`` (code, no strings) opens than it closes."""
    if _BRACKET.search(text, start, stop) is None:
        return 0
    return sum(text.count(c, start, stop) for c in OPENERS) - sum(text.count(c, start, stop) for c in CLOSERS)


def _string_end(text: str, at: int, level: int = 0) -> int:
    """Where the string literal whose quote is at ``text[at]`` ends (just past its closing quote); -1: never.

    ``level``: how many f-strings it is nested in (Python refuses more than ``_MAX_FSTRING_LEVELS``).
    """
    first = at
    while first > 0 and at - first < 3 and (text[first - 1].isalnum() or text[first - 1] == "_"):
        first -= 1
    prefix = text[first:at].lower()
    quote = text[at] * 3 if text.startswith(text[at] * 3, at) else text[at]
    if _NESTED_FSTRINGS and "f" in prefix and prefix in _STRING_PREFIXES:
        return _fstring_end(text, at + len(quote), quote, level) if level < _MAX_FSTRING_LEVELS else -1
    return _literal_end(text, at + len(quote), quote)


def _literal_end(text: str, position: int, quote: str) -> int:
    """Past the ``quote`` closing a string whose body starts at ``position``; -1 when it is never closed."""
    ends = _QUOTE_EVENTS[quote]
    while True:
        event = ends.search(text, position)
        if event is None:
            return -1
        char, at = event.group(), event.start()
        if char == "\\":
            position = at + 2
        elif char == "\n":  # a single-quoted string ends at its line
            return -1
        elif text.startswith(quote, at):
            return at + len(quote)
        else:
            position = at + 1


def _fstring_end(text: str, position: int, quote: str, level: int) -> int:
    """``_literal_end`` for an f-string whose replacement fields are code (Python 3.12 and later).

    Each open replacement field is one entry of ``fields``: the bracket depth of its expression, or -1 while
    in its format spec. Strings inside an expression are lexed as strings again.
    """
    fields: list[int] = []
    literal = re.compile(r"[\\{}]|" + re.escape(quote) + ("" if len(quote) == 3 else r"|\n"))
    while True:
        if not fields or fields[-1] < 0:  # the literal text or a format spec
            event = literal.search(text, position)
            if event is None:
                return -1
            char, at = event.group(), event.start()
            if char == "\\":
                position = at + 2
            elif char == "\n":
                return -1
            elif char == "{":
                if text.startswith("{", at + 1) and not fields:
                    position = at + 2
                else:
                    fields.append(0)
                    position = at + 1
            elif char == "}":
                if fields:  # the end of a field nested in a format spec
                    fields.pop()
                    position = at + 1
                else:
                    position = at + (2 if text.startswith("}", at + 1) else 1)
            else:  # the closing quote, also inside a format spec, where Python then finds a field unclosed
                return -1 if fields else at + len(quote)
            continue
        event = _FIELD_EVENT.search(text, position)
        if event is None:
            return -1
        char, at = event.group(), event.start()
        position = at + 1
        if char in "'\"":
            closed = _string_end(text, at, level + 1)
            if closed < 0:
                return -1
            position = closed
        elif char == "#":
            newline = text.find("\n", at)
            position = len(text) if newline < 0 else newline
        elif char in OPENERS:
            fields[-1] += 1
        elif char in CLOSERS and fields[-1] > 0:
            fields[-1] -= 1
        elif char == "}":
            fields.pop()
        elif char == ":" and fields[-1] == 0:  # ``{x:=3}`` too: a walrus in a field needs parentheses
            fields[-1] = -1


# What can end a string's body: a backslash escapes the next character (in raw strings too); a single-quoted
# string ends at its line.
_QUOTE_EVENTS = {
    quote: re.compile("[\\\\" + ("" if len(quote) == 3 else "\\n") + quote[0] + "]")
    for quote in ("'", '"', "'''", '"""')
}
_FIELD_EVENT = re.compile(r"[#'\"()\[\]{}:]")  # a field's expression may span lines, even in a one-line f-string


class Indentation:
    """The blocks open at each line, as Python's tokenizer and parser track them."""

    def __init__(self) -> None:
        self._levels: list[tuple[int, bool]] = [(0, False)]  # (column, whether the block is a def or class body)
        self.opens: str = ""  # "scope" or "block": the last line was a header whose body is on the lines below

    def enter(self, column: int) -> bool | None:
        """Whether a line at ``column`` is inside a ``def`` or ``class`` body; ``None``: Python refuses it."""
        top, nested = self._levels[-1]
        if column == top and not self.opens:
            return nested
        if self.opens:
            if column <= top:
                return None  # expected an indented block
            self._levels.append((column, nested or self.opens == "scope"))
            return self._levels[-1][1]
        if column > top:
            return None  # unexpected indent
        while column < self._levels[-1][0]:
            self._levels.pop()
        if column != self._levels[-1][0]:
            return None  # an unindent that matches no outer level
        return self._levels[-1][1]


def indent_column(indent: str) -> int:
    """The column a line's indentation reaches: tabs to the next multiple of 8, a form feed starts afresh."""
    return len(indent.rsplit("\f", 1)[-1].expandtabs(8))
