"""Which entry names a learner's Python source binds, read without running it, in time linear in its length.

The grader reads learner source in its own process to find which file
defines an entry, so it never parses it: ``ast.parse`` and ``compile`` can
exhaust the stack or memory on deeply nested source, and regular
expressions with open-ended repeats can backtrack for hours on a crafted
line. One regular expression that matches only the given names (fixed
words) finds their occurrences; each line holding one is then read once
with plain string operations. What reading cannot settle is left to a
learner process (the grader imports the file there to see what it defines).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["MAX_LINES_READ", "NameScan", "scan_names"]

# Lines holding a name that one scan reads; a file needing more is imported in a learner process instead.
MAX_LINES_READ = 2000

# Targets of one assignment, or names of one import, that are read: real code has a few, and a line
# with more is left to the learner process, so the work per line stays a fixed number of steps.
_MAX_ITEMS = 64
# Characters that turn ``x <op>= y`` into an augmented assignment or a comparison rather than a binding.
_NOT_ASSIGNMENT = ("!", "<", ">", "=", "+", "-", "*", "/", "%", "&", "|", "^", "@", ":")


@dataclass
class NameScan:
    """Of the names looked for: those a module-level statement visibly binds, and those the source mentions.

    ``imported``: of the bound names, those bound by ``from MODULE import name``, with ``MODULE`` as written
    (a file that only imports an entry from a sibling file does not compete with it).
    """

    bound: set[str] = field(default_factory=set)
    mentioned: set[str] = field(default_factory=set)
    imported: dict[str, str] = field(default_factory=dict)


def scan_names(text: str, names: Iterable[str]) -> NameScan:
    """Which of ``names`` (identifiers) ``text`` binds at module level, and which it mentions as a whole word.

    A binding is a ``def``, ``class``, ``import`` or assignment statement
    that starts a line; anything subtler (a binding inside ``if``, a
    ``for`` target, ``globals()``) is only mentioned. Each line holding a
    name is read at most once, and at most ``MAX_LINES_READ`` of them: what
    is still open after that is left to the learner process.
    """
    scan = NameScan()
    if not any(name in text for name in names):
        return scan
    scan.mentioned = set(_words(names).findall(text))
    open_names = set(scan.mentioned)
    words = _words(open_names)
    position = 0
    for _ in range(MAX_LINES_READ):
        found = words.search(text, position) if open_names else None
        if found is None:
            break
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.end())
        end = len(text) if end < 0 else end
        line = text[start:end].lstrip("\ufeff") if start == 0 else text[start:end]
        bound = _bound_by(line) & open_names
        if bound:
            scan.bound |= bound
            source = _imported_from(line)
            if source:
                scan.imported.update(dict.fromkeys(bound, source))
            open_names -= bound
            words = _words(open_names)
        position = end
    return scan


def _words(names: Iterable[str]) -> re.Pattern[str]:
    """Any of ``names`` as a whole word: fixed words, so a search is linear in the text."""
    alternatives = sorted(set(names), key=lambda name: (-len(name), name))
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(name) for name in alternatives) + r")(?!\w)")


def _bound_by(line: str) -> set[str]:
    """The names a module-level statement written on ``line`` binds, as far as one line shows."""
    if not line or line[0].isspace():
        return set()
    code = line.split("#", 1)[0].rstrip()
    head, rest = _first_word(code)
    if head == "async":
        head, rest = _first_word(rest)
    if head in ("def", "class"):
        return {re.split(r"[(:\s]", rest, maxsplit=1)[0]}
    if head == "import":
        return {_imported(part, dotted=True) for part in rest.split(",", _MAX_ITEMS)} - {""}
    if head == "from":
        _, imports, names = rest.partition(" import ")
        return (
            {_imported(part, dotted=False) for part in names.strip(" ()\\").split(",", _MAX_ITEMS)} - {""}
            if imports
            else set()
        )
    return _assigned(code)


def _imported_from(line: str) -> str:
    """``MODULE`` of a line ``from MODULE import ...`` (dots kept), or empty."""
    head, rest = _first_word(line.split("#", 1)[0])
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
    """The names ``a, (b, c) = d = value`` binds: every ``=``-separated target list before the value."""
    bound: set[str] = set()
    start = 0
    for _ in range(_MAX_ITEMS):
        equals = code.find("=", start)  # positions, not copies of the rest: linear in the line
        if equals < 0:
            break
        target = code[start:equals]
        if code.startswith("=", equals + 1) or target.endswith(_NOT_ASSIGNMENT):
            break
        if start == 0 and ":" in target:  # an annotated assignment: ``name: type = value``
            target = target.split(":", 1)[0]
        names = [part.strip().strip("()[]*").strip() for part in target.split(",", _MAX_ITEMS)]
        names = [name for name in names if name]
        if not names or not all(_is_name(name) for name in names):
            break
        bound.update(names)
        start = equals + 1
    return bound


def _first_word(code: str) -> tuple[str, str]:
    words = code.split(None, 1)
    return (words[0] if words else ""), (words[1] if len(words) > 1 else "")


def _is_name(text: str) -> bool:
    return text.isidentifier() and not keyword.iskeyword(text)
