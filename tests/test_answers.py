"""Answers files are untrusted: bounded, alias-free, and every problem is a sentence."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from grader.answers import AnswersProblem, load_answers

BILLION_LAUGHS = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
       f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]" for i in range(8)]
)


def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_load_answers_reads_yaml_and_json_alike(tmp_path: Path) -> None:
    yaml_path = _write(tmp_path, "a.yaml", "why-softmax-quiz:\n  exp-first: [A, B]\n")
    json_path = _write(tmp_path, "a.json", json.dumps({"why-softmax-quiz": {"exp-first": ["A", "B"]}}))
    assert load_answers(yaml_path) == load_answers(json_path) == {"why-softmax-quiz": {"exp-first": ["A", "B"]}}


def test_load_answers_refuses_billion_laughs_quickly(tmp_path: Path) -> None:
    path = _write(tmp_path, "bomb.yaml", BILLION_LAUGHS)
    started = time.monotonic()
    with pytest.raises(AnswersProblem, match="aliases"):
        load_answers(path)
    assert time.monotonic() - started < 1


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [("a.yaml", "- A\n- B\n", "must map exercise ids"), ("a.yaml", b"q: caf\xe9\n", "not UTF-8"),
     ("a.json", "{", "not valid JSON"), ("a.json", "[" * 100000 + "]" * 100000, "nested too deeply|larger than"),
     ("a.yaml", "x: " + "[" * 200 + "]" * 200, "nested more than"), ("a.yaml", "x: 1\n" * 60000, "larger than")],
    ids=["list", "not-utf8", "bad-json", "deep-json", "deep-yaml", "huge"],
)
def test_load_answers_problems_are_sentences(tmp_path: Path, name: str, data, expected: str) -> None:
    with pytest.raises(AnswersProblem, match=expected):
        load_answers(_write(tmp_path, name, data))
