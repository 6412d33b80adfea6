"""Which entry names a learner's Python source binds, read without running it, in time linear in its length.

The grader reads learner source in its own process to find which file
defines an entry (and the line that binds it, for annotations), so it never
parses it: ``ast.parse`` and ``compile`` can exhaust the stack or memory on
deeply nested source, and regular expressions with open-ended repeats can
backtrack for hours on a crafted line. Python's own ``tokenize`` is exact
but, before Python 3.12, pure Python and too slow on a crafted megabyte. So
the source is lexed here the way Python's tokenizer lexes it, as far as
telling code apart goes: strings of every kind (prefixed, triple-quoted,
f-strings), comments, explicit and implicit line joining and indentation.
What is left is a list of logical lines whose strings are blanked and
comments removed, each with the line it begins on; only
those at module scope (not inside a ``def`` or ``class`` body, but inside
``if``, ``try``, ``with``, ``for`` or ``while`` at the top level) are read
for bindings, with plain string operations. Where the source stops being
Python as far as lexing tells (an unclosed string or bracket, a stray
backslash, an indentation Python refuses), reading stops: what it bound
before still counts, since importing the file shows the learner the error,
and what follows is left unread. What reading cannot settle (``globals()``,
a ``for`` target) is left to a learner process, which imports the file.
"""

from __future__ import annotations

import keyword
import re
import sys
from collections.abc import Iterable, Iterator, Sequence

from msgspec import Struct, field

__all__ = ["NameScan", "binding_line", "scan_names", "statement_starts"]

# Targets of one assignment, names of one import or statements of one line that are read: real code has a
# few, and a line with more is left to the learner process, so the work per line stays a fixed number of steps.
_MAX_ITEMS = 64
# Brackets of one compound statement's header walked to find the colon ending it; past that, its inline body is
# left to the learner process.
_MAX_HEADER_BRACKETS = 10_000
# Characters that turn ``x <op>= y`` into an augmented assignment or a comparison rather than a binding.
_NOT_ASSIGNMENT = ("!", "<", ">", "=", "+", "-", "*", "/", "%", "&", "|", "^", "@", ":")
# Statements whose body stays in the module's scope, and those whose body is a scope of its own.
_COMPOUND = frozenset({"if", "elif", "else", "try", "except", "finally", "with", "for", "while"})
_SOFT_COMPOUND = frozenset({"match", "case"})
_SCOPES = frozenset({"def", "class"})
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
_WORD = re.compile(r"\w+")
_PLAIN_TARGETS = re.compile(r"[\w\s,*().\[\]]*")
_SUBSCRIPT_OR_CALL = re.compile(r"[\w)\]]\s*[\[(]")
_HEADER_EVENT = re.compile(r"[()\[\]{}:]")
_OPENERS, _CLOSERS = "([{", ")]}"


class NameScan(Struct):
    """Of the names looked for: those a module-level statement visibly binds, and those the source mentions.

    ``imported``: of the bound names, those bound by ``from MODULE import name``, with ``MODULE`` as written
    (a file that only imports an entry from a sibling file does not compete with it). ``mentioned`` counts a
    name anywhere, strings and comments included (``globals()["name"] = ...`` is one way to bind it).
    ``readable``: whether the whole source lexes as Python; when not, ``bound`` holds what came before the
    point where it stops.
    """

    bound: set[str] = field(default_factory=set)
    mentioned: set[str] = field(default_factory=set)
    imported: dict[str, str] = field(default_factory=dict)
    readable: bool = True


def scan_names(text: str, names: Iterable[str]) -> NameScan:
    """Which of ``names`` (identifiers) ``text`` binds at module level, and which it mentions as a whole word.

    A binding is a ``def``, ``class``, ``import`` or assignment statement
    (plain, annotated, chained, to a tuple) in the module's scope, also
    inside a top-level ``if``, ``try``, ``with``, ``for`` or ``while``
    block or after its colon. Names in strings, comments, function and
    class bodies, attribute targets and keyword arguments are not bindings.
    """
    names = list(names)
    scan = NameScan()
    if not any(name in text for name in names):
        return scan
    scan.mentioned = set(_words(names).findall(text))
    if not scan.mentioned:
        return scan
    lines = _LogicalLines(_normalized(text))
    scope = _Indentation()
    open_names = set(scan.mentioned)
    words = _words(open_names)
    for code in lines:
        statement = code.lstrip(" \t\f")
        if not statement or statement.isspace():
            continue  # a blank line, or one holding only a comment: no statement, no indentation
        indent = len(code) - len(statement)
        nested = scope.enter(_column(code[:indent]) if indent else 0)
        if nested is None:
            lines.readable = False
            break
        statement = statement.rstrip()
        named = not nested and open_names and words.search(statement)
        if not named and not statement.endswith(":"):
            scope.opens = ""
            continue
        opens, body, binds = _header(statement)
        scope.opens = opens
        if not named:
            continue
        bound = set(binds) if binds is not None else set()
        if binds is None:
            for part in body.split(";", _MAX_ITEMS):
                bound |= _bound_by(part.strip())
        bound &= open_names
        if bound:
            scan.bound |= bound
            source = _imported_from(body.strip()) if binds is None else ""
            if source:
                scan.imported.update(dict.fromkeys(bound, source))
            open_names -= bound
            words = _words(open_names)
    scan.readable = lines.readable and not scope.opens
    return scan


