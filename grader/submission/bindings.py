"""Which entry names a learner's Python source binds, read without running it, in time linear in its length.

The source's logical lines come from ``submission.lexer``, which lexes it in
linear time and never parses it (see there); only those at module scope (not
inside a ``def`` or ``class`` body, but inside ``if``, ``try``, ``with``,
``for`` or ``while`` at the top level) are read for bindings, with plain
string operations. Where the source stops being Python as far as lexing tells
(an unclosed string or bracket, a stray backslash, an indentation Python
refuses), reading stops: what it bound before still counts, since importing
the file shows the learner the error, and what follows is left unread. What
reading cannot settle (``globals()``, a ``for`` target) is left to a learner
process, which imports the file.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Iterator, Sequence

from msgspec import Struct, field

from grader.submission.lexer import (
    CLOSERS,
    OPENERS,
    Indentation,
    LogicalLines,
    depth_change,
    indent_column,
    normalized,
)

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
_WORD = re.compile(r"\w+")
_PLAIN_TARGETS = re.compile(r"[\w\s,*().\[\]]*")
_SUBSCRIPT_OR_CALL = re.compile(r"[\w)\]]\s*[\[(]")
_HEADER_EVENT = re.compile(r"[()\[\]{}:]")


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
    lines = LogicalLines(normalized(text))
    open_names = set(scan.mentioned)
    words = _words(open_names)
    for statement, _, nested in _statements(lines):
        if nested or not open_names or not words.search(statement):
            continue
        _, body, binds = _header(statement)
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
    scan.readable = lines.readable
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
        if binds is None:  # simple statements: their assignments (an import's code is in the module it names)
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
    """Each logical line at the module's top level (column 0), stripped, and the line it begins on."""
    lines = LogicalLines(normalized(text))
    for statement, column, _ in _statements(lines):
        if column == 0:
            yield statement, lines.line


def _statements(lines: LogicalLines) -> Iterator[tuple[str, int, bool]]:
    """Each logical line holding a statement, stripped; its column; whether it is in a ``def`` or ``class`` body.

    Blocks are followed as Python follows them, so a line inside one is never taken for one outside it.
    Where an indentation is one Python refuses, the lines stop; then, or when the source ends on a
    header whose body never came, ``lines.readable`` is False.
    """
    scope = Indentation()
    for code in lines:
        statement = code.lstrip(" \t\f")
        if not statement or statement.isspace():
            continue  # a blank line, or one holding only a comment: no statement, no indentation
        indent = len(code) - len(statement)
        column = indent_column(code[:indent]) if indent else 0
        nested = scope.enter(column)
        if nested is None:
            lines.readable = False
            return
        statement = statement.rstrip()
        scope.opens = _header(statement)[0] if statement.endswith(":") else ""
        yield statement, column, nested
    if scope.opens:
        lines.readable = False


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
        if char in OPENERS:
            depth += 1
        elif char in CLOSERS:
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
        depth += depth_change(code, position, equals)
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
