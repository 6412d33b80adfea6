"""``grader grade -``: a learner's file read from standard input, spooled to a private file for grading.

The grader reads submissions from paths, and a file's suffix says what it
is; standard input has neither. So its bytes (bounded: never more than one
past the largest file the grader reads) are written to a folder only this
user can open, as ``stdin`` with the suffix ``--stdin-as`` names or the one
its content shows, graded as that file, and removed with its folder.
"""

from __future__ import annotations

import ast
import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from grader.cli.common import STDIN
from grader.errors import UsageError
from grader.submission.formats import MAX_ANSWERS_BYTES, MAX_NOTEBOOK_BYTES

__all__ = ["guess_suffix", "spooled_stdin", "submission_path"]

# The largest file the grader reads is a notebook; one byte more lets the reader say the input is too large.
_READ_LIMIT = MAX_NOTEBOOK_BYTES + 1


def guess_suffix(data: bytes) -> str:
    """The suffix a file holding ``data`` would have: ``.ipynb``, ``.json``, ``.yaml``, else ``.py``.

    A JSON object with ``cells`` is a notebook; a JSON or YAML mapping of
    mappings (``{quiz: {question: answer}}``) is an answers file, unless it is
    also Python that parses; anything else is graded as Python, whose own
    reader then says what is wrong with it. Only data no larger than an
    answers file may be is parsed as Python, to tell the two apart.
    """
    if data.lstrip()[:1] == b"{":
        if len(data) > MAX_NOTEBOOK_BYTES:  # too large to parse: only a notebook may be that large
            return ".ipynb"
        parsed = _json_object(data)
        if parsed is not None and isinstance(parsed.get("cells"), list):
            return ".ipynb"
        if parsed is not None and _answers_shaped(parsed):
            return ".json"
    if len(data) > MAX_ANSWERS_BYTES:  # too large for an answers file: Python, never parsed here (docs/security.md)
        return ".py"
    if _parses_as_python(data):
        return ".py"
    if _answers_shaped(_yaml_value(data)):
        return ".yaml"
    return ".py"


def _json_object(data: bytes) -> dict[str, object] | None:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):  # not JSON (UnicodeDecodeError is a ValueError)
        return None
    return value if isinstance(value, dict) else None


def _parses_as_python(data: bytes) -> bool:
    try:
        ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _yaml_value(data: bytes) -> object:
    from grader.safeyaml import load_yaml

    try:
        value, _lines = load_yaml(data.decode("utf-8"))
    except Exception:  # any reason not to read it as YAML means it is not an answers file; never a crash here
        return None
    return value


def _answers_shaped(value: object) -> bool:
    """An answers file maps quiz ids to mappings of question ids to answers."""
    return isinstance(value, dict) and bool(value) and all(isinstance(item, dict) for item in value.values())


@contextmanager
def submission_path(path: str, kind: str | None) -> Iterator[tuple[str, str | None]]:
    """``(path, None)``; for ``-``, a spooled copy of standard input and the label ``-`` the report gives it."""
    if path != STDIN:
        yield path, None
        return
    stream = getattr(sys.stdin, "buffer", None)  # None when the grader was started with no standard input at all
    if stream is None:
        raise UsageError("-: there is no standard input to read; pipe a file into it, e.g. grader grade - < softmax.py")
    with spooled_stdin(stream, kind) as spooled:
        yield str(spooled), STDIN


@contextmanager
def spooled_stdin(stream: BinaryIO, kind: str | None) -> Iterator[Path]:
    """The path of a private file holding what ``stream`` gives, named ``stdin.<kind>``; removed on leaving.

    Refuses a terminal (exit 2): waiting for typed input would look like a
    hang. ``kind`` is a suffix without its dot (``--stdin-as``), or ``None`` to guess it.
    """
    if stream.isatty():
        raise UsageError("-: standard input is a terminal; pipe a file into it, e.g. grader grade - < softmax.py")
    data = stream.read(_READ_LIMIT)
    suffix = f".{kind}" if kind else guess_suffix(data)
    with tempfile.TemporaryDirectory(prefix="grader-stdin-") as folder:  # mode 0o700: only this user
        path = Path(folder) / f"stdin{suffix}"
        with path.open("xb") as spool:
            spool.write(data)
        yield path
