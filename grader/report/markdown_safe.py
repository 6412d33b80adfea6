"""Text the learner can influence, made safe to put into Markdown.

Reasons quote the learner's exception messages, file and folder names and
printed output; ``summary.md``, ``feedback/*.md`` and ``--format markdown``
are opened in an instructor's browser, posted as CI step summaries or pasted
into messages. So learner text must come out as exactly its characters: no
link, image, autolink, HTML, heading, list, quote, table cell, emphasis or
code span may start or end inside it. The rules, for CommonMark with the GFM
extensions (tables, strikethrough, autolinks) as GitHub, GitLab and
markdown-it render them:

- Everything goes through ``printable`` (control characters, ANSI escapes and
  bidirectional overrides become visible ``\\x1b``-style escapes; the line
  separators ``\\x0b \\x0c \\x1c-\\x1e \\x85 \\u2028 \\u2029`` included), then
  every run of white space, line ends included, becomes one space: text is
  always one line, so it can never start a block of its own.
- ``markdown_text`` (prose): the characters that open inline markup are
  backslash-escaped (``\\ ` * _ [ ] { } | ~ $ #``), ``& < >`` become entities
  (no raw HTML, no ``<https://...>`` autolink, no entity the learner typed is
  decoded), and a leading ``- + =`` or ``1.``/``1)`` is escaped, so the text
  is inert at the start of a list item too. A dot between a letter or digit
  and a letter is escaped as well (``evil\\.com``, ``softmax\\.py``), so
  linkify's fuzzy links (markdown-it's default once linkify is on) find no
  domain name.
- Prose that a renderer could turn into a link although every character of
  it is escaped goes into a code span instead: GFM links ``https://``,
  ``www.`` and e-mail addresses found in plain text, and GitHub looks for
  them a second time in the rendered text, after escapes are undone;
  markdown-it's linkify links ``scheme:`` and ``//host`` forms. So text
  holding a ``scheme:`` followed by more text, ``//host``, ``www.`` or an
  ``@`` followed by a name is shown whole as code: nothing inside a code span
  is linked, mentioned or decoded.
- ``markdown_code``: an inline code span whose backtick fence is longer than
  any run of backticks inside, padded with a space when the text starts or
  ends with a backtick. In a table cell (``table=True``) every ``|`` is
  written ``\\|``, which both GFM and markdown-it turn back into ``|`` before
  the cell's content is parsed.
- ``markdown_fence``: a fenced block whose fence has more backticks than any
  run in the text, so no line of it can close the block.

The same text always gives the same bytes.
"""

from __future__ import annotations

import functools
import re

from grader.report._common import printable

__all__ = ["markdown_code", "markdown_fence", "markdown_text"]

_ESCAPE = re.compile(r"([\\`*_\[\]{}|~$#])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# The dot of a domain name (evil.com, softmax.py).
_DOMAIN_DOT = re.compile(r"(?<=[^\W_])\.(?=[^\W\d_])")
# A list item, a setext underline or an ordered list when the text starts a line or a list item.
_BLOCK_START = re.compile(r"^(?:[-+=]|\d{1,9}(?=[.)]))")
# What renderers link in text whatever its escapes: a URI scheme with something after it, a
# protocol-relative //host, www., an e-mail address or an @mention.
_LINKABLE = re.compile(r"[a-z][a-z0-9+.-]*:(?=[\w/+])|//(?=[^\s/])|www\d{0,3}\.|@(?=[\w.+-])", re.IGNORECASE)


def _one_line(text: str) -> str:
    return " ".join(printable(text).split())


@functools.lru_cache(maxsize=4096)  # a class's feedback repeats the same sentences learner after learner
def markdown_text(text: str, *, table: bool = False) -> str:
    """Prose that renders as exactly these characters: one line, no markup, no HTML, no link.

    ``table``: the text goes into a table cell (only matters when it is shown as code).
    """
    line = _one_line(text)
    if _LINKABLE.search(line):
        return markdown_code(line, table=table)
    line = _DOMAIN_DOT.sub(r"\\.", _ESCAPE.sub(r"\\\1", line))
    line = re.sub(r"[&<>]", lambda m: _ENTITIES[m.group()], line)
    start = _BLOCK_START.match(line)
    if start is None:
        return line
    if start.group()[0].isdigit():
        return f"{start.group()}\\{line[start.end() :]}"
    return "\\" + line


@functools.lru_cache(maxsize=4096)
def markdown_code(text: str, *, table: bool = False) -> str:
    """An inline code span that no backtick inside ``text`` can end; ``table``: it goes into a table cell."""
    text = _one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    if table:
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_fence(text: str, info: str = "text") -> list[str]:
    """A fenced block holding ``text`` verbatim; no line of it can close the fence."""
    body = printable(text).rstrip("\n").split("\n")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *body, fence]
