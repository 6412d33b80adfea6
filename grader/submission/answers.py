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
from grader.submission.formats import ANSWER_SUFFIXES
from grader.submission.formats import MAX_ANSWERS_BYTES as MAX_BYTES

__all__ = ["ANSWER_SUFFIXES", "MAX_BYTES", "MAX_VALUES", "AnswersProblem", "LongInteger", "load_answers"]

# Every quiz answered, every option of each multiple-choice question listed, is about a hundred values.
MAX_VALUES = 1000


class AnswersProblem(ValueError):
    """The answers file cannot be used; the message says why and what to do.

    ``named``: the quizzes the file still visibly names (its top-level keys,
    found line by line without parsing), so each of them can be scored 0 with
    this reason rather than the file being graded as answering nothing.
    """

    def __init__(self, message: str, named: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.named = named


# A top-level key as a learner writes it: `quiz-id:` at the start of a YAML line, `"quiz-id": {` in JSON.
_YAML_TOP_KEY = re.compile(r"^([\"']?)([A-Za-z0-9][A-Za-z0-9_-]{0,99})\1[ \t]*:", re.MULTILINE)
_JSON_QUIZ_KEY = re.compile(r'"([A-Za-z0-9][A-Za-z0-9_-]{0,99})"[ \t]*:[ \t\r\n]*\{')


def named_quizzes(text: str, json_file: bool) -> tuple[str, ...]:
    """The quiz ids an unreadable answers file visibly names, in order, each once (a linear scan)."""
    found = (
        (match.group(1) for match in _JSON_QUIZ_KEY.finditer(text))
        if json_file
        else (match.group(2) for match in _YAML_TOP_KEY.finditer(text))
    )
    return tuple(dict.fromkeys(found))


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
    try:
        data = _parse(text, name, path.suffix == ".json")
    except AnswersProblem as problem:
        raise AnswersProblem(str(problem), named_quizzes(text, path.suffix == ".json")) from None
    if not isinstance(data, dict):
        raise AnswersProblem(
            f"{name}: an answers file must map exercise ids to answers, "
            "like 'why-softmax-quiz: {divide-by-sum-fails: A}'"
        )
    return {str(key): value for key, value in data.items()}


def _parse(text: str, name: str, json_file: bool) -> Any:
    if json_file:
        return _read_json(text, name)
    try:
        data, _ = load_yaml(text, max_bytes=MAX_BYTES, max_nodes=MAX_VALUES)
    except YamlProblem as problem:
        raise _problem(name, problem.message, problem.line) from None
    return data


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
        return json.loads(text, parse_int=_json_int, object_pairs_hook=_unique_keys)
    except _DuplicateKey as twice:
        raise _problem(
            name, f"the key {twice.key!r} is written twice in one mapping; keep one", _line_of_second(text, twice.key)
        ) from None
    except ValueError as exc:
        where = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise _problem(name, f"not valid JSON: {message}", where) from None


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members, refusing a key written twice (``json`` would keep the last silently)."""
    mapping: dict[str, Any] = {}
    for key, value in pairs:
        if key in mapping:
            raise _DuplicateKey(key)
        mapping[key] = value
    return mapping


def _line_of_second(text: str, key: str) -> int | None:
    """The line of the second ``"key":`` in ``text`` (the first repeat of a key in one object is usually it)."""
    spots = [match.start() for match in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
    return text.count("\n", 0, spots[1]) + 1 if len(spots) > 1 else None


def _json_int(text: str) -> int | LongInteger:
    return int(text) if len(text) <= MAX_INTEGER_CHARS else LongInteger(text)