def binding_line(text: str, names: Sequence[str]) -> int | None:
    """The line of the last statement at the module's top level that binds the first of ``names`` bound there.

    A binding is a ``def`` or ``class`` statement or an assignment (plain, annotated with a value,
    chained, to a tuple) written at the top level, not inside any block: where a CI annotation about an
    entry belongs. Its line is Python's (for an assignment after a ``;``, the line its logical line
    begins on). ``None`` when no such statement binds one of ``names``, or none does before the source
    stops being Python as far as lexing tells.
    """
    if not any(name in text for name in names):
        return None
    wanted, words = set(names), _words(names)
    found: dict[str, int] = {}
    for statement, line in _top_level_statements(text):
        if not words.search(statement):
            continue
        _, body, binds = _header(statement)
        if binds is None and body != statement:  # a block's header: its body is not top level
            continue
        if binds is None:  # simple statements: the assignments among them (an import is not where code is)
            binds = set()
            for part in body.split(";", _MAX_ITEMS):
                if _first_word(part.strip())[0] not in ("import", "from"):
                    binds |= _assigned(part.strip())
        for name in binds & wanted:
            found[name] = line
    return next((found[name] for name in names if name in found), None)


def statement_starts(text: str) -> list[int]:
    """The line each statement at the module's top level begins on, its decorators included, in order.

    For source that parses, these are the lines ``ast`` gives (statements after a ``;`` share their
    logical line's). A clause that goes on with the statement before it (``elif``, ``else``,
    ``except``, ``finally``) begins none. Reading stops where the source stops being Python as far as
    lexing tells: the statements before that point are given.
    """
    starts: list[int] = []
    decorated = False  # the statement begun holds decorators so far: its def or class begins nothing new
    for statement, line in _top_level_statements(text):
        if _first_word(statement)[0] in _CLAUSES:
            continue
        if not decorated:
            starts.append(line)
        decorated = statement.startswith("@")
    return starts


_CLAUSES = frozenset({"elif", "else", "except", "finally"})


def _top_level_statements(text: str) -> Iterator[tuple[str, int]]:
    """Each logical line at the module's top level (column 0), stripped, and the line it begins on.

    Blocks are followed as Python follows them, so a line that is inside one is never taken for one at
    the top; it ends where the source stops being Python as far as lexing tells.
    """
    lines = _LogicalLines(_normalized(text))
    scope = _Indentation()
    for code in lines:
        statement = code.lstrip(" \t\f")
        if not statement or statement.isspace():
            continue  # a blank line, or one holding only a comment: no statement, no indentation
        indent = len(code) - len(statement)
        column = _column(code[:indent]) if indent else 0
        if scope.enter(column) is None:
            return
        statement = statement.rstrip()
        scope.opens = _header(statement)[0] if statement.endswith(":") else ""
        if column == 0:
            yield statement, lines.line


def _normalized(text: str) -> str:
    """``text`` with every line ending ``\\n`` and no byte-order mark, as Python reads source."""
    return text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")


class _LogicalLines:
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
                    depth += _depth_change(text, position, at)
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
                    depth += _depth_change(text, cursor, stop)
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


def _depth_change(text: str, start: int, stop: int) -> int:
    """How many more brackets ``text[start:stop]`` (code, no strings) opens than it closes."""
    if _BRACKET.search(text, start, stop) is None:
        return 0
    return sum(text.count(c, start, stop) for c in _OPENERS) - sum(text.count(c, start, stop) for c in _CLOSERS)


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
        elif char in _OPENERS:
            fields[-1] += 1
        elif char in _CLOSERS and fields[-1] > 0:
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


class _Indentation:
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


def _column(indent: str) -> int:
    """The column a line's indentation reaches: tabs to the next multiple of 8, a form feed starts afresh."""
    return len(indent.rsplit("\f", 1)[-1].expandtabs(8))


