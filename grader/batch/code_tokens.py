"""Learner code as a normalised token stream, for the similarity page (``similarity.py``).

What a disguise changes is dropped before anything is compared: comments,
docstrings, blank lines and line breaks inside brackets, trailing commas, the
names a learner chose (every such name becomes ``V``), number and string
literals (``N``, ``S``), and the order of top-level statements (each is a
unit, and units are sorted by their normalised text, so reordering the
functions of a file changes nothing). What a learner cannot rename stays:
keywords, builtins, attribute names (``np.exp``, ``.sum``) and keyword
arguments (``keepdims=``), which carry most of what a solution does.

Names are not numbered by first use: a number depends on every line before
it, so one inserted line would renumber, and hide, all the code after it.

Every token keeps where it came from (file, line, and the unit it belongs
to), so a match can be shown in the learner's own code. Learner text is
untrusted: a file that does not tokenize to the end keeps the tokens read so
far; its top-level statements are found by the linear lexer the grader reads
every learner file with (``submission.bindings.statement_starts``), never by
parsing it, and what follows the point where that lexer stops reading stays
with the statement before; nothing here raises on a learner's file.
"""

from __future__ import annotations

import builtins
import io
import keyword
import tokenize
from dataclasses import dataclass

from grader.submission.bindings import statement_starts

__all__ = ["MAX_TOKENS", "CodeToken", "normalise_files", "normalise_source"]

MAX_TOKENS = 50_000  # read of one learner: far beyond any solution, so a padded file cannot slow the class down

_BUILTINS = frozenset(dir(builtins))
# Line structure is formatting too: ``def f(x): return x`` on one line is the same code as on two.
_LAYOUT = frozenset({tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT})
_NOISE = frozenset({tokenize.COMMENT, tokenize.NL})
_DROPPED = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER, *_LAYOUT})
_CLOSERS = frozenset({")", "]", "}"})
# tokenize splits f-strings into parts on Python 3.12 and later; the whole of one is a single ``S``.
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


@dataclass(frozen=True)
class CodeToken:
    """One normalised token: its text (``V``, ``N``, ``S`` or the token as written) and where it came from.

    ``unit`` numbers the top-level statement it belongs to in the learner's
    whole submission, so that a match never joins two statements that only
    the sorting put side by side.
    """

    text: str
    file: str
    line: int
    unit: int


def normalise_files(files: dict[str, str]) -> list[CodeToken]:
    """Every file's tokens, as units in the canonical order; the file names go in sorted, for determinism.

    At most ``MAX_TOKENS`` tokens are read in all; what lies beyond is left out.
    """
    units: list[tuple[tuple[str, ...], list[tuple[str, str, int]]]] = []
    budget = MAX_TOKENS
    for name in sorted(files):
        for unit in _units(files[name], name, budget):
            units.append((tuple(text for text, _, _ in unit), unit))
            budget -= len(unit)
    units.sort(key=lambda item: (item[0], item[1][0][1], item[1][0][2]))
    return [
        CodeToken(text=text, file=file, line=line, unit=number)
        for number, (_, unit) in enumerate(units)
        for text, file, line in unit
    ]


def normalise_source(source: str, name: str = "<code>") -> list[CodeToken]:
    """One file's tokens (``normalise_files`` of it alone)."""
    return normalise_files({name: source})


def _units(source: str, name: str, budget: int) -> list[list[tuple[str, str, int]]]:
    """The file's tokens grouped by the top-level statement they start in."""
    if budget <= 0:
        return []
    tokens = _tokens(source, budget)
    starts = statement_starts(source)
    units: list[list[tuple[str, str, int]]] = []
    boundary = 0
    for text, line in tokens:
        while boundary < len(starts) and line >= starts[boundary]:
            boundary += 1
            units.append([])
        if not units:
            units.append([])
        units[-1].append((text, name, line))
    return [unit for unit in units if unit]


def _tokens(source: str, budget: int) -> list[tuple[str, int]]:
    """Normalised ``(text, line)`` pairs, read until the end, the budget, or the tokenizer gives up."""
    raw: list[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type not in _NOISE:  # never a neighbour that counts: the helpers below look one token away
                raw.append(token)
            if len(raw) > budget:
                break
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError, MemoryError):
        pass  # a learner's unfinished file: what was read still counts
    out: list[tuple[str, int]] = []
    depth = 0  # bracket depth: a name followed by "=" inside brackets is a keyword argument
    in_fstring = 0
    for index, token in enumerate(raw):
        kind, text = token.type, token.string
        if _FSTRING_START is not None and kind == _FSTRING_START:
            if in_fstring == 0:
                out.append(("S", token.start[0]))
            in_fstring += 1
            continue
        if in_fstring:
            in_fstring -= 1 if kind == _FSTRING_END else 0
            continue
        if kind in _DROPPED or _is_docstring(raw, index) or (kind == tokenize.ERRORTOKEN and not text.strip()):
            continue
        if kind == tokenize.OP:
            depth += 1 if text in ("(", "[", "{") else -1 if text in _CLOSERS else 0
            if text == "," and _next_text(raw, index) in _CLOSERS:
                continue  # a trailing comma is formatting
        out.append((_normal_text(raw, index, depth), token.start[0]))
    return out


def _normal_text(raw: list[tokenize.TokenInfo], index: int, depth: int) -> str:
    token = raw[index]
    if token.type == tokenize.NUMBER:
        return "N"
    if token.type == tokenize.STRING:
        return "S"
    if token.type != tokenize.NAME:
        return token.string
    name = token.string
    if keyword.iskeyword(name) or name in _BUILTINS:
        return name
    if _previous_text(raw, index) in (".", "import", "from"):
        return name  # an attribute or a module: a library's name (np.exp, .sum, numpy), not the learner's
    if depth > 0 and _next_text(raw, index) == "=":
        return name  # a keyword argument names a parameter of the function called
    return "V"


def _is_docstring(raw: list[tokenize.TokenInfo], index: int) -> bool:
    """A string standing alone as a statement: a docstring, or text used as a comment."""
    if raw[index].type != tokenize.STRING:
        return False
    before = _previous_significant(raw, index)
    after = _next_significant(raw, index)
    starts = before is None or before.type in (*_LAYOUT, tokenize.ENCODING)
    return starts and (after is None or after.type in (tokenize.NEWLINE, tokenize.ENDMARKER))


def _previous_significant(raw: list[tokenize.TokenInfo], index: int) -> tokenize.TokenInfo | None:
    return raw[index - 1] if index > 0 else None


def _next_significant(raw: list[tokenize.TokenInfo], index: int) -> tokenize.TokenInfo | None:
    return raw[index + 1] if index + 1 < len(raw) else None


def _previous_text(raw: list[tokenize.TokenInfo], index: int) -> str | None:
    return raw[index - 1].string if index > 0 else None


def _next_text(raw: list[tokenize.TokenInfo], index: int) -> str | None:
    return raw[index + 1].string if index + 1 < len(raw) else None
