"""Read a learner's answers file (YAML or JSON) as untrusted input.

The file is parsed in the grader's process, so it is bounded: ``MAX_BYTES``
at most, no YAML aliases, ``MAX_DEPTH`` levels of nesting and ``MAX_VALUES``
values at most, each limit checked as the file is read, so no file costs
more than reading 32 KiB and building a thousand values. An integer too long
to build is kept as a ``LongInteger`` for the quiz to grade. A problem becomes
an ``AnswersProblem`` whose message names the file (and the line, where there
is one) and is shown to the learner.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from grader.safeyaml import MAX_DEPTH, MAX_INTEGER_CHARS, LongInteger, YamlProblem, load_yaml

__all__ = ["ANSWER_SUFFIXES", "MAX_BYTES", "MAX_VALUES", "AnswersProblem", "LongInteger", "load_answers"]

ANSWER_SUFFIXES = (".yaml", ".yml", ".json")
# The handout's answers template (every question, its options as comments) is a few KiB: this leaves
# room for more quizzes and a learner's own notes, and keeps a hostile file cheap to read or refuse.
MAX_BYTES = 32 * 1024
# Every quiz answered, every option of each multiple-choice question listed, is about a hundred values.
MAX_VALUES = 1000


class AnswersProblem(ValueError):
    """The answers file cannot be used; the message says why and what to do."""


def load_answers(path: Path) -> dict[str, Any]:
    """The answers as ``{exercise_id: {question_id: answer}}``."""
    name = path.name
    try:
        with path.open("rb") as handle:  # never more than the cap: a 50 MB file costs 32 KiB
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise AnswersProblem(f"{name}: cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_BYTES:
        raise AnswersProblem(
            f"{name}: the answers file is larger than {MAX_BYTES // 1024} KiB; it needs one short answer per question"
        )
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark, as some editors write, is not part of the answers
    except UnicodeDecodeError:
        raise AnswersProblem(f"{name}: the answers file is not UTF-8 text; save it as UTF-8") from None
    if path.suffix == ".json":
        data = _read_json(text, name)
    else:
        try:
            data, _ = load_yaml(text, max_bytes=MAX_BYTES, max_nodes=MAX_VALUES)
        except YamlProblem as problem:
            raise _problem(name, problem.message, problem.line) from None
    if not isinstance(data, dict):
        raise AnswersProblem(
            f"{name}: an answers file must map exercise ids to answers, "
            "like 'why-softmax-quiz: {divide-by-sum-fails: A}'"
        )
    return {str(key): value for key, value in data.items()}


# One JSON token: a string (no raw line end, which JSON forbids), a bracket, or a run of other characters.
_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}]|[^\s\[\]{},:"]+|\n')


def _problem(name: str, message: str, line: int | None) -> AnswersProblem:
    """``answers.yaml: nested more than 64 levels deep (line 3)``."""
    return AnswersProblem(f"{name}: {message}" + (f" (line {line})" if line else ""))


def _read_json(text: str, name: str) -> Any:
    """Parse JSON after a linear pass has checked its depth and number of values, so each limit has a line.

    The pass runs first so ``json`` never recurses deeply; integers too long
    to build (Python refuses past 4,300 digits) become ``LongInteger``.
    """
    depth, values, line = 0, 0, 1
    for token in _JSON_TOKEN.finditer(text):
        first = token.group()[0]
        if first == "\n":
            line += 1
            continue
        if first in "]}":
            depth -= 1
            continue
        values += 1
        if values > MAX_VALUES:
            raise _problem(name, f"holds more than {MAX_VALUES} values", line)
        if first in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _problem(name, f"nested more than {MAX_DEPTH} levels deep", line)
    try:
        return json.loads(text, parse_int=_json_int)
    except ValueError as exc:
        where = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise _problem(name, f"not valid JSON: {message}", where) from None


def _json_int(text: str) -> int | LongInteger:
    return int(text) if len(text) <= MAX_INTEGER_CHARS else LongInteger(text)
