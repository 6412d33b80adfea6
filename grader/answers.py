"""Read a learner's answers file (YAML or JSON) as untrusted input.

The file is parsed in the grader's process, so it is bounded: 256 KiB at
most, no YAML aliases, 64 levels of nesting at most. A problem becomes an
``AnswersProblem`` whose message is shown to the learner.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grader.safeyaml import YamlProblem, load_yaml

__all__ = ["ANSWER_SUFFIXES", "AnswersProblem", "load_answers"]

ANSWER_SUFFIXES = (".yaml", ".yml", ".json")
MAX_BYTES = 256 * 1024


class AnswersProblem(ValueError):
    """The answers file cannot be used; the message says why and what to do."""


def load_answers(path: Path) -> dict[str, Any]:
    """The answers as ``{exercise_id: {question_id: answer}}``."""
    name = path.name
    try:
        with path.open("rb") as handle:  # never more than the cap: a 50 MB file costs 256 KiB
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise AnswersProblem(f"{name}: cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_BYTES:
        raise AnswersProblem(f"{name}: the answers file is larger than {MAX_BYTES // 1024} KiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise AnswersProblem(f"{name}: the answers file is not UTF-8 text; save it as UTF-8") from None
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except RecursionError:
            raise AnswersProblem(f"{name}: the answers file is nested too deeply") from None
        except ValueError as exc:
            raise AnswersProblem(f"{name}: not valid JSON ({exc})") from None
    else:
        try:
            data, _ = load_yaml(text, max_bytes=MAX_BYTES)
        except YamlProblem as problem:
            where = f" (line {problem.line})" if problem.line else ""
            raise AnswersProblem(f"{name}: {problem.message}{where}") from None
    if not isinstance(data, dict):
        raise AnswersProblem(
            f"{name}: an answers file must map exercise ids to answers, like 'why-softmax-quiz: {{divide-by-sum-fails: A}}'"
        )
    return {str(key): value for key, value in data.items()}