def _header(statement: str) -> tuple[str, str, set[str] | None]:
    """A logical line as (what it opens below, its simple statements, names its def or class binds).

    A compound statement's header opens a ``"block"`` (its body stays in the current scope) or a
    ``"scope"`` (a ``def`` or ``class`` body) when its body is on the lines below; a body after the colon
    on the same line is given as the statements. ``None`` for the names: not a def or class.
    """
    head, rest = _first_word(statement)
    if head == "async":
        head, rest = _first_word(rest)
    if head in _SCOPES:
        name = re.split(r"[(:\s\[]", rest, maxsplit=1)[0]
        binds = {name} if _is_name(name) else set()
        return ("scope" if statement.endswith(":") else ""), "", binds
    soft = head in _SOFT_COMPOUND and not rest.startswith((":", "=", ".", ","))
    if head in _COMPOUND or soft:
        colon = _header_colon(statement)
        if colon < 0:
            return ("", statement, None) if soft else ("", "", set())
        body = statement[colon + 1 :].strip()
        return ("" if body else "block"), body, None
    return "", statement, None


def _header_colon(statement: str) -> int:
    """Where the colon ending a compound statement's header is (outside brackets, not ``:=``); -1: not found."""
    depth = 0
    for count, event in enumerate(_HEADER_EVENT.finditer(statement)):
        if count >= _MAX_HEADER_BRACKETS:
            break
        char = event.group()
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            depth -= 1
        elif depth == 0 and not statement.startswith("=", event.end()):
            return event.start()
    return -1


def _words(names: Iterable[str]) -> re.Pattern[str]:
    """Any of ``names`` as a whole word: fixed words, so a search is linear in the text."""
    alternatives = sorted(set(names), key=lambda name: (-len(name), name))
    if not alternatives:
        return re.compile(r"(?!)")
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(name) for name in alternatives) + r")(?!\w)")


def _bound_by(code: str) -> set[str]:
    """The names one simple statement (strings blanked, no comment) binds."""
    head, rest = _first_word(code)
    if head == "import":
        return {_imported(part, dotted=True) for part in rest.split(",", _MAX_ITEMS)} - {""}
    if head == "from":
        _, imports, names = rest.partition(" import ")
        return (
            {_imported(part, dotted=False) for part in names.strip(" ()").split(",", _MAX_ITEMS)} - {""}
            if imports
            else set()
        )
    return _assigned(code)


def _imported_from(code: str) -> str:
    """``MODULE`` of a statement ``from MODULE import ...`` (dots kept), or empty."""
    head, rest = _first_word(code)
    if head != "from":
        return ""
    module, imports, _ = rest.partition(" import ")
    return module.strip() if imports else ""


def _imported(part: str, *, dotted: bool) -> str:
    """The name ``import a.b as c`` (``c``) or ``import a.b`` (``a``) binds; empty when there is none."""
    words = part.split()
    if len(words) == 3 and words[1] == "as":
        name = words[2]
    elif len(words) == 1:
        name = words[0].split(".")[0] if dotted else words[0]
    else:
        return ""
    return name if _is_name(name) else ""


def _assigned(code: str) -> set[str]:
    """The names ``a, (b, c) = d.e = value`` binds: the names of every target list before the value.

    Only an ``=`` outside brackets separates targets (``f(a=1)`` binds nothing); a target list with a
    subscript or a call in it is not read (``a[i, b] = 1`` binds nothing), an attribute is skipped.
    """
    bound: set[str] = set()
    start = position = 0
    depth = 0
    for _ in range(4 * _MAX_ITEMS):
        equals = code.find("=", position)  # positions, not copies of the rest: linear in the line
        if equals < 0:
            break
        depth += _depth_change(code, position, equals)
        position = equals + 1
        if code.startswith("=", equals + 1) or code.endswith(_NOT_ASSIGNMENT, 0, equals):
            if depth == 0:  # an augmented assignment or a comparison: no target list before it
                break
            position = equals + 2
            continue
        if depth:  # a keyword argument or a default
            continue
        target = code[start:equals]
        if start == 0 and ":" in target:  # an annotated assignment: ``name: type = value``
            target = target.split(":", 1)[0]
        if _PLAIN_TARGETS.fullmatch(target) and not _SUBSCRIPT_OR_CALL.search(target):
            parts = (part.strip().strip("()[]*").strip() for part in target.split(",", _MAX_ITEMS))
            bound.update(part for part in parts if _is_name(part))
        start = position
    return bound


def _first_word(code: str) -> tuple[str, str]:
    """The word a statement starts with (``if(x):`` and ``def\tf`` too) and what follows it."""
    match = _WORD.match(code)
    if match is None:
        return "", code
    return match.group(), code[match.end() :].lstrip()


def _is_name(text: str) -> bool:
    return text.isidentifier() and not keyword.iskeyword(text)
