"""Answers files are untrusted: bounded, alias-free, and every problem is a sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.submission.answers import AnswersProblem, load_answers
from tests.cpu_time import cpu_seconds

BILLION_LAUGHS = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x]"]
    + [
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]"
        for i in range(8)
    ]
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
    with pytest.raises(AnswersProblem, match="aliases"):
        load_answers(path)
    assert cpu_seconds(lambda: load_answers(path), (AnswersProblem,)) < 1


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("a.yaml", "- A\n- B\n", "must map exercise ids"),
        ("a.yaml", b"q: caf\xe9\n", "not UTF-8"),
        ("a.json", "{", "not valid JSON"),
        ("a.json", "[" * 100000 + "]" * 100000, "nested too deeply|larger than"),
        ("a.yaml", "x: " + "[" * 200 + "]" * 200, "nested more than"),
        ("a.yaml", "x: 1\n" * 60000, "larger than"),
    ],
    ids=["list", "not-utf8", "bad-json", "deep-json", "deep-yaml", "huge"],
)
def test_load_answers_problems_are_sentences(tmp_path: Path, name: str, data, expected: str) -> None:
    with pytest.raises(AnswersProblem, match=expected):
        load_answers(_write(tmp_path, name, data))


@pytest.mark.parametrize(
    "text",
    [
        (
            "why-softmax-quiz:\n  exp-first: [A, B, C]\n  argmax-gradient: a\n"
            "softmax-bridge-quiz:\n  largest-weight: 0.839\n"
        ),
        "q: {x: 1e3, y: .5, z: 1_000, o: 0o17, b: yes, n: ~, s: 'it''s'}\n# a comment\nr: [-1, +2.5, .inf, .nan]\n",
        "x: [1, 2\n",
        "- A\n- [B, C]\n",
        "",
        "x: " + "[" * 70 + "]" * 70,
        "x: |\n  two\n  lines\n",
        "x: [2001-13-45, 2001-12-14, ._, !!binary aGVsbG8=]\n",
        "x: !!int x\n",
        "x: " + "1" * 1200 + "\n",
        "x: [" + ", ".join(["A"] * 60) + "]\n",
        "x: \x08\n",
        "x: 1\n---\ny: 2\n",
    ],
    ids=[
        "answers",
        "scalars",
        "broken",
        "list",
        "empty",
        "deep",
        "block",
        "look-alikes",
        "bad-tag",
        "long-integer",
        "many-values",
        "control-character",
        "two-documents",
    ],
)
def test_libyaml_and_the_pure_python_loader_read_a_short_file_alike(text: str, monkeypatch) -> None:
    """Short files are read with libyaml when PyYAML has it; data, lines and problems must not change."""
    from grader import safeyaml

    def read(fast: bool):  # type: ignore[no-untyped-def]
        monkeypatch.setattr(safeyaml, "_FAST_MAX_BYTES", 4096 if fast else -1)
        try:
            data, lines = safeyaml.load_yaml(text, max_nodes=50)
        except safeyaml.YamlProblem as problem:
            return ("problem", problem.message, problem.line)
        return json.dumps(data, sort_keys=True, default=repr), lines

    assert read(fast=True) == read(fast=False)
